"""BehaviorTree.CPP ``ForceFailure``."""

from __future__ import annotations

from py_trees.common import Status

from hri.bt.decorators.forced import Forced


class ForceFailure(Forced):
    """FAILURE once the child finished (SUCCESS or FAILURE); RUNNING and SKIPPED pass through."""

    OUTCOME = Status.FAILURE
