"""Trees in processes of their own (``hri run --split``): the same run, and clean ends when a process dies."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hri.base.mqueue import queue_exists, runtime_dir
from hri.scenario.load import load_scenario
from hri.run.sim import run_scenario
from processes import children as child_processes, wait_ticking

HRI = [sys.executable, "-m", "hri.cli.main"]
WALL = ("wall_time_s", "real_time_factor")


def _run_files(out: Path) -> tuple[dict, str, str]:
    stats = json.loads((out / "stats.json").read_text())
    for key in WALL:
        stats.pop(key)
    return stats, (out / "events.jsonl").read_text(), (out / "trajectory.csv").read_text()


@pytest.mark.parametrize("name, seed, duration", [("coexistence", 10, 40.0), ("collaboration", 1, 60.0)])
def test_split_processes_give_the_same_run(tmp_path, name, seed, duration):
    """Statistics, every event, the trajectory and the trees' .btlog files are the same with the
    trees in their own processes."""
    scenario = load_scenario(name)
    run_scenario(scenario, duration, seed=seed, out_dir=tmp_path / "one")
    run_scenario(scenario, duration, seed=seed, out_dir=tmp_path / "split", split=True)
    one, split = _run_files(tmp_path / "one"), _run_files(tmp_path / "split")
    assert one[0] == split[0]
    assert one[1] == split[1]
    assert one[2] == split[2]
    for log in ("person.btlog", "robot.btlog"):
        assert (tmp_path / "one" / log).read_bytes() == (tmp_path / "split" / log).read_bytes()
    assert one[0]["complete"] and one[0]["person_actions"] > 3
    events = [json.loads(line)["event"] for line in one[1].splitlines()]
    assert "person_action_finished" in events and "robot_move_finished" in events


def _run_queue_names(pid: int) -> list[str]:
    names = []
    for record in runtime_dir().glob(f"hri-{pid}-*.json"):
        names += json.loads(record.read_text())["queues"]
    return names


def _start_split_run(tmp_path: Path, env: dict | None = None) -> tuple[subprocess.Popen, list[int], list[str]]:
    """A split run with both tree processes up and ticking; its tree processes and queues."""
    proc = subprocess.Popen([*HRI, "run", "coexistence", "--split", "--duration", "600", "--seed", "3",
                             "--out", str(tmp_path / "run")], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, **(env or {})})
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        children, queues = child_processes(proc.pid), _run_queue_names(proc.pid)
        if len(children) == 2 and len(queues) == 6 and wait_ticking(tmp_path / "run"):
            return proc, children, queues
        time.sleep(0.1)
    proc.kill()
    pytest.fail("the split run did not start its two tree processes")


def _assert_gone(queues: list[str], pids: list[int]) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(Path(f"/proc/{pid}").exists() for pid in pids):
        time.sleep(0.05)
    assert queues and not [q for q in queues if queue_exists(q)]
    if Path("/dev/mqueue").is_dir():
        left = {f"/{name}" for name in os.listdir("/dev/mqueue")}
        assert not left & set(queues)


def test_a_killed_tree_process_ends_the_run_with_one_line_and_no_queue_left(tmp_path):
    proc, (person, robot), queues = _start_split_run(tmp_path)
    os.kill(robot, signal.SIGKILL)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err
    assert lines[0].startswith(f"the robot tree's process (pid {robot}) was killed by SIGKILL at t = ")
    stats = json.loads((tmp_path / "run" / "stats.json").read_text())
    assert stats["complete"] is False and stats["sim_time_s"] > 0
    _assert_gone(queues, [person, robot])


def test_a_hung_tree_process_ends_the_run_after_the_timeout(tmp_path):
    proc, (person, robot), queues = _start_split_run(tmp_path, {"HRI_TREE_TIMEOUT_S": "1.5"})
    os.kill(person, signal.SIGSTOP)
    started = time.monotonic()
    out, err = proc.communicate(timeout=60)
    assert time.monotonic() - started < 10
    assert proc.returncode == 1
    assert err.strip().startswith(f"the person tree's process (pid {person}) did not answer within 1.5 s "
                                  "of wall time (hung?) at t = ")
    _assert_gone(queues, [person, robot])


def test_tree_processes_remove_the_queues_of_a_killed_simulation(tmp_path):
    proc, children, queues = _start_split_run(tmp_path)
    proc.kill()
    proc.wait()
    _assert_gone(queues, children)
    err = proc.stderr.read()
    proc.stdout.close()
    proc.stderr.close()
    assert "Traceback" not in err


def test_an_error_of_a_tree_is_the_same_line_in_a_tree_process(tmp_path):
    tree = tmp_path / "bad_robot.xml"
    tree.write_text('<root BTCPP_format="4" main_tree_to_execute="Bad"><BehaviorTree ID="Bad">\n'
                    '  <InAreaTest area="{no_such_area}" pose="{human_pose}"/>\n'
                    '</BehaviorTree></root>\n')
    args = [*HRI, "run", "coexistence", "--duration", "5", "--set", f"trees.robot={tree}"]
    one = subprocess.run(args, capture_output=True, text=True, timeout=120)
    split = subprocess.run([*args, "--split"], capture_output=True, text=True, timeout=120)
    assert one.returncode == split.returncode == 1
    assert one.stderr == split.stderr
    assert one.stderr.strip() == (f"{tree}:2: InAreaTest 'InAreaTest': input port 'area': "
                                  "blackboard entry 'no_such_area' is not set")
