"""What the benchmarks share: their settings, summaries of repeated measurements, scenarios,
and how busy the machine was.

Every figure is measured ``repeat`` times and reported as the median of the runs (with the
runs themselves, so the spread is visible). Nothing here asserts a speed: the benchmarks
measure, people and the issue tracker judge.
"""

from __future__ import annotations

import contextlib
import io
import os
import statistics
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

from hri.bench.registry import DEFAULT_SCENARIOS
from hri.base.errors import HriError
from hri.base.numbers import duration_problem

if TYPE_CHECKING:
    from hri.scenario.model import Scenario

Say = Callable[[str], None]


@dataclass(frozen=True)
class BenchSettings:
    """What to measure, and how much. The defaults are ``hri bench``'s."""

    scenarios: tuple[str, ...] = DEFAULT_SCENARIOS
    duration_s: float = 60.0          # simulated seconds per timed run (and per batch run)
    repeat: int = 3                   # medians over this many runs
    seed: int = 0                     # the same workload in every repeat: only timing varies
    messages: int = 5000              # actor round trips per repeat and mode
    batch_runs: int = 8               # runs per batch measurement (4 weigh worker start-up too much)
    batch_workers: int | None = None  # "all workers": None is os.cpu_count()
    memory_duration_s: float = 600.0  # simulated seconds of the memory-growth run
    safety_hours: float = 100.0       # simulated hours of the safety benchmark, across the scenarios
    safety_run_s: float = 3600.0      # simulated seconds per run of the safety benchmark
    safety_dir: str | None = None     # where the safety batches are kept (resumable); None: a temporary folder
    sets: tuple[str, ...] = ()        # KEY=VALUE scenario overrides (hri run --set) for every run
    against: str | None = None        # the other install's hri executable (the ab benchmark)

    def check(self) -> "BenchSettings":
        """Raise :class:`HriError` (one line, like every CLI error) for impossible sizes."""
        positive = {"--duration": self.duration_s, "--repeat": self.repeat, "--messages": self.messages,
                    "--batch-runs": self.batch_runs, "--memory-duration": self.memory_duration_s,
                    "--safety-hours": self.safety_hours, "--safety-run": self.safety_run_s}
        for flag, value in positive.items():
            if not value > 0:
                raise HriError(f"{flag}: must be positive, got {value}")
        for flag, value in (("--duration", self.duration_s), ("--memory-duration", self.memory_duration_s),
                            ("--safety-run", self.safety_run_s), ("--safety-hours", self.safety_hours * 3600.0)):
            if (problem := duration_problem(value)) is not None:
                raise HriError(f"{flag}: {problem}")
        if self.batch_workers is not None and self.batch_workers <= 0:
            raise HriError(f"--batch-workers: must be positive, got {self.batch_workers}")
        if self.seed < 0:
            raise HriError(f"--seed: must not be negative, got {self.seed}")
        if not self.scenarios:
            raise HriError("--scenario: give at least one scenario")
        return self

    @property
    def all_workers(self) -> int:
        return self.batch_workers or os.cpu_count() or 1


def sig(value: float, digits: int = 4) -> float:
    """``value`` rounded to ``digits`` significant digits (JSON stays readable)."""
    return float(f"{value:.{digits}g}")


def summary(values: Sequence[float]) -> dict[str, Any]:
    """The median of repeated measurements, and the runs themselves."""
    return {"median": sig(statistics.median(values)), "runs": [sig(v) for v in values]}


def load(name: str, sets: Sequence[str] = ()) -> "Scenario":
    """A scenario by preset name or path with ``--set`` overrides (errors as :class:`HriError`)."""
    from hri.scenario.load import load_scenario

    return load_scenario(name, list(sets))


def quiet_batch(what: str, scenario: str, runs: int, duration_s: float, out: Path, **options: Any) -> None:
    """:func:`hri.batch.batch.run_batch` with its progress kept off the terminal (it would
    spoil ``--json`` on stdout). A Ctrl-C it caught (its workers stopped) stops the bench too;
    a failure is one line: ``bench: the WHAT of SCENARIO failed (exit N):`` and the batch's
    last words."""
    from hri.batch.batch import run_batch

    chatter = io.StringIO()
    with contextlib.redirect_stdout(chatter), contextlib.redirect_stderr(chatter):
        code = run_batch(scenario, runs, duration_s, out, say=print, **options)
    if code == 130:
        raise KeyboardInterrupt
    if code != 0:
        said = chatter.getvalue().strip().splitlines() or ["no message"]
        raise HriError(f"bench: the {what} of {scenario} failed (exit {code}): {said[-1].strip()}")


def _cpu_jiffies() -> tuple[int, int] | None:
    """(busy, total) jiffies of all CPUs since boot, from /proc/stat."""
    try:
        with open("/proc/stat") as stat:
            fields = [int(v) for v in stat.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return sum(fields) - idle, sum(fields)


def busy_cpus(window_s: float = 0.5) -> float | None:
    """How many CPUs other processes keep busy: measured over ``window_s`` while we sleep.

    A better witness than the load average, which still remembers the last minute (our own
    previous runs included)."""
    first = _cpu_jiffies()
    time.sleep(window_s)
    second = _cpu_jiffies()
    if first is None or second is None or second[1] == first[1]:
        return None
    return round((second[0] - first[0]) / (second[1] - first[1]) * (os.cpu_count() or 1), 2)


def loadavg() -> list[float] | None:
    try:
        return [round(v, 2) for v in os.getloadavg()]
    except OSError:
        return None
