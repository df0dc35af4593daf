"""BehaviorTree.CPP ``Sleep``, in simulated time."""

from __future__ import annotations

from py_trees.common import Status

from hri.bt.decorators.timed import EPSILON_S
from hri.bt.node import BTNode
from hri.bt.ports import Port
from hri.bt.value_types import Unsigned


class Sleep(BTNode):
    """RUNNING until ``msec`` simulated milliseconds have passed since it started, then SUCCESS.

    The clock (``ctx.now()``, never the wall clock) starts when the node starts; the node
    returns SUCCESS at the first tick at or after ``msec`` milliseconds later (``msec="0"``:
    SUCCESS at once). Halting it resets it: the next tick starts a new sleep.
    """

    PORTS = (Port("msec", "in", Unsigned, None, "how long, in simulated milliseconds"),)
    STATEFUL = True
    started_at = 0.0

    def initialise(self) -> None:
        self.started_at = self.ctx.now()

    def update(self) -> Status:
        msec = self.required_input("msec")
        if self.ctx.now() - self.started_at >= msec / 1000.0 - EPSILON_S:
            return Status.SUCCESS
        return Status.RUNNING
