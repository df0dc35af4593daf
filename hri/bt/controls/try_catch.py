"""BehaviorTree.CPP ``TryCatch`` (4.10)."""

from __future__ import annotations

from py_trees.common import Status

from hri.bt.node import BTControl
from hri.bt.node_status import SKIPPED, TickResult, is_active
from hri.bt.ports import Port


class TryCatch(BTControl):
    """Runs children 1..N-1 as a Sequence (the try-block); the last child is the catch-block.

    SUCCESS when every try-child succeeded (SKIPPED when all were skipped). When a try-child
    fails, the try-block is reset and the catch child runs to its end; then the node returns
    FAILURE, whatever the catch child returned. ``catch_on_halt="true"``: halting the node
    while the try-block runs also ticks the catch child once (halted if it is still running).
    """

    MIN_CHILDREN = 2
    PORTS = (Port("catch_on_halt", "in", bool, False,
                  "run the catch child when the node is halted during the try-block"),)
    current = 0
    skipped = 0
    in_catch = False

    def on_tick(self) -> TickResult:
        if not is_active(self.status):
            self.skipped = 0
            self.in_catch = False
        self.set_status(Status.RUNNING)
        if self.in_catch:
            return self._catch()
        tries = len(self.children) - 1
        while self.current < tries:
            status = self.children[self.current].execute_tick()
            if status is Status.RUNNING:
                return status
            if status is Status.FAILURE:
                self.reset_children()
                self.current = 0
                self.in_catch = True
                return self._catch()
            if status is Status.INVALID:
                raise self._error("a child returned IDLE")
            self.current += 1
            self.skipped += status is SKIPPED
        all_skipped = self.skipped == tries
        self.reset_children()
        self.current = self.skipped = 0
        return SKIPPED if all_skipped else Status.SUCCESS

    def _catch(self) -> TickResult:
        if self.children[-1].execute_tick() is Status.RUNNING:
            return Status.RUNNING
        self.reset_children()
        self.current = 0
        self.in_catch = False
        return Status.FAILURE

    def halt(self) -> None:
        if self.get_input("catch_on_halt") and not self.in_catch and is_active(self.status):
            for index in range(len(self.children) - 1):
                self.halt_child(index)
            if self.children[-1].execute_tick() is Status.RUNNING:
                self.halt_child(len(self.children) - 1)
        self.current = self.skipped = 0
        self.in_catch = False
        super().halt()
