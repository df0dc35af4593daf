"""The one error type a user can cause, printed as ``FILE:LINE: message``; and how a command
ends on SIGTERM (:class:`Terminated`).

A line names its file relative to the current directory when the file lies in it or below,
else by its absolute path (:func:`shown_path`): the same file is named the same way by every
command, whether the user named it or a scenario or an include led there. Files a run writes
(``stats.json``, ``events.jsonl``, a batch's ``run.json``) are read from anywhere, later: there
the line names files by absolute path (:meth:`HriError.text`).
"""

from __future__ import annotations

import os
import re
import signal
from contextlib import contextmanager
from pathlib import Path
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
        #: the traceback of the exception behind the error (a plug-in's bug), not printed:
        #: it is saved in a file (:func:`hri.base.files.keep_traceback`) that the line names
        self.traceback: str | None = None
        self.traceback_file: Path | None = None

    def text(self, absolute: bool = False) -> str:
        """The error's line without the note of its traceback's file: ``FILE:LINE: message``,
        the file as :func:`shown_path` names it (``absolute``: by its absolute path)."""
        file = shown_path(self.file, absolute) if self.file else None
        if file and self.line:
            text = f"{file}:{self.line}: {self.message}"
        else:
            text = f"{file}: {self.message}" if file else self.message
        return one_line(shortened(text))

    def __str__(self) -> str:
        if self.traceback_file is None:
            return self.text()
        return f"{self.text()} (traceback in {shown_path(self.traceback_file)})"


def shown_path(path: str | os.PathLike[str], absolute: bool = False) -> str:
    """How a line names a file: relative to the current directory when the file lies in it
    or below, else absolute (``absolute``: always). A name that is not a path (``<text>``)
    stays as it is."""
    try:
        here = os.getcwd()
    except OSError:  # the current directory was removed: the path as it was given
        return os.fspath(path)
    full = os.path.normpath(os.path.join(here, path))
    if absolute:
        return full
    relative = os.path.relpath(full, here)
    return full if relative == os.pardir or relative.startswith(os.pardir + os.sep) else relative


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


STOPS = (KeyboardInterrupt, Terminated)
"""What stops a command (Ctrl-C, SIGTERM): passed on where a plug-in's exception is caught."""


def exception_line(err: BaseException) -> str:
    """``Type: message`` of an exception, the message's first line only (the traceback has
    the rest)."""
    text = str(err).strip().splitlines()
    return f"{type(err).__name__}: {text[0]}" if text else type(err).__name__


class SafetyViolation(HriError):
    """The first safety violation of a ``--strict`` run (:mod:`hri.run.monitor`): the run ends with it."""
