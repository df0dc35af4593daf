"""Every number of the presets' scenarios set to 1e308, -1e308, 0 and NaN in turn (the sweep
of :mod:`bad_values`): refused in exactly one line, or run cleanly; never a traceback, a
warning, a hang or a large memory.

The default suite tries every key once, with one of the four values (the values take turns
down the keys, :func:`bad_values.sample`); ``-m slow`` runs the other three values of every
key. The cases run in two worker processes, each running its half in-process; each case is one
test here, so a failure names its key and value.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import bad_values

WORKERS = 2
CASES = bad_values.cases()
SAMPLE = bad_values.sample()
REST = bad_values.chosen_cases("rest")
MAX_PEAK_MB = 500


def _sweep(which: str) -> dict[tuple[str, str], dict]:
    script = Path(bad_values.__file__)
    workers = [subprocess.Popen([sys.executable, str(script), "--part", f"{k}/{WORKERS}", "--cases", which],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=script.parent)
               for k in range(WORKERS)]
    found = {}
    for worker in workers:
        out, err = worker.communicate(timeout=1200)
        assert worker.returncode == 0, err[-2000:]
        for line in out.splitlines():
            row = json.loads(line)
            if not row.get("summary"):
                found[(row["leaf"], row["value"])] = row
    return found


@pytest.fixture(scope="module")
def sampled() -> dict[tuple[str, str], dict]:
    return _sweep("sample")


@pytest.fixture(scope="module")
def rest() -> dict[tuple[str, str], dict]:
    return _sweep("rest")


def test_the_sample_tries_every_key_and_every_value():
    assert {case.leaf for case in SAMPLE} == {case.leaf for case in CASES}
    assert len(SAMPLE) == len({case.leaf for case in CASES})
    assert {case.value for case in SAMPLE} == set(bad_values.VALUES)
    assert set(SAMPLE) | set(REST) == set(CASES) and not set(SAMPLE) & set(REST)


def test_the_sweep_covers_every_numeric_key_of_the_presets():
    leaves = {case.leaf for case in CASES}
    assert len(CASES) == 4 * len(leaves) > 800
    for key in ("simulation.physics_rate_hz", "furniture.shelf.sections", "parts.feeders[0].keep",
                "furniture.shelf.yaw_deg", "robot.base.position[2]", "zones.warning[1][0]"):
        assert key in leaves


def _check(row: dict) -> None:
    problems = [p for p in row["problems"] if not p.startswith(("took", "peak"))]  # time: measured, not judged
    assert not problems, row
    assert row["seconds"] < bad_values.HANG_S, row
    assert row["peak_mb"] < MAX_PEAK_MB, row


@pytest.mark.parametrize("case", SAMPLE, ids=lambda c: f"{c.leaf}={c.value}")
def test_a_bad_number_is_refused_in_one_line_or_runs_cleanly(case, sampled):
    _check(sampled[(case.leaf, case.value)])


@pytest.mark.slow
@pytest.mark.parametrize("case", REST, ids=lambda c: f"{c.leaf}={c.value}")
def test_the_other_values_of_every_key(case, rest):
    _check(rest[(case.leaf, case.value)])
