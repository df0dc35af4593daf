"""BehaviorTree.CPP ``LoopInt``, ``LoopBool``, ``LoopDouble``, ``LoopString``: the child once per item of a queue."""

from __future__ import annotations

from collections import deque
from typing import Any, ClassVar

from py_trees.common import Status

from hri.bt.blackboard import EMPTY
from hri.bt.node import BTDecorator, NodeConfig
from hri.bt.node_status import TickResult, is_completed
from hri.bt.ports import Port, PortError, reference_key
from hri.bt.value_types import convert, split_list


class Loop(BTDecorator):
    """Pops the front item of ``queue`` into ``value`` and ticks the child, once per item.

    ``queue`` is a literal list ``1;2;3`` (copied for each run of the node) or a blackboard
    entry: a ``collections.deque`` is popped in place (another node may push to it), a list
    or tuple is copied once per run, a string is parsed like the literal. After each child
    run the node returns RUNNING (the next item waits for the next tick); a child FAILURE
    ends it with FAILURE. With nothing left to pop it returns ``if_empty`` (SUCCESS by
    default).
    """

    ITEM: ClassVar[Any]
    child_running = False

    def __init__(self, config: NodeConfig) -> None:
        super().__init__(config)
        raw = self.raw_ports.get("queue")
        if raw is None:
            raise PortError("missing port 'queue'")
        self.key = reference_key(raw, "queue")
        self.static = self._parse(raw) if self.key is None else None
        self.queue: deque | None = None

    def _parse(self, text: str) -> deque:
        try:
            return deque(convert(part, self.ITEM) for part in split_list(text))
        except ValueError as err:
            raise self._error(f"port 'queue': {err}") from None

    def _read_queue(self) -> None:
        entry = self.blackboard.get_entry(self.key) or self.blackboard.create_entry(self.key)
        value = entry.value
        if isinstance(value, deque):
            self.queue = value
        elif self.queue is None:
            if isinstance(value, (list, tuple)):
                self.queue = deque(value)
            elif isinstance(value, str):
                self.queue = self._parse(value)
            else:
                what = "nothing" if value is EMPTY else type(value).__name__
                raise self._error(f"port 'queue' must hold a deque, a list or a string, holds {what}")

    def on_tick(self) -> TickResult:
        popped = False
        if self.status is Status.INVALID:
            self.child_running = False
            self.queue = deque(self.static) if self.static is not None else None
        if not self.child_running:
            if self.static is None:
                self._read_queue()
            if self.queue:
                self.set_output("value", self.queue.popleft())
                popped = True
        if not popped and not self.child_running:
            return self.get_input("if_empty")
        self.set_status(Status.RUNNING)
        status = self.child.execute_tick()
        self.child_running = status is Status.RUNNING
        if is_completed(status):
            self.reset_child()
        return Status.FAILURE if status is Status.FAILURE else Status.RUNNING


def _loop_class(name: str, item: type, what: str) -> type[Loop]:
    ports = (
        Port("queue", "inout", Any, None, f"the {what}s, e.g. a literal list 1;2;3 or {{key}}"),
        Port("if_empty", "in", Status, Status.SUCCESS, "the status when the queue is empty"),
        Port("value", "out", item, None, "the item popped for this run of the child"),
    )
    doc = f"BehaviorTree.CPP ``{name}``: a Loop over {what}s.\n\n" + (Loop.__doc__ or "").split("\n\n", 1)[1]
    return type(name, (Loop,), {"ITEM": item, "PORTS": ports, "__doc__": doc, "__module__": __name__})


LoopInt = _loop_class("LoopInt", int, "integer")
LoopBool = _loop_class("LoopBool", bool, "boolean")
LoopDouble = _loop_class("LoopDouble", float, "number")
LoopString = _loop_class("LoopString", str, "string")
