"""BehaviorTree.CPP ``WasEntryUpdated``."""

from __future__ import annotations

from py_trees.common import Status

from hri.bt.decorators.entry_updated import entry_key
from hri.bt.node import BTNode, NodeConfig
from hri.bt.ports import Port
from hri.bt.value_types import AnyValue


class WasEntryUpdated(BTNode):
    """SUCCESS when the entry ``entry`` was written since the node last looked (the first
    time: when it was ever written); FAILURE otherwise or when it does not exist."""

    PORTS = (Port("entry", "in", AnyValue, None, "the entry to watch, {key}"),)

    def __init__(self, config: NodeConfig) -> None:
        super().__init__(config)
        self.key = entry_key(self)
        self.seen = 0

    def update(self) -> Status:
        entry = self.blackboard.get_entry(self.key)
        if entry is None:
            return Status.FAILURE
        previous, self.seen = self.seen, entry.sequence_id
        return Status.SUCCESS if previous != self.seen else Status.FAILURE
