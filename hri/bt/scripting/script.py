"""A parsed script: parsed once when its tree loads, run at every tick."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from hri.bt.blackboard import Blackboard
from hri.bt.scripting.assignment import Evaluate
from hri.bt.scripting.compiler import Compiler
from hri.bt.scripting.syntax import ScriptParser
from hri.bt.scripting.values import to_bool

_NO_ENUMS: Mapping[str, int] = {}


class Script:
    """The statements of one script. :meth:`run` returns the value of the last one."""

    __slots__ = ("_last", "_statements", "code")

    def __init__(self, code: str, statements: list[Evaluate]):
        self.code = code
        self._statements = tuple(statements[:-1])
        self._last = statements[-1]

    def run(self, blackboard: Blackboard, enums: Mapping[str, int] = _NO_ENUMS) -> Any:
        """Run the statements in order on ``blackboard``; ``enums`` are the registered
        scripting enums (name -> value). ScriptError when a statement fails; the statements
        before it keep their effects."""
        for statement in self._statements:
            statement(blackboard, enums)
        return self._last(blackboard, enums)

    def truth(self, blackboard: Blackboard, enums: Mapping[str, int] = _NO_ENUMS) -> bool:
        """``run`` read as a condition (pre-conditions, ScriptCondition), as
        ``Any::cast<bool>`` reads it: a double is true when nonzero (and an error when
        negative), an integer must be 0 or 1, a string is an error."""
        return to_bool(self.run(blackboard, enums))

    def __repr__(self) -> str:
        return f"Script({self.code!r})"


@functools.lru_cache(maxsize=1)
def _parser() -> ScriptParser:
    return ScriptParser(Compiler())


@functools.lru_cache(maxsize=4096)
def parse_script(code: str) -> Script:
    """``code`` parsed (ScriptSyntaxError when BehaviorTree.CPP refuses it). A script holds
    no state, so trees that repeat a script share one :class:`Script`."""
    return Script(code, _parser().parse(code))
