"""BehaviorTree.CPP v4 ``Parallel``: all children ticked at every tick, counted thresholds.

Not py_trees' ``Parallel``: that one has success policies (all, one, selected) but fails on
the first child FAILURE, and without ``synchronise`` it ticks finished children again.
"""

from __future__ import annotations

from typing import Iterator, Mapping, Sequence

import py_trees
from py_trees.behaviour import Behaviour
from py_trees.common import Status

from hri.bt.blackboard import Blackboard
from hri.bt.context import TreeContext
from hri.bt.node import BTControl
from hri.bt.ports import Port, PortError


class Parallel(BTControl):
    """BehaviorTree.CPP ``Parallel``: tick every child that has not finished yet, every tick.

    A child that returned SUCCESS or FAILURE is done and not ticked again until the node
    itself finishes or is halted. After each child's tick the thresholds are checked (so the
    node may finish before the later children are ticked):

    * SUCCESS when ``success_count`` children have succeeded;
    * FAILURE when ``failure_count`` children have failed, or when so many have failed that
      ``success_count`` successes can no longer be reached.

    On finishing, the RUNNING children are halted and all children reset; otherwise the node
    is RUNNING. A negative threshold counts from the number of children N: ``-1`` means N
    (all), ``-2`` N - 1, and so on. Defaults: ``success_count="-1"`` (all children must
    succeed), ``failure_count="1"`` (the first FAILURE fails the node). A threshold above N
    is an error (at load time for a literal).
    """

    PORTS = (
        Port("success_count", "in", int, -1, "successes needed for SUCCESS; -1 = all children"),
        Port("failure_count", "in", int, 1, "failures that make the node FAIL; -1 = all children"),
    )

    def __init__(self, name: str, ports: Mapping[str, str], ctx: TreeContext, blackboard: Blackboard,
                 children: Sequence[Behaviour]):
        super().__init__(name, ports, ctx, blackboard, children)
        self.done: dict[int, Status] = {}
        for port in ("success_count", "failure_count"):
            value = self.literal_input(port)
            if value is not None:
                message = self._threshold_error(port, value)
                if message:
                    raise PortError(message)

    def _threshold(self, value: int) -> int:
        return max(len(self.children) + value + 1, 0) if value < 0 else value

    def _threshold_error(self, port: str, value: int) -> str | None:
        if self._threshold(value) > len(self.children):
            return f"port {port!r}: {value} is more than the {len(self.children)} children"
        return None

    def _input_threshold(self, port: str) -> int:
        value = self.get_input(port)
        message = self._threshold_error(port, value)
        if message:
            raise self._error(message)
        return self._threshold(value)

    def tick(self) -> Iterator[Behaviour]:
        if self.status != Status.RUNNING:
            self.done.clear()
            self.initialise()
        need_success = self._input_threshold("success_count")
        need_failure = self._input_threshold("failure_count")
        count = len(self.children)
        for index, child in enumerate(self.children):
            if index not in self.done:
                self.current_child = child
                yield from child.tick()
                if child.status in (Status.SUCCESS, Status.FAILURE):
                    self.done[index] = child.status
            successes = sum(1 for status in self.done.values() if status == Status.SUCCESS)
            failures = len(self.done) - successes
            if successes >= need_success:
                self._finish(Status.SUCCESS)
                yield self
                return
            if count - failures < need_success or failures == need_failure:
                self._finish(Status.FAILURE)
                yield self
                return
        self.status = Status.RUNNING
        yield self

    def _finish(self, status: Status) -> None:
        self.done.clear()
        for child in self.children:
            if child.status != Status.INVALID:
                child.stop(Status.INVALID)
        self.stop(status)

    def stop(self, new_status: Status = Status.INVALID) -> None:
        if new_status == Status.INVALID:
            self.done.clear()
        py_trees.composites.Composite.stop(self, new_status)
