"""The run's services a behaviour-tree node may use.

A tree's nodes share one :class:`TreeContext`. Nodes never read the wall clock or the
global random state: time comes from :attr:`TreeContext.now` (simulated seconds) and
randomness from :attr:`TreeContext.rng`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np


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
    """

    rng: np.random.Generator
    now: Callable[[], float]
    services: dict[str, Any] = field(default_factory=dict)
    events: Callable[..., None] = _ignore_event

    def service(self, name: str) -> Any:
        """The service ``name``; :class:`KeyError` with a clear message when absent."""
        try:
            return self.services[name]
        except KeyError:
            raise KeyError(f"the tree context has no service {name!r}") from None
