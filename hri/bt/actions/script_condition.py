"""BehaviorTree.CPP ``ScriptCondition``: a script as a condition."""

from __future__ import annotations

from typing import Any

from py_trees.common import Status

from hri.bt.node import BTNode, NodeConfig
from hri.bt.ports import Port
from hri.bt.script_port import ScriptPort


class ScriptCondition(BTNode):
    """SUCCESS when the script ``code`` is true (e.g. ``battery > 20 && !busy``), else FAILURE."""

    PORTS = (Port("code", "in", Any, None, "the script; true or false"),)

    def __init__(self, config: NodeConfig) -> None:
        super().__init__(config)
        self.script = ScriptPort(self, "code")

    def update(self) -> Status:
        return Status.SUCCESS if self.script_truth(self.script.required(), "code") else Status.FAILURE
