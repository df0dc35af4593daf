"""The random trees of ``btcpp_trees.trees()`` load and run in the real library, within a second.

Each case runs in a worker process on behaviortreepy (``btcpp_oracle.run_case``), so that a
tree spinning inside one tick fails its example instead of hanging the suite. CI has the
4.8.2 bindings only: there the generator is drawn in its 4.8.2-compatible form. With a local
4.10 build (``btcpp_oracle.VENV_410_PYTHON``), the slow tests also run the full generator on
4.10 and check that the compatible form behaves the same on both versions.
"""

from __future__ import annotations

import json
import select
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from btcpp_oracle import VENV_410_PYTHON
from btcpp_trees import trees
from hypothesis import HealthCheck, given, settings

TESTS_DIR = Path(__file__).parent
TICK_TIMEOUT_S = 1.0
"""A case's whole run (loading, every tick) must take less."""

WORKER = r"""
import json, os, sys
sys.path.insert(0, sys.argv[1])
from btcpp_oracle import run_case
answers = os.fdopen(os.dup(1), "w")
os.dup2(2, 1)  # the library prints to stdout too
answers.write("ready\n")
answers.flush()
for line in sys.stdin:
    try:
        outcome = run_case(json.loads(line))
    except Exception as error:
        outcome = {"oracle_error": repr(error)}
    answers.write(json.dumps(outcome) + "\n")
    answers.flush()
"""
"""Says ``ready``, then runs the cases it reads (one JSON line each) and writes their outcomes
the same way."""
START_TIMEOUT_S = 60.0


class Oracle:
    """A worker process running cases on one interpreter's behaviortreepy."""

    def __init__(self, python: str | Path):
        self.python = str(python)
        self.process: subprocess.Popen | None = None

    def run(self, case: dict, timeout: float = TICK_TIMEOUT_S) -> dict:
        """The outcome of ``case``; ``{"timeout": True}`` when it took longer than ``timeout``."""
        if self.process is None:
            self._start()
        assert self.process and self.process.stdin
        self.process.stdin.write(json.dumps(case) + "\n")
        self.process.stdin.flush()
        answered, line = self._answer(timeout)
        if not line:  # too slow, or the library crashed the worker
            self.close()
            return {"oracle_error": "the worker died"} if answered else {"timeout": True}
        return json.loads(line)

    def _start(self) -> None:
        """Starts the worker and waits until it has imported the library (not part of a case's time)."""
        self.process = subprocess.Popen([self.python, "-c", WORKER, str(TESTS_DIR)], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True)
        if self._answer(START_TIMEOUT_S)[1] != "ready\n":
            self.close()
            raise RuntimeError(f"{self.python}: the oracle worker did not start")

    def _answer(self, timeout: float) -> tuple[bool, str]:
        """(whether the worker answered or closed its output in time, the line it wrote)."""
        assert self.process and self.process.stdout
        answered, _, _ = select.select([self.process.stdout], [], [], timeout)
        return bool(answered), self.process.stdout.readline() if answered else ""

    def close(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            self.process = None


@pytest.fixture(scope="module")
def oracle_4_8() -> Iterator[Oracle]:
    oracle = Oracle(sys.executable)
    yield oracle
    oracle.close()


@pytest.fixture(scope="module")
def oracle_4_10() -> Iterator[Oracle]:
    if not VENV_410_PYTHON.exists():
        pytest.skip("no BehaviorTree.CPP 4.10 build of the bindings here")
    oracle = Oracle(VENV_410_PYTHON)
    yield oracle
    oracle.close()


def assert_runs(outcome: dict, case: dict) -> None:
    assert not outcome.get("timeout"), f"no outcome within {TICK_TIMEOUT_S} s:\n{case['xml']}"
    assert "oracle_error" not in outcome, outcome
    assert not outcome["load_error"], f"the real library did not load:\n{case['xml']}"
    assert len(outcome["ticks"]) == case["ticks"] or outcome["tick_error"] is not None


SLOW_DRAWS = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}


# the same trees every run: CI fails only on a change
@settings(max_examples=300, derandomize=True, **SLOW_DRAWS)
@given(case=trees(v4_8_compatible=True))
def test_compatible_trees_load_and_run_on_4_8(oracle_4_8: Oracle, case: dict) -> None:
    assert_runs(oracle_4_8.run(case), case)


@pytest.mark.slow
@settings(max_examples=300, **SLOW_DRAWS)
@given(case=trees())
def test_trees_load_and_run_on_4_10(oracle_4_10: Oracle, case: dict) -> None:
    assert_runs(oracle_4_10.run(case), case)


@pytest.mark.slow
@settings(max_examples=400, **SLOW_DRAWS)
@given(case=trees(v4_8_compatible=True))
def test_compatible_trees_behave_the_same_on_4_8_and_4_10(oracle_4_8: Oracle, oracle_4_10: Oracle,
                                                          case: dict) -> None:
    assert oracle_4_8.run(case) == oracle_4_10.run(case), case["xml"]
