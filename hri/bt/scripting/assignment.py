"""The assignments of a script, ``:=  =  +=  -=  *=  /=``, and what they store.

``:=`` creates the entry when it does not exist (an entry of any type, in the scope the
key resolves to); the other operators need an existing entry. The entry is found (or
made) before the right side is evaluated, so ``x := x + 1`` on a new ``x`` leaves an empty
``x`` behind when it fails, as in BehaviorTree.CPP.

What is stored follows ``ExprAssignment::evaluate``: the first value of an entry of any
type is stored as it is; after that the entry keeps its type (``Any::copyInto``): a
double assigned to an integer entry must be integral, a number cannot go into a string
entry. A string assigned to another type is parsed by the entry's declared type, or, for
a number of an entry of any type, read as a double (``true``, ``false``, an enum, a
number): the entry becomes a double then.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from hri.bt.blackboard import EMPTY, Blackboard, BlackboardError, Entry, converted
from hri.bt.scripting.errors import ScriptError
from hri.bt.scripting.operators import ARITHMETIC, not_initialized
from hri.bt.scripting.values import (
    copy_into,
    describe,
    format_value,
    is_number,
    string_to_double,
    to_double,
)

Evaluate = Callable[[Blackboard, Mapping[str, int]], Any]
"""A compiled expression: its value on a blackboard, with the registered enums."""

_UNTYPED = (None, Any)
"""Entry types that accept any value: an entry made by ``:=`` or a port of type Any."""


def compile_assignment(op: str, key: str | None, right: Evaluate) -> Evaluate:
    """The evaluation of ``key op right``; ``key`` is None when the left side is not a
    name, which is an error only when the script runs (as in BehaviorTree.CPP)."""
    if key is None:
        def not_an_entry(blackboard: Blackboard, enums: Mapping[str, int]) -> Any:
            raise ScriptError(f"the left operand of '{op}' must be the name of a blackboard entry")
        return not_an_entry
    if op in (":=", "="):
        return _plain(op, key, right)
    return _compound(op, key, right)


def _plain(op: str, key: str, right: Evaluate) -> Evaluate:
    create = op == ":="

    def assign(blackboard: Blackboard, enums: Mapping[str, int]) -> Any:
        entry = blackboard.get_entry(key)
        if entry is None:
            if not create:
                raise _missing(key, op)
            entry = blackboard.create_entry(key)
        value = right(blackboard, enums)
        if value is EMPTY:
            raise not_initialized("right", op)
        if type(value) is type(entry.value) and type(value) is not int:
            entry.write(value)  # the common case: a double into a double, a string into a string
        else:
            entry.write(_stored(entry, key, value, enums))
        return entry.value

    return assign


def _stored(entry: Entry, key: str, value: Any, enums: Mapping[str, int]) -> Any:
    current = entry.value
    untyped = entry.type in _UNTYPED
    if current is EMPTY and untyped:
        return value
    if isinstance(value, str) and not isinstance(current, str):
        if not untyped:
            try:
                return converted(value, entry.type, key)
            except BlackboardError as error:
                raise ScriptError(str(error)) from None
        if is_number(current):
            return string_to_double(value, enums)
        raise ScriptError(f"cannot assign {describe(value)} to entry '{key}', which holds {describe(current)}")
    return _copied(value, current, key)


def _copied(value: Any, current: Any, key: str) -> Any:
    try:
        return copy_into(value, current)
    except ScriptError as error:
        raise ScriptError(f"cannot assign {describe(value)} to entry '{key}', which holds "
                          f"{describe(current)}: {error}") from None


def _compound(op: str, key: str, right: Evaluate) -> Evaluate:
    arithmetic = ARITHMETIC[op[0]]

    def update(blackboard: Blackboard, enums: Mapping[str, int]) -> Any:
        entry = blackboard.get_entry(key)
        if entry is None:
            raise _missing(key, op)
        value = right(blackboard, enums)
        if value is EMPTY:
            raise not_initialized("right", op)
        current = entry.value
        if current is EMPTY:
            raise not_initialized("left", op)
        if type(current) is float and type(value) is float:
            entry.write(arithmetic(current, value))
            return entry.value
        if is_number(value):
            if not is_number(current):
                raise ScriptError(f"'{op}' needs a number in entry '{key}', which holds {describe(current)}")
            result = arithmetic(to_double(current), to_double(value))
        elif isinstance(value, str):
            if op != "+=":
                raise ScriptError(f"'{op}' cannot be used with a string (only '+=' appends one)")
            result = format_value(current) + value
        else:
            result = current  # BehaviorTree.CPP leaves any other value unchanged
        entry.write(_copied(result, current, key))
        return entry.value

    return update


def _missing(key: str, op: str) -> ScriptError:
    return ScriptError(f"blackboard entry '{key}' does not exist (yet); '{op}' needs an existing "
                       "entry: use ':=' to create it")
