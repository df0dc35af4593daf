"""BehaviorTree.CPP ``AlwaysFailure``."""

from __future__ import annotations

from py_trees.common import Status

from hri.bt.node import BTNode


class AlwaysFailure(BTNode):
    """FAILURE."""

    def update(self) -> Status:
        return Status.FAILURE
