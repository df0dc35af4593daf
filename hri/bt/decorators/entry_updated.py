"""BehaviorTree.CPP ``SkipUnlessUpdated`` and ``WaitValueUpdate``: the child runs when an entry was written."""

from __future__ import annotations

from typing import Any, ClassVar

from py_trees.common import Status

from hri.bt.node import BTDecorator, NodeConfig
from hri.bt.node_status import SKIPPED, TickResult
from hri.bt.ports import Port, PortError, reference_key
from hri.bt.value_types import AnyValue


def entry_key(node: Any) -> str:
    """The key of the ``entry`` port: ``{key}`` or the plain key; PortError when empty."""
    raw = node.raw_ports.get("entry", "")
    if not raw:
        raise PortError("missing port 'entry'")
    return reference_key(raw, "entry") or raw


class EntryUpdated(BTDecorator):
    """Ticks the child when the blackboard entry ``entry`` was written since the node last
    looked (the first time: when it was ever written); otherwise returns
    :attr:`IF_NOT_UPDATED`. A child that started (RUNNING) is ticked until it finishes."""

    PORTS = (Port("entry", "in", AnyValue, None, "the entry to watch, {key}"),)
    IF_NOT_UPDATED: ClassVar[Any]

    def __init__(self, config: NodeConfig) -> None:
        super().__init__(config)
        self.key = entry_key(self)
        self.seen = 0
        self.child_running = False

    def on_tick(self) -> TickResult:
        if not self.child_running:
            entry = self.blackboard.get_entry(self.key)
            if entry is None:
                return self.IF_NOT_UPDATED
            previous, self.seen = self.seen, entry.sequence_id
            if previous == self.seen:
                return self.IF_NOT_UPDATED
        status = self.child.execute_tick()
        self.child_running = status is Status.RUNNING
        return status

    def halt(self) -> None:
        self.child_running = False
        super().halt()


class SkipUnlessUpdated(EntryUpdated):
    """BehaviorTree.CPP ``SkipUnlessUpdated``: the child when ``entry`` was written since the
    last time, else SKIPPED."""

    IF_NOT_UPDATED = SKIPPED


class WaitValueUpdate(EntryUpdated):
    """BehaviorTree.CPP ``WaitValueUpdate``: RUNNING until ``entry`` is written, then the child."""

    IF_NOT_UPDATED = Status.RUNNING
