"""BehaviorTree.CPP ``SubTree``: where a tree is used inside another, with a scope of its own."""

from __future__ import annotations

from typing import Mapping

from py_trees.common import Status

from hri.bt.blackboard import Blackboard
from hri.bt.node import BTDecorator, NodeConfig
from hri.bt.node_status import TickResult, is_completed


class SubTreeNode(BTDecorator):
    """Returns the subtree root's status (built by the loader for ``<SubTree ID="...">``).

    ``tree_id`` names the ``<BehaviorTree>``; ``scope`` is the subtree's own blackboard scope
    (``blackboard`` is the parent's, where the SubTree's own conditions run). The element as
    written is kept for the loggers, which write the tree back as BehaviorTree.CPP does:
    ``given_name``, its ``name`` attribute (None without one), and ``remapping``, its other
    attributes but ``ID`` and the condition scripts.
    """

    def __init__(self, config: NodeConfig, tree_id: str, scope: Blackboard, given_name: str | None = None,
                 remapping: Mapping[str, str] | None = None) -> None:
        super().__init__(config)
        self.tree_id = tree_id
        self.scope = scope
        self.given_name = given_name
        self.remapping = dict(remapping or {})

    def on_tick(self) -> TickResult:
        if self.status is Status.INVALID:
            self.set_status(Status.RUNNING)
        status = self.child.execute_tick()
        if is_completed(status):
            self.reset_child()
        return status
