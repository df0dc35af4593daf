"""Fault injection: making a run go wrong on purpose, to show that it ends cleanly.

A scenario's optional ``faults`` list (or ``hri run --fault KIND@SECONDS``) names faults,
each at a simulated time (``at_s``):

=================  =========================================================  ==============================
kind               what happens at ``at_s``                                  what follows
=================  =========================================================  ==============================
actor_hang         the actor plugin stops: no more steps, no feedback          the actor server's watchdog ends the run (``FEEDBACK_TIMEOUT_S``)
actor_queue_full   the plugin's action queue is filled with junk records       a goal sent while it is full fails (an error, not a hang); the plugin drops the junk, counted
corrupt_feedback   a corrupted feedback record (bad magic, bad version)        dropped and counted by the actor server
truncated_action   a truncated action record                                   dropped and counted by the actor plugin
pybullet_lost      the PyBullet client disconnects                             the run ends: ``the PyBullet client was lost``
tree_killed        (``--split``) SIGKILL to a tree process (``tree``)          the run ends within one tree period
tree_hung          (``--split``) SIGSTOP to a tree process (``tree``)          the run ends after ``HRI_TREE_TIMEOUT_S``
=================  =========================================================  ==============================

Whatever happens, the run's statistics are written (``complete: false`` when it ended early)
and its message queues are removed. The faults themselves (:class:`~hri.scenario.faults.Fault`)
are read with the scenario; ``tests/test_soak.py`` runs hundreds of seeded runs with a fault
each (:func:`hri.scenario.faults.random_fault`).
"""

from __future__ import annotations

import os
import signal
import struct
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

import pybullet as p

from hri.scenario.faults import SPLIT_ONLY, Fault

if TYPE_CHECKING:
    from hri.actor.plugin import ActorPlugin
    from hri.actor.queues import ActorLink
    from hri.run.tree_process import RemoteTreeHost


@dataclass(frozen=True)
class FaultTargets:
    """What a run's faults break, each through a hook of its own: the actor plugin
    (:meth:`~hri.actor.plugin.ActorPlugin.hang`), the actor's queues
    (:meth:`~hri.actor.queues.ActorLink.inject`), the PyBullet client, the tree processes
    (:meth:`~hri.run.tree_process.RemoteTreeHost.signal`, with ``--split``)."""

    plugin: "ActorPlugin"
    link: "ActorLink"
    physics_client: int
    trees: Mapping[str, "RemoteTreeHost"]
    people: Mapping[str, tuple["ActorPlugin", "ActorLink"]] = field(default_factory=dict)  # by name

    def actor(self, fault: Fault) -> tuple["ActorPlugin", "ActorLink"]:
        """The plugin and queues the actor fault breaks: its person's (None: the first person's)."""
        return (self.plugin, self.link) if fault.person is None else self.people[fault.person]


Emit = Callable[..., None]  # EventLog.emit(t, event, **fields)


class FaultInjector:
    """Applies a run's faults to its ``targets`` when their time comes (:meth:`step`, at the
    start of every physics step), each announced by a ``fault_injected`` event."""

    def __init__(self, faults: list[Fault], targets: FaultTargets, emit: Emit) -> None:
        self.pending = sorted(faults, key=lambda f: f.at_s)
        self.applied: list[Fault] = []
        self.targets = targets
        self.emit = emit

    def step(self, now: float) -> None:
        while self.pending and self.pending[0].at_s <= now + 1e-9:
            fault = self.pending.pop(0)
            self.applied.append(fault)
            self.emit(now, "fault_injected", kind=fault.kind,
                      **({"tree": fault.tree} if fault.kind in SPLIT_ONLY else {}),
                      **({} if fault.person is None else {"person": fault.person}))
            _APPLY[fault.kind](self.targets, fault)


def _actor_hang(targets: FaultTargets, fault: Fault) -> None:
    targets.actor(fault)[0].hang()


def _actor_queue_full(targets: FaultTargets, fault: Fault) -> None:
    from hri.actor.protocol import ACTION_SIZE

    targets.actor(fault)[1].inject("actions", b"junk" + bytes(ACTION_SIZE - 4), times=1000)


def _corrupt_feedback(targets: FaultTargets, fault: Fault) -> None:
    from hri.actor.protocol import FEEDBACK_MAGIC, FEEDBACK_SIZE

    targets.actor(fault)[1].inject("feedback", struct.pack("<IH", FEEDBACK_MAGIC, 99) + bytes(FEEDBACK_SIZE - 6))  # version 99


def _truncated_action(targets: FaultTargets, fault: Fault) -> None:
    from hri.actor.protocol import ACTION_MAGIC

    targets.actor(fault)[1].inject("actions", struct.pack("<IH", ACTION_MAGIC, 1))


def _pybullet_lost(targets: FaultTargets, fault: Fault) -> None:
    p.disconnect(physicsClientId=targets.physics_client)


def _tree_signal(sig: int) -> Callable[[FaultTargets, Fault], None]:
    def apply(targets: FaultTargets, fault: Fault) -> None:
        targets.trees[fault.tree].signal(sig)
    return apply


_APPLY: dict[str, Callable[[FaultTargets, Fault], None]] = {
    "actor_hang": _actor_hang,
    "actor_queue_full": _actor_queue_full,
    "corrupt_feedback": _corrupt_feedback,
    "truncated_action": _truncated_action,
    "pybullet_lost": _pybullet_lost,
    "tree_killed": _tree_signal(signal.SIGKILL),
    "tree_hung": _tree_signal(signal.SIGSTOP),
}
