"""What Repeat and RetryUntilSuccessful share: the child run again up to a count."""

from __future__ import annotations

from typing import ClassVar

from py_trees.common import Status

from hri.bt.node import BTDecorator
from hri.bt.node_status import SKIPPED, TickResult


class CountedLoop(BTDecorator):
    """Runs the child again each time it returns :attr:`AGAIN`, until it did so ``limit``
    times (read from :attr:`PORT`; ``-1``: forever); then the node returns :attr:`AGAIN`.

    The other outcome ends the node with it; RUNNING makes it RUNNING (the count is kept);
    SKIPPED ends it SKIPPED. Between two runs of a child that finished in one tick the node
    returns RUNNING and asks the tree to tick again at once, as BehaviorTree.CPP does, so
    reactive ancestors and Parallel siblings are ticked in between, and the count is read
    again. The count restarts when the node finishes or is halted.
    """

    PORT: ClassVar[str]
    AGAIN: ClassVar[Status]
    REREAD: ClassVar[bool] = False
    """Read the limit again after each run of the child (RetryUntilSuccessful does)."""
    count = 0

    def on_tick(self) -> TickResult:
        limit = self.required_input(self.PORT)
        self.set_status(Status.RUNNING)
        while self.count < limit or limit == -1:
            before = self.child.status
            status = self.child.execute_tick()
            if status is self.AGAIN:
                self.count += 1
                limit = self.required_input(self.PORT) if self.REREAD else limit
                self.reset_child()
                if before is Status.INVALID and (self.count < limit or limit == -1):
                    self.ctx.wake_up.emit()
                    return Status.RUNNING
            elif status is Status.RUNNING:
                return status
            elif status is SKIPPED:
                self.reset_child()
                return status
            elif status is Status.INVALID:
                raise self._error("the child returned IDLE")
            else:
                self.count = 0
                self.reset_child()
                return status
        self.count = 0
        return self.AGAIN

    def halt(self) -> None:
        self.count = 0
        super().halt()
