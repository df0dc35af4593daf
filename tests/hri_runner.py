"""Our side of the differential tests: runs a corpus case on hri's tree engine.

The case format and the outcome are those of :mod:`btcpp_oracle`: the same XML, the same
test leaves (``TestAction``, ``TestCondition``: each call returns the next status of the
leaf's list and is logged), the same number of ``tick_once()`` calls, and the root
blackboard printed the way BehaviorTree.CPP prints it. A load error or a tick that raises
is an outcome too (any :class:`~hri.base.errors.HriError`; a traceback of another kind is a bug
and propagates).
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import numpy as np
from py_trees.common import Status

from hri.bt import Blackboard, BTNode, TreeContext, default_registry, load_tree_text
from hri.bt.blackboard import EMPTY
from hri.bt.loggers.file_logger import btlog_header
from hri.bt.loggers.transitions import TransitionRecorder
from hri.bt.loggers.tree_xml import tree_xml
from hri.bt.node_status import TickResult, parse_status, status_name
from hri.bt.scripting import format_value
from hri.base.errors import HriError


class _Leaves:
    """The status lists of one run's test leaves and the log of their calls."""

    def __init__(self, scripts: dict[str, list[str]]):
        self.scripts = scripts
        self.calls: dict[str, int] = {}
        self.log: list[list[str]] = []

    def next(self, name: str, event: str) -> TickResult:
        self.log.append([name, event])
        script = self.scripts.get(name) or ["SUCCESS"]
        count = self.calls.get(name, 0)
        self.calls[name] = count + 1
        return parse_status(script[min(count, len(script) - 1)])


class TestAction(BTNode):
    """A stateful test leaf: logs start/tick/halt, returns its next scripted status."""

    __test__ = False  # not a pytest class
    STATEFUL = True  # as the oracle's, a StatefulActionNode

    def _leaves(self) -> _Leaves:
        return self.ctx.services["leaves"]

    def update(self) -> TickResult:
        return self._leaves().next(self.name, "tick" if self.status is Status.RUNNING else "start")

    def on_halted(self) -> None:
        self._leaves().log.append([self.name, "halt"])


class TestCondition(BTNode):
    """A condition test leaf: logs each tick, returns its next scripted status."""

    __test__ = False

    def update(self) -> TickResult:
        return self.ctx.services["leaves"].next(self.name, "tick")


@functools.cache
def registry():
    """The default registry plus the two test leaves (one for every case: a tree only reads it)."""
    reg = default_registry()
    reg.register("TestAction", TestAction, "action")
    reg.register("TestCondition", TestCondition, "condition")
    return reg


def _entry_text(value: Any) -> str | None:
    return None if value is EMPTY else format_value(value)


def run_case(case: dict, btlog: str | None = None) -> dict:
    """Run ``case`` on hri; the outcome as :func:`btcpp_oracle.run_case` gives it. With
    ``btlog``, hri's FileLogger2 writer logs the ticks into that ``.btlog`` file."""
    leaves = _Leaves(case.get("leaves") or {})
    ctx = TreeContext(rng=np.random.default_rng(0), now=lambda: 0.0, services={"leaves": leaves})
    blackboard = Blackboard()
    for key, value in (case.get("blackboard") or {}).items():
        blackboard.set(key, value)
    outcome: dict = {"load_error": False, "ticks": [], "tick_error": None, "log": [], "blackboard": {}}
    nodes = registry()
    try:
        tree = load_tree_text(case["xml"], nodes, ctx, blackboard)
    except HriError:
        outcome["load_error"] = True
        return outcome
    recorder = TransitionRecorder(tree.root) if btlog is not None else None
    for index in range(case["ticks"]):
        try:
            outcome["ticks"].append(status_name(tree.tick_once()))
        except HriError:
            outcome["tick_error"] = index
            break
    if recorder is not None:
        Path(btlog).write_bytes(btlog_header(tree_xml(tree, nodes)) + recorder.take())
    entries = blackboard.local_entries()
    outcome["blackboard"] = {key: _entry_text(entries[key].value) for key in sorted(entries)}
    outcome["log"] = leaves.log
    return outcome
