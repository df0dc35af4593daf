"""hri.base.mqueue: per-run POSIX message queues, private, registered and always removed."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import posix_ipc
import pytest

from hri.base import mqueue
from hri.actor.protocol import ActionMessage, ActorState, FeedbackMessage
from hri.actor.queues import ActorLink, QueueFullError
from hri.base.geometry import Pose
from hri.base.mqueue import MQueueError, RunQueues, cleanup_stale, queue_exists


@pytest.fixture
def registry(tmp_path) -> Path:
    """A private registry folder per test, so stale entries of other runs do not interfere."""
    folder = tmp_path / "registry"
    return folder


def _mode(queue: posix_ipc.MessageQueue) -> int:
    return stat.S_IMODE(os.fstat(queue.mqd).st_mode)


def test_queues_are_private_prefixed_and_registered(registry):
    with RunQueues(registry) as rq:
        assert mqueue.PREFIX_PATTERN.match(rq.prefix)
        assert rq.prefix.startswith(f"/hri-{os.getpid()}-")
        queue = rq.create("a", max_messages=4, message_size=64)
        assert queue.name == rq.prefix + "-a"
        assert _mode(queue) == 0o600
        assert queue.max_messages == 4 and queue.max_message_size == 64
        assert stat.S_IMODE(os.stat(registry).st_mode) == 0o700
        record = json.loads(rq.registry_path.read_text())
        assert record["pid"] == os.getpid()
        assert record["queues"] == [queue.name]
        assert stat.S_IMODE(os.stat(rq.registry_path).st_mode) == 0o600
        assert queue_exists(queue.name)
    assert not queue_exists(queue.name)
    assert not rq.registry_path.exists()


def test_mode_is_0600_even_under_a_restrictive_umask(registry):
    old = os.umask(0o277)  # would leave 0400
    try:
        with RunQueues(registry) as rq:
            assert _mode(rq.create("strict", 2, 16)) == 0o600
    finally:
        os.umask(old)


def test_unlinked_after_exception_and_cleanup_is_idempotent(registry):
    with pytest.raises(RuntimeError, match="boom"):
        with RunQueues(registry) as rq:
            names = [rq.create("x", 2, 16).name, rq.create("y", 2, 16).name]
            assert all(queue_exists(name) for name in names)
            raise RuntimeError("boom")
    assert not any(queue_exists(name) for name in names)
    assert list(registry.iterdir()) == []
    rq.close()
    rq.close()
    with pytest.raises(MQueueError):
        rq.create("z", 2, 16)


def test_two_runs_in_one_process_have_different_prefixes(registry):
    with RunQueues(registry) as first, RunQueues(registry) as second:
        assert first.prefix != second.prefix
        assert first.create("q", 2, 16).name != second.create("q", 2, 16).name
        assert len(list(registry.glob("*.json"))) == 2


def test_rejects_bad_names_duplicates_and_limits(registry):
    limits = mqueue.system_limits()
    with RunQueues(registry) as rq:
        with pytest.raises(ValueError):
            rq.create("a/b")
        rq.create("dup", 2, 16)
        with pytest.raises(MQueueError, match="already"):
            rq.create("dup", 2, 16)
        with pytest.raises(MQueueError, match="msg_max"):
            rq.create("many", max_messages=limits["msg_max"] + 1, message_size=16)
        with pytest.raises(MQueueError, match="msgsize_max"):
            rq.create("big", max_messages=2, message_size=limits["msgsize_max"] + 1)
        assert rq.names == [rq.prefix + "-dup"]


def test_sigterm_handler_is_installed_only_while_a_run_is_open(registry):
    before = signal.getsignal(signal.SIGTERM)
    with RunQueues(registry) as rq:
        rq.create("s", 2, 16)
        if before is signal.SIG_DFL:
            assert signal.getsignal(signal.SIGTERM) is mqueue._on_sigterm
    assert signal.getsignal(signal.SIGTERM) == before


def test_an_existing_sigterm_handler_is_left_alone(registry):
    def mine(signum, frame):
        pass

    previous = signal.signal(signal.SIGTERM, mine)
    try:
        with RunQueues(registry) as rq:
            rq.create("s", 2, 16)
            assert signal.getsignal(signal.SIGTERM) is mine
        assert signal.getsignal(signal.SIGTERM) is mine
    finally:
        signal.signal(signal.SIGTERM, previous)


# ------------------------------------------------------------------------------------------
# Other processes: SIGTERM, SIGKILL, cleanup_stale

CHILD = textwrap.dedent("""
    import json, sys, time
    from hri.base.mqueue import RunQueues
    from hri.actor.queues import ActorLink
    with RunQueues(sys.argv[1]) as rq:
        link = ActorLink(rq)
        print(json.dumps({"prefix": rq.prefix, "queues": rq.names}), flush=True)
        time.sleep(120)
""")


class Child:
    def __init__(self, registry: Path):
        self.process = subprocess.Popen([sys.executable, "-c", CHILD, str(registry)],
                                        stdout=subprocess.PIPE, text=True)
        line = self.process.stdout.readline()
        assert line, "child did not start"
        info = json.loads(line)
        self.prefix, self.queues = info["prefix"], info["queues"]
        self.registry_file = registry / (self.prefix.lstrip("/") + ".json")

    def stop(self, sig: int) -> int:
        self.process.send_signal(sig)
        code = self.process.wait(timeout=30)
        self.process.stdout.close()
        return code

    def kill_quietly(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=30)
        self.process.stdout.close()
        for name in self.queues:  # never leak from a failing test
            try:
                posix_ipc.unlink_message_queue(name)
            except posix_ipc.ExistentialError:
                pass


def test_queues_unlinked_when_run_gets_sigterm(registry):
    child = Child(registry)
    try:
        assert len(child.queues) == 2
        assert all(queue_exists(name) for name in child.queues)
        assert child.registry_file.exists()
        code = child.stop(signal.SIGTERM)
        assert code == 128 + signal.SIGTERM
        assert not any(queue_exists(name) for name in child.queues)
        assert not child.registry_file.exists()
    finally:
        child.kill_quietly()


def test_cleanup_stale_removes_killed_run_and_keeps_live_run(registry):
    killed, live = Child(registry), Child(registry)
    try:
        assert killed.stop(signal.SIGKILL) == -signal.SIGKILL
        assert all(queue_exists(name) for name in killed.queues)  # SIGKILL cannot clean up
        assert killed.registry_file.exists()

        assert cleanup_stale(registry) == 2

        assert not any(queue_exists(name) for name in killed.queues)
        assert not killed.registry_file.exists()
        assert all(queue_exists(name) for name in live.queues)
        assert live.registry_file.exists()
        assert cleanup_stale(registry) == 0

        assert live.stop(signal.SIGTERM) == 128 + signal.SIGTERM
        assert not any(queue_exists(name) for name in live.queues)
    finally:
        killed.kill_quietly()
        live.kill_quietly()


def test_cleanup_stale_counts_a_killed_run_not_yet_reaped_as_gone(registry):
    """A run killed with SIGKILL whose parent has not waited for it yet is a zombie: gone,
    though its pid still answers (a tree process cleaning up after a killed simulation)."""
    child = Child(registry)
    try:
        os.kill(child.process.pid, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and "Z" not in Path(f"/proc/{child.process.pid}/stat").read_text().rsplit(")", 1)[1][:3]:
            time.sleep(0.01)
        assert cleanup_stale(registry) == 2
        assert not any(queue_exists(name) for name in child.queues)
    finally:
        child.kill_quietly()


def test_cleanup_stale_recognises_a_reused_pid_and_ignores_foreign_names(registry):
    registry.mkdir(mode=0o700)
    prefix = f"/hri-{os.getpid()}-{'0' * 12}"
    planted = posix_ipc.MessageQueue(prefix + "-old", posix_ipc.O_CREX, mode=0o600,
                                     max_messages=2, max_message_size=16)
    foreign = posix_ipc.MessageQueue(f"/hri-test-foreign-{os.getpid()}", posix_ipc.O_CREX,
                                     mode=0o600, max_messages=2, max_message_size=16)
    try:
        # our own (live) pid, but a different start time: the pid was reused, the run is dead
        record = {"pid": os.getpid(), "start_time": -1,
                  "queues": [planted.name, foreign.name]}
        (registry / (prefix.lstrip("/") + ".json")).write_text(json.dumps(record))
        with RunQueues(registry) as live:
            live.create("mine", 2, 16)
            assert cleanup_stale(registry) == 1
            assert not queue_exists(planted.name)
            assert queue_exists(foreign.name)  # not of that run's prefix: never touched
            assert queue_exists(live.prefix + "-mine")
            assert live.registry_path.exists()
    finally:
        for queue in (planted, foreign):
            queue.close()
            try:
                queue.unlink()
            except posix_ipc.ExistentialError:
                pass


def test_registry_folder_of_someone_else_is_refused(tmp_path):
    target = tmp_path / "elsewhere"
    target.mkdir()
    link = tmp_path / "link"
    link.symlink_to(target)
    with pytest.raises(MQueueError, match="symlink"):
        cleanup_stale(link)


# ------------------------------------------------------------------------------------------
# The actor's link: keep-last feedback, full action queue


#: The actor's queues, and their in-process stand-ins of a run whose queue budget was short
#: (hri.base.queue_standins): full and empty alike.
LINKS = pytest.mark.parametrize("short", [None, "the budget is short"], ids=["queues", "stand-ins"])


@LINKS
def test_feedback_keeps_the_newest_when_the_queue_is_full(registry, short):
    with RunQueues(registry) as rq:
        rq.short = short
        link = ActorLink(rq, max_messages=4)
        assert link.action_name == rq.prefix + "-actor-action"
        assert link.feedback_name == rq.prefix + "-actor-feedback"
        plugin, server = link.plugin_endpoint(), link.server_endpoint()
        for sequence in range(7):  # 3 more than fit, and it never blocks
            plugin.send(FeedbackMessage(ActorState.IDLE, 0.0, Pose(), sequence, sequence / 240))
        assert plugin.overwritten == 3
        received = []
        while (feedback := server.receive()) is not None:
            received.append(feedback.sequence)
        assert received == [3, 4, 5, 6]


@LINKS
def test_full_action_queue_raises(registry, short):
    with RunQueues(registry) as rq:
        rq.short = short
        link = ActorLink(rq, max_messages=2)
        plugin, server = link.plugin_endpoint(), link.server_endpoint()
        server.send(ActionMessage(ActorState.ANIMATION, "wave", sequence=1))
        server.send(ActionMessage(ActorState.IDLE, sequence=1))
        with pytest.raises(QueueFullError, match="action queue full"):
            server.send(ActionMessage(ActorState.ANIMATION, "wave", sequence=2))
        assert plugin.receive().state is ActorState.ANIMATION
        assert plugin.receive().state is ActorState.IDLE
        assert plugin.receive() is None
        assert len(rq.names) == (0 if short else 2)


def test_undecodable_records_are_dropped_and_counted(registry):
    with RunQueues(registry) as rq:
        link = ActorLink(rq)
        plugin, server = link.plugin_endpoint(), link.server_endpoint()
        link.actions.send(b"\0" * 10)
        link.actions.send(b"\xff" * 336)
        good = ActionMessage(ActorState.MOVEMENT, "walk", 1.2, Pose(1.0, 2.0), 5)
        server.send(good)
        assert plugin.receive() == good
        assert plugin.dropped == 2
        link.feedback.send(b"junk")
        assert server.receive() is None
        assert server.dropped == 1


def _send_later(queue_name: str, message: ActionMessage, delay_s: float) -> subprocess.Popen:
    """Another process that sends ``message`` on the queue after ``delay_s``."""
    code = textwrap.dedent(f"""
        import time, posix_ipc
        queue = posix_ipc.MessageQueue({queue_name!r})
        time.sleep({delay_s})
        queue.send({message.encode()!r})
    """)
    return subprocess.Popen([sys.executable, "-c", code])


def test_a_wait_polls_then_sleeps_until_the_message_comes_and_gives_up_at_its_timeout(registry):
    with RunQueues(registry) as rq:
        link = ActorLink(rq)
        plugin, server = link.plugin_endpoint(), link.server_endpoint()
        action = ActionMessage(ActorState.MOVEMENT, "walk", 1.2, Pose(1.0, 2.0), 5)
        server.send(action)
        assert plugin.wait(1.0) == action  # already there: found by the first poll
        sender = _send_later(link.action_name, action, 0.3)  # long after the polling ends
        try:
            start = time.perf_counter()
            assert plugin.wait(30.0) == action
            assert 0.2 < time.perf_counter() - start < 10.0
        finally:
            sender.wait(10)
        start = time.perf_counter()
        assert plugin.wait(0.05) is None  # nothing comes: None after the timeout
        assert 0.05 <= time.perf_counter() - start < 1.0
        assert plugin.wait(0.0001, spin_s=0.001) is None  # a timeout within the polling
        assert link.actions.block is False  # the handle's mode is as it was
        link.actions.send(b"junk")
        server.send(action)
        assert plugin.wait(1.0) == action and plugin.dropped == 1  # undecodable: skipped
