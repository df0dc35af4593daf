"""BehaviorTree.CPP ``SubTree``: where a tree is used inside another, with a scope of its own."""

from __future__ import annotations

from py_trees.common import Status

from hri.bt.node import BTDecorator
from hri.bt.node_status import TickResult, is_completed


class SubTreeNode(BTDecorator):
    """Returns the subtree root's status (built by the loader for ``<SubTree ID="...">``).

    ``blackboard`` is the subtree's own scope; ``tree_id`` names the ``<BehaviorTree>``.
    """

    tree_id: str = ""

    def on_tick(self) -> TickResult:
        if self.status is Status.INVALID:
            self.status = Status.RUNNING
        status = self.child.execute_tick()
        if is_completed(status):
            self.reset_child()
        return status
