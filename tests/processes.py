"""The machine's processes as ``/proc`` shows them: what a command under test started, and
what it left running; and whether a run under test is past its set-up."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
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


def own_peak_mb() -> float:
    """This process's own peak resident memory (MB), its VmHWM: unlike ``ru_maxrss``, which
    survives ``exec`` and so starts at the size of the process this one was forked from (a
    pytest process of 500 MB or more late in the suite), it counts only this program's memory."""
    with open("/proc/self/status") as status:
        return int(next(line.split()[1] for line in status if line.startswith("VmHWM:"))) / 1024


_PEAK = """import atexit, sys
out, sys.argv = sys.argv[1], ["hri", *sys.argv[2:]]
def peak():
    with open("/proc/self/status") as status:
        kb = next(line.split()[1] for line in status if line.startswith("VmHWM:"))
    with open(out, "w") as f:
        f.write(kb)
atexit.register(peak)
from hri.cli.main import main
sys.exit(main())
"""


def run_measured(argv: list[str], env: dict[str, str], timeout_s: float = 30) -> tuple[int, str, float, float, float]:
    """Exit status, stderr, wall seconds, CPU seconds and peak memory (MB) of ``hri ARGV`` in a
    child process. The peak is the child's own VmHWM, written as it exits: the ``ru_maxrss`` of
    ``wait4`` also counts the memory of this process, which the child was forked from. A child
    still running after ``timeout_s`` is killed (a hang fails the caller's limits, not the suite)."""
    start = time.perf_counter()
    with tempfile.NamedTemporaryFile("r") as peak:
        child = subprocess.Popen([sys.executable, "-c", _PEAK, peak.name, *argv], stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, env=env)
        code, stderr, seconds, cpu = _wait(child, start, timeout_s)
        return code, stderr, seconds, cpu, int(peak.read() or 0) / 1024


def _wait(child: subprocess.Popen, start: float, timeout_s: float) -> tuple[int, str, float, float]:
    killer = threading.Timer(timeout_s, child.kill)  # a hang fails the time limit, not the suite
    killer.start()
    try:
        stderr = child.stderr.read().decode("utf-8", "replace")
        _, status, usage = os.wait4(child.pid, 0)
    finally:
        killer.cancel()
        child.stderr.close()
    child.returncode = os.waitstatus_to_exitcode(status)
    return child.returncode, stderr, time.perf_counter() - start, usage.ru_utime + usage.ru_stime
