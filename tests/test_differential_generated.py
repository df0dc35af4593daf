"""hri's trees against BehaviorTree.CPP itself, on random trees (the strategy of :mod:`btcpp_trees`).

Each drawn tree (depth up to 5, every control and decorator, scripted test leaves, scripts on
the blackboard, pre- and post-conditions) runs on the real library (:mod:`btcpp_oracle`) and
on hri (:mod:`hri_runner`); their outcomes must be equal: the status of every tick, the
leaves' log, the final blackboard, errors. The library in CI is behaviortreepy's 4.8.2, so
the trees drawn here leave out what 4.8.2 does differently from 4.10 (the reference;
``btcpp_trees.V4_10_ONLY``). 300 trees in the default run; ``-m slow`` draws 3000, and, where
a 4.10 build of the bindings exists (``btcpp_oracle.VENV_410_PYTHON``), 500 more with
every feature against 4.10.
"""

from __future__ import annotations

import json
import subprocess

import tempfile
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings

import btcpp_oracle
import hri_runner
from btcpp_trees import trees

pytest.importorskip("behaviortreepy")

_SETTINGS = dict(deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))


def _same(case: dict) -> None:
    expected = btcpp_oracle.run_case(case)
    ours = hri_runner.run_case(case)
    assert ours == expected, yaml.safe_dump(case, sort_keys=False)


@settings(max_examples=300, **_SETTINGS)
@given(trees(v4_8_compatible=True))
def test_random_trees_run_as_in_behaviortree_cpp(case):
    _same(case)


@pytest.mark.slow
@settings(max_examples=3000, **{**_SETTINGS, "derandomize": False})
@given(trees(v4_8_compatible=True))
def test_many_random_trees_run_as_in_behaviortree_cpp(case):
    _same(case)


@pytest.mark.slow
@pytest.mark.skipif(not btcpp_oracle.VENV_410_PYTHON.exists(), reason="no 4.10 build of the bindings here")
def test_random_trees_with_every_feature_run_as_in_behaviortree_cpp_4_10():
    cases: list[dict] = []

    @settings(max_examples=500, **{**_SETTINGS, "derandomize": False})
    @given(trees())
    def draw(case):
        cases.append(case)

    draw()
    with tempfile.TemporaryDirectory() as folder:
        paths = []
        for index, case in enumerate(cases):
            path = Path(folder) / f"c{index}.yaml"
            path.write_text(yaml.safe_dump(case))
            paths.append(str(path))
        oracle = str(Path(btcpp_oracle.__file__))
        result = subprocess.run([str(btcpp_oracle.VENV_410_PYTHON), oracle, *paths], capture_output=True,
                                text=True, check=True, timeout=1800)
    expected = json.loads(result.stdout)
    for index, case in enumerate(cases):
        outcome = expected[f"c{index}"]
        if outcome is not None:
            assert hri_runner.run_case(case) == outcome, yaml.safe_dump(case, sort_keys=False)


