"""The two errors of a script: one found when it is parsed, one raised when it runs."""

from __future__ import annotations


class ScriptSyntaxError(ValueError):
    """A script BehaviorTree.CPP refuses to parse. ``column`` is 1-based inside the code."""

    def __init__(self, message: str, column: int):
        super().__init__(message)
        self.message = message
        self.column = column


class ScriptError(ValueError):
    """A script that fails while it runs (BehaviorTree.CPP throws then): an unknown name, an
    operand without a value, a value its entry or operator cannot take."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message
