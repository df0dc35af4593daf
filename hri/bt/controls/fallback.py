"""BehaviorTree.CPP ``Fallback``."""

from __future__ import annotations

from py_trees.common import Status

from hri.bt.controls.in_order import InOrder


class Fallback(InOrder):
    """Tries its children in order until one succeeds; FAILURE when the last one fails.

    A RUNNING child makes the fallback RUNNING, and the next tick resumes at that child. A
    child's SUCCESS ends the fallback with SUCCESS and the next tick starts at the first
    child. Skipped children count as failed over; a fallback whose children were all skipped
    is SKIPPED.
    """

    GO_ON = Status.FAILURE
