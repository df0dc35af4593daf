"""What each operator of a script computes, on the values of :mod:`values`, as
BehaviorTree.CPP 4.10 computes it (``scripting/operators.hpp``).

Every number an operator makes is a double: ``-2``, ``~5``, ``1 + 1``, ``a < b``, ``x && y``.
Both operands of a binary operator are evaluated (``&&`` and ``||`` do not short-circuit);
a chained comparison stops at its first false link.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Mapping
from typing import Any

from hri.bt.blackboard import EMPTY
from hri.bt.scripting.errors import ScriptError
from hri.bt.scripting.values import (
    INT64_MIN,
    describe,
    format_value,
    is_number,
    string_to_double,
    to_bool,
    to_double,
    to_int64,
)

MAX_STRING_CHARS = 1 << 20
"""The longest string a script may make (a megabyte of ASCII): a script that doubles a string
at every tick would otherwise take all memory in a few dozen ticks."""
FLOAT_EPSILON = 2.0**-23
"""``==`` and ``!=`` of numbers allow this absolute difference (C++ float epsilon)."""

_INFINITY = math.inf
_DEFAULT_NAN = _INFINITY - _INFINITY  # the NaN the hardware makes for 0/0 (negative on x86)


def divide(left: float, right: float) -> float:
    """IEEE division, as C++ divides doubles: ``1/0`` is inf, ``0/0`` NaN."""
    if right != 0.0:
        return left / right
    if math.isnan(left):
        return left
    if left == 0.0:
        return _DEFAULT_NAN
    return math.copysign(_INFINITY, left) * math.copysign(1.0, right)


ARITHMETIC: dict[str, Callable[[float, float], float]] = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": divide}
_BITWISE: dict[str, Callable[[int, int], int]] = {"&": operator.and_, "|": operator.or_, "^": operator.xor}
_LOGIC: dict[str, Callable[[bool, bool], bool]] = {"&&": operator.and_, "||": operator.or_}


def not_initialized(side: str, op: str) -> ScriptError:
    return ScriptError(f"the {side} operand of '{op}' has no value (not initialized)")


# -- prefix operators ------------------------------------------------------------------------


def unary(op: str, value: Any) -> float:
    """``-value``, ``~value`` or ``!value``."""
    if not is_number(value):
        if value is EMPTY:
            raise ScriptError(f"the operand of '{op}' has no value (not initialized)")
        raise ScriptError(f"'{op}' cannot be applied to {describe(value)}")
    number = to_double(value)
    if op == "-":
        return -number
    if op == "!":
        return 1.0 if number == 0.0 else 0.0
    if number > 2.0**63 or number < -(2.0**63):
        raise ScriptError(f"'~' needs a number in the int64 range, got {format_value(number)}")
    # C++ truncates toward zero; x86 makes NaN and 2**63 the smallest int64.
    integer = int(number) if -(2.0**63) <= number < 2.0**63 else INT64_MIN
    return float(~integer)


# -- binary operators ------------------------------------------------------------------------


def binary(op: str, left: Any, right: Any) -> Any:
    """``left op right`` for the operators ``+ - * / .. & | ^ && ||``."""
    if left is EMPTY:
        raise not_initialized("left", op)
    if right is EMPTY:
        raise not_initialized("right", op)
    if is_number(left) and is_number(right):
        return _numbers(op, left, right)
    if isinstance(left, str) and isinstance(right, str) and op == "+":
        return _joined(op, left, right)
    if op == ".." and _textual(left) and _textual(right):  # not two numbers: returned above
        return _joined(op, format_value(left), format_value(right))
    raise ScriptError(f"'{op}' cannot be applied to {describe(left)} and {describe(right)}")


def _joined(op: str, left: str, right: str) -> str:
    """``left + right``, refused before it is made when longer than :data:`MAX_STRING_CHARS`."""
    length = len(left) + len(right)
    if length > MAX_STRING_CHARS:
        raise ScriptError(f"'{op}' would make a string of {length} characters (at most {MAX_STRING_CHARS})")
    return left + right


def _textual(value: Any) -> bool:
    return isinstance(value, str) or is_number(value)


def _numbers(op: str, left: bool | int | float, right: bool | int | float) -> Any:
    left_double, right_double = to_double(left), to_double(right)
    arithmetic = ARITHMETIC.get(op)
    if arithmetic is not None:
        return arithmetic(left_double, right_double)
    bitwise = _BITWISE.get(op)
    if bitwise is not None:
        try:
            return float(bitwise(to_int64(left), to_int64(right)))
        except ScriptError:
            raise ScriptError(f"bitwise '{op}' needs two integers, "
                              f"got {describe(left)} and {describe(right)}") from None
    logic = _LOGIC.get(op)
    if logic is not None:
        try:
            return float(logic(to_bool(left), to_bool(right)))
        except ScriptError:
            raise ScriptError(f"'{op}' needs booleans (true, false, the integers 0 and 1, non-negative "
                              f"numbers), got {describe(left)} and {describe(right)}") from None
    return EMPTY  # '..' of two numbers: BehaviorTree.CPP returns an empty value


# -- comparisons -----------------------------------------------------------------------------


def compare(op: str, left: Any, right: Any, enums: Mapping[str, int]) -> bool:
    """One link of a (chained) comparison. A string compared with a number is read as a
    number (see :func:`string_to_double`)."""
    if left is EMPTY:
        raise not_initialized("left", op)
    if right is EMPTY:
        raise not_initialized("right", op)
    left_is_string, right_is_string = isinstance(left, str), isinstance(right, str)
    if left_is_string and right_is_string:
        return _holds(op, left, right, left == right)
    if is_number(left):
        left_value = to_double(left)
    elif left_is_string and is_number(right):
        left_value = string_to_double(left, enums)
    else:
        raise _cannot_compare(op, left, right)
    if is_number(right):
        right_value = to_double(right)
    elif right_is_string:
        right_value = string_to_double(right, enums)
    else:
        raise _cannot_compare(op, left, right)
    return _holds(op, left_value, right_value, abs(left_value - right_value) <= FLOAT_EPSILON)


def _holds(op: str, left: Any, right: Any, same: bool) -> bool:
    # Written as C++ writes them (a link fails when the opposite holds): with a NaN,
    # '<', '>', '<=' and '>=' all hold.
    if op == "==":
        return same
    if op == "!=":
        return not same
    if op == "<":
        return not left >= right
    if op == ">":
        return not left <= right
    if op == "<=":
        return not left > right
    return not left < right


def _cannot_compare(op: str, left: Any, right: Any) -> ScriptError:
    return ScriptError(f"'{op}' cannot compare {describe(left)} with {describe(right)}")


# -- ternary ---------------------------------------------------------------------------------


def condition(value: Any) -> bool:
    """Whether the condition of ``?:`` holds: a number when nonzero; a string is read as the
    number it starts with (not ``true``/``false``: BehaviorTree.CPP's test for a non-empty
    string never matches a script's string)."""
    return to_double(value) != 0.0
