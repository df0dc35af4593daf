"""Network quality per channel and direction, in simulated time, seeded.

A *channel* is a service (its requests, replies and streams); each has two directions,
``to_service`` (requests, subscriptions) and ``to_client`` (replies, errors, stream samples).
Each direction is a :class:`Link` that decides, for every message in send order:

1. **bandwidth** (messages per second, a token bucket of depth ``burst``): with
   ``policy: shape`` a message over budget waits in a FIFO of at most ``queue`` messages
   (a full FIFO drops the message: ``overflow``); with ``policy: police`` it is dropped at once
   (``policed``). Unlimited when ``rate`` is null.
2. **loss**: ``bernoulli`` (each message lost with probability ``p``) or ``gilbert``
   (Gilbert–Elliott: a two-state Markov chain stepped once per message, good→bad with
   ``p_gb``, bad→good with ``p_bg``, then lost with ``loss_good`` or ``loss_bad``; bursts of
   the bad state last 1/``p_bg`` messages on average). A lost message used its bandwidth.
3. **delay**: ``latency`` plus a **jitter** sample: ``normal`` (mean 0, ``sd``; a total delay
   below zero is clipped to zero), ``exponential`` (``mean``) or ``uniform`` (``low``..
   ``high``). Independent jitter can reorder messages; ``fifo: true`` keeps their order
   (a message never arrives before one sent earlier on the same link).

Every link draws from its own NumPy generator, derived from the network seed and the
channel name and direction (:func:`link_rng`), so adding a channel never changes the
randomness of another, and the same seed gives the same network.

Settings come from plain dicts (scenario files, ``--set net.safety.latency=0.2``)::

    {"default": {"latency": 0.001},
     "safety": {"latency": 0.2, "jitter": {"dist": "normal", "sd": 0.02},
                "loss": {"model": "gilbert", "p": 0.05, "burst": 4},
                "rate": 50, "queue": 16, "policy": "shape",
                "to_client": {"latency": 0.25}}}

A channel's keys override ``default``'s; ``to_service``/``to_client`` override the channel's
for one direction. Shorthands: ``"jitter": 0.02`` is a normal jitter of that ``sd``,
``"loss": 0.1`` a Bernoulli loss. A bad key or value raises
:class:`~hri.net.errors.ConfigError` whose message starts with the key path.
"""

from __future__ import annotations

import difflib
import math
import zlib
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Mapping, NamedTuple

import numpy as np

from .errors import ConfigError
from hri.base.numbers import is_number

EPS = 1e-9  # simulated seconds: times closer than this are the same instant
DIRECTIONS = ("to_service", "to_client")
_LINK_KEYS = ("latency", "jitter", "loss", "rate", "burst", "queue", "policy", "fifo")


# --------------------------------------------------------------------------------------------
# Validation helpers


def _fail(where: str, message: str) -> ConfigError:
    return ConfigError(f"{where}: {message}")


def _check_keys(data: Mapping[str, Any], allowed: tuple[str, ...], where: str) -> None:
    for key in data:
        if key not in allowed:
            close = difflib.get_close_matches(str(key), allowed, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else f" (known: {', '.join(allowed)})"
            raise _fail(f"{where}.{key}", f"unknown key{hint}")


def _number(data: Mapping[str, Any], key: str, where: str, default: float, low: float = 0.0,
            high: float = math.inf) -> float:
    value = data.get(key, default)
    if not is_number(value, finite=False) or math.isnan(value):
        raise _fail(f"{where}.{key}", f"expected a number, got {value!r}")
    if not low <= value <= high:
        raise _fail(f"{where}.{key}", f"{value} is outside {low}..{high}")
    return float(value)


def _is_off(value: Any) -> bool:
    """Nothing given, or 0: the quality's default (no jitter, no loss)."""
    return value is None or (not isinstance(value, bool) and value == 0)


def _mapping(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise _fail(where, f"expected a mapping, got {value!r}")
    return value


# --------------------------------------------------------------------------------------------
# Jitter, loss, bandwidth


@dataclass(frozen=True)
class Jitter:
    """Extra delay per message: ``none``, ``normal`` (sd), ``exponential`` (mean), ``uniform``."""

    dist: str = "none"
    sd: float = 0.0
    mean: float = 0.0
    low: float = 0.0
    high: float = 0.0

    @classmethod
    def from_value(cls, value: Any, where: str) -> "Jitter":
        if _is_off(value):
            return cls()
        if is_number(value, finite=False):
            return cls("normal", sd=_number({"sd": value}, "sd", where, 0.0))
        data = _mapping(value, where)
        dist = data.get("dist", "normal")
        params = {"none": (), "normal": ("sd",), "exponential": ("mean",),
                  "uniform": ("low", "high")}
        if dist not in params:
            raise _fail(f"{where}.dist", f"{dist!r}: use one of {', '.join(params)}")
        _check_keys(data, ("dist", *params[dist]), where)
        values = {key: _number(data, key, where, 0.0) for key in params[dist]}
        if dist == "uniform" and values["high"] < values["low"]:
            raise _fail(f"{where}.high", "must not be below low")
        return cls(dist, **values)

    def sample(self, rng: np.random.Generator) -> float:
        if self.dist == "normal":
            return float(rng.normal(0.0, self.sd))
        if self.dist == "exponential":
            return float(rng.exponential(self.mean))
        if self.dist == "uniform":
            return float(rng.uniform(self.low, self.high))
        return 0.0


@dataclass(frozen=True)
class Loss:
    """``none``, ``bernoulli`` (``p``) or ``gilbert`` (``p_gb``, ``p_bg``, ``loss_good``, ``loss_bad``)."""

    model: str = "none"
    p: float = 0.0
    p_gb: float = 0.0
    p_bg: float = 1.0
    loss_good: float = 0.0
    loss_bad: float = 1.0

    @classmethod
    def from_value(cls, value: Any, where: str) -> "Loss":
        if _is_off(value):
            return cls()
        if is_number(value, finite=False):
            return cls("bernoulli", p=_number({"p": value}, "p", where, 0.0, high=1.0))
        data = _mapping(value, where)
        model = data.get("model", "bernoulli")
        if model == "none":
            _check_keys(data, ("model",), where)
            return cls()
        if model == "bernoulli":
            _check_keys(data, ("model", "p"), where)
            return cls("bernoulli", p=_number(data, "p", where, 0.0, high=1.0))
        if model == "gilbert":
            return cls._gilbert(data, where)
        raise _fail(f"{where}.model", f"{model!r}: use none, bernoulli or gilbert")

    @classmethod
    def _gilbert(cls, data: Mapping[str, Any], where: str) -> "Loss":
        if "p" in data or "burst" in data:  # mean loss and mean burst length
            _check_keys(data, ("model", "p", "burst"), where)
            p = _number(data, "p", where, 0.0, high=0.999999)
            burst = _number(data, "burst", where, 1.0, low=1.0)
            p_bg = 1.0 / burst
            p_gb = p * p_bg / (1.0 - p)
            if p_gb > 1.0:
                raise _fail(f"{where}.burst", f"too short for a mean loss of {p} (needs ≥ {p / (1 - p):.3g})")
            return cls("gilbert", p=p, p_gb=p_gb, p_bg=p_bg)
        _check_keys(data, ("model", "p_gb", "p_bg", "loss_good", "loss_bad"), where)
        values = {key: _number(data, key, where, default, high=1.0)
                  for key, default in (("p_gb", 0.0), ("p_bg", 1.0), ("loss_good", 0.0),
                                       ("loss_bad", 1.0))}
        loss = cls("gilbert", **values)
        return cls("gilbert", p=loss.mean_loss, **values)

    @property
    def bad_fraction(self) -> float:
        """Stationary probability of the bad state (Gilbert–Elliott)."""
        total = self.p_gb + self.p_bg
        return self.p_gb / total if total > 0 else 0.0

    @property
    def mean_loss(self) -> float:
        if self.model == "gilbert":
            bad = self.bad_fraction
            return bad * self.loss_bad + (1.0 - bad) * self.loss_good
        return self.p if self.model == "bernoulli" else 0.0

    @property
    def mean_burst(self) -> float:
        """Mean number of consecutive messages in the bad state."""
        return 1.0 / self.p_bg if self.p_bg > 0 else math.inf


@dataclass(frozen=True)
class Bandwidth:
    """A token bucket: ``rate`` messages/s (None: unlimited), depth ``burst``."""

    rate: float | None = None
    burst: float = 1.0
    queue: int = 64
    policy: str = "shape"

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str) -> "Bandwidth":
        rate = data.get("rate")
        if rate is not None:
            rate = _number(data, "rate", where, 0.0, low=1e-9)
        burst = _number(data, "burst", where, 1.0, low=1.0)
        queue = _number(data, "queue", where, 64, low=0, high=1e6)
        if queue != int(queue):
            raise _fail(f"{where}.queue", f"expected a whole number, got {queue}")
        policy = data.get("policy", "shape")
        if policy not in ("shape", "police"):
            raise _fail(f"{where}.policy", f"{policy!r}: use shape (queue up) or police (drop)")
        return cls(rate, burst, int(queue), policy)


# --------------------------------------------------------------------------------------------
# The quality of one direction, of a channel, of the network


@dataclass(frozen=True)
class LinkQuality:
    """What one direction of one channel does to a message."""

    latency: float = 0.0
    jitter: Jitter = field(default_factory=Jitter)
    loss: Loss = field(default_factory=Loss)
    bandwidth: Bandwidth = field(default_factory=Bandwidth)
    fifo: bool = False

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None, where: str = "net") -> "LinkQuality":
        data = _mapping(data or {}, where)
        _check_keys(data, _LINK_KEYS, where)
        fifo = data.get("fifo", False)
        if not isinstance(fifo, bool):
            raise _fail(f"{where}.fifo", f"expected true or false, got {fifo!r}")
        return cls(latency=_number(data, "latency", where, 0.0),
                   jitter=Jitter.from_value(data.get("jitter"), f"{where}.jitter"),
                   loss=Loss.from_value(data.get("loss"), f"{where}.loss"),
                   bandwidth=Bandwidth.from_dict(data, where), fifo=fifo)

    @property
    def ideal(self) -> bool:
        return self == LinkQuality()


@dataclass(frozen=True)
class ChannelQuality:
    to_service: LinkQuality = field(default_factory=LinkQuality)
    to_client: LinkQuality = field(default_factory=LinkQuality)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str,
                  base: Mapping[str, Any] | None = None) -> "ChannelQuality":
        data = _mapping(data or {}, where)
        _check_keys(data, (*_LINK_KEYS, *DIRECTIONS), where)
        common = {**(base or {}), **{k: v for k, v in data.items() if k not in DIRECTIONS}}
        shared = LinkQuality.from_dict(common, where)  # a bad shared key is named without a direction
        links = {}
        for direction in DIRECTIONS:
            override = _mapping(data.get(direction) or {}, f"{where}.{direction}")
            links[direction] = (LinkQuality.from_dict({**common, **override}, f"{where}.{direction}")
                                if override else shared)
        return cls(**links)


@dataclass(frozen=True)
class NetworkQuality:
    """The quality of every channel: ``channels`` by name, ``default`` for all others."""

    default: ChannelQuality = field(default_factory=ChannelQuality)
    channels: Mapping[str, ChannelQuality] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None, where: str = "net") -> "NetworkQuality":
        data = _mapping(data or {}, where)
        base = _mapping(data.get("default") or {}, f"{where}.default")
        default = ChannelQuality.from_dict(base, f"{where}.default")
        plain_base = {k: v for k, v in base.items() if k not in DIRECTIONS}
        channels = {str(name): ChannelQuality.from_dict(value, f"{where}.{name}", plain_base)
                    for name, value in data.items() if name != "default"}
        return cls(default, channels)

    def link(self, channel: str, direction: str) -> LinkQuality:
        if direction not in DIRECTIONS:
            raise ValueError(f"direction {direction!r}: use one of {DIRECTIONS}")
        # a person's actor service in a run with several people, ``actor-NAME``, has ``actor``'s quality
        name = channel if channel in self.channels else channel.partition("-")[0]
        quality = self.channels.get(name, self.default)
        return getattr(quality, direction)


# --------------------------------------------------------------------------------------------
# A link: the state of one direction of one channel


def link_rng(seed: int, channel: str, direction: str) -> np.random.Generator:
    """The generator of one link: independent of every other channel's and direction's."""
    key = (zlib.crc32(channel.encode("utf-8")), DIRECTIONS.index(direction))
    return np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=key))


class Transmission(NamedTuple):
    """What became of one message: ``outcome`` is ok, lost, policed or overflow."""

    departure: float | None  # when it left the bandwidth limiter (None: never admitted)
    arrival: float | None  # when it reaches the receiver (None: it does not)
    outcome: str


class _TokenBucket:
    """Bandwidth in simulated time; departures are computed when a message is sent (FIFO)."""

    def __init__(self, bandwidth: Bandwidth):
        self.bw = bandwidth
        self.tokens = bandwidth.burst
        self.t_ref: float | None = None
        self.last_departure = -math.inf
        self.waiting: deque[float] = deque()  # departure times still in the future

    def _refill(self, t: float) -> None:
        if self.t_ref is None or t > self.t_ref:
            gained = 0.0 if self.t_ref is None else (t - self.t_ref) * self.bw.rate
            self.tokens = min(self.bw.burst, self.tokens + gained)
            self.t_ref = t

    def queued(self, now: float) -> int:
        while self.waiting and self.waiting[0] <= now + EPS:
            self.waiting.popleft()
        return len(self.waiting)

    def admit(self, now: float) -> tuple[float | None, str]:
        """The departure time, or None and why not."""
        if self.bw.rate is None:
            return now, "ok"
        if self.bw.policy == "police":
            self._refill(now)
            if self.tokens < 1.0 - EPS:
                return None, "policed"
            self.tokens -= 1.0
            return now, "ok"
        if self.queued(now) >= self.bw.queue:
            return None, "overflow"
        start = max(now, self.last_departure)
        self._refill(start)
        if self.tokens < 1.0 - EPS:
            start += (1.0 - self.tokens) / self.bw.rate
            self._refill(start)
        self.tokens = max(0.0, self.tokens - 1.0)
        self.last_departure = start
        if start > now + EPS:
            self.waiting.append(start)
        return start, "ok"


class Link:
    """One direction of one channel: turns a send time into an arrival time, or none."""

    def __init__(self, quality: LinkQuality, rng: np.random.Generator):
        self.quality = quality
        self.rng = rng
        self.bucket = _TokenBucket(quality.bandwidth)
        self.bad = False  # Gilbert–Elliott state; every link starts good
        self.last_arrival = -math.inf
        self.counts = {"sent": 0, "ok": 0, "lost": 0, "policed": 0, "overflow": 0}

    def transmit(self, now: float) -> Transmission:
        self.counts["sent"] += 1
        departure, outcome = self.bucket.admit(now)
        if departure is None:
            self.counts[outcome] += 1
            return Transmission(None, None, outcome)
        lost = self._lost()
        # drawn even for a lost message: the jitter stream stays aligned across loss settings
        delay = max(0.0, self.quality.latency + self.quality.jitter.sample(self.rng))
        if lost:
            self.counts["lost"] += 1
            return Transmission(departure, None, "lost")
        arrival = departure + delay
        if self.quality.fifo:
            arrival = max(arrival, self.last_arrival)
            self.last_arrival = arrival
        self.counts["ok"] += 1
        return Transmission(departure, arrival, "ok")

    def queued(self, now: float) -> int:
        """Messages waiting for bandwidth at ``now``."""
        return self.bucket.queued(now)

    def _lost(self) -> bool:
        loss = self.quality.loss
        if loss.model == "bernoulli":
            return bool(self.rng.random() < loss.p)
        if loss.model == "gilbert":
            flip = self.rng.random() < (loss.p_bg if self.bad else loss.p_gb)
            self.bad = self.bad != flip
            return bool(self.rng.random() < (loss.loss_bad if self.bad else loss.loss_good))
        return False
