"""BehaviorTree.CPP ``SequenceWithMemory`` (also ``SequenceStar`` and the thesis's ``InterruptableSequence``)."""

from __future__ import annotations

from py_trees.common import Status

from hri.bt.controls.in_order import InOrder
from hri.bt.node import BTControl


class SequenceWithMemory(InOrder):
    """A Sequence that keeps its place when a child fails or when it is halted.

    Children run in order; a RUNNING child is resumed at the next tick. When a child fails,
    the node returns FAILURE and the next tick ticks the failed child again (afresh), not the
    children that already succeeded. A halt keeps the place too: the interrupted child
    starts afresh at the next tick. Only the completion of the last child starts it over.
    After each child that succeeded in one tick it returns RUNNING and asks the tree to tick
    again at once, as BehaviorTree.CPP does, so reactive ancestors are ticked in between.
    """

    GO_ON = Status.SUCCESS
    ASYNC = True

    def stopped(self) -> None:
        self.halt_children_from(self.current)

    def halt(self) -> None:
        BTControl.halt(self)  # the place is kept
