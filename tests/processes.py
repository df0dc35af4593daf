"""The machine's processes as ``/proc`` shows them: what a command under test started, and
what it left running; and whether a run under test is past its set-up."""

from __future__ import annotations

import time
from pathlib import Path


def processes() -> list[tuple[int, int, int]]:
    """(pid, parent pid, session id) of every process."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # ended while we looked
        found.append((int(stat.parent.name), int(fields[1]), int(fields[3])))
    return found


def children(pid: int) -> list[int]:
    """The processes whose parent is ``pid``, in pid order."""
    return sorted(p for p, parent, _ in processes() if parent == pid)


def grandchildren(pid: int) -> list[int]:
    """The children of ``pid``'s children (a pool's workers, under its forkserver)."""
    return [g for c in children(pid) for g in children(c)]


def in_session(session: int) -> list[int]:
    """The processes of the session ``session`` (a command started with ``start_new_session``)."""
    return [p for p, _, sid in processes() if sid == session]


def wait_ticking(out: Path, timeout: float = 120.0) -> bool:
    """Wait until the run writing into ``out`` ticks its trees: its robot's .btlog, begun with the
    tree's description in the set-up, grows. (A run's queues exist from the set-up's start,
    and the set-up takes seconds on a busy machine.) False after ``timeout`` wall seconds."""
    deadline, first = time.monotonic() + timeout, None
    while time.monotonic() < deadline:
        sizes = [log.stat().st_size for log in out.glob(".hri-run-*/.robot.btlog.*")]
        if sizes and first is None:
            first = sizes[0]
        elif sizes and sizes[0] > first:
            return True
        time.sleep(0.05)
    return False


def running(pid: int) -> bool:
    """Whether ``pid`` runs: alive and not a zombie waiting to be reaped."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def stop(process, pids: list[int]) -> None:
    """Kill what a test started and what it left running (a ``finally`` after a failure)."""
    import os
    import signal

    if process.poll() is None:
        process.kill()
    for pid in pids:
        if running(pid):
            os.kill(pid, signal.SIGKILL)
