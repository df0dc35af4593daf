"""BehaviorTree.CPP ``ReactiveFallback``."""

from __future__ import annotations

from py_trees.common import Status

from hri.bt.controls.reactive import Reactive


class ReactiveFallback(Reactive):
    """A Fallback that ticks all its children from the first at every tick.

    A higher-priority child that succeeds ends the node with SUCCESS (halting a running
    lower-priority child); one that runs halts the others; FAILURE when all children fail.
    """

    GO_ON = Status.FAILURE
