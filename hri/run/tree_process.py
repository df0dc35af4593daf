"""Trees in processes of their own (``hri run --split``): the simulation's relay and the tree process.

Like the thesis's simulator and tree executors, ``--split`` keeps the simulation (world,
actor plugin and server, robot, safety monitor, and the service network with its quality)
in the ``hri`` process and runs each tree in a process of its own (``python -m
hri.run.tree_process``, a :class:`~hri.run.tree_host.TreeHost` there). A tree process knows the
broker's address and nothing else; it reaches the simulation only through the network.

**Lockstep.** Each tree process is tied to the simulation by two POSIX message queues, to the
tree and from it (created by the run: per-run names, mode 0600, unlinked when the run ends;
:data:`PIPE_DEPTH` messages of :data:`PIPE_MESSAGE_SIZE` bytes each). When the user's queue
budget has no room for the run's queues, a socket pair takes their place
(:mod:`hri.base.queue_standins`): the same messages, so the same run.
The network keeps an endpoint for each remote tree. Once per tree period the simulation's
:class:`RemoteTreeHost`

1. forwards the frames the network delivered to that endpoint since the last tick,
2. sends ``tick`` with the simulated time,
3. reads the frames the tree sent while it ticked and hands them to the network as sent at
   that time, until ``done`` (the tree's status, the events its nodes emitted and, for the
   run's ``.btlog``, the status transitions of the tick).

The person's tree first, then the robot's: the same frames in the same order at the same
simulated times as in one process, so a seed gives the same run either way. Messages longer
than a queue message travel in parts (a first byte says whether more follow).

**Failures end the run with one clear line, and no queue is left behind:**

- a tree process that exits, is killed or stops answering (``TREE_TIMEOUT_S`` of wall time,
  env ``HRI_TREE_TIMEOUT_S``; ``TREE_START_TIMEOUT_S`` to start) while the simulation waits
  for it, which it does every tree period: the simulation notices within one tree period of simulated time, stops the
  other tree process and ends the run (statistics marked incomplete; queues unlinked);
- a tree whose node fails (an error of the tree file, a node's exception while it is built or
  ticks, a service not found): the tree process reports the error's line and traceback, the
  run ends with that line, the traceback kept as in one process;
- the simulation killed: each tree process notices that its parent is gone within
  ``POLL_S`` of wall time, removes the dead run's queues (:func:`hri.base.mqueue.cleanup_stale`)
  and exits with a message.

Ctrl-C goes to the ``hri`` process, which stops its tree processes; they ignore SIGINT.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import traceback
from collections import deque
from typing import Any, Callable

import numpy as np
import posix_ipc

from hri.bt.factory import NodeRegistry
from hri.bt.loggers.tree_xml import tree_xml
from hri.bt.status import TreeStatusLog
from hri.bt.tree import Tree
from hri.base.errors import HriError, exception_line
from hri.base.quiet import import_pybullet_quietly
from hri.base.mqueue import RunQueues, cleanup_stale, receive_waiting, system_limits
from hri.base.queue_standins import SocketQueue, socket_pair
from hri.net import Frame, Kind, Network, decode_frame, encode_frame
from hri.net.errors import CodecError
from hri.scenario.load import scenario_from_json
from hri.scenario.model import Scenario
from hri.run.tree_host import TickResult, TreeHost

TREE_TIMEOUT_S = float(os.environ.get("HRI_TREE_TIMEOUT_S", "30"))
#: Wall seconds a tree process may take to start (Python, PyBullet, the scenario and its tree):
#: a second or two alone, many more on a machine busy with other runs.
TREE_START_TIMEOUT_S = 120.0
POLL_S = 0.2  # wall seconds between checks that the other side still lives
LOCKSTEP = "lockstep"  # the channel of the relay's own messages (HEARTBEAT frames)
_MORE, _LAST = b"\x01", b"\x00"
#: The dimensions of each lockstep queue. Measured in the presets (docs/network.md): to the
#: tree at most 386 bytes, from it 90 % under 512 bytes and at most 1.9 KB (a tick's events
#: and transitions), a few messages a tick each way; longer messages travel in parts.
PIPE_MESSAGE_SIZE = 1024
PIPE_DEPTH = 4


def pipe_dimensions() -> tuple[int, int]:
    """The message size and depth of a lockstep queue, within the system's limits."""
    limits = system_limits()
    return min(PIPE_MESSAGE_SIZE, limits["msgsize_max"]), min(PIPE_DEPTH, limits["msg_max"])


def queue_plan(roles: tuple[str, ...] = ("person", "robot")) -> dict[str, tuple[int, int]]:
    """The queues the trees of ``roles`` in processes of their own take: suffix -> (depth, size)."""
    size, depth = pipe_dimensions()
    return {f"tree-{role}-{way}": (depth, size) for role in roles for way in ("in", "out")}


class PeerGone(HriError):
    """The process at the other end of a pipe ended or stopped answering."""


class Pipe:
    """Whole messages of any length over two message queues, with blocking, watched waits."""

    def __init__(self, inbox: posix_ipc.MessageQueue, outbox: posix_ipc.MessageQueue,
                 peer_alive: Callable[[], bool], peer: str, timeout: float | None) -> None:
        self.inbox, self.outbox = inbox, outbox
        self.inbox.block = self.outbox.block = True
        self.peer_alive = peer_alive
        self.peer = peer
        self.timeout = timeout  # wall seconds the peer may take; None: as long as it lives
        self._chunk = self.outbox.max_message_size - 1

    def _wait(self, operation: Callable[[float], Any], what: str) -> Any:
        deadline = None if self.timeout is None else time.monotonic() + self.timeout
        while True:
            try:
                return operation(POLL_S)
            except posix_ipc.BusyError:
                pass
            except posix_ipc.ExistentialError:
                raise PeerGone(f"{self.peer}: its message queue (or socket) is gone") from None
            if not self.peer_alive():
                raise PeerGone(f"{self.peer} ended")
            if deadline is not None and time.monotonic() > deadline:
                raise PeerGone(f"{self.peer} did not {what} within {self.timeout:g} s of wall time (hung?)")

    def send(self, data: bytes) -> None:
        for start in range(0, max(len(data), 1), self._chunk):
            part = data[start:start + self._chunk]
            flag = _MORE if start + self._chunk < len(data) else _LAST
            self._wait(lambda timeout: self.outbox.send(flag + part, timeout=timeout), "read its messages")

    def _receive_within(self, timeout: float) -> bytes:
        """The next queue message (polling briefly first: see receive_waiting); BusyError if none."""
        message = receive_waiting(self.inbox, timeout)
        if message is None:
            raise posix_ipc.BusyError(f"{self.peer}: nothing within {timeout:g} s")
        return message

    def receive(self) -> bytes:
        parts = []
        while True:
            message = self._wait(self._receive_within, "answer")
            parts.append(message[1:])
            if message[:1] != _MORE:
                return b"".join(parts)


def _control(op: str, payload: Any = None, t: float = 0.0) -> bytes:
    return encode_frame(Frame(Kind.HEARTBEAT, 0, 0, 0, LOCKSTEP, op, payload, t))


def _is_control(frame: Frame) -> bool:
    return frame.kind == Kind.HEARTBEAT and frame.channel == LOCKSTEP


def _ended(code: int) -> str:
    if code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with status {code}"


# --------------------------------------------------------------------------------------------
# The simulation's side


class RemoteTreeHost:
    """A tree in a process of its own, as the simulation sees it (the interface of :class:`TreeHost`)."""

    def __init__(self, role: str, scenario: Scenario, network: Network, broker_address: int,
                 seed: np.random.SeedSequence, run_queues: RunQueues, record_transitions: bool = False) -> None:
        self.role = role
        self.network = network
        self.endpoint = network.endpoint(f"{role}-tree")
        self.dropped = 0  # frames from another sender than this tree's endpoint
        self.socket: SocketQueue | None = None  # the stand-in for the queues, when the budget was short
        spec = {"role": role, "endpoint": self.endpoint.id, "broker": broker_address, "parent": os.getpid(),
                "seed": {"entropy": seed.entropy, "spawn_key": list(seed.spawn_key)},
                "scenario": scenario.document.to_json(), "record_transitions": record_transitions}
        size, depth = pipe_dimensions()
        passed: tuple[int, ...] = ()
        if run_queues.short is None:
            to_tree = run_queues.create(f"tree-{role}-in", depth, size)
            from_tree = run_queues.create(f"tree-{role}-out", depth, size)
            spec["queues"] = {"in": to_tree.name, "out": from_tree.name}
        else:
            ours, theirs = socket_pair()
            to_tree = from_tree = self.socket = SocketQueue(ours, run_queues.name(f"tree-{role}"), size)
            spec["socket"] = {"fd": theirs.fileno(), "size": size}
            passed = (theirs.fileno(),)
        try:
            self.process = subprocess.Popen([sys.executable, "-m", "hri.run.tree_process"],
                                            stdin=subprocess.PIPE, close_fds=True, pass_fds=passed)
        finally:
            if passed:
                theirs.close()  # the tree process has its copy
        self.process.stdin.write(json.dumps(spec).encode("utf-8"))
        self.process.stdin.close()
        self.pipe = Pipe(from_tree, to_tree, lambda: self.process.poll() is None,
                         f"the {role} tree's process (pid {self.process.pid})", TREE_TIMEOUT_S)
        try:
            self.tree, self.registry = _mirror_tree(role, scenario)
            self.status_log = TreeStatusLog(role, self.tree.root, str(scenario.trees[role]))
            self.pipe.timeout = max(TREE_TIMEOUT_S, TREE_START_TIMEOUT_S)  # a hung start is given up too
            self._expect("ready")
        except BaseException:  # the tree failed to load here or there: no process is left waiting
            self.close()
            raise
        self.pipe.timeout = TREE_TIMEOUT_S

    def _expect(self, op: str, t: float = 0.0) -> Any:
        """Read until the control message ``op``; frames on the way go into the network."""
        while True:
            try:
                data = self.pipe.receive()
            except PeerGone as gone:
                raise self._gone(gone, t) from None
            try:
                frame = decode_frame(data)
            except CodecError as error:
                raise HriError(f"the {self.role} tree's process sent a broken message: {error.message}") from None
            if not _is_control(frame):
                if frame.sender == self.endpoint.id:  # a frame can only leave from its own endpoint
                    self.network.submit(frame, data)
                else:
                    self.dropped += 1
                continue
            if frame.op == "error":
                raise _relayed_error(frame.payload)
            if frame.op == op:
                return frame.payload

    def _gone(self, gone: PeerGone, t: float) -> HriError:
        """The run's error when the process ended or hung (it is given a second to end)."""
        try:
            code = self.process.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            return HriError(f"{gone.message} at t = {t:.3f} s")
        return HriError(f"the {self.role} tree's process (pid {self.process.pid}) {_ended(code)} at t = {t:.3f} s")

    def tick(self, now: float, run_tree: bool = True) -> TickResult:
        try:
            for data in self.endpoint.take_raw():
                self.pipe.send(data)
            self.pipe.send(_control("tick", {"now": now, "run_tree": run_tree}, now))
        except PeerGone as gone:
            raise self._gone(gone, now) from None
        result = self._expect("done", now)
        events = [(float(t), str(event), dict(fields)) for t, event, fields in result["events"]]
        for t, event, fields in events:
            if event == "tree_status":
                self.status_log.apply(fields["changes"])
        return TickResult(bool(result["ticked"]), str(result["status"]), events, bytes(result["transitions"]))

    def take_transitions(self) -> bytes:
        """Nothing between ticks: the tree's transitions come with each tick's answer."""
        return b""

    def tree_xml(self) -> str:
        """The tree as BehaviorTree.CPP's loggers describe it (of the mirror: the same nodes)."""
        return tree_xml(self.tree, self.registry)

    def signal(self, sig: int) -> None:
        """Send ``sig`` to the tree's process (fault injection: ``tree_killed``, ``tree_hung``)."""
        os.kill(self.process.pid, sig)

    def close(self) -> None:
        """Ask the process to stop; kill it if it does not within a second."""
        if self.process.poll() is None:
            try:
                self.pipe.outbox.send(_control("stop"), timeout=0.1)
            except posix_ipc.Error:
                pass
            try:
                self.process.wait(timeout=1.0)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.socket is not None:
            self.socket.close()


def _mirror_tree(role: str, scenario: Scenario) -> tuple[Tree, NodeRegistry]:
    """The tree loaded here, never ticked, and its registry: its node statuses (``--show-trees``)
    are fed by its events, and it describes the tree in the run's ``.btlog``."""
    from hri.bt.blackboard import Blackboard
    from hri.bt.context import TreeContext
    from hri.bt.plugins import default_registry
    from hri.bt.plugins import load_plugins
    from hri.bt.xml_loader import load_tree

    registry = default_registry()
    load_plugins(registry, scenario.plugins, scenario.path.parent, str(scenario.path),
                 scenario.line_of("plugins"))
    path = str(scenario.trees[role])
    tree = load_tree(path, registry, TreeContext(np.random.default_rng(0), lambda: 0.0), Blackboard())
    return tree, registry


# --------------------------------------------------------------------------------------------
# The tree process


class PipeEndpoint:
    """The tree's network endpoint in its own process: frames out through the pipe, in from it."""

    def __init__(self, endpoint_id: int, pipe: Pipe) -> None:
        self.id = endpoint_id
        self.name = f"tree-{endpoint_id}"
        self.pipe = pipe
        self.inbox: deque[Frame] = deque()

    def send(self, frame: Frame) -> None:
        self.pipe.send(encode_frame(frame))

    def receive(self) -> Frame | None:
        return self.inbox.popleft() if self.inbox else None

    def close(self) -> None:
        self.inbox.clear()


def _serve(host: TreeHost, endpoint: PipeEndpoint, pipe: Pipe) -> None:
    """Answer the simulation's ticks until it says stop."""
    while True:
        frame = decode_frame(pipe.receive())
        if not _is_control(frame):
            endpoint.inbox.append(frame)
        elif frame.op == "tick":
            result = host.tick(float(frame.payload["now"]), bool(frame.payload["run_tree"]))
            pipe.send(_control("done", {"ticked": result.ticked, "status": result.status,
                                        "events": [[t, event, fields] for t, event, fields in result.events],
                                        "transitions": result.transitions}))
        elif frame.op == "stop":
            return


def main() -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the simulation's to handle
    spec = json.loads(sys.stdin.read())
    parent, role = int(spec["parent"]), spec["role"]
    if "socket" in spec:  # the run's queue budget was short: a socket pair in their place
        inbox = outbox = SocketQueue(socket.socket(fileno=int(spec["socket"]["fd"])), f"the {role} tree's socket",
                                     int(spec["socket"]["size"]))
    else:
        inbox = posix_ipc.MessageQueue(spec["queues"]["in"])
        outbox = posix_ipc.MessageQueue(spec["queues"]["out"])
    pipe = Pipe(inbox, outbox, lambda: os.getppid() == parent, f"the simulation (pid {parent})", None)
    try:
        endpoint = PipeEndpoint(int(spec["endpoint"]), pipe)
        import_pybullet_quietly()  # the scenario's robot settings are read by hri.robot.arm: no banner on stderr
        scenario = scenario_from_json(spec["scenario"])
        seed = np.random.SeedSequence(spec["seed"]["entropy"], spawn_key=spec["seed"]["spawn_key"])
        host = TreeHost(role, scenario, endpoint, int(spec["broker"]), seed, bool(spec["record_transitions"]))
        pipe.send(_control("ready"))
        _serve(host, endpoint, pipe)
        return 0
    except PeerGone as gone:
        cleanup_stale()  # the simulation could not remove its queues: they are the dead run's
        print(f"hri tree process ({role}): {gone.message}; removed its message queues", file=sys.stderr)
        return 1
    except Exception as error:  # noqa: BLE001 - reported to the simulation, which ends the run
        try:
            pipe.send(_control("error", _error_payload(role, error)))
        except PeerGone:
            cleanup_stale()
        return 1


def _error_payload(role: str, error: Exception) -> dict[str, Any]:
    """What the simulation needs to end the run with the error's line, as in one process, and
    to keep its traceback in the run's folder (a node's exception, or this process's own)."""
    if isinstance(error, HriError):
        return {"message": error.message, "file": error.file, "line": error.line, "traceback": error.traceback}
    return {"message": f"the {role} tree's process failed: {exception_line(error)}", "file": None, "line": None,
            "traceback": "".join(traceback.format_exception(error))}


def _relayed_error(payload: Any) -> HriError:
    """The error a tree process reported (:func:`_error_payload`), with its traceback."""
    if not isinstance(payload, dict):
        return HriError(str(payload))
    line = payload.get("line")
    error = HriError(str(payload.get("message")), payload.get("file") and str(payload["file"]),
                     line if isinstance(line, int) else None)
    error.traceback = payload["traceback"] if isinstance(payload.get("traceback"), str) else None
    return error


if __name__ == "__main__":
    sys.exit(main())
