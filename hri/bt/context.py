"""The run's services a behaviour-tree node may use.

A tree's nodes share one :class:`TreeContext`. Nodes never read the wall clock or the
global random state: time comes from :attr:`TreeContext.now` (simulated seconds) and
randomness from :attr:`TreeContext.rng`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np


class WakeUpSignal:
    """A node's request to tick the tree again within the same ``Tree.tick_once()``.

    BehaviorTree.CPP's ``emitWakeUpSignal``: a Repeat between two runs of its child, a
    SequenceWithMemory between two children, ... return RUNNING and ask for another tick from
    the root at once, so that reactive ancestors and Parallel siblings are ticked in between.
    """

    __slots__ = ("_ready",)

    def __init__(self) -> None:
        self._ready = False

    def emit(self) -> None:
        self._ready = True

    def take(self) -> bool:
        """True when a wake-up was asked for since the last call (the request is consumed)."""
        ready, self._ready = self._ready, False
        return ready


def _ignore_event(event: str, **fields: Any) -> None:
    """The default event sink: drops every event."""


@dataclass
class TreeContext:
    """What the simulation lends a tree.

    Attributes:
        rng: the tree's random generator (derived from the run's seed).
        now: returns the simulated time in seconds.
        services: named services (e.g. ``"called"``, ``"actor"``, ``"robot"``).
        events: event sink, called as ``events("person_action_started", animation=..., t=...)``.
        enums: the names scripts may use for numbers (the registry's ``register_enum``).
        wake_up: asks the tree to tick again at once (:class:`WakeUpSignal`).
    """

    rng: np.random.Generator
    now: Callable[[], float]
    services: dict[str, Any] = field(default_factory=dict)
    events: Callable[..., None] = _ignore_event
    enums: dict[str, int] = field(default_factory=dict)
    wake_up: WakeUpSignal = field(default_factory=WakeUpSignal)

    def service(self, name: str) -> Any:
        """The service ``name``; :class:`KeyError` with a clear message when absent."""
        try:
            return self.services[name]
        except KeyError:
            raise KeyError(f"the tree context has no service {name!r}") from None
