"""BehaviorTree.CPP ``UnsetBlackboard``: remove an entry."""

from __future__ import annotations

from py_trees.common import Status

from hri.bt.node import BTNode
from hri.bt.ports import Port


class UnsetBlackboard(BTNode):
    """Removes the entry ``key`` from the node's own blackboard scope; SUCCESS.

    As in BehaviorTree.CPP, a key that a SubTree remaps to its parent's entry is not
    followed: only the scope's own entry is removed.
    """

    PORTS = (Port("key", "in", str, None, "the key of the entry to remove"),)

    def update(self) -> Status:
        self.blackboard.unset(self.required_input("key"))
        return Status.SUCCESS
