"""BehaviorTree.CPP ``ParallelAll``: every child runs to its end; failures counted at the end."""

from __future__ import annotations

from py_trees.common import Status

from hri.bt.controls.parallel import threshold
from hri.bt.node import BTControl, NodeConfig
from hri.bt.node_status import SKIPPED, TickResult
from hri.bt.ports import Port


class ParallelAll(BTControl):
    """Ticks every unfinished child at every tick until all have finished (or were skipped).

    Then the running children are halted and the node returns FAILURE when at least
    ``max_failures`` children failed (negative: counted from the number of children), else
    SUCCESS. RUNNING before that; SKIPPED when every child was skipped in one tick.
    """

    PORTS = (Port("max_failures", "in", int, 1,
                  "failures that make the node FAIL once all children finished; -1 = all"),)

    def __init__(self, config: NodeConfig) -> None:
        super().__init__(config)
        self.completed: set[int] = set()
        self.failures = 0

    def on_tick(self) -> TickResult:
        count = len(self.children)
        need_failure = threshold(self.get_input("max_failures"), count)
        if count < need_failure:
            raise self._error("number of children is less than max_failures: it can never fail")
        self.set_status(Status.RUNNING)
        skipped = 0
        for index, child in enumerate(self.children):
            if index in self.completed:
                continue
            status = child.execute_tick()
            if status is Status.SUCCESS or status is Status.FAILURE:
                self.completed.add(index)
                self.failures += status is Status.FAILURE
            elif status is SKIPPED:
                skipped += 1
            elif status is Status.INVALID:
                raise self._error("a child returned IDLE")
        if skipped == count:
            return SKIPPED
        if skipped + len(self.completed) < count:
            return Status.RUNNING
        for index in range(count):
            self.halt_child(index)
        failed = self.failures >= need_failure
        self.completed.clear()
        self.failures = 0
        return Status.FAILURE if failed else Status.SUCCESS

    def halt(self) -> None:
        self.completed.clear()
        self.failures = 0
        super().halt()
