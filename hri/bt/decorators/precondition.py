"""BehaviorTree.CPP ``Precondition``: the child runs only when a script is true."""

from __future__ import annotations

from py_trees.common import Status

from hri.bt.node import BTDecorator, NodeConfig
from hri.bt.node_status import TickResult, is_completed
from hri.bt.ports import Port
from hri.bt.script_port import ScriptPort


class Precondition(BTDecorator):
    """Ticks the child when the script ``if`` is true, else returns ``else`` (FAILURE by
    default; SUCCESS, SKIPPED, RUNNING or IDLE may be given).

    Once the child has started (RUNNING), the script is not evaluated again until the child
    finishes.
    """

    PORTS = (Port("if", "in", str, None, "the condition, a script"),
             Port("else", "in", Status, Status.FAILURE, "the status when the condition is false"))

    def __init__(self, config: NodeConfig) -> None:
        super().__init__(config)
        self.script = ScriptPort(self, "if")
        self.child_running = False

    def on_tick(self) -> TickResult:
        script = self.script.required()
        otherwise = self.get_input("else")
        if not self.child_running:
            self.child_running = self.script_truth(script, "if")
        if not self.child_running:
            return otherwise
        status = self.child.execute_tick()
        if is_completed(status):
            self.reset_child()
            self.child_running = False
        return status


