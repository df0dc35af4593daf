"""BehaviorTree.CPP ``Script``: run a script on the blackboard."""

from __future__ import annotations

from py_trees.common import Status

from hri.bt.node import BTNode, NodeConfig
from hri.bt.ports import Port
from hri.bt.script_port import ScriptPort


class Script(BTNode):
    """Runs the script ``code`` (e.g. ``count := count + 1; done := count >= 3``); SUCCESS.

    The script is parsed when the tree loads; an error while it runs stops the run with
    one line naming the node.
    """

    PORTS = (Port("code", "in", str, None, "the script"),)

    def __init__(self, config: NodeConfig) -> None:
        super().__init__(config)
        self.script = ScriptPort(self, "code")

    def update(self) -> Status:
        self.run_script(self.script.current())
        return Status.SUCCESS
