"""State streams with keep-last semantics: a slow reader gets the newest state, never a backlog.

A service publishes samples of a state (the person's zone and pose, the joint state, the
called flag) with :meth:`Publisher.publish`; each sample is numbered, and the number travels
in the frame's request-id field. A :class:`Subscription` keeps only the newest sample by that
number: a sample older than the one it holds (overtaken by jitter) is dropped and counted,
and reading never yields an old sample after a newer one. Keep-last also holds on the way
(the network's bandwidth limiter and the receiver's inbox replace an older waiting sample of
the same stream), so a congested or slow path delays a state but never queues a history of it.

Subscribing is a request to the publishing service (SUBSCRIBE, answered with the current
state if there is one). A subscribe that is lost or times out is sent again until the first
answer or sample arrives (once per tick of the subscribing node), so a lossy channel delays
a subscription but never kills it; a refusal (no such stream) is kept in ``error``.
"""

from __future__ import annotations

from typing import Any, Callable, Protocol

from .codec import Frame, Kind
from .errors import CallTimeout, NetError, QueueFull
from .future import Future
from .transport import Endpoint


class StreamNode(Protocol):
    """What publishers and subscriptions use of the node they belong to
    (:class:`~hri.net.node.Node`)."""

    endpoint: Endpoint
    clock: Callable[[], float]

    @property
    def id(self) -> int: ...

    def call(self, address: int, channel: str, op: str, payload: Any = None, *,
             timeout: float | None = None, kind: Kind = Kind.REQUEST) -> Future: ...

    def unsubscribe(self, subscription: "Subscription") -> None: ...


class Publisher:
    """Sends one stream of one service to its subscribers."""

    def __init__(self, node: StreamNode, service: str, stream: str):
        self.node = node
        self.service = service
        self.stream = stream
        self.seq = 0
        self.state: Any = None
        self.subscribers: dict[int, None] = {}  # an ordered set: sending order is deterministic
        self.full = 0  # samples a full queue did not take

    def __repr__(self) -> str:
        return f"Publisher({self.service}.{self.stream}, {len(self.subscribers)} subscribers)"

    def publish(self, state: Any) -> int:
        """Send ``state`` as the next sample; return how many subscribers it was sent to."""
        self.seq += 1
        self.state = state
        sent = 0
        for address in list(self.subscribers):
            if self._send(address):
                sent += 1
        return sent

    def add(self, address: int) -> None:
        self.subscribers[address] = None

    def remove(self, address: int) -> None:
        self.subscribers.pop(address, None)

    def current(self) -> dict[str, Any] | None:
        """The newest sample, for a new subscriber: ``{"seq", "state"}``."""
        return {"seq": self.seq, "state": self.state} if self.seq else None

    def _send(self, address: int) -> bool:
        frame = Frame(Kind.STREAM, self.node.id, address, self.seq, self.service, self.stream,
                      self.state, self.node.clock())
        try:
            self.node.endpoint.send(frame)
        except QueueFull:
            self.full += 1  # the next sample supersedes this one anyway
            return False
        except NetError:
            self.remove(address)  # the subscriber is gone
            return False
        return True


class Subscription:
    """The newest sample of one stream, as it arrives; read it with :meth:`latest` or :meth:`take`."""

    def __init__(self, node: StreamNode, address: int, service: str, stream: str,
                 on_update: Callable[[Any], None] | None = None, timeout: float | None = None):
        self.node = node
        self.address = address
        self.service = service
        self.stream = stream
        self.on_update = on_update
        self.timeout = timeout
        self.seq = 0
        self.sent_at: float | None = None
        self.received_at: float | None = None
        self.received = 0
        self.stale = 0  # samples older than the one held (reordered on the way)
        self.attempts = 0
        self.established = False
        self.closed = False
        self.retry_due = False
        self.error: NetError | None = None
        self._state: Any = None
        self._unread = False
        self.request: Future | None = None

    def __repr__(self) -> str:
        return f"Subscription({self.service}.{self.stream} from {self.address}, seq {self.seq})"

    @property
    def key(self) -> tuple[int, str, str]:
        return (self.address, self.service, self.stream)

    def latest(self) -> Any:
        """The newest state received (None before the first); marks it read."""
        self._unread = False
        return self._state

    def take(self) -> Any:
        """The newest state if it has not been read yet, else None."""
        if not self._unread:
            return None
        return self.latest()

    @property
    def fresh(self) -> bool:
        """Whether a sample arrived since the last read."""
        return self._unread

    def age(self, now: float | None = None) -> float | None:
        """Simulated seconds since the newest sample was published (None before the first)."""
        if self.sent_at is None:
            return None
        return (self.node.clock() if now is None else now) - self.sent_at

    def start(self) -> None:
        """Send the subscription request (again)."""
        if self.closed or self.established:
            return
        self.attempts += 1
        self.request = self.node.call(self.address, self.service, self.stream, None,
                                      timeout=self.timeout, kind=Kind.SUBSCRIBE)
        self.request.add_done_callback(self._answered)

    def _answered(self, future: Future) -> None:
        if future.done:
            self.established = True
            current = future.value
            if isinstance(current, dict) and "seq" in current:
                self.accept(int(current["seq"]), current.get("state"), future.sent_at)
        elif isinstance(future.error, (CallTimeout, QueueFull)):
            self.retry_due = True  # lost or crowded out: ask again on the node's next tick
        else:
            self.error = future.error  # refused (no such stream): asking again will not help

    def retry(self) -> None:
        """Send a subscription that failed for a passing reason again (called by the node)."""
        if self.retry_due:
            self.retry_due = False
            self.start()

    def accept(self, seq: int, state: Any, sent_at: float) -> None:
        """Take a sample if it is newer than the one held."""
        self.established = True
        if seq <= self.seq:
            self.stale += 1
            return
        self.received += 1
        self.seq, self._state, self.sent_at = seq, state, sent_at
        self.received_at = self.node.clock()
        self._unread = True
        if self.on_update is not None:
            self.on_update(state)

    def close(self) -> None:
        """Stop the stream (tells the publisher; a lost notice only costs it some sends)."""
        if self.closed:
            return
        self.closed = True
        self.node.unsubscribe(self)
