"""The in-process network: deterministic message delivery in simulated time.

:class:`Network` holds the endpoints of one run and every message in flight. A message sent
at simulated time ``t`` gets its arrival time from the link of its channel and direction
(:mod:`hri.net.quality`) and is delivered by the first :meth:`Network.advance` whose ``now``
has reached that time (a message arriving exactly at a tick is delivered in that tick).
The simulation calls ``advance(now)`` once per step, before the trees tick.

Delivery is event-driven, in arrival order (ties in send order): while a message is
delivered the network clock stands at its arrival time, so a service that answers at once
answers at that instant, and the answer is delivered in the same ``advance`` if it arrives
by ``now``. With an ideal network a call made during one step is answered by the next
``advance``; a second ``advance(now)`` in the same step would deliver it at once.

Each :class:`LocalEndpoint` has a bounded inbox. When it is full:

- a request or subscription is answered at once with an ERROR ``QueueFull`` from the network
  (the caller's future fails: the sender learns it, nothing hangs);
- a stream sample replaces an older queued sample of the same stream (keep-last), or is
  dropped when there is none;
- a reply or error is dropped (counted; the caller's timeout reports it).

Keep-last also holds at the bandwidth limiter: a stream sample that finds an older sample of
the same stream still waiting for bandwidth takes its place instead of queueing behind it.
"""

from __future__ import annotations

import heapq
from collections import Counter, deque
from typing import Any, Callable, Mapping

from .codec import Frame, Kind, decode_frame, encode_frame
from .errors import CodecError, NetError, QueueFull, error_to_wire
from .quality import EPS, Link, NetworkQuality, link_rng

_TO_SERVICE = frozenset({Kind.REQUEST, Kind.SUBSCRIBE, Kind.UNSUBSCRIBE, Kind.HEARTBEAT})
_ANSWERED = frozenset({Kind.REQUEST, Kind.SUBSCRIBE})  # the sender waits for an answer
MAX_EVENTS_PER_ADVANCE = 1_000_000  # a zero-latency ping-pong must not spin forever


def direction_of(kind: Kind) -> str:
    """``to_service`` for requests and subscriptions, ``to_client`` for the rest."""
    return "to_service" if kind in _TO_SERVICE else "to_client"


def _stream_key(frame: Frame) -> tuple:
    return (frame.sender, frame.receiver, frame.channel, frame.op)


class _Delivery:
    """A message in flight; ``data`` may be replaced by a newer sample of the same stream."""

    __slots__ = ("arrival", "seq", "departure", "data", "frame")

    def __init__(self, arrival: float, seq: int, departure: float, data: bytes, frame: Frame):
        self.arrival, self.seq, self.departure, self.data, self.frame = arrival, seq, departure, data, frame

    def __lt__(self, other: "_Delivery") -> bool:
        return (self.arrival, self.seq) < (other.arrival, other.seq)


class LocalEndpoint:
    """An endpoint of an in-process :class:`Network` with a bounded inbox."""

    def __init__(self, network: "Network", endpoint_id: int, name: str, capacity: int):
        self.network = network
        self.id = endpoint_id
        self.name = name or f"endpoint-{endpoint_id}"
        self.capacity = capacity
        self.inbox: deque[tuple[bytes, Frame]] = deque()
        self.closed = False
        self.counts: Counter[str] = Counter()
        self._on_frames: Callable[[], None] | None = None
        self._on_time: Callable[[float], None] | None = None

    def __repr__(self) -> str:
        return f"LocalEndpoint({self.id}, {self.name!r})"

    def clock(self) -> float:
        return self.network.now

    def set_listener(self, on_frames: Callable[[], None] | None,
                     on_time: Callable[[float], None] | None = None) -> None:
        """Call ``on_frames()`` after each delivery and ``on_time(now)`` after each advance."""
        self._on_frames, self._on_time = on_frames, on_time
        self.network.timed(self, on_time is not None)

    def send(self, frame: Frame) -> None:
        if self.closed:
            raise NetError(f"{self.name}: endpoint is closed")
        if frame.sender != self.id:
            raise NetError(f"{self.name}: a frame from endpoint {frame.sender} cannot leave here")
        self.network.submit(frame, encode_frame(frame))

    def receive(self) -> Frame | None:
        while self.inbox:
            data, _meta = self.inbox.popleft()
            try:
                return decode_frame(data)
            except CodecError:
                self.counts["dropped"] += 1
        return None

    def take_raw(self) -> list[bytes]:
        """Empty the inbox as the frames' bytes (a relay forwarding them to another process)."""
        frames = [data for data, _frame in self.inbox]
        self.inbox.clear()
        return frames

    def deliver(self, data: bytes, frame: Frame) -> bool:
        """Put a frame into the inbox; False when it does not fit."""
        if len(self.inbox) >= self.capacity and not self._make_room(frame):
            self.counts["overflow"] += 1
            return False
        self.inbox.append((data, frame))
        self.counts["received"] += 1
        if self._on_frames is not None:
            self._on_frames()
        return True

    def _make_room(self, frame: Frame) -> bool:
        """A stream sample may push out an older queued sample of its stream (keep-last)."""
        if frame.kind != Kind.STREAM:
            return False
        key = _stream_key(frame)
        for index, (_data, queued) in enumerate(self.inbox):
            if queued.kind == Kind.STREAM and _stream_key(queued) == key:
                del self.inbox[index]
                self.counts["replaced"] += 1
                return True
        return False

    def tick(self, now: float) -> None:
        if self._on_time is not None:
            self._on_time(now)

    def close(self) -> None:
        self.closed = True
        self.inbox.clear()


class Network:
    """Endpoints and messages in flight, in simulated time; deterministic for a seed."""

    def __init__(self, quality: NetworkQuality | Mapping[str, Any] | None = None, seed: int = 0,
                 inbox_size: int = 64):
        self.quality = quality if isinstance(quality, NetworkQuality) else NetworkQuality.from_dict(quality)
        self.seed = int(seed)
        self.inbox_size = inbox_size
        self.counts: Counter[str] = Counter()
        self._now = 0.0
        self._heap: list[_Delivery] = []
        self._seq = 0
        self._endpoints: dict[int, LocalEndpoint] = {}
        self._links: dict[tuple[str, str], Link] = {}
        self._waiting_streams: dict[tuple, _Delivery] = {}
        self._timed: list[LocalEndpoint] = []  # the endpoints told the time after each advance, by id

    @property
    def now(self) -> float:
        """The network's clock: the last ``advance`` time, or a message's arrival while it is delivered."""
        return self._now

    def endpoint(self, name: str = "", inbox_size: int | None = None) -> LocalEndpoint:
        endpoint_id = len(self._endpoints) + 1
        endpoint = LocalEndpoint(self, endpoint_id, name, inbox_size or self.inbox_size)
        self._endpoints[endpoint_id] = endpoint
        return endpoint

    def timed(self, endpoint: LocalEndpoint, told: bool) -> None:
        """Tell ``endpoint`` the time after each advance, or stop telling it (most endpoints
        only serve: they are not asked every physics step)."""
        timed = [e for e in self._timed if e is not endpoint] + ([endpoint] if told else [])
        self._timed = sorted(timed, key=lambda e: e.id)

    def link(self, channel: str, direction: str) -> Link:
        key = (channel, direction)
        if key not in self._links:
            self._links[key] = Link(self.quality.link(channel, direction),
                                    link_rng(self.seed, channel, direction))
        return self._links[key]

    def in_flight(self) -> int:
        return len(self._heap)

    # sending ---------------------------------------------------------------------------------

    def submit(self, frame: Frame, data: bytes) -> None:
        """Take ``frame`` (encoded as ``data``) from its sender at the current time."""
        if frame.receiver not in self._endpoints:
            raise NetError(f"no endpoint {frame.receiver} on this network")
        self.counts["sent"] += 1
        if frame.kind == Kind.STREAM and self._replace_waiting(frame, data):
            return
        link = self.link(frame.channel, direction_of(frame.kind))
        tx = link.transmit(self._now)
        if tx.arrival is None:
            self.counts[tx.outcome] += 1
            if tx.outcome == "overflow" and frame.kind in _ANSWERED:
                raise QueueFull(f"channel {frame.channel!r}: {link.quality.bandwidth.queue} messages "
                                "already wait for bandwidth")
            return
        delivery = self._schedule(tx.arrival, tx.departure, data, frame)
        if frame.kind == Kind.STREAM:
            self._waiting_streams[_stream_key(frame)] = delivery

    def _replace_waiting(self, frame: Frame, data: bytes) -> bool:
        waiting = self._waiting_streams.get(_stream_key(frame))
        if waiting is None or waiting.departure <= self._now + EPS:
            return False
        waiting.data, waiting.frame = data, frame
        self.counts["replaced"] += 1
        return True

    def _schedule(self, arrival: float, departure: float, data: bytes, frame: Frame) -> _Delivery:
        self._seq += 1
        delivery = _Delivery(arrival, self._seq, departure, data, frame)
        heapq.heappush(self._heap, delivery)
        return delivery

    # delivering ------------------------------------------------------------------------------

    def advance(self, now: float) -> int:
        """Deliver every message that has arrived by ``now``; return how many."""
        if now < self._now - EPS:
            raise NetError(f"the network clock cannot go back from {self._now} to {now}")
        delivered = 0
        while self._heap and self._heap[0].arrival <= now + EPS:
            delivery = heapq.heappop(self._heap)
            self._now = max(self._now, delivery.arrival)
            self._deliver(delivery)
            delivered += 1
            if delivered > MAX_EVENTS_PER_ADVANCE:
                raise NetError(f"more than {MAX_EVENTS_PER_ADVANCE} deliveries at t={now}: "
                               "services answering each other without delay?")
        self._now = max(self._now, now)
        self._prune_waiting()
        for endpoint in tuple(self._timed):
            endpoint.tick(self._now)
        return delivered

    def _deliver(self, delivery: _Delivery) -> None:
        frame = delivery.frame
        endpoint = self._endpoints[frame.receiver]
        if endpoint.closed:
            self.counts["undeliverable"] += 1
            if frame.kind in _ANSWERED:
                self._bounce(frame, NetError(f"endpoint {endpoint.name} is closed"))
            return
        if endpoint.deliver(delivery.data, frame):
            self.counts["delivered"] += 1
            return
        self.counts["inbox_full"] += 1
        if frame.kind in _ANSWERED:
            self._bounce(frame, QueueFull(f"inbox of {endpoint.name} is full "
                                          f"({endpoint.capacity} messages)"))

    def _bounce(self, frame: Frame, error: NetError) -> None:
        """Tell the sender at once that its request could not be delivered."""
        sender = self._endpoints.get(frame.sender)
        if sender is None or sender.closed:
            return
        notice = Frame(Kind.ERROR, frame.receiver, frame.sender, frame.request_id, frame.channel,
                       frame.op, error_to_wire(error), self._now)
        self._schedule(self._now, self._now, encode_frame(notice), notice)

    def _prune_waiting(self) -> None:
        if len(self._waiting_streams) > 64:  # forget samples that have left the limiter
            self._waiting_streams = {key: d for key, d in self._waiting_streams.items()
                                     if d.departure > self._now + EPS}

    def stats(self) -> dict[str, Any]:
        """Counters of the network and of every link (for run statistics and tests)."""
        return {"network": dict(self.counts),
                "links": {f"{c}/{d}": dict(link.counts) for (c, d), link in sorted(self._links.items())}}
