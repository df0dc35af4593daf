"""What ForceSuccess and ForceFailure share: one outcome once the child finished."""

from __future__ import annotations

from typing import ClassVar

from py_trees.common import Status

from hri.bt.node import BTDecorator
from hri.bt.node_status import TickResult, is_completed


class Forced(BTDecorator):
    """:attr:`OUTCOME` once the child finished (SUCCESS or FAILURE); RUNNING and SKIPPED
    pass through."""

    OUTCOME: ClassVar[Status]

    def on_tick(self) -> TickResult:
        self.set_status(Status.RUNNING)
        status = self.child.execute_tick()
        if is_completed(status):
            self.reset_child()
            return self.OUTCOME
        return status
