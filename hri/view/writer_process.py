"""A :class:`~hri.view.channel_writer.ChannelWriter` in a child process of its own, for the
sinks that take every message (the MCAP file): building and encoding the messages and writing
the file cost about as much as reading the state they come from, and on a machine with a
second core they need not slow the run. The run's process reads its state as before and sends
plain records through a pipe (:class:`WriterProcess` has the writer's methods).

The child is ``python -m hri.view.writer_process`` (a fresh interpreter: nothing of the run's
process is forked, and a script that runs hri needs no main guard) in a session of its own, so
that Ctrl-C reaches only the run's process, which decides how the file ends; when the run's
process goes away without a word (killed), the child discards what it wrote: no half file is
left. An error in the child ends its writing; the run learns it when it closes the writer, as
one line, and the file is discarded.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import socket
import subprocess
import sys
from multiprocessing.connection import Connection
from typing import Any, Callable, Mapping, Sequence

from hri.base.errors import HriError
from hri.kinematics.link_frames import LinkFrames
from hri.view.channel_writer import ChannelWriter, Scene, Sink

#: messages go to the child in batches of this many: a write to the pipe wakes the child, which
#: costs more than the message (about 40 us each on a 2-core machine)
BATCH = 32
#: how long the run waits for the child to start (a fresh interpreter importing the SDK) and to
#: finish the file when the run ends
WAIT_S = 120.0


def use_process() -> bool:
    """Whether a writer may have a child process: not inside a daemonic process (a batch's
    pool worker may have none) and not where the run may use a single CPU (the child would
    only take the run's time)."""
    return not multiprocessing.current_process().daemon and len(os.sched_getaffinity(0)) > 1


class WriterProcess:
    """The writer's methods, carried out in a child process (see the module docstring)."""

    def __init__(self, sinks: Sequence[Sink], trees: Mapping[str, Sequence[Mapping[str, Any]]], what: str,
                 robot: LinkFrames | None = None) -> None:
        # what: the sinks in words (the option and its path), for the one line of an error
        self.what = what
        ours, theirs = socket.socketpair()
        try:
            self._process = subprocess.Popen([sys.executable, "-m", __name__, str(theirs.fileno())],
                                             pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL,
                                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                             start_new_session=True)
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        self._conn = Connection(ours.detach())
        self._names: tuple[str, ...] | None = None
        self._ended = False
        self._batch: list[tuple] = []
        try:
            self._send((list(sinks), {name: list(nodes) for name, nodes in trees.items()}, robot))
            reply = self._reply()
        except BaseException:
            self._abandon()
            raise
        if reply is not None:
            self._abandon()
            raise HriError(f"{self.what}: {reply}")

    def wants_samples(self) -> bool:
        return True  # a file takes every sample

    def scene(self, source: Callable[[], Scene], t: float) -> None:
        scene = source()
        plain = Scene(scene.fixed, scene.zones, dict(scene.robot), {name: dict(links) for name, links in scene.people.items()},
                      scene.part)
        self._queue(("scene", plain, t))

    def sample(self, t: float, names: tuple[str, ...], values: list[float], joints: tuple,
               safety: Mapping[str, Any], parts: frozenset[int]) -> None:
        """The frames' names go only when they changed."""
        sent = None if names == self._names else names
        self._names = names
        self._queue(("sample", t, sent, values, joints, safety, parts))

    def events(self, events: Sequence[Mapping[str, Any]]) -> None:
        self._queue(("events", list(events)))

    def end(self, discard: bool) -> None:
        """The file closed and moved into place (or with ``discard`` removed) by the child;
        an error of the child's is raised here, its file discarded."""
        if self._ended:
            return
        self._ended = True
        try:
            self._queue(("end", discard), flush=True)
            reply = self._reply()
        finally:
            self._stop()
        if reply is not None and not discard:
            raise HriError(f"{self.what}: {reply}")

    def _abandon(self) -> None:
        """The start failed: nothing more is sent."""
        self._ended = True
        self._stop()

    def _stop(self) -> None:
        """The pipe closed, the child waited for (killed if it does not end)."""
        self._conn.close()
        try:
            self._process.wait(WAIT_S)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()

    def _queue(self, message: tuple, flush: bool = False) -> None:
        self._batch.append(message)
        if flush or len(self._batch) >= BATCH:
            batch, self._batch = self._batch, []
            self._send(batch)

    def _send(self, message: Any) -> None:
        try:
            self._conn.send_bytes(pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL))
        except (BrokenPipeError, ConnectionResetError, OSError):
            raise HriError(f"{self.what}: the writer's process ended ({self._exit()})") from None

    def _reply(self) -> str | None:
        """The child's answer: None (done), or its error."""
        try:
            if not self._conn.poll(WAIT_S):
                return f"the writer's process did not answer in {WAIT_S:g} s"
            return self._conn.recv()
        except (EOFError, OSError):
            return f"the writer's process ended ({self._exit()})"

    def _exit(self) -> str:
        try:
            code = self._process.wait(1.0)
        except subprocess.TimeoutExpired:
            return "still running"
        return f"exit code {code}"


def _serve(conn: Connection) -> None:
    """The child: open the writer for the sinks the run sends, answer None (or the error),
    then carry out the messages until ``end``; the run's process gone (the pipe closed):
    discard."""
    try:
        sinks, trees, robot = pickle.loads(conn.recv_bytes())
        writer = ChannelWriter(sinks, trees, robot)
    except BaseException as err:  # noqa: BLE001 - any failure is the one line the run reports
        conn.send(f"{type(err).__name__}: {err}")
        return
    conn.send(None)
    state = _State(writer)
    while state.running:
        try:
            batch = pickle.loads(conn.recv_bytes())
        except (EOFError, OSError):
            writer.end(discard=True)
            return
        for message in batch:
            reply = state.carry_out(message)
            if not state.running:
                conn.send(reply)
                break


class _State:
    """The child's writer and what it has been told: the frames' names, its first error."""

    def __init__(self, writer: ChannelWriter) -> None:
        self.writer = writer
        self.running = True
        self.error: str | None = None
        self.names: tuple[str, ...] = ()

    def carry_out(self, message: tuple) -> str | None:
        """One message; at ``end``, the reply (None, or the error)."""
        kind = message[0]
        if kind == "end":
            self.running = False
            return _end(self.writer, message[1] or self.error is not None) or self.error
        if self.error is not None:
            return None  # the file is discarded at the end: nothing more to write
        try:
            if kind == "sample":
                t, sent, values, joints, safety, parts = message[1:]
                self.names = sent if sent is not None else self.names
                self.writer.sample(t, self.names, values, joints, safety, parts)
            elif kind == "scene":
                scene, t = message[1:]
                self.writer.scene(lambda: scene, t)
            elif kind == "events":
                self.writer.events(*message[1:])
        except Exception as err:  # noqa: BLE001 - reported at the end, as one line
            self.error = f"{type(err).__name__}: {err}"
        return None


def _end(writer: ChannelWriter, discard: bool) -> str | None:
    try:
        writer.end(discard)
    except Exception as err:  # noqa: BLE001
        return f"{type(err).__name__}: {err}"
    return None


if __name__ == "__main__":
    _serve(Connection(int(sys.argv[1])))
