"""What Timeout and Delay share: a decorator with a clock in simulated time, started at its first tick."""

from __future__ import annotations

from typing import ClassVar

from py_trees.common import Status

from hri.bt.node import BTDecorator
from hri.bt.node_status import TickResult, is_completed

EPSILON_S = 1e-9
"""Seconds of slack when a deadline is compared: 0.7 - 0.4 must count as 0.3."""


class Timed(BTDecorator):
    """A decorator whose clock (``ctx.now()``, never the wall clock) starts when it starts.

    BehaviorTree.CPP's timer thread acts at the moment itself and wakes the tree up; here
    the time is checked when the tree ticks. A halt, or the child's end, stops the clock.
    """

    PORT: ClassVar[str]
    started = False
    started_at = 0.0

    def _start(self) -> bool:
        """Start the clock (the node becomes RUNNING) unless it runs; True when it started now."""
        if self.started:
            return False
        self.started = True
        self.started_at = self.ctx.now()
        self.set_status(Status.RUNNING)
        return True

    def _passed(self, msec: int) -> bool:
        return self.ctx.now() - self.started_at >= msec / 1000.0 - EPSILON_S

    def _tick_child(self) -> TickResult:
        """Tick the child; when it finishes, the clock stops and the child is reset."""
        status = self.child.execute_tick()
        if is_completed(status):
            self.started = False
            self.reset_child()
        return status

    def halt(self) -> None:
        self.started = False
        super().halt()
