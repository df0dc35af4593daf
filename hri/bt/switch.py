"""BehaviorTree.CPP v4 ``Switch2`` .. ``Switch6``: run the child whose case matches a variable.

py_trees has no such composite.
"""

from __future__ import annotations

from typing import Any, Iterator, Mapping, Sequence

import py_trees
from py_trees.behaviour import Behaviour
from py_trees.common import Status

from hri.bt.blackboard import Blackboard
from hri.bt.context import TreeContext
from hri.bt.node import BTControl
from hri.bt.ports import Port


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _number(text: str) -> float | None:
    try:
        return float(text.strip())
    except ValueError:
        return None


def case_matches(variable: str, case: str) -> bool:
    """BehaviorTree.CPP's ``CheckStringEquality``: equal strings, or equal numbers (``1`` = ``1.0``)."""
    if variable == case:
        return True
    a, b = _number(variable), _number(case)
    return a is not None and b is not None and abs(a - b) <= 1e-12 * max(1.0, abs(a), abs(b))


class Switch(BTControl):
    """BehaviorTree.CPP ``SwitchN``: N cases plus a default child (N + 1 children).

    Every tick compares ``variable`` with ``case_1`` .. ``case_N`` in order (as text, or as
    numbers when both are numbers) and ticks the child of the first equal case, or the last
    child (default) when none matches or the variable's blackboard entry does not exist.
    When the chosen child differs from the one that was RUNNING, that one is halted first.
    The node returns the chosen child's status; when it finishes, all children are reset.
    The cases are re-evaluated every tick (the node is reactive).

    Unlike BehaviorTree.CPP, every ``case_i`` port must be given (a missing one is a load-time
    error rather than a case that never matches).
    """

    CASES = 0

    def __init__(self, name: str, ports: Mapping[str, str], ctx: TreeContext, blackboard: Blackboard,
                 children: Sequence[Behaviour]):
        super().__init__(name, ports, ctx, blackboard, children)
        self.running: int | None = None

    def _variable(self) -> str | None:
        kind, key = self._ports["variable"]
        if kind == "lit":
            return _text(key)
        try:
            return _text(self.blackboard.get(key))
        except KeyError:
            return None  # BehaviorTree.CPP: no variable, the default child

    def _choose(self) -> int:
        variable = self._variable()
        if variable is not None:
            for index in range(self.CASES):
                if case_matches(variable, _text(self.get_input(f"case_{index + 1}"))):
                    return index
        return self.CASES

    def tick(self) -> Iterator[Behaviour]:
        if self.status != Status.RUNNING:
            self.running = None
            self.initialise()
        chosen = self._choose()
        if self.running is not None and self.running != chosen:
            previous = self.children[self.running]
            if previous.status != Status.INVALID:
                previous.stop(Status.INVALID)
        child = self.children[chosen]
        self.current_child = child
        yield from child.tick()
        if child.status == Status.RUNNING:
            self.running = chosen
            self.status = Status.RUNNING
        else:
            status = child.status
            self.running = None
            for other in self.children:
                if other.status != Status.INVALID:
                    other.stop(Status.INVALID)
            self.stop(status)
        yield self

    def stop(self, new_status: Status = Status.INVALID) -> None:
        if new_status == Status.INVALID:
            self.running = None
        py_trees.composites.Composite.stop(self, new_status)


def _switch_class(cases: int) -> type[Switch]:
    ports = (Port("variable", "in", Any, description="the value to compare, usually {key}"),) + tuple(
        Port(f"case_{i}", "in", Any, description=f"the value that selects child {i}") for i in range(1, cases + 1)
    )
    doc = (f"BehaviorTree.CPP ``Switch{cases}``: {cases} cases (``case_1`` .. ``case_{cases}``) and a default "
           f"child, {cases + 1} children.\n\n" + Switch.__doc__.split("\n\n", 1)[1])
    return type(f"Switch{cases}", (Switch,), {
        "CASES": cases, "PORTS": ports, "MIN_CHILDREN": cases + 1, "MAX_CHILDREN": cases + 1,
        "__doc__": doc, "__module__": __name__,
    })


Switch2 = _switch_class(2)
Switch3 = _switch_class(3)
Switch4 = _switch_class(4)
Switch5 = _switch_class(5)
Switch6 = _switch_class(6)

__all__ = ["Switch", "Switch2", "Switch3", "Switch4", "Switch5", "Switch6", "case_matches"]
