"""The one error type a user can cause, printed as ``FILE:LINE: message``."""

from __future__ import annotations


class HriError(Exception):
    """A problem in user input (a file, an option) or a run that must end cleanly.

    ``str(err)`` is the single line the command line prints: ``FILE:LINE: message`` when a
    file and line are known, ``FILE: message`` with a file only, else the message.
    """

    def __init__(self, message: str, file: str | None = None, line: int | None = None):
        super().__init__(message)
        self.message = message
        self.file = file
        self.line = line

    def __str__(self) -> str:
        if self.file and self.line:
            return f"{self.file}:{self.line}: {self.message}"
        if self.file:
            return f"{self.file}: {self.message}"
        return self.message


class SafetyViolation(HriError):
    """The first safety violation of a ``--strict`` run (:mod:`hri.run.monitor`): the run ends with it."""
