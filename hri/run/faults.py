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
from typing import TYPE_CHECKING, Callable

import posix_ipc

from hri.scenario.faults import SPLIT_ONLY, Fault, check_split

if TYPE_CHECKING:
    from hri.run.sim import Simulation


class FaultInjector:
    """Applies a run's faults when their time comes (called at the start of every step)."""

    def __init__(self, faults: list[Fault], split: bool) -> None:
        check_split(faults, split)
        self.pending = sorted(faults, key=lambda f: f.at_s)
        self.applied: list[Fault] = []

    def step(self, sim: "Simulation") -> None:
        while self.pending and self.pending[0].at_s <= sim.now() + 1e-9:
            fault = self.pending.pop(0)
            self.applied.append(fault)
            sim.events.emit(sim.now(), "fault_injected", kind=fault.kind,
                            **({"tree": fault.tree} if fault.kind in SPLIT_ONLY else {}))
            _APPLY[fault.kind](sim, fault)


def _actor_hang(sim: "Simulation", fault: Fault) -> None:
    sim.plugin.step = lambda t, dt: None  # the plugin neither reads nor answers any more
    sim.plugin.preview = lambda t, dt: None  # nor moves the body


def _send(queue: posix_ipc.MessageQueue, data: bytes, times: int = 1) -> None:
    """Put ``data`` into ``queue`` up to ``times`` times, or until it is full."""
    for _ in range(times):
        try:
            queue.send(data)
        except posix_ipc.BusyError:
            return


def _actor_queue_full(sim: "Simulation", fault: Fault) -> None:
    from hri.actor.protocol import ACTION_SIZE

    _send(sim.actor_link.actions, b"junk" + bytes(ACTION_SIZE - 4), times=1000)


def _corrupt_feedback(sim: "Simulation", fault: Fault) -> None:
    from hri.actor.protocol import FEEDBACK_MAGIC, FEEDBACK_SIZE

    _send(sim.actor_link.feedback, struct.pack("<IH", FEEDBACK_MAGIC, 99) + bytes(FEEDBACK_SIZE - 6))  # version 99


def _truncated_action(sim: "Simulation", fault: Fault) -> None:
    from hri.actor.protocol import ACTION_MAGIC

    _send(sim.actor_link.actions, struct.pack("<IH", ACTION_MAGIC, 1))


def _pybullet_lost(sim: "Simulation", fault: Fault) -> None:
    import pybullet as p

    p.disconnect(physicsClientId=sim.client)


def _tree_signal(sig: int) -> Callable[["Simulation", Fault], None]:
    def apply(sim: "Simulation", fault: Fault) -> None:
        os.kill(sim.trees[fault.tree].process.pid, sig)
    return apply


_APPLY: dict[str, Callable[["Simulation", Fault], None]] = {
    "actor_hang": _actor_hang,
    "actor_queue_full": _actor_queue_full,
    "corrupt_feedback": _corrupt_feedback,
    "truncated_action": _truncated_action,
    "pybullet_lost": _pybullet_lost,
    "tree_killed": _tree_signal(signal.SIGKILL),
    "tree_hung": _tree_signal(signal.SIGSTOP),
}
