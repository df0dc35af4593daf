"""BehaviorTree.CPP ``AsyncFallback``."""

from __future__ import annotations

from hri.bt.controls.fallback import Fallback


class AsyncFallback(Fallback):
    """A Fallback that returns RUNNING after each child that failed in one tick, asking the
    tree to tick again at once (reactive ancestors are ticked between two children)."""

    ASYNC = True
