"""BehaviorTree.CPP ``Repeat``."""

from __future__ import annotations

from py_trees.common import Status

from hri.bt.decorators.counted_loop import CountedLoop
from hri.bt.ports import Port


class Repeat(CountedLoop):
    """Runs the child until it has succeeded ``num_cycles`` times (``-1``: forever), then
    SUCCESS; a child FAILURE ends it with FAILURE.

    Between two runs it returns RUNNING and the tree ticks again at once (see
    :class:`~hri.bt.decorators.counted_loop.CountedLoop`).
    """

    PORTS = (Port("num_cycles", "in", int, None, "successes needed; -1 = repeat forever"),)
    PORT, AGAIN = "num_cycles", Status.SUCCESS
