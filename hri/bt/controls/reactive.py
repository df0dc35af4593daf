"""What ReactiveSequence and ReactiveFallback share: every child from the first, every tick."""

from __future__ import annotations

from typing import ClassVar

from py_trees.common import Status

from hri.bt.node import BTControl
from hri.bt.node_status import SKIPPED, TickResult


class Reactive(BTControl):
    """Ticks the children from the first at every tick while they return :attr:`GO_ON`.

    A RUNNING child makes the node RUNNING and halts every other child (a later one that was
    running is interrupted). The other outcome ends the node with it. A skipped child is
    reset so that it can be skipped again. After the last child the node returns
    :attr:`GO_ON`, or SKIPPED when every child was skipped.
    """

    GO_ON: ClassVar[Status]

    def on_tick(self) -> TickResult:
        all_skipped = True
        self.set_status(Status.RUNNING)
        for index, child in enumerate(self.children):
            status = child.execute_tick()
            all_skipped = all_skipped and status is SKIPPED
            if status is Status.RUNNING:
                for other in range(len(self.children)):
                    if other != index:
                        self.halt_child(other)
                return status
            if status is SKIPPED:
                self.halt_child(index)
            elif status is Status.INVALID:
                raise self._error("a child returned IDLE")
            elif status is not self.GO_ON:
                self.reset_children()
                return status
        self.reset_children()
        return SKIPPED if all_skipped else self.GO_ON
