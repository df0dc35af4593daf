"""A loaded tree and its ticking, as BehaviorTree.CPP's ``Tree``.

:meth:`Tree.tick_once` ticks the root, and ticks it again at once while a node asked for a
wake-up (:class:`~hri.bt.context.WakeUpSignal`: a Repeat between two runs of its child, a
SequenceWithMemory between two children, ...) and the tree is RUNNING, as BehaviorTree.CPP's
``tickOnce()``. A root that finished is made IDLE, so the next tick starts the tree anew.

One deliberate difference: BehaviorTree.CPP would tick forever a tree whose wake-ups never
end (``Repeat num_cycles="-1"`` over a child that succeeds at once); :meth:`Tree.tick_once`
stops after :data:`MAX_TICKS_PER_TICK_ONCE` root ticks and returns RUNNING, so that the
simulation goes on; the next call continues.
"""

from __future__ import annotations

from dataclasses import dataclass

from py_trees.common import Status

from hri.bt.blackboard import Blackboard
from hri.bt.context import TreeContext
from hri.bt.node import TreeNode
from hri.bt.node_status import TickResult, is_completed
from hri.bt.status import preorder

MAX_TICKS_PER_TICK_ONCE = 1000
"""Most root ticks one :meth:`Tree.tick_once` makes while nodes keep asking for wake-ups."""


@dataclass
class Tree:
    """A tree ready to tick: its root node, root blackboard and context."""

    root: TreeNode
    blackboard: Blackboard
    ctx: TreeContext
    file: str = ""
    tree_id: str = ""

    @property
    def status(self) -> Status:
        """The root's status (INVALID when IDLE)."""
        return self.root.status

    def tick_once(self) -> TickResult:
        """Tick the root, again while a wake-up was asked for and it is RUNNING."""
        status = self.root.execute_tick()
        ticks = 1
        while status is Status.RUNNING and ticks < MAX_TICKS_PER_TICK_ONCE and self.ctx.wake_up.take():
            status = self.root.execute_tick()
            ticks += 1
        if is_completed(status):
            self.root.reset_status()
        return status

    def tick_exactly_once(self) -> TickResult:
        """Tick the root once, whatever wake-ups were asked for (``tickExactlyOnce()``)."""
        status = self.root.execute_tick()
        if is_completed(status):
            self.root.reset_status()
        return status

    def halt(self) -> None:
        """Halt the tree (``haltTree()``): the root, then every node once more, as
        BehaviorTree.CPP does "just in case"; every node's ``_onHalted`` runs."""
        self.root.halt_node()
        for node in self.nodes():
            node.halt_node()
        self.root.reset_status()

    def nodes(self) -> list[TreeNode]:
        """Every node, parents before children (subtrees expanded)."""
        return [node for _, node in preorder(self.root)]
