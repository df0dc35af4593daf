"""Turns the rules of :mod:`syntax` into closures, once per script, so that running a
script calls plain Python functions ``(blackboard, enums) -> value`` and never walks a
parse tree.

The literals are BehaviorTree.CPP's: an integer (decimal or ``0x`` hexadecimal) is an
int64, a real a double, ``true``/``false`` the doubles 1.0/0.0, ``'text'`` a string. A name
is a registered enum (a double) if there is one, else a blackboard entry (``@key``: of the
root blackboard).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, NamedTuple

from lark import Token, Transformer

import hri.bt.scripting.operators as operators
from hri.bt.blackboard import Blackboard
from hri.bt.scripting.assignment import Evaluate, compile_assignment
from hri.bt.scripting.errors import ScriptError, ScriptSyntaxError
from hri.bt.scripting.values import INT64_MAX, parse_double

_DECIMAL = re.compile(r"[0-9]+")
_HEXADECIMAL = re.compile(r"0[xX]([0-9a-fA-F]+)")
_REAL = re.compile(r"[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")


MAX_DEPTH = 100
"""The deepest nesting of operations in a script (``a+b+c`` is two deep): running a script
recurses once per level, and ``1+1+...+1`` with 200,000 terms would go past Python's stack
long before it finished. BehaviorTree.CPP's parser recurses likewise; real scripts are a few
levels deep."""


class Expr(NamedTuple):
    """A compiled expression; ``name`` is the entry it reads when it is a bare name (the
    only expression an assignment can store into); ``depth`` how deep its operations nest."""

    evaluate: Evaluate
    name: str | None = None
    depth: int = 1


def _depth(token: Token | None, *operands: Expr) -> int:
    """The depth of an operation on ``operands`` (at ``token``, for the message);
    ScriptSyntaxError when deeper than :data:`MAX_DEPTH`."""
    depth = 1 + max(operand.depth for operand in operands)
    if depth > MAX_DEPTH:
        column = token.start_pos + 1 if token is not None and token.start_pos is not None else 1
        raise ScriptSyntaxError(f"operations nested deeper than {MAX_DEPTH} levels", column)
    return depth


def literal(value: Any) -> Expr:
    def constant(blackboard: Blackboard, enums: Mapping[str, int]) -> Any:
        return value
    return Expr(constant)


def integer(text: str) -> int:
    """An integer literal as BehaviorTree.CPP reads it with ``std::from_chars`` into an
    int64: when it overflows, the literal is 0 (the untouched initial value)."""
    hexadecimal = _HEXADECIMAL.fullmatch(text)
    digits = (hexadecimal.group(1) if hexadecimal else text).lstrip("0")
    if len(digits) > (16 if hexadecimal else 19):  # beyond int64 whatever the digits: not read
        return 0  # (Python reads at most 4300 digits, in its own words)
    value = int(digits or "0", 16 if hexadecimal else 10)
    return value if value <= INT64_MAX else 0


class Compiler(Transformer):
    """Lark callbacks, one per aliased rule of the grammar, each returning an :class:`Expr`
    (``start``: the statements' evaluations)."""

    def start(self, statements: list[Expr]) -> list[Evaluate]:
        return [statement.evaluate for statement in statements]

    # -- operands --------------------------------------------------------------------------

    def number(self, children: list[Token]) -> Expr:
        token = children[0]
        text = str(token)
        if _DECIMAL.fullmatch(text) or _HEXADECIMAL.fullmatch(text):
            return literal(integer(text))
        if _REAL.fullmatch(text):
            value = parse_double(text)
            if value is None:
                raise ScriptSyntaxError(f"the number {text} is out of the range of a double", token.start_pos + 1)
            return literal(value)
        raise ScriptSyntaxError(f"invalid number '{text}'{_number_hint(text)}", token.start_pos + 1)

    def number_before_at(self, children: list[Token]) -> Expr:
        token = children[0]
        raise ScriptSyntaxError(f"invalid number '{token}': a number cannot be followed by '@'",
                                token.start_pos + 1)

    def string(self, children: list[Token]) -> Expr:
        return literal(str(children[0])[1:-1])

    def true(self, children: list[Token]) -> Expr:
        return literal(1.0)

    def false(self, children: list[Token]) -> Expr:
        return literal(0.0)

    def name(self, children: list[Token]) -> Expr:
        key = str(children[0])

        def read(blackboard: Blackboard, enums: Mapping[str, int]) -> Any:
            if key in enums:
                return float(enums[key])
            entry = blackboard.get_entry(key)
            if entry is None:
                raise ScriptError(f"variable '{key}' not found: no blackboard entry or enum has this name")
            return entry.value

        return Expr(read, key)

    def unterminated_string(self, children: list[Token]) -> Expr:
        raise ScriptSyntaxError("unterminated string: this quote is never closed", children[0].start_pos + 1)

    def bad_character(self, children: list[Token]) -> Expr:
        token = children[0]
        hint = {'"': " (strings are written between single quotes)",
                ".": " ('..' concatenates; a real is written 0.5)"}.get(str(token), "")
        raise ScriptSyntaxError(f"unexpected character {str(token)!r}{hint}", token.start_pos + 1)

    # -- operators -------------------------------------------------------------------------

    def unary(self, children: list[Any]) -> Expr:
        op, operand = str(children[0]), children[1].evaluate
        depth = _depth(children[0], children[1])

        def apply(blackboard: Blackboard, enums: Mapping[str, int]) -> Any:
            return operators.unary(op, operand(blackboard, enums))

        return Expr(apply, depth=depth)

    def binary(self, children: list[Any]) -> Expr:
        left, op, right = children[0].evaluate, str(children[1]), children[2].evaluate
        depth = _depth(children[1], children[0], children[2])
        arithmetic = operators.ARITHMETIC.get(op)
        if arithmetic is None:
            def apply(blackboard: Blackboard, enums: Mapping[str, int]) -> Any:
                return operators.binary(op, left(blackboard, enums), right(blackboard, enums))
            return Expr(apply, depth=depth)

        def calculate(blackboard: Blackboard, enums: Mapping[str, int]) -> Any:
            left_value, right_value = left(blackboard, enums), right(blackboard, enums)
            if type(left_value) is float and type(right_value) is float:
                return arithmetic(left_value, right_value)
            return operators.binary(op, left_value, right_value)

        return Expr(calculate, depth=depth)

    def chain(self, children: list[Any]) -> Expr:
        first = children[0].evaluate
        links = [(str(op), operand.evaluate) for op, operand in zip(children[1::2], children[2::2])]
        depth = _depth(children[1], *children[0::2])

        def compare(blackboard: Blackboard, enums: Mapping[str, int]) -> Any:
            left = first(blackboard, enums)
            for op, operand in links:
                right = operand(blackboard, enums)
                if not operators.compare(op, left, right, enums):
                    return 0.0
                left = right
            return 1.0

        return Expr(compare, depth=depth)

    def ternary(self, children: list[Expr]) -> Expr:
        test, then, otherwise = (child.evaluate for child in children)
        depth = _depth(None, *children)

        def choose(blackboard: Blackboard, enums: Mapping[str, int]) -> Any:
            if operators.condition(test(blackboard, enums)):
                return then(blackboard, enums)
            return otherwise(blackboard, enums)

        return Expr(choose, depth=depth)

    def assign(self, children: list[Any]) -> Expr:
        target, op, value = children
        return Expr(compile_assignment(str(op), target.name, value.evaluate), depth=_depth(op, target, value))


def _number_hint(text: str) -> str:
    if text[:2] in ("0x", "0X"):
        return ": a hexadecimal number is 0x and hexadecimal digits only"
    if re.fullmatch(r"[0-9]+(?:\.[0-9]+)?[eE][+-]?", text):
        return ": the exponent has no digits"
    if re.match(r"[0-9]+\.(?![0-9])", text):
        return ": a '.' must be followed by digits"
    return ": letters cannot follow a number (a name cannot start with a digit)"
