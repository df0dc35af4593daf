"""Decorator nodes: exactly one child, whose status they map.

``Inverter`` swaps SUCCESS and FAILURE, ``ForceSuccess``/``ForceFailure`` turn a finished
child's status into SUCCESS/FAILURE; all pass RUNNING through. :class:`SubTreeNode` is the
pass-through node the XML loader puts where a ``<SubTree>`` is used (not registered).
"""

from __future__ import annotations

from py_trees.common import Status

from hri.bt.node import BTDecorator


class Inverter(BTDecorator):
    """SUCCESS <-> FAILURE; RUNNING stays RUNNING."""

    def update(self) -> Status:
        status = self.decorated.status
        if status == Status.SUCCESS:
            return Status.FAILURE
        if status == Status.FAILURE:
            return Status.SUCCESS
        return status


class ForceSuccess(BTDecorator):
    """SUCCESS once the child finished; RUNNING while it runs."""

    def update(self) -> Status:
        return Status.RUNNING if self.decorated.status == Status.RUNNING else Status.SUCCESS


class ForceFailure(BTDecorator):
    """FAILURE once the child finished; RUNNING while it runs."""

    def update(self) -> Status:
        return Status.RUNNING if self.decorated.status == Status.RUNNING else Status.FAILURE


class SubTreeNode(BTDecorator):
    """Where a ``<SubTree ID="...">`` is used: returns the subtree root's status.

    ``blackboard`` is the subtree's own scope; ``tree_id`` names the ``<BehaviorTree>``.
    """

    tree_id: str = ""

    def update(self) -> Status:
        return self.decorated.status
