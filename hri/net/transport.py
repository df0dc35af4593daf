"""Endpoints: where frames leave and enter a participant, and the POSIX message-queue transport.

Every participant of the service network talks through one :class:`Endpoint`: ``send`` a
frame (never blocks; a full queue raises :class:`~hri.net.errors.QueueFull`), ``receive`` the
next frame or None. Two implementations share that interface:

- :class:`hri.net.network.LocalEndpoint`: in one process, through the deterministic
  :class:`~hri.net.network.Network` in simulated time (latency, loss, bandwidth applied);
- :class:`MqEndpoint` here: between processes, one POSIX message queue per endpoint (its
  inbox), created by the run's :class:`~hri.base.mqueue.RunQueues` (per-run unpredictable names,
  mode 0600, registered, unlinked when the run ends, also after a crash by the next run's
  cleanup). Each frame is one queue message, so the queue keeps the frame boundaries; the
  length prefix inside the frame is still checked. Queues are opened non-blocking.

The process that owns the run creates every endpoint's queue (:meth:`MqTransport.create`)
and hands the others a :meth:`MqTransport.spec` (plain JSON); they attach with
:meth:`MqEndpoint.from_spec`. The transport moves bytes and does not delay them: in the split
mode the network quality is applied in simulated time by the simulation's
:class:`~hri.net.network.Network`, which relays the frames.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Protocol

import posix_ipc

from hri.base.mqueue import RunQueues, system_limits

from .codec import Frame, decode_frame, encode_frame
from .errors import CodecError, NetError, QueueFull


class Endpoint(Protocol):
    """What a :class:`~hri.net.node.Node` needs from a transport."""

    id: int
    name: str

    def send(self, frame: Frame) -> None:
        """Hand ``frame`` (whose ``sender`` is this endpoint) to the transport; never blocks."""

    def receive(self) -> Frame | None:
        """The next frame that arrived, or None."""

    def close(self) -> None:
        """Stop using the endpoint."""


_SUFFIX = "net-{id}"


class MqTransport:
    """Creates the endpoints' queues of one run (only the run's owning process does this)."""

    def __init__(self, run_queues: RunQueues, max_messages: int = 8, message_size: int = 4096):
        limits = system_limits()
        self.run_queues = run_queues
        self.max_messages = min(max_messages, limits["msg_max"])
        self.message_size = min(message_size, limits["msgsize_max"])
        self.directory: dict[int, str] = {}

    def create(self, endpoint_id: int) -> str:
        """Create the inbox of ``endpoint_id``; return the queue's full name."""
        if endpoint_id in self.directory:
            raise NetError(f"endpoint {endpoint_id} already has a queue")
        queue = self.run_queues.create(_SUFFIX.format(id=endpoint_id), self.max_messages,
                                       self.message_size)
        self.directory[endpoint_id] = queue.name
        return queue.name

    def spec(self, endpoint_id: int) -> dict[str, Any]:
        """What another process needs to attach ``endpoint_id`` (JSON-serialisable)."""
        if endpoint_id not in self.directory:
            raise NetError(f"endpoint {endpoint_id} has no queue")
        return {"id": endpoint_id, "directory": {str(k): v for k, v in self.directory.items()}}

    def endpoint(self, endpoint_id: int, name: str = "",
                 clock: Callable[[], float] | None = None) -> "MqEndpoint":
        """Attach ``endpoint_id`` in this process."""
        return MqEndpoint.from_spec(self.spec(endpoint_id), name=name, clock=clock)


def _open(name: str) -> posix_ipc.MessageQueue:
    try:
        queue = posix_ipc.MessageQueue(name)  # no O_CREAT: only the run's owner creates
    except posix_ipc.ExistentialError:
        raise NetError(f"message queue {name} does not exist (has its run ended?)") from None
    except posix_ipc.PermissionsError:
        raise NetError(f"message queue {name} is not ours") from None
    queue.block = False
    return queue


class MqEndpoint:
    """One endpoint over POSIX message queues: reads its own inbox, writes the others'."""

    def __init__(self, endpoint_id: int, directory: Mapping[int, str], *, name: str = "",
                 clock: Callable[[], float] | None = None):
        if endpoint_id not in directory:
            raise NetError(f"endpoint {endpoint_id} is not in the directory")
        self.id = int(endpoint_id)
        self.name = name or f"endpoint-{endpoint_id}"
        self.directory = {int(k): str(v) for k, v in directory.items()}
        self.clock = clock
        self._inbox = _open(self.directory[self.id])
        self._outboxes: dict[int, posix_ipc.MessageQueue] = {}
        self.dropped = 0  # received messages that were not valid frames
        self.closed = False

    @classmethod
    def from_spec(cls, spec: Mapping[str, Any], *, name: str = "",
                  clock: Callable[[], float] | None = None) -> "MqEndpoint":
        directory = {int(k): v for k, v in dict(spec["directory"]).items()}
        return cls(int(spec["id"]), directory, name=name, clock=clock)

    def _outbox(self, receiver: int) -> posix_ipc.MessageQueue:
        queue = self._outboxes.get(receiver)
        if queue is None:
            if receiver not in self.directory:
                raise NetError(f"{self.name}: no endpoint {receiver} in this run")
            queue = self._outboxes[receiver] = _open(self.directory[receiver])
        return queue

    def send(self, frame: Frame) -> None:
        if self.closed:
            raise NetError(f"{self.name}: endpoint is closed")
        if frame.sender != self.id:
            raise NetError(f"{self.name}: a frame from endpoint {frame.sender} cannot leave here")
        data = encode_frame(frame)
        queue = self._outbox(frame.receiver)
        if len(data) > queue.max_message_size:
            raise CodecError(f"frame of {len(data)} bytes exceeds the queue's message size "
                             f"{queue.max_message_size}")
        try:
            queue.send(data)
        except posix_ipc.BusyError:
            raise QueueFull(f"{queue.name}: inbox of endpoint {frame.receiver} is full "
                            f"({queue.max_messages} messages): its reader is not keeping up") from None
        except posix_ipc.ExistentialError:
            raise NetError(f"{queue.name}: endpoint {frame.receiver} is gone") from None

    def receive(self) -> Frame | None:
        while not self.closed:
            try:
                data, _priority = self._inbox.receive()
            except posix_ipc.BusyError:
                return None
            try:
                return decode_frame(data)
            except CodecError:
                self.dropped += 1  # not ours to interpret: skip it, keep the queue moving
        return None

    def close(self) -> None:
        """Close the handles (the queues themselves are unlinked by the run's owner)."""
        if self.closed:
            return
        self.closed = True
        for queue in (self._inbox, *self._outboxes.values()):
            try:
                queue.close()
            except posix_ipc.Error:
                pass
        self._outboxes.clear()
