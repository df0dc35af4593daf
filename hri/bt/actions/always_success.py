"""BehaviorTree.CPP ``AlwaysSuccess``."""

from __future__ import annotations

from py_trees.common import Status

from hri.bt.node import BTNode


class AlwaysSuccess(BTNode):
    """SUCCESS."""

    def update(self) -> Status:
        return Status.SUCCESS
