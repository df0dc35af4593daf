"""BehaviorTree.CPP ``Sequence``."""

from __future__ import annotations

from py_trees.common import Status

from hri.bt.controls.in_order import InOrder


class Sequence(InOrder):
    """Ticks its children in order while they succeed; SUCCESS when the last one succeeds.

    A RUNNING child makes the sequence RUNNING, and the next tick resumes at that child
    (earlier children are not ticked again). A child's FAILURE ends the sequence with FAILURE
    and the next tick starts at the first child. Skipped children count as done; a sequence
    whose children were all skipped is SKIPPED.
    """

    GO_ON = Status.SUCCESS
