"""Request and response: services and their handlers, the requests they get, clients calling them.

A :class:`Service` is a name, an identifier list (specific to general, for discovery) and
one handler per request kind (``op``). A handler gets a :class:`Request` and returns the
reply payload; raising a :class:`~hri.base.errors.HriError` (e.g. a
:class:`~hri.net.errors.NetError`) sends it back as an ERROR reply, which fails the caller's
future with the same error class. Any other exception is a bug of the service and is not
hidden. A handler that cannot answer at once calls ``request.defer()`` and later
``request.reply(value)`` or ``request.fail(error)``.

A call returns a :class:`~hri.net.future.Future` at once; the caller polls it each tick:
``pending``, ``done`` (``value``) or ``failed`` (``error``). Every request carries a request id that the
reply echoes; the caller's :class:`~hri.net.node.Node` matches replies by it and drops (and
counts) replies that no longer belong to a pending call: duplicates, replies after the
call's timeout, replies to calls superseded by a newer answered call (``supersede=True``:
the seed-``002`` rule for repeated control requests, an old answer must not overwrite a
newer one). The timeout is in simulated time: a reply arriving later than ``timeout`` after
the call counts as lost, and the future fails with :class:`~hri.net.errors.CallTimeout`.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Protocol, Sequence

from hri.base.errors import HriError

from .errors import NetError
from .future import Future
from .record import ServiceRecord
from .stream import Publisher, Subscription


class RpcNode(Protocol):
    """What requests, services and clients use of the node they belong to
    (:class:`~hri.net.node.Node`)."""

    clock: Callable[[], float]

    @property
    def id(self) -> int: ...

    def answer(self, request: "Request", value: Any, error: HriError | None) -> None: ...

    def publisher(self, service: str, stream: str) -> Publisher: ...

    def call(self, address: int, channel: str, op: str, payload: Any = None, *,
             timeout: float | None = None, supersede: bool | str = False) -> Future: ...

    def subscribe(self, address: int, service: str, stream: str,
                  on_update: Callable[[Any], None] | None = None,
                  timeout: float | None = None) -> Subscription: ...


class Request:
    """A request as its handler sees it."""

    def __init__(self, node: RpcNode, sender: int, request_id: int, service: str, op: str,
                 payload: Any, received_at: float):
        self.node = node
        self.sender = sender
        self.request_id = request_id
        self.service = service
        self.op = op
        self.payload = payload
        self.received_at = received_at
        self.deferred = False
        self.answered = False

    def defer(self) -> "Request":
        """Answer later with :meth:`reply` or :meth:`fail` (the handler's return is ignored)."""
        self.deferred = True
        return self

    def reply(self, value: Any = None) -> None:
        self._answer(value, None)

    def fail(self, error: HriError) -> None:
        self._answer(None, error)

    def _answer(self, value: Any, error: HriError | None) -> None:
        if self.answered:
            raise NetError(f"request {self.service}.{self.op} #{self.request_id} is already answered")
        self.answered = True
        self.node.answer(self, value, error)


Handler = Callable[[Request], Any]


class Service:
    """A name, identifiers (specific to general), handlers by request kind, stream names."""

    def __init__(self, name: str, identifiers: Sequence[str], handlers: Mapping[str, Handler] | None = None,
                 streams: Sequence[str] = ()):
        if not name or not isinstance(name, str):
            raise NetError(f"service name {name!r}: expected a non-empty string")
        self.name = name
        self.identifiers = tuple(identifiers)
        self.handlers = dict(handlers or {})
        self.streams = tuple(streams)
        self.node: RpcNode | None = None
        self._publishers: dict[str, Publisher] = {}

    def __repr__(self) -> str:
        return f"Service({self.name!r}, {list(self.identifiers)})"

    def record(self, address: int) -> ServiceRecord:
        """The broker's record of this service offered at endpoint ``address``."""
        return ServiceRecord(self.name, tuple(self.identifiers), address, tuple(self.handlers),
                             tuple(self.streams))

    def publisher(self, stream: str) -> Publisher:
        """The publisher of one of this service's streams (once the service is offered)."""
        if self.node is None:
            raise NetError(f"service {self.name}: offer it on a node before publishing")
        if stream not in self.streams:
            raise NetError(f"service {self.name} has no stream {stream!r} (has: {', '.join(self.streams)})")
        if stream not in self._publishers:
            self._publishers[stream] = self.node.publisher(self.name, stream)
        return self._publishers[stream]

    def publish(self, stream: str, state: Any) -> int:
        """Send ``state`` to every subscriber of ``stream``; return how many it went to."""
        return self.publisher(stream).publish(state)


class Client:
    """Calls one discovered service from one node."""

    def __init__(self, node: RpcNode, record: ServiceRecord, timeout: float | None = None):
        self.node = node
        self.record = record
        self.timeout = timeout

    def __repr__(self) -> str:
        return f"Client({self.record.name!r} at {self.record.address})"

    def call(self, op: str, payload: Any = None, *, timeout: float | None = None,
             supersede: bool | str = False) -> Future:
        """Send a request; the returned future is polled by the caller (``supersede``: see
        :meth:`hri.net.node.Node.call`)."""
        if self.record.ops and op not in self.record.ops:
            error = NetError(f"service {self.record.name} has no request kind {op!r} "
                             f"(has: {', '.join(self.record.ops)})")
            return Future.failed_now(error, (self.record.address, self.record.name, op), self.node.clock())
        return self.node.call(self.record.address, self.record.name, op, payload,
                              timeout=timeout if timeout is not None else self.timeout, supersede=supersede)

    def subscribe(self, stream: str, on_update: Callable[[Any], None] | None = None) -> Subscription:
        """Receive ``stream`` of the service, keep-last."""
        if self.record.streams and stream not in self.record.streams:
            raise NetError(f"service {self.record.name} has no stream {stream!r} "
                           f"(has: {', '.join(self.record.streams)})")
        return self.node.subscribe(self.record.address, self.record.name, stream,
                                   on_update=on_update, timeout=self.timeout)


class Setpoint:
    """A value a client wants a service to hold (a velocity, a flag), sent with ``op``.

    :meth:`set` sends only when the value changes or the last request for it failed (lost,
    timed out, refused, a full queue), so a node may call it on every tick. The calls
    supersede each other: an answer to an older value that arrives after a newer one's is
    dropped, never taken for the current state.
    """

    def __init__(self, client: Client, op: str) -> None:
        self.client = client
        self.op = op
        self.value: Any = None
        self.future: Future | None = None

    def set(self, value: Any) -> Future:
        if self.future is not None and value == self.value and not self.future.failed:
            return self.future
        self.value = value
        self.future = self.client.call(self.op, value, supersede=True)
        return self.future

    @property
    def in_flight(self) -> bool:
        """A request was sent and not answered yet."""
        return self.future is not None and self.future.pending
