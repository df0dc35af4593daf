"""A run's ``person.btlog`` and ``robot.btlog``: written by every run with an output folder,
complete however the run ends, and telling the same statuses as the run's event log."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from hri.bt.loggers.btlog_reader import BtLog, read_btlog
from hri.bt.status import statuses_at
from hri.run.sim import run_scenario
from hri.scenario.load import load_scenario


def _events(out) -> list[dict]:
    return [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines()]


def _statuses_until(log: BtLog, t: float, nodes: int) -> list[str]:
    """Each node's status (by UID order) after the transitions at or before ``t``."""
    statuses = ["IDLE"] * nodes
    for transition in log.transitions:
        if transition.time_us > round(t * 1e6):
            break
        statuses[transition.uid - 1] = transition.status
    return statuses


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("run")
    run_scenario(load_scenario("coexistence"), 20.0, seed=1, out_dir=out)
    return out


def test_a_run_writes_one_btlog_a_tree_and_no_hidden_file(run):
    assert {"person.btlog", "robot.btlog"} <= {p.name for p in run.iterdir()}
    assert not [p.name for p in run.iterdir() if p.name.startswith(".")]


@pytest.mark.parametrize("tree", ["person", "robot"])
def test_the_btlog_tells_the_statuses_the_event_log_tells(run, tree):
    """After every tick, replaying the transitions gives each node the status of the run's
    ``tree_status`` events; the XML has a node for each node of the ``tree_nodes`` legend,
    in UID order; times are simulated, from 0."""
    log = read_btlog(run / f"{tree}.btlog")
    events = _events(run)
    legend = next(e for e in events if e["event"] == "tree_nodes" and e["tree"] == tree)
    uids = [int(e.get("_uid")) for e in ET.fromstring(log.xml).iter() if e.get("_uid")]
    assert sorted(uids) == list(range(1, len(legend["nodes"]) + 1))
    assert log.first_timestamp_us == 0 and len(log.transitions) > 20
    assert log.transitions[-1].time_us <= 20_000_000
    ticks = sorted({e["t"] for e in events if e["event"] == "tree_status" and e["tree"] == tree})
    for t in ticks:
        assert _statuses_until(log, t, len(uids)) == statuses_at(events, tree, t)[1], t


class _Fails:
    """An observer that stops the run with an error after ``steps`` physics steps."""

    def __init__(self, steps: int) -> None:
        self.steps = steps

    def start(self, run) -> None:
        pass

    def after_step(self, run) -> None:
        if run.step_count == self.steps:
            raise RuntimeError("stopped on purpose")

    def finish(self, run) -> None:
        pass


def test_a_run_that_fails_still_leaves_whole_btlogs(tmp_path):
    with pytest.raises(RuntimeError, match="on purpose"):
        run_scenario(load_scenario("coexistence"), 20.0, seed=1, out_dir=tmp_path, observers=[_Fails(2400)])
    assert json.loads((tmp_path / "stats.json").read_text())["complete"] is False
    for tree in ("person", "robot"):
        log = read_btlog(tmp_path / f"{tree}.btlog")  # whole records only, or it would not read
        assert log.transitions and log.transitions[-1].time_us < 20_000_000
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]
