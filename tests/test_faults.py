"""Injected faults: each ends the run with one clear line and its statistics, or is dropped and counted."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

import pytest

from hri.base.errors import HriError
from hri.scenario.faults import Fault, parse_faults, random_fault
from hri.scenario.load import load_scenario
from hri.run.sim import run_scenario
from processes import wait_ticking
from test_cli import HRI, hri


def _run(tmp_path, *faults: str, duration: float = 6.0, seed: int = 2):
    scenario = load_scenario("coexistence").with_faults(list(faults))
    return run_scenario(scenario, duration, seed=seed, out_dir=tmp_path)


def _stats(tmp_path) -> dict:
    return json.loads((tmp_path / "stats.json").read_text())


def _ended_by(tmp_path, error: HriError) -> None:
    """The run's files keep the line that ended it: stats.json's error, a run_error event."""
    stats = _stats(tmp_path)
    assert stats["complete"] is False and stats["error"] == str(error)
    events = [json.loads(line) for line in (tmp_path / "events.jsonl").read_text().splitlines()]
    assert [e["error"] for e in events if e["event"] == "run_error"] == [str(error)]


def test_a_hung_actor_plugin_is_noticed_within_a_second(tmp_path):
    with pytest.raises(HriError, match=r"^the actor plugin has not answered for 1 s of simulated time "
                                       r"\(goal #\d+, movement 'walk', active\): it hangs or is gone$") as info:
        _run(tmp_path, "actor_hang@2")
    stats = _stats(tmp_path)
    assert stats["complete"] is False and 3.0 < stats["sim_time_s"] < 3.2
    _ended_by(tmp_path, info.value)


def test_a_lost_pybullet_client_ends_the_run(tmp_path):
    with pytest.raises(HriError, match="^the PyBullet client was lost") as info:
        _run(tmp_path, "pybullet_lost@2.5")
    _ended_by(tmp_path, info.value)


def test_broken_records_are_dropped_and_counted_and_the_run_goes_on(tmp_path):
    stats = _run(tmp_path, "corrupt_feedback@1", "truncated_action@2", "actor_queue_full@3")
    assert stats["complete"] is True and "error" not in stats and "error" not in _stats(tmp_path)
    assert stats["messages_dropped"] >= 2 + 9  # one corrupt, one truncated, a queue full of junk
    events = [json.loads(line) for line in (tmp_path / "events.jsonl").read_text().splitlines()]
    assert [e["kind"] for e in events if e["event"] == "fault_injected"] == [
        "corrupt_feedback", "truncated_action", "actor_queue_full"]


def test_the_command_line_takes_faults_and_ends_with_one_line(tmp_path):
    result = hri("run", "coexistence", "--duration", "6", "--seed", "2", "--fault", "actor_hang@2",
                 "--out", str(tmp_path / "run"))
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("the actor plugin has not answered")
    assert json.loads((tmp_path / "run" / "stats.json").read_text())["complete"] is False


def test_sigterm_ends_a_run_with_one_line_its_files_and_no_queue(tmp_path):
    """SIGTERM in the middle of a run: "hri: terminated", exit 143, the statistics so far
    written ("complete": false), the run's queues removed."""
    run_dir = tmp_path / "run"
    process = subprocess.Popen([HRI, "run", "coexistence", "--duration", "3600", "--out", str(run_dir)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert wait_ticking(run_dir)  # past the set-up (seconds on a busy machine): the run steps
        process.send_signal(signal.SIGTERM)
        assert process.wait(30) == 143
        assert process.stderr.read() == "hri: terminated\n"
    finally:
        if process.poll() is None:
            process.kill()
    assert json.loads((run_dir / "stats.json").read_text())["complete"] is False
    assert not any(Path("/dev/mqueue").glob(f"hri-{process.pid}-*"))


def test_an_output_that_cannot_be_written_is_named_and_leaves_no_hidden_file(tmp_path):
    """A folder where trajectory.csv belongs (refused before the run: no run wrote it); a file
    size limit the .btlog files outgrow: the one line names the file the user sees, not its
    staged copy, and no hidden file is left."""
    import resource

    (tmp_path / "a" / "trajectory.csv").mkdir(parents=True)
    result = hri("run", "coexistence", "--duration", "0.3", "--out", str(tmp_path / "a"), "--force")
    assert (result.returncode, result.stderr) == (
        1, f"--out {tmp_path / 'a'}: holds trajectory.csv, a folder that no run wrote; choose another folder\n")
    limit = lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (12 * 1024, 12 * 1024))  # noqa: E731
    result = subprocess.run([HRI, "run", "coexistence", "--duration", "1", "--out", str(tmp_path / "b")],
                            capture_output=True, text=True, preexec_fn=limit, timeout=300)
    assert result.returncode == 1 and result.stderr in (f"{tmp_path / 'b' / name}.btlog: File too large\n"
                                                        for name in ("person", "robot"))
    for run in ("a", "b"):
        assert not [p.name for p in (tmp_path / run).iterdir() if p.name.startswith(".")]
        assert not (tmp_path / run / "stats.json").exists()  # the marker of a complete run's files


def test_fault_specs_and_their_mistakes():
    assert parse_faults(["actor_hang@2.5", {"kind": "tree_hung", "at_s": 1, "tree": "person"}]) == [
        Fault("actor_hang", 2.5), Fault("tree_hung", 1.0, "person")]
    for spec, message in ((["meteor@1"], "unknown fault kind 'meteor'"), ([{"kind": "actor_hang", "at": 1}],
                          "unknown key 'at'"), (["actor_hang@-1"], "at_s must not be negative"),
                          ("actor_hang@1", "expected a list of faults")):
        with pytest.raises(HriError, match=message):
            parse_faults(spec)


def test_random_faults_are_seeded_and_tree_kinds_only_with_split():
    assert random_fault(7, 4.0) == random_fault(7, 4.0)
    kinds = {random_fault(seed, 4.0).kind for seed in range(200)}
    assert "tree_killed" not in kinds and {"actor_hang", "pybullet_lost"} <= kinds
    assert {"tree_killed", "tree_hung"} <= {random_fault(seed, 4.0, split=True).kind for seed in range(200)}
    assert all(0 <= random_fault(seed, 4.0).at_s <= 3.6 for seed in range(50))
