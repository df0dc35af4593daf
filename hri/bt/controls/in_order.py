"""What Sequence, Fallback and their async and memory forms share: children ticked in order.

The node ticks its children from the current one on. A child that returns :attr:`GO_ON`
(SUCCESS for a sequence, FAILURE for a fallback) or SKIPPED moves it to the next child; a
RUNNING child makes it RUNNING (and it resumes there at the next tick); the other outcome
ends it with that outcome. When every child went on, the node returns :attr:`GO_ON`, or
SKIPPED when every child was skipped, and starts at the first child again.
"""

from __future__ import annotations

from typing import ClassVar

from py_trees.common import Status

from hri.bt.node import BTControl
from hri.bt.node_status import SKIPPED, TickResult, is_active


class InOrder(BTControl):
    """Children in order until one returns the other outcome than :attr:`GO_ON`."""

    GO_ON: ClassVar[Status]
    ASYNC: ClassVar[bool] = False
    """Return RUNNING (and ask for a wake-up) after each child that finished in one tick, so
    that the tree's reactive ancestors are ticked between two children."""

    current = 0
    skipped = 0

    def on_tick(self) -> TickResult:
        count = len(self.children)
        if not is_active(self.status):
            self.skipped = 0
        self.set_status(Status.RUNNING)
        while self.current < count:
            child = self.children[self.current]
            before = child.status
            status = child.execute_tick()
            if status is Status.RUNNING:
                return status
            if status is SKIPPED:
                self.current += 1
                self.skipped += 1
            elif status is self.GO_ON:
                self.current += 1
                if self.ASYNC and before is Status.INVALID and self.current < count:
                    self.ctx.wake_up.emit()
                    return Status.RUNNING
            elif status is Status.INVALID:
                raise self._error("a child returned IDLE")
            else:
                self.stopped()
                return status
        all_skipped = self.skipped == count
        self.reset_children()
        self.current = self.skipped = 0
        return SKIPPED if all_skipped else self.GO_ON

    def stopped(self) -> None:
        """A child ended the node: the children are reset and the next tick starts over."""
        self.reset_children()
        self.current = 0

    def halt(self) -> None:
        self.current = self.skipped = 0
        super().halt()
