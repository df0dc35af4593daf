"""Logs written as a run goes (hri.base.files.Spool): the same files, memory that stays flat."""

from __future__ import annotations

import json
import os

from hri.base.files import Spool
from hri.scenario.load import load_scenario
from hri.run.sim import Simulation, run_scenario
from hri.run.stats import write_run


def test_a_spool_spills_its_items_and_writes_the_same_file(tmp_path):
    kept, spilled = (Spool(lambda n: f"{n}\n", "header\n") for _ in range(2))
    spilled.spill_to(tmp_path / "b.txt", every=3)
    for n in range(10):
        kept.append(n)
        spilled.append(n)
    assert len(kept.items) == 10 and len(spilled.items) == 1 and len(spilled) == 10
    assert not (tmp_path / "b.txt").exists()  # until written, only the hidden file is there
    assert [name for name in os.listdir(tmp_path) if name.startswith(".b.txt.")]
    kept.write(tmp_path / "a.txt")
    spilled.write(tmp_path / "b.txt")
    assert (tmp_path / "a.txt").read_text() == (tmp_path / "b.txt").read_text() == "header\n" + "".join(
        f"{n}\n" for n in range(10))
    assert sorted(os.listdir(tmp_path)) == ["a.txt", "b.txt"]


def test_a_discarded_spool_leaves_nothing(tmp_path):
    spool = Spool(str)
    spool.spill_to(tmp_path / "x.txt", every=1)
    spool.append("a")
    spool.discard()
    assert os.listdir(tmp_path) == []


def test_a_run_written_as_it_goes_has_the_files_of_one_written_at_the_end(tmp_path):
    scenario = load_scenario("coexistence")
    run_scenario(scenario, 20.0, seed=10, out_dir=tmp_path / "spilled")
    with Simulation(scenario, seed=10) as sim:
        stats = sim.run(20.0)
        write_run(tmp_path / "kept", stats, sim.events, sim.trajectory)
    for name in ("events.jsonl", "trajectory.csv"):
        assert (tmp_path / "spilled" / name).read_text() == (tmp_path / "kept" / name).read_text()
    spilled_stats = json.loads((tmp_path / "spilled" / "stats.json").read_text())
    for key in ("wall_time_s", "real_time_factor"):
        spilled_stats.pop(key), stats.pop(key)
    assert spilled_stats == stats
    assert sorted(os.listdir(tmp_path / "spilled")) == ["events.jsonl", "person.btlog", "robot.btlog", "stats.json",
                                                        "trajectory.csv"]


def test_a_runs_files_are_as_readable_as_any_new_file(tmp_path):
    """The hidden files that become a run's outputs are made by mkstemp (0600); renamed, they
    have the mode the umask gives a new file, written at the end or as the run goes."""
    previous = os.umask(0o022)
    try:
        run_scenario(load_scenario("coexistence"), 1.0, seed=1, out_dir=tmp_path / "run")
        spool = Spool(lambda item: f"{item}\n")
        spool.spill_to(tmp_path / "spilled.txt", every=1)
        spool.append(1)
        spool.write(tmp_path / "spilled.txt")
    finally:
        os.umask(previous)
    for path in [*sorted((tmp_path / "run").iterdir()), tmp_path / "spilled.txt"]:
        assert path.stat().st_mode & 0o777 == 0o644, path
