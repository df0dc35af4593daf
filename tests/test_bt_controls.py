"""Control and decorator semantics (BehaviorTree.CPP v4), with trees loaded from XML files."""

from __future__ import annotations

from collections import Counter

import pytest
from py_trees.common import Status

from bt_harness import F, R, S, Harness


def test_sequence_resumes_at_running_child_and_restarts_after_failure(tmp_path):
    h = Harness(tmp_path, """<Sequence>
        <Fake id="a" ticks="1"/><Fake id="b" ticks="1"/><Fake id="c" result="FAILURE"/></Sequence>""")
    assert h.tick() == R and h.log == [("a", "start"), ("a", "tick")]
    assert h.tick() == R and h.log == [("a", "tick"), ("b", "start"), ("b", "tick")]
    assert h.tick() == F and h.log == [("b", "tick"), ("c", "start"), ("c", "tick")]
    assert h.tick() == R and h.log == [("a", "start"), ("a", "tick")]


def test_reactive_sequence_halts_running_child_when_earlier_child_fails(tmp_path):
    h = Harness(tmp_path, """<ReactiveSequence>
        <Cond id="guard" ok="{ok}"/><Fake id="work" ticks="5"/></ReactiveSequence>""", ok=True)
    assert h.tick() == R
    assert h.tick() == R and h.log == [("guard", "tick"), ("work", "tick")]
    h.bb.set("ok", "false")  # strings on the blackboard are converted
    assert h.tick() == F
    assert h.log == [("guard", "tick"), ("work", "halt")]
    assert h.root.children[1].status == Status.INVALID
    h.bb.set("ok", True)
    assert h.tick() == R and h.log == [("guard", "tick"), ("work", "start"), ("work", "tick")]


def test_fallback_resumes_at_running_child(tmp_path):
    h = Harness(tmp_path, """<Fallback>
        <Fake id="a" result="FAILURE"/><Fake id="b" ticks="1"/></Fallback>""")
    assert h.tick() == R
    assert h.tick() == S and h.log == [("b", "tick")]
    assert h.tick() == R and h.log[0] == ("a", "start")


def test_reactive_fallback_higher_priority_success_halts_running_child(tmp_path):
    h = Harness(tmp_path, """<ReactiveFallback>
        <Cond id="done" ok="{done}"/><Fake id="work" ticks="5"/></ReactiveFallback>""", done=False)
    assert h.tick() == R
    assert h.tick() == R and h.log == [("done", "tick"), ("work", "tick")]
    h.bb.set("done", True)
    assert h.tick() == S and h.log == [("done", "tick"), ("work", "halt")]


@pytest.mark.parametrize("ok, expected_branch", [(True, "then"), (False, "else")])
def test_if_then_else_picks_branch(tmp_path, ok, expected_branch):
    h = Harness(tmp_path, """<IfThenElse>
        <Cond id="if" ok="{ok}"/><Fake id="then"/><Fake id="else" result="FAILURE"/></IfThenElse>""", ok=ok)
    assert h.tick() == (S if ok else F)
    assert [who for who, what in h.log if what == "tick"] == ["if", expected_branch]


def test_if_then_without_else_fails_and_keeps_running_branch_without_reevaluating(tmp_path):
    h = Harness(tmp_path, """<IfThenElse>
        <Cond id="if" ok="{ok}"/><Fake id="then" ticks="2"/></IfThenElse>""", ok=False)
    assert h.tick() == F and h.log == [("if", "tick")]
    h.bb.set("ok", True)
    assert h.tick() == R
    h.bb.set("ok", False)  # the condition is not re-checked while the branch runs
    assert h.tick() == R and h.log == [("then", "tick")]
    assert h.tick() == S and h.log == [("then", "tick")]
    assert h.tick() == F and h.log == [("if", "tick")]


def test_interruptable_sequence_resumes_at_the_same_child_after_halt(tmp_path):
    h = Harness(tmp_path, """<ReactiveSequence>
        <Cond id="go" ok="{go}"/>
        <InterruptableSequence>
          <Fake id="a"/><Fake id="b" ticks="2"/><Fake id="c"/>
        </InterruptableSequence></ReactiveSequence>""", go=True)
    assert h.tick() == R  # after a, the tree is ticked again from the root (BehaviorTree.CPP's wake-up)
    assert h.log == [("go", "tick"), ("a", "start"), ("a", "tick"), ("go", "tick"), ("b", "start"), ("b", "tick")]
    h.bb.set("go", False)
    assert h.tick() == F and h.log == [("go", "tick"), ("b", "halt")]
    h.bb.set("go", True)
    assert h.tick() == R and h.log == [("go", "tick"), ("b", "start"), ("b", "tick")]  # not "a" again
    assert h.tick() == R
    assert h.tick() == S and h.log == [("go", "tick"), ("b", "tick"), ("c", "start"), ("c", "tick")]
    assert h.tick() == R and h.log[1:3] == [("a", "start"), ("a", "tick")]  # starts over


def test_interruptable_sequence_keeps_index_on_failure(tmp_path):
    h = Harness(tmp_path, """<InterruptableSequence>
        <Fake id="a"/><Cond id="x" ok="{ok}"/><Fake id="c"/></InterruptableSequence>""", ok=False)
    assert h.tick() == F and h.log == [("a", "start"), ("a", "tick"), ("x", "tick")]
    h.bb.set("ok", True)
    assert h.tick() == S and h.log == [("x", "tick"), ("c", "start"), ("c", "tick")]


def test_weighted_random_distribution(tmp_path):
    h = Harness(tmp_path, """<WeightedRandom weights="0.7;0.2;0.1;0">
        <Fake id="a"/><Fake id="b"/><Fake id="c"/><Fake id="never"/></WeightedRandom>""", seed=42)
    counts: Counter[str] = Counter()
    n = 2000
    for _ in range(n):
        assert h.tick() == S
        counts.update(who for who, what in h.log if what == "tick")
    assert counts["never"] == 0
    expected = {"a": 0.7 * n, "b": 0.2 * n, "c": 0.1 * n}
    chi2 = sum((counts[k] - e) ** 2 / e for k, e in expected.items())
    assert chi2 < 13.8, (counts, chi2)  # 2 degrees of freedom, p = 0.001


def test_weighted_random_sticks_to_pick_until_success(tmp_path):
    h = Harness(tmp_path, """<ReactiveSequence>
        <Cond id="go" ok="{go}"/>
        <WeightedRandom weights="1;1">
          <Fake id="a" ticks="1" result="{result}"/><Fake id="b" ticks="1" result="{result}"/>
        </WeightedRandom></ReactiveSequence>""", seed=3, go=True, result="FAILURE")
    assert h.tick() == R
    picked = h.log[-1][0]
    for _ in range(20):  # FAILURE and halts keep the pick
        h.bb.set("go", True)
        h.tick()
        assert {who for who, _ in h.log} <= {"go", picked}
        h.bb.set("go", False)
        h.tick()
        assert {who for who, _ in h.log} <= {"go", picked}
    h.bb.set("go", True)
    h.bb.set("result", "SUCCESS")
    picks = set()
    for _ in range(40):  # after each SUCCESS a new pick: both children show up
        h.tick()
        picks.update(who for who, what in h.log if what == "start")
    assert picks == {"a", "b"}


def test_decorators(tmp_path):
    h = Harness(tmp_path, """<Sequence>
        <Inverter><Fake id="a" result="FAILURE"/></Inverter>
        <ForceSuccess><Fake id="b" ticks="1" result="FAILURE"/></ForceSuccess>
        <Inverter><ForceFailure><Fake id="c"/></ForceFailure></Inverter>
        </Sequence>""")
    assert h.tick() == R
    assert h.tick() == S
    h2 = Harness(tmp_path, '<Inverter><Fake id="a"/></Inverter>')
    assert h2.tick() == F
