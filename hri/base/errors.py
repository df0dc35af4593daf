"""The one error type a user can cause, printed as ``FILE:LINE: message``; and how a command
ends on SIGTERM (:class:`Terminated`)."""

from __future__ import annotations

import re
import signal
from contextlib import contextmanager
from typing import Iterator

from hri.base.numbers import cut

#: a word (a run of characters without a space) longer than this is cut in a message: a
#: value quoted whole from a user's input (a 100,000-digit number, a long name) would make a
#: line of any length
MAX_WORD_CHARS = 300
_LONG_WORD = re.compile(rf"\S{{{MAX_WORD_CHARS + 1},}}")


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
        self.stats: dict | None = None  # a run that ended with this error: its statistics so far

    def __str__(self) -> str:
        if self.file and self.line:
            text = f"{self.file}:{self.line}: {self.message}"
        else:
            text = f"{self.file}: {self.message}" if self.file else self.message
        return one_line(shortened(text))


def shortened(text: str) -> str:
    """``text`` with every word longer than :data:`MAX_WORD_CHARS` cut
    (:func:`hri.base.numbers.cut`): what a message quotes of a user's input stays short."""
    return _LONG_WORD.sub(lambda word: cut(word.group(), MAX_WORD_CHARS), text)


def one_line(text: str) -> str:
    """``text`` with every character that is not printable (line breaks, tabs, other control
    characters) written as its escape: a key or value quoted from a user's file stays on the
    message's one line."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape", "backslashreplace").decode("ascii")
                   for c in text)


class Terminated(SystemExit):
    """SIGTERM arrived: raised by the handler a run, a replay or a benchmark installs, so that
    ``finally`` blocks close queues and sockets and stop worker processes; the command exits
    with 143 (128 + SIGTERM, as a shell reports a process it ended), and code that does not
    catch it exits so too."""

    def __init__(self) -> None:
        super().__init__(143)


@contextmanager
def sigterm_raises() -> Iterator[None]:
    """Within the block (in the main thread), SIGTERM raises :class:`Terminated`."""
    def terminate(signum: int, frame: object) -> None:
        raise Terminated()

    previous = signal.signal(signal.SIGTERM, terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


class SafetyViolation(HriError):
    """The first safety violation of a ``--strict`` run (:mod:`hri.run.monitor`): the run ends with it."""
