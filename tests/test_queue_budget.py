"""Many runs at once: the message-queue budget (``ulimit -q``) a run takes, and the runs that
find it short (the same run over sockets and in-process stand-ins, or one line)."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import posix_ipc
import pytest

from hri.actor.queues import ActorLink
from hri.base.mqueue import MQueueError, RunQueues, queue_charge, queue_exists
from hri.run.sim import run_queue_plan
from processes import children as child_processes, wait_ticking

HRI = [sys.executable, "-m", "hri.cli.main"]
WALL = ("wall_time_s", "real_time_factor")
TINY = 1000  # bytes: no queue of a run fits


def _budget(soft: int) -> None:
    """In a child (preexec_fn): the user's queue budget as this process and its children see it."""
    hard = resource.getrlimit(resource.RLIMIT_MSGQUEUE)[1]
    resource.setrlimit(resource.RLIMIT_MSGQUEUE, (soft if hard == resource.RLIM_INFINITY else min(soft, hard), hard))


def _tiny_budget() -> None:
    _budget(TINY)


def _split_run(out: Path, preexec=None) -> subprocess.Popen:
    return subprocess.Popen([*HRI, "run", "coexistence", "--split", "--seed", "3", "--duration", "8",
                             "--json", "--out", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, preexec_fn=preexec)


def _results(out: Path) -> tuple[dict, str, str, bytes]:
    stats = json.loads((out / "stats.json").read_text())
    for key in WALL:
        stats.pop(key)
    return (stats, (out / "events.jsonl").read_text(), (out / "trajectory.csv").read_text(),
            (out / "robot.btlog").read_bytes())


def test_a_split_run_takes_a_small_part_of_the_budget():
    """The kernel's charge of a --split run's six queues: under 4 % of a common 800-KB budget
    (it was 337,680 bytes, 41 %, with 10 x 8-KB lockstep queues)."""
    plan = run_queue_plan(split=True)
    assert len(plan) == 6
    charged = sum(queue_charge(*dimensions) for dimensions in plan.values())
    assert charged < 0.04 * 819200, charged
    assert queue_charge(10, 8192) == 82880  # ipc/mqueue.c: 96 bytes of kernel structures a message
    listed = subprocess.run([*HRI, "list", "queues"], capture_output=True, text=True, timeout=60, check=True,
                            preexec_fn=lambda: _budget(409600))
    assert listed.stdout.splitlines() == [
        "budget       409600 bytes (`ulimit -q`, shared by all this user's processes)",
        "run          6160 bytes in 2 queues, 66 fit at once",
        f"--split run  {charged} bytes in 6 queues, {409600 // charged} fit at once"]


def test_six_split_runs_at_once_give_the_run_alone(tmp_path):
    alone = _split_run(tmp_path / "alone")
    assert alone.communicate(timeout=300)[0] and alone.returncode == 0
    runs = [_split_run(tmp_path / f"run{i}") for i in range(6)]
    for proc in runs:
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0 and "Traceback" not in err, err
    expected = _results(tmp_path / "alone")
    assert expected[0]["complete"]
    for i in range(6):
        assert _results(tmp_path / f"run{i}") == expected


def test_a_tiny_budget_gives_the_same_run_over_stand_ins_without_a_traceback(tmp_path):
    """No queue fits in 1,000 bytes: the run's processes talk over a socket pair and the actor's
    queues are in-process, with the same bits (a plain run too)."""
    normal, tiny = _split_run(tmp_path / "normal"), _split_run(tmp_path / "tiny", _tiny_budget)
    for proc in (normal, tiny):
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0 and err == "", err
        assert json.loads(out)["complete"]
    assert _results(tmp_path / "tiny") == _results(tmp_path / "normal")
    plain = subprocess.run([*HRI, "run", "coexistence", "--seed", "3", "--duration", "8", "--out",
                            str(tmp_path / "plain")], capture_output=True, text=True, timeout=300,
                           preexec_fn=_tiny_budget)
    assert plain.returncode == 0 and plain.stderr == ""
    assert _results(tmp_path / "plain") == _results(tmp_path / "normal")


def test_a_killed_tree_process_over_sockets_ends_the_run_with_one_line(tmp_path):
    proc = subprocess.Popen([*HRI, "run", "coexistence", "--split", "--duration", "600", "--seed", "3",
                             "--out", str(tmp_path / "run")], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, preexec_fn=_tiny_budget)
    wait_ticking(tmp_path / "run")
    trees = child_processes(proc.pid)
    assert len(trees) == 2, "the split run did not start ticking"
    os.kill(trees[1], signal.SIGKILL)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"the robot tree's process (pid {trees[1]}) was killed "
                                                   "by SIGKILL at t = "), err
    stats = json.loads((tmp_path / "run" / "stats.json").read_text())
    assert stats["complete"] is False and stats["sim_time_s"] > 0
    deadline = time.monotonic() + 10
    while Path(f"/proc/{trees[0]}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not Path(f"/proc/{trees[0]}").exists()


_CREATE_IN_TINY_BUDGET = """
import sys
from hri.base.mqueue import RunQueues, MQueueError
with RunQueues(sys.argv[1]) as rq:
    rq.create("probe", 4, 1024)
"""


def test_a_queue_beyond_the_budget_is_one_line_with_the_figures_and_the_fix(tmp_path):
    done = subprocess.run([sys.executable, "-c", _CREATE_IN_TINY_BUDGET, str(tmp_path / "registry")],
                          capture_output=True, text=True, timeout=60, preexec_fn=_tiny_budget)
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("hri.base.mqueue.QueueBudgetShort: /hri-")
    assert "message queues of 4480 bytes do not fit in the user's queue budget (`ulimit -q` 1000 bytes" in last
    assert "raise the limit (`ulimit -q`" in last
    bench = subprocess.run([*HRI, "bench", "--only", "roundtrip", "--messages", "10", "--repeat", "1"],
                           capture_output=True, text=True, timeout=120, preexec_fn=_tiny_budget)
    assert bench.returncode != 0 and "Traceback" not in bench.stderr
    lines = [line for line in bench.stderr.splitlines() if not line.startswith("bench: ")]
    assert len(lines) == 1 and "`ulimit -q` 1000 bytes" in lines[0], bench.stderr


def test_reserve_makes_all_the_queues_or_none(tmp_path, monkeypatch):
    real = posix_ipc.MessageQueue
    made = []

    def second_refused(name, *args, **kwargs):
        if args and args[0] == posix_ipc.O_CREX:
            if len(made) == 1:  # creating the second queue: the kernel's EMFILE
                raise OSError("This process already has the maximum number of files open")
            made.append(name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(posix_ipc, "MessageQueue", second_refused)
    with RunQueues(tmp_path) as rq:
        reason = rq.reserve(ActorLink.plan())
        assert reason == rq.short and "do not fit in the user's queue budget" in reason
        assert rq.names == [] and not queue_exists(made[0])
        assert json.loads(rq.registry_path.read_text())["queues"] == []
        link = ActorLink(rq)  # the in-process stand-ins
        assert rq.names == [] and link.action_name.startswith(rq.prefix)
    monkeypatch.setattr(posix_ipc, "MessageQueue", real)
    with RunQueues(tmp_path) as rq:
        assert rq.reserve(ActorLink.plan()) is None and len(rq.names) == 2
        ActorLink(rq)  # hands out the reserved queues
        assert len(rq.names) == 2
        with pytest.raises(MQueueError, match="already has a queue of that name"):
            rq.create("actor-action", *ActorLink.plan()["actor-action"])
