"""BehaviorTree.CPP ``RunOnce``."""

from __future__ import annotations

from py_trees.common import Status

from hri.bt.node import BTDecorator
from hri.bt.node_status import SKIPPED, TickResult, is_completed
from hri.bt.ports import Port


class RunOnce(BTDecorator):
    """Ticks the child until it has finished once, then never again.

    Until then the node returns the child's status (a halt lets the child start over).
    Afterwards it returns, for ever, SKIPPED (``then_skip="true"``, the default) or the
    child's result (``then_skip="false"``).
    """

    PORTS = (Port("then_skip", "in", bool, True,
                  "after the first completion: true = SKIPPED, false = the child's result"),)
    result: Status | None = None

    def on_tick(self) -> TickResult:
        skip = self.get_input("then_skip")
        if self.result is not None:
            return SKIPPED if skip else self.result
        self.set_status(Status.RUNNING)
        status = self.child.execute_tick()
        if is_completed(status):
            self.result = status  # type: ignore[assignment]
            self.reset_child()
        return status
