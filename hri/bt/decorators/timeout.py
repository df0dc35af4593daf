"""BehaviorTree.CPP ``Timeout``, in simulated time."""

from __future__ import annotations

from py_trees.common import Status

from hri.bt.decorators.timed import Timed
from hri.bt.node_status import TickResult
from hri.bt.ports import Port
from hri.bt.value_types import Unsigned


class Timeout(Timed):
    """Halts the child and FAILs when the child still runs ``msec`` milliseconds after the
    node started; otherwise returns the child's status.

    The clock is the simulation's and the deadline is checked when the tree ticks (see
    :class:`~hri.bt.decorators.timed.Timed`). ``msec="0"``: no timeout. A new run restarts
    the clock.
    """

    PORTS = (Port("msec", "in", Unsigned, None, "time limit in simulated milliseconds; 0 = none"),)
    PORT = "msec"

    def on_tick(self) -> TickResult:
        msec = self.required_input(self.PORT)
        if not self._start() and msec > 0 and self.child.status is Status.RUNNING and self._passed(msec):
            self.reset_child()
            self.started = False
            return Status.FAILURE
        return self._tick_child()
