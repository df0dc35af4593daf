"""What a script names, statement by statement: the names it reads, the entries it assigns, and
the statements that are a lone name, each with its column in the code.

The script is parsed by the grammar that runs it (:class:`~hri.bt.scripting.syntax.ScriptParser`),
with a transformer that keeps names instead of compiling closures, so the checks of
``hri validate`` (:mod:`hri.bt.lint`) and the blackboard analysis (:mod:`hri.bt.keys`) see the
script as BehaviorTree.CPP parses it: ``ready and done`` is three statements, ``'a := b'`` is a
string.

    names = script_names("n := n + 1; done := n >= limit")
    [name.text for name in names.reads]          # ['n', 'n', 'limit']
    [a.target.text for a in names.assignments]   # ['n', 'done']
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from lark import Token, Transformer

from hri.bt.scripting.syntax import ScriptParser


@dataclass(frozen=True)
class Name:
    """A name in a script (an entry, an enum, ``@key``) and its 1-based column in the code."""

    text: str
    column: int


@dataclass(frozen=True)
class Assignment:
    """``target op value``; ``op`` is one of ``:=  =  +=  -=  *=  /=``."""

    target: Name
    op: str


@dataclass(frozen=True)
class _Part:
    """What an expression names: ``name`` is set when the expression is a lone name."""

    reads: tuple[Name, ...] = ()
    assignments: tuple[Assignment, ...] = ()
    name: Name | None = None


@dataclass(frozen=True)
class ScriptNames:
    """A script's statements (each a :class:`_Part`-like summary) and what they all name."""

    statements: tuple[_Part, ...]

    @property
    def reads(self) -> list[Name]:
        """The names the script reads, in the order of the code: every operand that is a name,
        and the target of an assignment other than ``:=`` (``n += 1`` needs an existing ``n``)."""
        return [name for statement in self.statements for name in statement.reads]

    @property
    def assignments(self) -> list[Assignment]:
        return [assignment for statement in self.statements for assignment in statement.assignments]

    @property
    def lone_names(self) -> list[Name]:
        """The statements that are a name and nothing else (``ready and done``: all three)."""
        return [statement.name for statement in self.statements if statement.name is not None]


def _merge(*parts: Any) -> _Part:
    found = [part for part in parts if isinstance(part, _Part)]
    return _Part(tuple(n for p in found for n in p.reads), tuple(a for p in found for a in p.assignments))


class _Names(Transformer):
    """Lark callbacks for the aliased rules of the grammar, each returning a :class:`_Part`."""

    def start(self, statements: list[_Part]) -> ScriptNames:
        return ScriptNames(tuple(statements))

    def name(self, children: list[Token]) -> _Part:
        token = children[0]
        name = Name(str(token), (token.start_pos or 0) + 1)
        return _Part((name,), (), name)

    def assign(self, children: list[Any]) -> _Part:
        target, op, value = children
        op = str(op)
        if target.name is None:  # not a name: an error when it runs; what it reads is still read
            return _merge(target, value)
        reads = value.reads if op == ":=" else (*target.reads, *value.reads)
        return _Part(reads, (*value.assignments, Assignment(target.name, op)))

    def _operation(self, children: list[Any]) -> _Part:
        return _merge(*children)

    number = number_before_at = string = true = false = unterminated_string = bad_character = _operation
    unary = binary = chain = ternary = _operation


@functools.lru_cache(maxsize=1)
def _parser() -> ScriptParser:
    return ScriptParser(_Names())


@functools.lru_cache(maxsize=1024)
def script_names(code: str) -> ScriptNames:
    """The names of ``code``; :class:`~hri.bt.scripting.errors.ScriptSyntaxError` when
    BehaviorTree.CPP refuses to parse it."""
    return _parser().parse(code)
