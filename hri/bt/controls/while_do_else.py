"""BehaviorTree.CPP ``WhileDoElse``."""

from __future__ import annotations

from py_trees.common import Status

from hri.bt.node import BTControl
from hri.bt.node_status import TickResult


class WhileDoElse(BTControl):
    """A reactive IfThenElse: the condition (child 0) is ticked at every tick.

    RUNNING condition: the node is RUNNING. SUCCESS: the else-branch (child 2) is halted and
    the then-branch (child 1) ticked. FAILURE: the then-branch is halted and the else-branch
    ticked, or the node fails without one. The node returns the ticked branch's status; when
    it finishes, all children are reset. A skipped condition makes the node return IDLE,
    which its parent refuses, as in BehaviorTree.CPP.
    """

    MIN_CHILDREN = 2
    MAX_CHILDREN = 3

    def on_tick(self) -> TickResult:
        self.set_status(Status.RUNNING)
        condition = self.children[0].execute_tick()
        if condition is Status.RUNNING:
            return condition
        has_else = len(self.children) == 3
        status: TickResult = Status.INVALID
        if condition is Status.SUCCESS:
            if has_else:
                self.halt_child(2)
            status = self.children[1].execute_tick()
        elif condition is Status.FAILURE:
            if has_else:
                self.halt_child(1)
                status = self.children[2].execute_tick()
            else:
                status = Status.FAILURE
        if status is Status.RUNNING:
            return status
        self.reset_children()
        return status
