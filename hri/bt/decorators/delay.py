"""BehaviorTree.CPP ``Delay``, in simulated time."""

from __future__ import annotations

from py_trees.common import Status

from hri.bt.decorators.timed import Timed
from hri.bt.node_status import TickResult
from hri.bt.ports import Port
from hri.bt.value_types import Unsigned


class Delay(Timed):
    """Waits ``delay_msec`` milliseconds, RUNNING, before it ticks the child; then returns the
    child's status.

    The clock is the simulation's, checked when the tree ticks (see
    :class:`~hri.bt.decorators.timed.Timed`): the child is ticked at the first tick at or
    after the delay. A new run (after the child finished or a halt) waits again.
    """

    PORTS = (Port("delay_msec", "in", Unsigned, None, "delay in simulated milliseconds"),)
    PORT = "delay_msec"

    def on_tick(self) -> TickResult:
        delay = self.required_input(self.PORT)
        self._start()
        if not self._passed(delay):
            return Status.RUNNING
        return self._tick_child()
