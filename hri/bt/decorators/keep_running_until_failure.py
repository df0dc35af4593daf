"""BehaviorTree.CPP ``KeepRunningUntilFailure``."""

from __future__ import annotations

from py_trees.common import Status

from hri.bt.node import BTDecorator
from hri.bt.node_status import TickResult


class KeepRunningUntilFailure(BTDecorator):
    """RUNNING while the child succeeds or runs (a success starts it afresh at the next
    tick); FAILURE when it fails. A skipped child leaves the node's status as it is."""

    def on_tick(self) -> TickResult:
        self.set_status(Status.RUNNING)
        status = self.child.execute_tick()
        if status is Status.FAILURE:
            self.reset_child()
            return status
        if status is Status.SUCCESS:
            self.reset_child()
            return Status.RUNNING
        return Status.RUNNING if status is Status.RUNNING else self.status
