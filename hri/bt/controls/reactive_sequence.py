"""BehaviorTree.CPP ``ReactiveSequence``."""

from __future__ import annotations

from py_trees.common import Status

from hri.bt.controls.reactive import Reactive


class ReactiveSequence(Reactive):
    """A Sequence that ticks all its children from the first at every tick.

    When an earlier child (a condition) fails while a later one runs, the later one is
    halted and the node fails; SUCCESS when all children succeed in one tick.
    """

    GO_ON = Status.SUCCESS
