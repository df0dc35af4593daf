"""The one place where node types are registered: :class:`NodeRegistry` and the built-ins.

A new node type is one class (a :class:`~hri.bt.node.BTNode`, ``BTControl`` or
``BTDecorator`` subclass) and one ``registry.register("Id", Class, kind)`` call.
:func:`register_builtin_nodes` registers BehaviorTree.CPP's built-in nodes (and the thesis's
WeightedRandom); every other node, the project's own included, comes through the plug-in
point of :mod:`hri.bt.plugins` (``default_registry``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import hri.bt.actions as actions
import hri.bt.controls as controls
import hri.bt.decorators as decorators
from hri.bt.node import BTControl, BTDecorator, BTNode

Kind = Literal["action", "condition", "control", "decorator"]

_BASES: dict[str, type] = {
    "action": BTNode,
    "condition": BTNode,
    "control": BTControl,
    "decorator": BTDecorator,
}

@dataclass(frozen=True)
class NodeType:
    """A registered node type."""

    node_id: str
    cls: type
    kind: str


class NodeRegistry:
    """Node IDs (the XML tag or ``ID``) mapped to node classes and their kind."""

    def __init__(self) -> None:
        self._types: dict[str, NodeType] = {}
        self.enums: dict[str, int] = {}
        """Names a script may use for numbers (BehaviorTree.CPP ``registerScriptingEnum``)."""

    def register(self, node_id: str, cls: type, kind: Kind) -> None:
        if kind not in _BASES:
            raise ValueError(f"unknown node kind {kind!r} (one of {', '.join(_BASES)})")
        if not (isinstance(cls, type) and issubclass(cls, _BASES[kind])):
            raise TypeError(f"{node_id}: a {kind} node must subclass {_BASES[kind].__name__}")
        if node_id in self._types:
            raise ValueError(f"node type {node_id!r} is already registered")
        self._types[node_id] = NodeType(node_id, cls, kind)

    def register_enum(self, name: str, value: int) -> None:
        """Let scripts (and Switch cases) use ``name`` for the integer ``value``."""
        self.enums[name] = int(value)

    def get(self, node_id: str) -> NodeType:
        """The registered type; KeyError when ``node_id`` is unknown."""
        try:
            return self._types[node_id]
        except KeyError:
            raise KeyError(f"unknown node type {node_id!r}") from None

    def __contains__(self, node_id: object) -> bool:
        return node_id in self._types

    def ids(self) -> list[str]:
        return sorted(self._types)


def register_builtin_nodes(registry: NodeRegistry) -> None:
    """BehaviorTree.CPP 4.10's built-in nodes (its ``BehaviorTreeFactory`` constructor), plus
    the thesis's WeightedRandom and InterruptableSequence."""
    for node_id, cls in (
        ("Sequence", controls.Sequence),
        ("AsyncSequence", controls.AsyncSequence),
        ("SequenceWithMemory", controls.SequenceWithMemory),
        ("SequenceStar", controls.SequenceWithMemory),
        ("InterruptableSequence", controls.SequenceWithMemory),
        ("ReactiveSequence", controls.ReactiveSequence),
        ("Fallback", controls.Fallback),
        ("AsyncFallback", controls.AsyncFallback),
        ("ReactiveFallback", controls.ReactiveFallback),
        ("Parallel", controls.Parallel),
        ("ParallelAll", controls.ParallelAll),
        ("IfThenElse", controls.IfThenElse),
        ("WhileDoElse", controls.WhileDoElse),
        ("TryCatch", controls.TryCatch),
        ("Switch2", controls.Switch2),
        ("Switch3", controls.Switch3),
        ("Switch4", controls.Switch4),
        ("Switch5", controls.Switch5),
        ("Switch6", controls.Switch6),
        ("WeightedRandom", controls.WeightedRandom),
    ):
        registry.register(node_id, cls, "control")
    for node_id, cls in (
        ("Inverter", decorators.Inverter),
        ("ForceSuccess", decorators.ForceSuccess),
        ("ForceFailure", decorators.ForceFailure),
        ("Repeat", decorators.Repeat),
        ("RetryUntilSuccessful", decorators.RetryUntilSuccessful),
        ("KeepRunningUntilFailure", decorators.KeepRunningUntilFailure),
        ("RunOnce", decorators.RunOnce),
        ("Precondition", decorators.Precondition),
        ("Timeout", decorators.Timeout),
        ("Delay", decorators.Delay),
        ("LoopInt", decorators.LoopInt),
        ("LoopBool", decorators.LoopBool),
        ("LoopDouble", decorators.LoopDouble),
        ("LoopString", decorators.LoopString),
        ("SkipUnlessUpdated", decorators.SkipUnlessUpdated),
        ("WaitValueUpdate", decorators.WaitValueUpdate),
    ):
        registry.register(node_id, cls, "decorator")
    for node_id, cls in (
        ("AlwaysSuccess", actions.AlwaysSuccess),
        ("AlwaysFailure", actions.AlwaysFailure),
        ("Script", actions.Script),
        ("SetBlackboard", actions.SetBlackboard),
        ("UnsetBlackboard", actions.UnsetBlackboard),
        ("Sleep", actions.Sleep),
        ("WasEntryUpdated", actions.WasEntryUpdated),
    ):
        registry.register(node_id, cls, "action")
    registry.register("ScriptCondition", actions.ScriptCondition, "condition")
