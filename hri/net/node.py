"""A participant of the service network: one endpoint, its services, calls and subscriptions.

A :class:`Node` sits on one endpoint (in-process or message queue) and does everything the
wire needs: it answers requests with its services' handlers, matches replies to pending
calls by request id, feeds stream samples to subscriptions, and fails calls whose time is
up. Over an in-process :class:`~hri.net.network.Network` it reacts to each delivery at the
message's arrival time (and checks deadlines after each ``advance``); over message queues
its owner calls :meth:`Node.poll` every tick.

Typical use (one process)::

    net = Network({"safety": {"latency": 0.1}}, seed=3)
    broker = Broker()
    monitor = Node(net.endpoint("simulation"))
    safety = Service("safety", ["safety-monitor", "safety"], {"zone": lambda req: zone},
                     streams=["pose"])
    broker.register(monitor.offer(safety))
    tree = Node(net.endpoint("robot-tree"), timeout=0.5)
    client = tree.client(broker.discover(all_of=["safety"]))
    future = client.call("zone")        # each tick: future.pending / .done / .failed
    poses = client.subscribe("pose")    # each tick: poses.latest()
    ...
    net.advance(now)                    # the simulation, once per step
    safety.publish("pose", [x, y, yaw])
"""

from __future__ import annotations

from collections import Counter, OrderedDict
from typing import Any, Callable

from hri.base.errors import HriError

from .codec import Frame, Kind
from .errors import CallTimeout, Cancelled, CodecError, NetError, error_from_wire, error_to_wire
from .future import DONE, FAILED, PENDING, Future
from .quality import EPS
from .record import ServiceRecord
from .rpc import Client, Request, Service
from .stream import Publisher, Subscription
from .transport import Endpoint

# Ended calls are remembered to tell a duplicate or stale reply from an unexpected one: for
# this many simulated seconds (a reply takes a fraction of a second, a call times out after
# about one), and never more than this many, so a long run's memory stays flat.
_REMEMBER_ENDED_S = 60.0
_REMEMBERED_CALLS = 4096


class Node:
    """Services, calls and streams over one endpoint."""

    def __init__(self, endpoint: Endpoint, clock: Callable[[], float] | None = None, *,
                 timeout: float = 1.0, auto: bool = True):
        self.endpoint = endpoint
        clock = clock or getattr(endpoint, "clock", None)
        if clock is None:
            raise NetError(f"{endpoint.name}: a node needs a clock (simulated seconds)")
        self.clock: Callable[[], float] = clock
        self.timeout = float(timeout)
        self.counts: Counter[str] = Counter()
        self._next_id = 0
        self._calls: dict[int, Future] = {}
        self._ended: OrderedDict[int, tuple[str, float]] = OrderedDict()  # request id -> status, end time
        self._services: dict[str, Service] = {}
        self._publishers: dict[tuple[str, str], Publisher] = {}
        self._subscriptions: dict[tuple[int, str, str], Subscription] = {}
        if auto and hasattr(endpoint, "set_listener"):
            endpoint.set_listener(self._drain, self.expire)

    def __repr__(self) -> str:
        return f"Node({self.endpoint.name!r}, id={self.id})"

    @property
    def id(self) -> int:
        return self.endpoint.id

    def pending_calls(self) -> int:
        return len(self._calls)

    def subscriptions(self) -> list[Subscription]:
        return list(self._subscriptions.values())

    # offering --------------------------------------------------------------------------------

    def offer(self, service: Service) -> ServiceRecord:
        """Answer ``service``'s requests here; return its record for the broker."""
        if service.name in self._services:
            raise NetError(f"{self.endpoint.name} already offers a service {service.name!r}")
        if service.node is not None and service.node is not self:
            raise NetError(f"service {service.name} is already offered on {service.node}")
        service.node = self
        self._services[service.name] = service
        return service.record(self.id)

    def withdraw(self, name: str) -> None:
        service = self._services.pop(name, None)
        if service is not None:
            service.node = None
        for key in [key for key in self._publishers if key[0] == name]:
            del self._publishers[key]

    def publisher(self, service: str, stream: str) -> Publisher:
        key = (service, stream)
        if key not in self._publishers:
            self._publishers[key] = Publisher(self, service, stream)
        return self._publishers[key]

    def client(self, record: ServiceRecord, timeout: float | None = None) -> Client:
        return Client(self, record, self.timeout if timeout is None else timeout)

    # calling ---------------------------------------------------------------------------------

    def call(self, address: int, channel: str, op: str, payload: Any = None, *,
             timeout: float | None = None, supersede: bool | str = False, kind: Kind = Kind.REQUEST,
             transform: Callable[[Any], Any] | None = None) -> Future:
        """Send a request; a payload that cannot be encoded raises CodecError at once.

        ``supersede``: the answer to a newer call of the same op cancels this call if it is still
        pending (True), or only a newer call's with the same ``supersede`` string (a call
        about one of several things, such as one person's flag)."""
        now = self.clock()
        self._next_id += 1
        timeout = self.timeout if timeout is None else float(timeout)
        future = Future(self, self._next_id, (address, channel, op), now, now + timeout, supersede)
        future.transform = transform
        self._calls[future.request_id] = future
        self.counts["calls"] += 1
        try:
            self.endpoint.send(Frame(kind, self.id, address, future.request_id, channel, op, payload, now))
        except CodecError:
            self._calls.pop(future.request_id)
            raise
        except NetError as error:  # a full queue or a peer that is gone: the caller is told
            self.counts["send_failed"] += 1
            self.finish_call(future, FAILED, None, error)
        return future

    def finish_call(self, future: Future, status: str, value: Any, error: NetError | None) -> None:
        self._calls.pop(future.request_id, None)
        self._remember(future.request_id, status)
        if status == DONE and future.transform is not None:
            try:
                value = future.transform(value)
            except NetError as bad:
                status, value, error = FAILED, None, bad
        self.counts["done" if status == DONE else "failed"] += 1
        future._finish(status, value, error, self.clock())

    def _remember(self, request_id: int, status: str) -> None:
        now = self.clock()
        self._ended[request_id] = (status, now)
        while len(self._ended) > _REMEMBERED_CALLS or next(iter(self._ended.values()))[1] < now - _REMEMBER_ENDED_S:
            self._ended.popitem(last=False)

    def check_deadline(self, future: Future) -> None:
        if future._status == PENDING and self.clock() > future.deadline + EPS:
            self._time_out(future)

    def _time_out(self, future: Future) -> None:
        self.counts["timeouts"] += 1
        _address, channel, op = future.key
        self.finish_call(future, FAILED, None, CallTimeout(
            f"{channel}.{op} #{future.request_id}: no answer within "
            f"{future.deadline - future.sent_at:g} s of simulated time"))

    def expire(self, now: float | None = None) -> None:
        """Fail the calls whose time is up; resend subscriptions that failed for a passing reason."""
        if not self._calls and not self._subscriptions:
            return  # a node that only serves: nothing can expire (the network asks every step)
        now = self.clock() if now is None else now
        for future in [f for f in self._calls.values() if now > f.deadline + EPS]:
            self._time_out(future)
        for subscription in list(self._subscriptions.values()):
            subscription.retry()

    # streams ---------------------------------------------------------------------------------

    def subscribe(self, address: int, service: str, stream: str,
                  on_update: Callable[[Any], None] | None = None,
                  timeout: float | None = None) -> Subscription:
        """Receive a stream (one subscription per stream and node: asking twice returns it)."""
        key = (address, service, stream)
        existing = self._subscriptions.get(key)
        if existing is not None:
            if on_update is not None and existing.on_update not in (None, on_update):
                raise NetError(f"{service}.{stream} is already subscribed here with another callback")
            existing.on_update = existing.on_update or on_update
            return existing
        subscription = Subscription(self, address, service, stream, on_update,
                                    self.timeout if timeout is None else timeout)
        self._subscriptions[key] = subscription
        subscription.start()
        return subscription

    def unsubscribe(self, subscription: Subscription) -> None:
        self._subscriptions.pop(subscription.key, None)
        frame = Frame(Kind.UNSUBSCRIBE, self.id, subscription.address, 0, subscription.service,
                      subscription.stream, None, self.clock())
        try:
            self.endpoint.send(frame)
        except NetError:
            self.counts["send_failed"] += 1

    # receiving -------------------------------------------------------------------------------

    def poll(self) -> int:
        """Handle every frame that has arrived and check deadlines; return how many frames."""
        handled = self._drain()
        self.expire()
        return handled

    def _drain(self) -> int:
        handled = 0
        while (frame := self.endpoint.receive()) is not None:
            self._dispatch(frame)
            handled += 1
        return handled

    def _dispatch(self, frame: Frame) -> None:
        if frame.receiver != self.id:
            self.counts["misdelivered"] += 1
            return
        if frame.kind == Kind.REQUEST:
            self._on_request(frame)
        elif frame.kind in (Kind.REPLY, Kind.ERROR):
            self._on_answer(frame)
        elif frame.kind == Kind.STREAM:
            self._on_stream(frame)
        elif frame.kind == Kind.SUBSCRIBE:
            self._on_subscribe(frame)
        elif frame.kind == Kind.UNSUBSCRIBE:
            publisher = self._publishers.get((frame.channel, frame.op))
            if publisher is not None:
                publisher.remove(frame.sender)
        else:
            self.counts["heartbeats"] += 1

    def _request(self, frame: Frame) -> Request:
        self.counts["requests"] += 1
        return Request(self, frame.sender, frame.request_id, frame.channel, frame.op, frame.payload,
                       self.clock())

    def _on_request(self, frame: Frame) -> None:
        request = self._request(frame)
        service = self._services.get(frame.channel)
        if service is None:
            return request.fail(NetError(f"endpoint {self.id} offers no service {frame.channel!r}"))
        handler = service.handlers.get(frame.op)
        if handler is None:
            return request.fail(NetError(f"service {service.name} has no request kind {frame.op!r} "
                                         f"(has: {', '.join(service.handlers)})"))
        try:
            value = handler(request)
        except HriError as error:  # an expected refusal travels back; anything else is a bug
            if not request.answered:
                request.fail(error)
            return
        if not request.deferred and not request.answered:
            request.reply(value)

    def _on_subscribe(self, frame: Frame) -> None:
        request = self._request(frame)
        service = self._services.get(frame.channel)
        if service is None or frame.op not in service.streams:
            return request.fail(NetError(f"endpoint {self.id} has no stream {frame.channel}.{frame.op}"))
        publisher = self.publisher(frame.channel, frame.op)
        publisher.add(frame.sender)
        request.reply(publisher.current())

    def answer(self, request: Request, value: Any, error: HriError | None) -> None:
        """Send the reply (or error) to ``request``; a reply that cannot go is counted."""
        kind, payload = (Kind.ERROR, error_to_wire(error)) if error is not None else (Kind.REPLY, value)
        frame = Frame(kind, self.id, request.sender, request.request_id, request.service, request.op,
                      payload, self.clock())
        try:
            self.endpoint.send(frame)
        except CodecError as bad:  # the handler's value cannot travel: say so instead
            self.counts["bad_replies"] += 1
            frame = Frame(Kind.ERROR, self.id, request.sender, request.request_id, request.service,
                          request.op, error_to_wire(bad), self.clock())
            self._send_quietly(frame)
        except NetError:
            self.counts["replies_not_sent"] += 1

    def _send_quietly(self, frame: Frame) -> None:
        try:
            self.endpoint.send(frame)
        except NetError:
            self.counts["replies_not_sent"] += 1

    def _on_answer(self, frame: Frame) -> None:
        future = self._calls.get(frame.request_id)
        if future is None:
            ended, _ = self._ended.get(frame.request_id, (None, None))
            self.counts[{DONE: "duplicate_replies", FAILED: "stale_replies"}.get(ended, "unexpected_replies")] += 1
            return
        if (frame.sender, frame.channel, frame.op) != future.key:
            self.counts["unexpected_replies"] += 1  # not from the endpoint and service called
            return
        if self.clock() > future.deadline + EPS:
            self._time_out(future)
            self.counts["stale_replies"] += 1
            return
        if frame.kind == Kind.ERROR:
            self.finish_call(future, FAILED, None, error_from_wire(frame.payload))
            return
        self.finish_call(future, DONE, frame.payload, None)
        if future.supersede:
            self._supersede_older(future)

    def _supersede_older(self, answered: Future) -> None:
        older = [f for f in self._calls.values()
                 if f.supersede == answered.supersede and f.key == answered.key
                 and f.request_id < answered.request_id]
        for future in older:
            self.counts["superseded"] += 1
            self.finish_call(future, FAILED, None,
                             Cancelled(f"superseded by the answer to #{answered.request_id}"))

    def _on_stream(self, frame: Frame) -> None:
        subscription = self._subscriptions.get((frame.sender, frame.channel, frame.op))
        if subscription is None or subscription.closed:
            self.counts["unsubscribed_samples"] += 1
            return
        subscription.accept(frame.request_id, frame.payload, frame.sent_at)

    def stats(self) -> dict[str, int]:
        """Counters: calls, done, failed, timeouts, stale/duplicate/unexpected replies, ..."""
        return {**dict(self.counts), "pending_calls": len(self._calls)}
