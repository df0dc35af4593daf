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
and its message queues are removed. ``tests/test_soak.py`` runs hundreds of seeded runs with
a fault each (:func:`random_fault`).
"""

from __future__ import annotations

import os
import signal
import struct
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

import numpy as np
import posix_ipc

from hri.base.errors import HriError

if TYPE_CHECKING:
    from hri.run.sim import Simulation

KINDS = ("actor_hang", "actor_queue_full", "corrupt_feedback", "truncated_action", "pybullet_lost",
         "tree_killed", "tree_hung")
SPLIT_ONLY = ("tree_killed", "tree_hung")


@dataclass(frozen=True)
class Fault:
    kind: str
    at_s: float
    tree: str = "robot"  # tree_killed, tree_hung: whose process

    @classmethod
    def parse(cls, spec: Any, where: str) -> "Fault":
        """A fault from ``{kind, at_s, tree?}`` or ``"KIND@SECONDS"``; HriError naming ``where``."""
        if isinstance(spec, str):
            kind, _, at = spec.partition("@")
            spec = {"kind": kind, "at_s": at or "0"}
        if not isinstance(spec, dict):
            raise HriError(f"{where}: a fault is {{kind: ..., at_s: ...}} or KIND@SECONDS, got {spec!r}")
        unknown = sorted(set(spec) - {"kind", "at_s", "tree"})
        if unknown:
            raise HriError(f"{where}: unknown key {unknown[0]!r} (keys: kind, at_s, tree)")
        kind = spec.get("kind")
        if kind not in KINDS:
            raise HriError(f"{where}: unknown fault kind {kind!r} (kinds: {', '.join(KINDS)})")
        try:
            at_s = float(spec.get("at_s", 0.0))
        except (TypeError, ValueError):
            raise HriError(f"{where}: at_s must be a number of simulated seconds, got {spec.get('at_s')!r}") from None
        if not np.isfinite(at_s) or at_s < 0:
            raise HriError(f"{where}: at_s must not be negative, got {at_s}")
        tree = spec.get("tree", "robot")
        if tree not in ("person", "robot"):
            raise HriError(f"{where}: tree must be person or robot, got {tree!r}")
        return cls(str(kind), at_s, tree)


def parse_faults(specs: Any, where: str = "faults") -> list[Fault]:
    if specs is None:
        return []
    if not isinstance(specs, list):
        raise HriError(f"{where}: expected a list of faults, got {specs!r}")
    return [Fault.parse(spec, f"{where}[{i}]") for i, spec in enumerate(specs)]


def random_fault(seed: int, duration_s: float, split: bool = False) -> Fault:
    """A fault drawn from ``seed``: any kind (the tree kinds only with ``split``), in the run's
    first 90 % (a soak runs many short runs, each with one of these)."""
    rng = np.random.default_rng([seed, 0xFA17])
    kinds = KINDS if split else tuple(k for k in KINDS if k not in SPLIT_ONLY)
    kind = kinds[int(rng.integers(len(kinds)))]
    return Fault(kind, round(float(rng.uniform(0.0, 0.9 * duration_s)), 3), ("person", "robot")[int(rng.integers(2))])


def check_split(faults: list[Fault], split: bool) -> None:
    """HriError when a fault needs the trees in processes of their own and the run has not."""
    for fault in faults:
        if fault.kind in SPLIT_ONLY and not split:
            raise HriError(f"fault {fault.kind}: needs the trees in processes of their own (--split)")


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
