"""BehaviorTree.CPP ``Inverter``."""

from __future__ import annotations

from py_trees.common import Status

from hri.bt.node import BTDecorator
from hri.bt.node_status import TickResult

_INVERSE = {Status.SUCCESS: Status.FAILURE, Status.FAILURE: Status.SUCCESS}


class Inverter(BTDecorator):
    """SUCCESS <-> FAILURE; RUNNING and SKIPPED pass through."""

    def on_tick(self) -> TickResult:
        self.set_status(Status.RUNNING)
        status = self.child.execute_tick()
        if status is Status.INVALID:
            raise self._error("the child returned IDLE")
        inverse = _INVERSE.get(status)  # type: ignore[call-overload]
        if inverse is None:
            return status
        self.reset_child()
        return inverse
