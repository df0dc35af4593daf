"""BehaviorTree.CPP ``IfThenElse``."""

from __future__ import annotations

from py_trees.common import Status

from hri.bt.node import BTControl
from hri.bt.node_status import TickResult


class IfThenElse(BTControl):
    """If child 0 succeeds, run child 1, else child 2 (or FAILURE without one).

    The condition is ticked when the node starts (and again while the condition itself is
    RUNNING); while the chosen branch is RUNNING only the branch is ticked. The node returns
    the branch's status; when it finishes, all children are reset. A skipped condition is an
    error, as in BehaviorTree.CPP.
    """

    MIN_CHILDREN = 2
    MAX_CHILDREN = 3
    branch = 0

    def on_tick(self) -> TickResult:
        self.set_status(Status.RUNNING)
        if self.branch == 0:
            condition = self.children[0].execute_tick()
            if condition is Status.RUNNING:
                return condition
            if condition is Status.SUCCESS:
                self.branch = 1
            elif condition is Status.FAILURE:
                if len(self.children) < 3:
                    return condition
                self.branch = 2
        if self.branch == 0:
            raise self._error("the condition (first child) was skipped")
        status = self.children[self.branch].execute_tick()
        if status is Status.RUNNING:
            return status
        self.reset_children()
        self.branch = 0
        return status

    def halt(self) -> None:
        self.branch = 0
        super().halt()
