"""Figure: this install's speed against another install's, on the same seeded runs.

``hri bench --only ab --against PATH``: every scenario (by default the three one-person
presets) is run ``repeat`` times by this install and by the ``hri`` executable at PATH (another
checkout's virtual environment, say: the code before a change), each run an ``hri run --json``
in a process of its own, the two sides alternating (this, other; then other, this in the next
repeat: the machine's speed drifts on a shared host, and a fixed order would carry the drift
into the comparison). A run's speed is its own statistics' real-time factor: simulated seconds
over the wall time of the simulation loop alone, so the start of the process and the building
of the world do not count.

The figure per scenario: each side's median real-time factor and its spread (slowest and
fastest repeat), the ratio of the medians (this / other: above 1, this install is faster), the
per-repeat ratios, and whether this install's median is within the other's spread or faster.
Both sides run the same seed, so they must give the same run: every statistic but the wall
clock is compared, and the keys that differ are named (the timing of different runs compares
nothing).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from typing import Any, Sequence

from hri.bench.common import BenchSettings, Say, sig, summary
from hri.base.errors import HriError

#: the command of this install's hri (the interpreter running the bench)
THIS = (sys.executable, "-m", "hri.cli.main")
SIDES = ("this", "other")
VERSION_TIMEOUT_S = 60.0  # `PATH --version` on a loaded machine: imports only
STOP_TIMEOUT_S = 30.0     # a run asked to stop (SIGTERM) unlinks its queues in this time, or is killed


def against_command(path: str | None) -> list[str]:
    """The other install's ``hri`` as a command; :class:`HriError` naming ``--against`` when
    ``path`` is missing, not an executable, or not an ``hri``."""
    if not path:
        raise HriError("--against: the ab benchmark needs the hri executable of the install to compare "
                       "with, e.g. --against ../old/.venv/bin/hri")
    found = shutil.which(path)
    if found is None:
        what = "not an executable file" if os.path.exists(path) else "no such file"
        raise HriError(f"--against: {what}: {path}")
    found = os.path.abspath(found)
    try:
        answer = subprocess.run([found, "--version"], capture_output=True, text=True, timeout=VERSION_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as err:
        raise HriError(f"--against: {found} did not answer --version ({type(err).__name__})") from None
    said = answer.stdout.strip()
    if answer.returncode != 0 or not said.startswith("hri "):
        shown = (said or answer.stderr.strip() or "nothing").splitlines()[0][:80]
        raise HriError(f"--against: {found} is not an hri command (--version said: {shown})")
    return [found]


def check(settings: BenchSettings) -> None:
    """Before any benchmark runs: the other install is an ``hri``."""
    against_command(settings.against)


def run_once(command: Sequence[str], scenario: str, settings: BenchSettings) -> dict[str, Any]:
    """One ``hri run --json`` of ``scenario`` by ``command``: its statistics. A failed run is
    one line; a bench stopped (Ctrl-C, SIGTERM) stops the run first, so that it unlinks its
    queues."""
    argv = [*command, "run", scenario, "--seed", str(settings.seed), "--duration", repr(settings.duration_s),
            "--json", *(arg for value in settings.sets for arg in ("--set", value))]
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
        try:
            out, err = proc.communicate()
        except BaseException:
            proc.terminate()
            try:
                proc.wait(STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                proc.kill()
            raise
    if proc.returncode != 0:
        said = (err.strip() or out.strip() or "no message").splitlines()[-1].strip()
        raise HriError(f"bench: ab: {' '.join(command)} run {scenario} failed (exit {proc.returncode}): {said}")
    try:
        stats = json.loads(out)
    except ValueError:
        raise HriError(f"bench: ab: {' '.join(command)} run {scenario} --json printed no statistics") from None
    if not (isinstance(stats, dict) and all(isinstance(stats.get(key), (int, float)) and stats[key] > 0
                                            for key in ("wall_time_s", "sim_time_s"))):
        raise HriError(f"bench: ab: {' '.join(command)} run {scenario}: no wall time to compare "
                       "(a longer --duration)")
    return stats


def rtf(stats: dict[str, Any]) -> float:
    """Simulated seconds per wall second of the simulation loop (from the run's own clock)."""
    return stats["sim_time_s"] / stats["wall_time_s"]


def differing(runs: Sequence[dict[str, Any]]) -> list[str]:
    """The statistics (all but the wall clock) on which any of ``runs`` differs from the first,
    by dotted key (``people.NAME.KEY``, as ``hri stats`` names them)."""
    from hri.run.stats import WALL_CLOCK_KEYS

    flat = [_flat({k: v for k, v in stats.items() if k not in WALL_CLOCK_KEYS}) for stats in runs]
    first = flat[0]
    keys = set().union(*flat)
    return sorted(key for key in keys
                  if any(key not in stats for stats in flat) or any(stats[key] != first[key] for stats in flat))


def _flat(stats: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in stats.items():
        if isinstance(value, dict) and value:
            flat.update(_flat(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def side_figure(runs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    speeds = [rtf(stats) for stats in runs]
    return {"rtf": summary(speeds), "spread": [sig(min(speeds)), sig(max(speeds))],
            "robot_cycles": runs[0].get("robot_cycles"), "safety_violations": runs[0].get("safety_violations")}


def measure_scenario(name: str, settings: BenchSettings, other: Sequence[str], say: Say) -> dict[str, Any]:
    commands = {"this": THIS, "other": other}
    runs: dict[str, list[dict[str, Any]]] = {side: [] for side in SIDES}
    for k in range(settings.repeat):
        for side in SIDES if k % 2 == 0 else reversed(SIDES):
            say(f"ab: {name}: {side}, {k + 1}/{settings.repeat}")
            runs[side].append(run_once(commands[side], name, settings))
    this, against = side_figure(runs["this"]), side_figure(runs["other"])
    differ = differing([*runs["this"], *runs["other"]])
    if differ:
        say(f"ab: {name}: the runs differ in {', '.join(differ)}: their speeds compare different runs")
    return {
        "this": this, "other": against,
        "ratio": sig(this["rtf"]["median"] / against["rtf"]["median"]),
        "paired_ratios": summary([rtf(t) / rtf(o) for t, o in zip(runs["this"], runs["other"])]),
        "within_spread": this["rtf"]["median"] >= against["spread"][0],
        "same_stats": not differ, "differing": differ,
    }


def run(settings: BenchSettings, say: Say) -> dict[str, Any]:
    other = against_command(settings.against)
    return {"this": " ".join(THIS), "other": other[0], "sim_s": sig(settings.duration_s),
            "scenarios": {name: measure_scenario(name, settings, other, say) for name in settings.scenarios}}
