"""The oracle of the differential tests (``btcpp_oracle``) and its corpus are sound.

The test leaves behave as the corpus convention says, the case files are well formed, and
every pinned 4.10 outcome still differs from what 4.8.2 does (a pin that no longer differs
must go). With the local 4.10 build, a slow test checks the whole corpus against it.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from btcpp_oracle import VENV_410_PYTHON, expected_outcome, load_corpus, run_case

pytest.importorskip("behaviortreepy")

CORPUS = load_corpus()
STATUSES = {"SUCCESS", "FAILURE", "RUNNING"}
OUTCOME_KEYS = {"load_error", "ticks", "tick_error", "log", "blackboard"}


def tree(body: str) -> str:
    return f'<root BTCPP_format="4"><BehaviorTree ID="Main">{body}</BehaviorTree></root>'


def test_leaves_follow_their_scripts_and_repeat_the_last_status():
    case = {
        "ticks": 4,
        "leaves": {"C": ["FAILURE", "SUCCESS"], "A": ["RUNNING", "SUCCESS", "FAILURE"]},
        "xml": tree('<Fallback><TestCondition name="C"/><TestAction name="A"/></Fallback>'),
    }
    assert run_case(case) == {
        "load_error": False,
        "ticks": ["RUNNING", "SUCCESS", "SUCCESS", "SUCCESS"],
        "tick_error": None,
        "log": [["C", "tick"], ["A", "start"], ["A", "tick"], ["C", "tick"], ["C", "tick"]],
        "blackboard": {},
    }


def test_a_failing_action_lets_the_next_leaf_run_with_its_default():
    case = {"ticks": 2, "leaves": {"A": ["FAILURE", "SUCCESS"]},
            "xml": tree('<Fallback><TestAction name="A"/><TestAction name="B"/></Fallback>')}
    outcome = run_case(case)
    assert outcome["ticks"] == ["SUCCESS", "SUCCESS"]
    assert outcome["log"] == [["A", "start"], ["B", "start"], ["A", "start"]]


def test_a_halted_running_action_logs_halt():
    case = {"ticks": 2, "leaves": {"guard": ["SUCCESS", "FAILURE"], "A": ["RUNNING"]},
            "xml": tree('<ReactiveSequence><TestCondition name="guard"/><TestAction name="A"/></ReactiveSequence>')}
    outcome = run_case(case)
    assert outcome["ticks"] == ["RUNNING", "FAILURE"]
    assert outcome["log"] == [["guard", "tick"], ["A", "start"], ["guard", "tick"], ["A", "halt"]]


def test_initial_blackboard_entries_print_like_cpp():
    case = {"ticks": 1, "blackboard": {"b": True, "i": 3, "d": 2.5, "s": "hi"},
            "xml": tree('<Script code="n := i + 1"/>')}
    assert run_case(case)["blackboard"] == {"b": "1", "d": "2.500000", "i": "3", "n": "4.000000", "s": "hi"}


def test_load_error_and_tick_error():
    assert run_case({"ticks": 3, "xml": tree("<NoSuchNode/>")}) == {
        "load_error": True, "ticks": [], "tick_error": None, "log": [], "blackboard": {}}
    outcome = run_case({"ticks": 3, "xml": tree('<Sequence><TestAction name="A"/><Script code="x = 1"/></Sequence>')})
    assert (outcome["ticks"], outcome["tick_error"], outcome["log"]) == ([], 0, [["A", "start"]])


def instantiated_leaves(xml: str) -> list[str]:
    """Names of the test leaves of the main tree, with those of its subtrees, as instantiated."""
    bodies = dict(re.findall(r'<BehaviorTree ID="([^"]+)"[^>]*>(.*?)</BehaviorTree>', xml, re.DOTALL))
    main = re.search(r'main_tree_to_execute="([^"]+)"', xml)

    def leaves(tree_id: str, chain: tuple[str, ...]) -> list[str]:
        if tree_id not in bodies or tree_id in chain:  # unknown or recursive: a load error
            return []
        names = re.findall(r'<Test(?:Action|Condition)\s+name="([^"]*)"', bodies[tree_id])
        for sub in re.findall(r'<SubTree ID="([^"]+)"', bodies[tree_id]):
            names += leaves(sub, (*chain, tree_id))
        return names

    return leaves(main.group(1) if main else next(iter(bodies)), ())


def test_the_corpus_is_large_and_well_formed():
    assert len(CORPUS) >= 110
    source = re.compile(r"(gtest_\w+|script_parser_test)\.cpp: \w+\.\w+$")
    for name, case in CORPUS:
        assert {"source", "about", "ticks", "xml"} <= case.keys(), name
        assert case["source"] == "own" or source.match(case["source"]), name
        leaf_names = instantiated_leaves(case["xml"])
        assert len(leaf_names) == len(set(leaf_names)), f"{name}: leaf names must be unique in the tree"
        for leaf, statuses in (case.get("leaves") or {}).items():
            assert leaf in leaf_names, f"{name}: no leaf {leaf}"
            assert statuses and set(statuses) <= STATUSES, name
        if "expected_4_10" in case:
            assert case["expected_4_10"].keys() == OUTCOME_KEYS and case["why_4_8_differs"], name


PINNED = [
    pytest.param(case, id=name)
    for name, case in CORPUS
    if "expected_4_10" in case and not case.get("crashes_4_8_2")
]


@pytest.mark.parametrize("case", PINNED)
def test_pinned_outcomes_still_differ_on_4_8_2(case):
    assert run_case(case) != case["expected_4_10"], "4.8.2 now agrees with 4.10: drop the pin"


def test_every_unpinned_case_runs_on_4_8_2():
    for name, case in CORPUS:
        if "expected_4_10" not in case:
            assert run_case(case).keys() == OUTCOME_KEYS, name


@pytest.mark.slow
@pytest.mark.skipif(not VENV_410_PYTHON.exists(), reason="no local BehaviorTree.CPP 4.10 build")
def test_the_corpus_matches_4_10():
    run = subprocess.run([str(VENV_410_PYTHON), str(Path(__file__).parent / "btcpp_oracle.py")],
                         capture_output=True, text=True, check=True)
    outcomes = json.loads(run.stdout)
    mismatches = [name for name, case in CORPUS if outcomes[name] != expected_outcome(case)]
    assert not mismatches
