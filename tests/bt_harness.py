"""Test-only behaviour-tree nodes and a harness: trees from XML files, a fake clock, a log.

Shared by the tree-semantics tests (``test_bt_*``).
"""

from __future__ import annotations

import numpy as np
from py_trees.common import Status

from hri.bt import Blackboard, BTNode, NodeConfig, Port, TreeContext, default_registry, load_tree

R, S, F = Status.RUNNING, Status.SUCCESS, Status.FAILURE
_LETTERS = {"R": R, "S": S, "F": F}


class Fake(BTNode):
    """Per run: RUNNING for ``ticks`` ticks, then ``result``; logs start/tick/halt."""

    PORTS = (Port("id", "in", str), Port("ticks", "in", int, 0), Port("result", "in", str, "SUCCESS"))

    def log(self, what: str) -> None:
        self.ctx.services["log"].append((self.get_input("id"), what))

    def initialise(self) -> None:
        self.count = 0
        self.log("start")

    def update(self) -> Status:
        self.log("tick")
        self.count += 1
        return R if self.count <= self.get_input("ticks") else Status[self.get_input("result")]

    def on_halted(self) -> None:
        self.log("halt")


class Steps(BTNode):
    """Returns the statuses of ``script`` (``S;R;F``), one per tick over its life; the last repeats."""

    PORTS = (Port("id", "in", str), Port("script", "in", str))

    def __init__(self, config: NodeConfig):
        super().__init__(config)
        self.step = 0

    def update(self) -> Status:
        self.ctx.services["log"].append((self.get_input("id"), "tick"))
        script = self.get_input("script").split(";")
        status = _LETTERS[script[min(self.step, len(script) - 1)]]
        self.step += 1
        return status


class Cond(BTNode):
    PORTS = (Port("id", "in", str), Port("ok", "in", bool))

    def update(self) -> Status:
        self.ctx.services["log"].append((self.get_input("id"), "tick"))
        return S if self.get_input("ok") else F


class Harness:
    """A tree from an XML file in ``tmp_path``, a fake clock and a log of the test nodes."""

    def __init__(self, tmp_path, body: str, seed: int = 0, **entries):
        registry = default_registry()
        registry.register("Fake", Fake, "action")
        registry.register("Steps", Steps, "action")
        registry.register("Cond", Cond, "condition")
        path = tmp_path / "tree.xml"
        path.write_text(f'<root BTCPP_format="4">\n<BehaviorTree ID="T">\n{body}\n</BehaviorTree>\n</root>\n')
        self.log: list[tuple[str, str]] = []
        self.clock = [0.0]
        self.ctx = TreeContext(rng=np.random.default_rng(seed), now=lambda: self.clock[0], services={"log": self.log})
        self.bb = Blackboard()
        for key, value in entries.items():
            self.bb.set(key, value)
        self.tree = load_tree(str(path), registry, self.ctx, self.bb)
        self.root = self.tree.root

    def tick(self, at: float | None = None) -> Status:
        if at is not None:
            self.clock[0] = at
        self.log.clear()
        return self.tree.tick_once()
