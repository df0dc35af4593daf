"""The soak: short seeded runs of each scenario, each with a fault injected at a time drawn
from its seed (``hri.scenario.faults.random_fault``). None may end with a traceback, leave a message
queue behind, or end without its statistics file.

Marked ``soak`` (``pytest -m "soak and not slow"`` runs it alone, ``-m "not soak"`` leaves it out): 40 runs
per scenario in the default run, about half a minute on two cores (40 seeds hold every fault
kind, ``tree_killed`` once); 120 per scenario with ``-m slow``. Every twentieth run has its
trees in processes of their own (``--split``), so tree processes get killed and hung too.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import pytest

from hri.base.errors import HriError
from hri.scenario.faults import random_fault
from hri.base.mqueue import RunQueues, _process_alive, queue_exists
from hri.scenario.load import load_scenario
from hri.run.sim import run_scenario

RUNS = 40
SLOW_RUNS = 120
DURATION_S = 4.0
SPLIT_EVERY = 20


def _mqueue_listing() -> set[str] | None:
    """The system's message queues, when /dev/mqueue is mounted (it is not on every machine),
    but those of other live processes' runs (another ``hri`` at work on this machine)."""
    folder = Path("/dev/mqueue")
    if not folder.is_dir():
        return None
    return {f"/{name}" for name in os.listdir(folder) if not _of_another_live_process(name)}


def _of_another_live_process(name: str) -> bool:
    """``hri-<pid>-...``: a queue of a run of process ``pid``, alive and not this one."""
    parts = name.split("-")
    if parts[0] != "hri" or len(parts) < 2 or not parts[1].isdigit():
        return False
    pid = int(parts[1])
    return pid != os.getpid() and _process_alive(pid)


@pytest.fixture
def created_queues(monkeypatch):
    """Every queue name a run creates, recorded as RunQueues creates it."""
    names: list[str] = []
    original = RunQueues.create

    def create(self, suffix, *args, **kwargs):
        queue = original(self, suffix, *args, **kwargs)
        names.append(queue.name)
        return queue

    monkeypatch.setattr(RunQueues, "create", create)
    return names


@pytest.mark.soak
@pytest.mark.parametrize("name", ["coexistence", "cooperation", "collaboration"])
def test_faulty_runs_end_cleanly(name, tmp_path, created_queues, monkeypatch):
    _soak(name, RUNS, tmp_path, created_queues, monkeypatch)


@pytest.mark.slow
@pytest.mark.soak
@pytest.mark.parametrize("name", ["coexistence", "cooperation", "collaboration"])
def test_many_faulty_runs_end_cleanly(name, tmp_path, created_queues, monkeypatch):
    _soak(name, SLOW_RUNS, tmp_path, created_queues, monkeypatch)


def _soak(name: str, runs: int, tmp_path: Path, created_queues: list[str], monkeypatch) -> None:
    """``runs`` seeded runs of ``name`` with a fault each (the module doc)."""
    import hri.run.tree_process
    monkeypatch.setattr(hri.run.tree_process, "TREE_TIMEOUT_S", 1.0)  # a hung tree process: given up after 1 s
    before = _mqueue_listing()
    endings: Counter[str] = Counter()
    for seed in range(runs):
        split = seed % SPLIT_EVERY == SPLIT_EVERY - 1
        fault = random_fault(seed, DURATION_S, split=split)
        scenario = load_scenario(name).with_faults([{"kind": fault.kind, "at_s": fault.at_s, "tree": fault.tree}])
        out = tmp_path / f"{seed}"
        try:
            run_scenario(scenario, DURATION_S, seed=seed, out_dir=out, split=split)
            endings[f"{fault.kind}: completed"] += 1
        except HriError as error:  # the clear one-line ending; anything else fails the test here
            endings[f"{fault.kind}: {str(error).split(':')[0][:40]}"] += 1
        stats = json.loads((out / "stats.json").read_text())
        assert stats["scenario"] == name and stats["seed"] == seed
        left = [q for q in created_queues if queue_exists(q)]
        assert not left, f"seed {seed} ({fault}): queues left behind: {left}"
    after = _mqueue_listing()
    if before is not None:
        assert after - before == set()
    print(f"\n{name}: {dict(sorted(endings.items()))}")
    kinds = {ending.split(":")[0] for ending in endings}
    assert {"actor_hang", "pybullet_lost", "actor_queue_full"} <= kinds
