"""BehaviorTree.CPP ``AsyncSequence``."""

from __future__ import annotations

from hri.bt.controls.sequence import Sequence


class AsyncSequence(Sequence):
    """A Sequence that returns RUNNING after each child that succeeded in one tick.

    It asks the tree to tick again at once, so within one ``tick_once`` the outcome is the
    Sequence's, but the tree's reactive ancestors (a ReactiveSequence's conditions, ...) are
    ticked between two children and can interrupt it.
    """

    ASYNC = True
