"""BehaviorTree.CPP ``Parallel``: every unfinished child ticked at every tick, counted thresholds."""

from __future__ import annotations

from py_trees.common import Status

from hri.bt.node import BTControl, NodeConfig
from hri.bt.node_status import SKIPPED, TickResult
from hri.bt.ports import Port


def threshold(value: int, children: int) -> int:
    """A Parallel threshold as a count: a negative value counts from the number of children
    (``-1`` = all, ``-2`` = all but one, ...)."""
    return max(children + value + 1, 0) if value < 0 else value


class Parallel(BTControl):
    """Ticks every child that has not finished yet, every tick.

    A child that returned SUCCESS or FAILURE is done and not ticked again until the node
    finishes or is halted. After each child's tick the thresholds are checked, so the node
    may finish before the later children are ticked:

    * SUCCESS when ``success_count`` children have succeeded (with ``success_count`` < 0,
      skipped children count as successes);
    * FAILURE when ``failure_count`` children have failed, or when ``success_count``
      successes can no longer be reached.

    On finishing, the running children are halted and all are reset; otherwise the node is
    RUNNING, or SKIPPED when every child was skipped. A threshold above the number of
    children is an error.
    """

    PORTS = (
        Port("success_count", "in", int, -1, "successes needed for SUCCESS; -1 = all children"),
        Port("failure_count", "in", int, 1, "failures that make the node FAIL; -1 = all children"),
    )

    def __init__(self, config: NodeConfig) -> None:
        super().__init__(config)
        self.completed: set[int] = set()
        self.successes = 0
        self.failures = 0

    def on_tick(self) -> TickResult:
        count = len(self.children)
        success_value = self.get_input("success_count")
        need_success = threshold(success_value, count)
        need_failure = threshold(self.get_input("failure_count"), count)
        if count < need_success:
            raise self._error("number of children is less than success_count: it can never succeed")
        if count < need_failure:
            raise self._error("number of children is less than failure_count: it can never fail")
        self.set_status(Status.RUNNING)
        skipped = 0
        for index, child in enumerate(self.children):
            if index not in self.completed:
                skipped += self._tick_child(index, child)
            if self.successes >= need_success or (success_value < 0 and self.successes + skipped >= need_success):
                return self._finish(Status.SUCCESS)
            if count - self.failures < need_success or self.failures == need_failure:
                return self._finish(Status.FAILURE)
        return SKIPPED if skipped == count else Status.RUNNING

    def _tick_child(self, index: int, child) -> int:
        """Tick one child and count its outcome; 1 when it was skipped."""
        status = child.execute_tick()
        if status is Status.SUCCESS:
            self.completed.add(index)
            self.successes += 1
        elif status is Status.FAILURE:
            self.completed.add(index)
            self.failures += 1
        elif status is SKIPPED:
            return 1
        elif status is Status.INVALID:
            raise self._error("a child returned IDLE")
        return 0

    def _finish(self, status: Status) -> Status:
        self._clear()
        self.reset_children()
        return status

    def _clear(self) -> None:
        self.completed.clear()
        self.successes = self.failures = 0

    def halt(self) -> None:
        self._clear()
        super().halt()
