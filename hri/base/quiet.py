"""Silence what PyBullet's C code prints (its build time on import, URDF warnings on load).

PyBullet writes with ``printf`` straight to file descriptors 1 and 2, past Python's
``sys.stdout``; the command line must keep stdout clean (``--json``) and stderr to one line
per problem, so the noisy calls run with both descriptors pointed at ``/dev/null``.
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import Iterator


@contextlib.contextmanager
def c_output_silenced() -> Iterator[None]:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    saved = [os.dup(1), os.dup(2)]
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        yield
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (*saved, devnull):
            os.close(fd)


def import_pybullet_quietly() -> None:
    """Import pybullet once with its build-time banner suppressed."""
    if "pybullet" not in sys.modules:
        with c_output_silenced():
            import pybullet  # noqa: F401


def silence_c_stdout_for_good() -> None:
    """Point descriptor 1 at ``/dev/null`` and give Python's ``sys.stdout`` a copy of the real one.

    PyBullet's window threads print at any time while they run (``--gui``), so a scoped
    silence is not enough; what Python prints (``--json``, the table) still reaches stdout.
    """
    sys.stdout.flush()
    real = os.dup(1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.close(devnull)
    sys.stdout = os.fdopen(real, "w", buffering=1, encoding=sys.stdout.encoding, errors=sys.stdout.errors)
