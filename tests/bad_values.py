"""The numeric-key sweep: every number of the presets' scenarios set to a bad value in turn.

Every numeric leaf of ``scenarios/*.yaml`` (and the optional numeric keys the presets leave
out, :data:`EXTRAS`), each set by ``--set`` to ``1e308``, ``-1e308``, ``0`` and NaN (YAML
``1.0e+308``, ``-1.0e+308``, ``0``, ``.nan``; YAML reads ``nan`` as text). A
key ``--set`` cannot reach (an item of a list) is set by giving the whole list with the one
item changed. A key the presets share is tried once, in the first preset that has it.

Each case either is refused (exactly one line on stderr, a non-zero exit, no traceback, no
warning) or runs a short ``hri run`` (``--duration`` :data:`DURATION`) that ends cleanly,
printing no warning. Cases run in this process through :func:`hri.cli.main.main`; a few
worker processes each run many (``python tests/bad_values.py`` prints one JSON line per case
with its time and the worker's peak memory so far, and a summary with ``--summary``).
"""

from __future__ import annotations

import copy
import io
import json
import math
import os
import signal
import sys
import tempfile
import time
import warnings
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from typing import Any

import yaml
from processes import own_peak_mb

PRESETS = ("coexistence", "cooperation", "collaboration")
#: the bad values, as YAML text
VALUES = ("1.0e+308", "-1.0e+308", "0", ".nan")
DURATION = "0.05"
#: numeric keys the presets leave out, with the preset to try them in (their defaults elsewhere)
EXTRAS: tuple[tuple[str, tuple[Any, ...]], ...] = (
    ("coexistence", ("simulation", "person_rate_hz")),
    ("coexistence", ("person", "clearance_m")),
    ("coexistence", ("furniture", "shelf", "base_z")),
    ("coexistence", ("furniture", "workbench", "yaw_deg")),
    ("coexistence", ("safety", "ssm", "person_speed_m_s")),
    ("coexistence", ("safety", "ssm", "reaction_time_s")),
    ("coexistence", ("safety", "ssm", "intrusion_distance_m")),
    ("coexistence", ("safety", "ssm", "person_uncertainty_m")),
    ("coexistence", ("safety", "ssm", "robot_uncertainty_m")),
    ("coexistence", ("safety", "pfl", "contact_distance_m")),
    ("coexistence", ("safety", "sensor", "rate_hz")),
    ("coexistence", ("safety", "sensor", "latency_s")),
    ("coexistence", ("safety", "sensor", "range_noise_m")),
    ("coexistence", ("safety", "sensor", "dropout_probability")),
    ("cooperation", ("parts", "feeders", 0, "keep")),
    ("cooperation", ("parts", "feeders", 0, "min_spacing")),
    ("cooperation", ("parts", "grasp_distance")),
    ("cooperation", ("parts", "person_reach")),
    ("cooperation", ("parts", "person_put_distance")),
    ("cooperation", ("parts", "person_put_spread")),
    ("cooperation", ("parts", "color", 0)),
    ("coexistence", ("net", "default", "latency")),
    *(("coexistence", ("robot", "config", name)) for name in (
        "velocity_fraction", "goal_tolerance", "rest_velocity", "settle_timeout", "position_tolerance",
        "orientation_tolerance", "collision_margin", "self_collision_margin", "check_resolution", "rrt_step",
        "position_gain", "velocity_gain", "ik_restarts", "rrt_max_iterations", "shortcut_iterations", "seed")),
    *(("coexistence", ("robot", "config", name, 0)) for name in ("max_acceleration", "max_jerk", "home")),
)
_DEFAULT_LIST = {("parts", "color"): [0.2, 0.45, 0.85, 1.0], ("robot", "config", "max_acceleration"): [8.0] * 6,
                 ("robot", "config", "max_jerk"): [80.0] * 6, ("robot", "config", "home"): [0.0] * 6}


@dataclass(frozen=True)
class Case:
    preset: str
    leaf: str  # the key with list indices: parts.feeders[0].keep
    key: str  # the key --set takes: parts.feeders
    value: str  # the YAML text of the bad value
    text: str  # the whole --set value

    @property
    def argv(self) -> list[str]:
        return ["run", self.preset, "--duration", DURATION, "--set", f"{self.key}={self.text}"]


class _Bad:
    """Where the bad value goes in the flow text of the value --set gives."""


def _flow(value: Any, bad: str) -> str:
    if value is _BAD:
        return bad
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_flow(v, bad)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_flow(v, bad) for v in value) + "]"
    if isinstance(value, str):
        return json.dumps(value)
    return repr(value)


_BAD = _Bad()


def _leaves(value: Any, path: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    if isinstance(value, dict):
        return [leaf for key, item in value.items() for leaf in _leaves(item, (*path, key))]
    if isinstance(value, list):
        return [leaf for i, item in enumerate(value) for leaf in _leaves(item, (*path, i))]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return [path]
    return []


def _name(path: tuple[Any, ...]) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else (f".{p}" if i else str(p)) for i, p in enumerate(path))


def _preset_data(preset: str) -> dict:
    from hri.scenario.load import preset_path

    return yaml.safe_load(preset_path(preset).read_text())


def cases() -> list[Case]:
    """Every case of the sweep, in a fixed order."""
    data = {preset: _preset_data(preset) for preset in PRESETS}
    paths: dict[str, tuple[str, tuple[Any, ...]]] = {}
    for preset in PRESETS:
        for path in _leaves(data[preset], ()):
            paths.setdefault(_name(path), (preset, path))
    for preset, path in EXTRAS:
        paths.setdefault(_name(path), (preset, path))
    out = []
    for leaf, (preset, path) in paths.items():
        cut = next((i for i, p in enumerate(path) if isinstance(p, int)), len(path))
        key, rest = path[:cut], path[cut:]
        holder: Any = copy.deepcopy(data[preset])
        for part in key[:-1]:
            holder = holder.setdefault(part, {})
        if rest:
            holder.setdefault(key[-1], copy.deepcopy(_DEFAULT_LIST.get(key, [])))
            target = holder[key[-1]]
            for part in rest[:-1]:
                target = target[part]
            target[rest[-1]] = _BAD
            template = holder[key[-1]]
        else:
            template = _BAD
        for value in VALUES:
            out.append(Case(preset, leaf, ".".join(map(str, key)), value, _flow(template, value)))
    return out


@dataclass
class Outcome:
    case: Case
    code: int
    stderr: str
    warnings: list[str]
    seconds: float
    peak_mb: float

    @property
    def problems(self) -> list[str]:
        """What is wrong with this outcome (nothing when it is as it should be)."""
        found = []
        lines = [line for line in self.stderr.splitlines() if line.strip()]
        if self.warnings:
            found.append(f"warnings: {self.warnings[:3]}")
        if "Traceback" in self.stderr:
            found.append("a traceback")
        if self.code != 0 and len(lines) != 1:
            found.append(f"{len(lines)} lines on stderr")
        if self.code == 0 and lines:
            found.append(f"accepted, but printed {lines[:3]}")
        if self.seconds >= 5:
            found.append(f"took {self.seconds:.1f} s")
        if self.peak_mb >= 500:
            found.append(f"peak memory {self.peak_mb:.0f} MB")
        return found

    def to_json(self) -> dict[str, Any]:
        return {"leaf": self.case.leaf, "value": self.case.value, "preset": self.case.preset, "code": self.code,
                "stderr": self.stderr[:600], "warnings": self.warnings[:3], "seconds": round(self.seconds, 3),
                "peak_mb": round(self.peak_mb, 1), "problems": self.problems}


def _out_of_time(*_: Any) -> None:
    raise TimeoutError("the case took too long")


def run_case(case: Case, limit_s: int = 0) -> Outcome:
    """Run ``case`` here: its exit code, what it printed on stderr (also below Python, as
    PyBullet's C code prints), the warnings raised, its time and this process's peak memory."""
    from hri.cli.main import main

    stderr, out = io.StringIO(), io.StringIO()
    with tempfile.TemporaryFile() as c_err, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        saved = os.dup(2)
        sys.stderr.flush()
        os.dup2(c_err.fileno(), 2)
        start = time.perf_counter()
        if limit_s:
            signal.signal(signal.SIGALRM, _out_of_time)
            signal.alarm(limit_s)
        try:
            with redirect_stderr(stderr), redirect_stdout(out):
                try:
                    code = main(case.argv)
                except SystemExit as exit_:
                    code = exit_.code if isinstance(exit_.code, int) else 1
                except BaseException:  # noqa: BLE001 - a traceback is what the sweep reports
                    import traceback

                    traceback.print_exc(file=stderr)
                    code = -1
        finally:
            signal.alarm(0)
            seconds = time.perf_counter() - start
            os.dup2(saved, 2)
            os.close(saved)
        c_err.seek(0)
        below = c_err.read().decode("utf-8", "replace")
    peak_mb = own_peak_mb()
    return Outcome(case, code, stderr.getvalue() + below, [f"{w.category.__name__}: {w.message}" for w in caught],
                   seconds, peak_mb)


#: a case still going after this long is stopped and reported (a hang, not a slow machine)
HANG_S = 30


def sample() -> list[Case]:
    """One value per key, the values taking turns down the keys: every key is tried in the
    default suite, and the other three values of each key run under ``-m slow``."""
    everything = cases()
    return [case for i, case in enumerate(everything) if i % len(VALUES) == (i // len(VALUES)) % len(VALUES)]


def chosen_cases(which: str) -> list[Case]:
    """``all`` cases, the default suite's ``sample``, or the ``rest`` that only ``-m slow`` runs."""
    if which == "all":
        return cases()
    sampled = sample()
    return sampled if which == "sample" else [case for case in cases() if case not in set(sampled)]


def warm_up() -> None:
    """One run of each preset, so that the first case does not pay for the imports and the
    files every run loads once."""
    for preset in PRESETS:
        run_case(Case(preset, "", "simulation.tree_rate_hz", "20", "20"), HANG_S)


def _main(argv: list[str]) -> int:
    """``bad_values.py [--part K/N] [--cases all|sample|rest] [--summary]``: run every N-th case
    from K of the chosen cases (all by default), one JSON line per case on stdout, then a summary
    line; with ``--summary`` only that."""
    part, total = (0, 1)
    if "--part" in argv:
        part, total = (int(x) for x in argv[argv.index("--part") + 1].split("/"))
    which = argv[argv.index("--cases") + 1] if "--cases" in argv else "all"
    chosen = chosen_cases(which)[part::total]
    warm_up()
    outcomes = []
    for case in chosen:
        outcome = run_case(case, HANG_S)
        outcomes.append(outcome)
        if "--summary" not in argv:
            print(json.dumps(outcome.to_json()), flush=True)
    refused = sum(o.code != 0 for o in outcomes)
    slowest = max(outcomes, key=lambda o: o.seconds)
    bad = [o for o in outcomes if o.problems]
    print(json.dumps({"summary": True, "cases": len(outcomes), "refused": refused, "accepted": len(outcomes) - refused,
                      "slowest": [slowest.case.leaf, slowest.case.value, round(slowest.seconds, 2)],
                      "peak_mb": round(max(o.peak_mb for o in outcomes), 1), "failing": len(bad)}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
