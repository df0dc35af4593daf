"""BehaviorTree.CPP ``Switch2`` .. ``Switch6``: run the child whose case matches a variable."""

from __future__ import annotations

from typing import Mapping

from py_trees.common import Status

from hri.bt.node import BTControl
from hri.bt.node_status import SKIPPED, TickResult
from hri.bt.ports import Port, PortError
from hri.bt.value_types import cpp_float, cpp_int

FLOAT_EPSILON = 1.1920928955078125e-07
"""C++ ``std::numeric_limits<float>::epsilon()``: how close two numbers must be to match."""
_INT32 = range(-2**31, 2**31)


def _as_int(text: str, enums: Mapping[str, int]) -> int | None:
    if text in enums:
        return enums[text]
    value = cpp_int(text)
    return value if value is not None and value in _INT32 else None


def _as_real(text: str, enums: Mapping[str, int]) -> float | None:
    return float(enums[text]) if text in enums else cpp_float(text)


def case_matches(variable: str, case: str, enums: Mapping[str, int] = {}) -> bool:
    """BehaviorTree.CPP's ``CheckStringEquality``: equal strings, equal integers (C++
    ``from_chars`` of the whole text, or an enum's name), or numbers within float epsilon."""
    if variable == case:
        return True
    a, b = _as_int(variable, enums), _as_int(case, enums)
    if a is not None and b is not None and a == b:
        return True
    x, y = _as_real(variable, enums), _as_real(case, enums)
    return x is not None and y is not None and abs(x - y) <= FLOAT_EPSILON


class Switch(BTControl):
    """N cases plus a default child (N + 1 children).

    Every tick compares ``variable`` with ``case_1`` .. ``case_N`` in order and ticks the
    child of the first matching case, else the last child (default); a variable or case
    that cannot be read (a missing entry, a case not given) matches nothing. When the chosen
    child differs from the one that was RUNNING, that one is halted first. The node returns
    the chosen child's status; when it finishes, all children are reset.
    """

    CASES = 0
    running = -1

    def _text(self, port: str) -> str | None:
        try:
            return self.get_input(port)
        except PortError:
            return None

    def _choose(self) -> int:
        variable = self._text("variable")
        if variable is None:
            return self.CASES
        for index in range(self.CASES):
            case = self._text(f"case_{index + 1}")
            if case is not None and case_matches(variable, case, self.ctx.enums):
                return index
        return self.CASES

    def on_tick(self) -> TickResult:
        chosen = self._choose()
        if self.running != -1 and self.running != chosen:
            self.halt_child(self.running)
        status = self.children[chosen].execute_tick()
        if status is SKIPPED:
            self.running = -1
        elif status is Status.RUNNING:
            self.running = chosen
        else:
            self.reset_children()
            self.running = -1
        return status

    def halt(self) -> None:
        self.running = -1
        super().halt()


def _switch_class(cases: int) -> type[Switch]:
    ports = (Port("variable", "in", str, None, "the value to compare, usually {key}"),) + tuple(
        Port(f"case_{i}", "in", str, None, f"the value that selects child {i}") for i in range(1, cases + 1)
    )
    doc = (f"BehaviorTree.CPP ``Switch{cases}``: {cases} cases (``case_1`` .. ``case_{cases}``) and a default "
           f"child, {cases + 1} children.\n\n" + (Switch.__doc__ or "").split("\n\n", 1)[1])
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

