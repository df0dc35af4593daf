"""BehaviorTree.CPP ``RetryUntilSuccessful``."""

from __future__ import annotations

from py_trees.common import Status

from hri.bt.decorators.counted_loop import CountedLoop
from hri.bt.ports import Port


class RetryUntilSuccessful(CountedLoop):
    """Runs the child again after each FAILURE, up to ``num_attempts`` attempts (``-1``:
    forever), then FAILURE; SUCCESS as soon as the child succeeds.

    Between two attempts it returns RUNNING and the tree ticks again at once (see
    :class:`~hri.bt.decorators.counted_loop.CountedLoop`).
    """

    PORTS = (Port("num_attempts", "in", int, None, "attempts before FAILURE; -1 = forever"),)
    PORT, AGAIN = "num_attempts", Status.FAILURE
    REREAD = True
