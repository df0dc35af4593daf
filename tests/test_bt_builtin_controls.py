"""BehaviorTree.CPP v4 built-in controls, tick by tick, with trees loaded from XML files.

Each expectation follows BehaviorTree.CPP v4 (behaviortree.dev and its source); where this
differs from the py_trees composite the node is built on or resembles, the test says so.
"""

from __future__ import annotations

import pytest
from py_trees.common import Status

from bt_harness import F, R, S, Harness
from hri.base.errors import HriError


def test_sequence_does_not_retick_earlier_children_and_restarts_after_halt(tmp_path):
    h = Harness(tmp_path, """<ReactiveSequence><Cond id="go" ok="{go}"/>
        <Sequence><Fake id="a"/><Fake id="b" ticks="2"/></Sequence></ReactiveSequence>""", go=True)
    assert h.tick() == R and h.log == [("go", "tick"), ("a", "start"), ("a", "tick"), ("b", "start"), ("b", "tick")]
    assert h.tick() == R and h.log == [("go", "tick"), ("b", "tick")]  # "a" is not ticked again
    h.bb.set("go", False)
    assert h.tick() == F and h.log == [("go", "tick"), ("b", "halt")]
    h.bb.set("go", True)
    assert h.tick() == R and h.log[1:3] == [("a", "start"), ("a", "tick")]  # halted: from the start


@pytest.mark.parametrize("control", ["Sequence", "SequenceWithMemory"])
def test_failure_restarts_sequence_but_not_sequence_with_memory(tmp_path, control):
    h = Harness(tmp_path, f"""<{control}>
        <Fake id="a"/><Cond id="x" ok="{{ok}}"/><Fake id="c"/></{control}>""", ok=False)
    assert h.tick() == F and h.log == [("a", "start"), ("a", "tick"), ("x", "tick")]
    assert h.tick() == F
    if control == "Sequence":
        assert h.log == [("a", "start"), ("a", "tick"), ("x", "tick")]
    else:  # SequenceWithMemory retries the failed child, not the earlier ones
        assert h.log == [("x", "tick")]
    h.bb.set("ok", True)
    assert h.tick() == S and h.log[-3:] == [("x", "tick"), ("c", "start"), ("c", "tick")]
    assert h.tick() == S and h.log[:2] == [("a", "start"), ("a", "tick")]  # completion: start over


@pytest.mark.parametrize("control", ["Sequence", "SequenceWithMemory"])
def test_halt_restarts_sequence_but_sequence_with_memory_keeps_its_place(tmp_path, control):
    """BehaviorTree.CPP v4 ``SequenceWithMemory::halt()`` does not reset ``current_child_idx_``."""
    h = Harness(tmp_path, f"""<ReactiveSequence><Cond id="go" ok="{{go}}"/>
        <{control}><Fake id="a"/><Fake id="b" ticks="2"/></{control}></ReactiveSequence>""", go=True)
    assert h.tick() == R
    h.bb.set("go", False)
    assert h.tick() == F and h.log == [("go", "tick"), ("b", "halt")]
    h.bb.set("go", True)
    assert h.tick() == R
    if control == "Sequence":
        assert h.log == [("go", "tick"), ("a", "start"), ("a", "tick"), ("b", "start"), ("b", "tick")]
    else:
        assert h.log == [("go", "tick"), ("b", "start"), ("b", "tick")]


def test_reactive_sequence_halts_running_child_when_earlier_child_runs(tmp_path):
    h = Harness(tmp_path, """<ReactiveSequence>
        <Steps id="guard" script="S;S;R;S"/><Fake id="work" ticks="9"/></ReactiveSequence>""")
    assert h.tick() == R and h.log == [("guard", "tick"), ("work", "start"), ("work", "tick")]
    assert h.tick() == R and h.log == [("guard", "tick"), ("work", "tick")]
    assert h.tick() == R and h.log == [("guard", "tick"), ("work", "halt")]
    assert h.tick() == R and h.log == [("guard", "tick"), ("work", "start"), ("work", "tick")]


def test_fallback_resumes_running_child_and_restarts_after_success(tmp_path):
    h = Harness(tmp_path, """<Fallback>
        <Fake id="a" result="FAILURE"/><Fake id="b" ticks="1"/></Fallback>""")
    assert h.tick() == R and h.log == [("a", "start"), ("a", "tick"), ("b", "start"), ("b", "tick")]
    assert h.tick() == S and h.log == [("b", "tick")]  # "a" is not ticked again
    assert h.tick() == R and h.log[:2] == [("a", "start"), ("a", "tick")]


def test_reactive_fallback_running_higher_priority_child_halts_lower_one(tmp_path):
    h = Harness(tmp_path, """<ReactiveFallback>
        <Steps id="hi" script="F;F;R;F"/><Fake id="lo" ticks="9"/></ReactiveFallback>""")
    assert h.tick() == R and h.log == [("hi", "tick"), ("lo", "start"), ("lo", "tick")]
    assert h.tick() == R and h.log == [("hi", "tick"), ("lo", "tick")]
    assert h.tick() == R and h.log == [("hi", "tick"), ("lo", "halt")]
    assert h.tick() == R and h.log == [("hi", "tick"), ("lo", "start"), ("lo", "tick")]


def test_while_do_else_reevaluates_condition_and_switches_branch(tmp_path):
    """Unlike IfThenElse, the condition is ticked every tick; a change halts the running branch."""
    h = Harness(tmp_path, """<WhileDoElse><Cond id="c" ok="{ok}"/>
        <Fake id="then" ticks="9"/><Fake id="else" ticks="9"/></WhileDoElse>""", ok=True)
    assert h.tick() == R and h.log == [("c", "tick"), ("then", "start"), ("then", "tick")]
    assert h.tick() == R and h.log == [("c", "tick"), ("then", "tick")]
    h.bb.set("ok", False)
    assert h.tick() == R and h.log == [("c", "tick"), ("then", "halt"), ("else", "start"), ("else", "tick")]
    assert h.tick() == R and h.log == [("c", "tick"), ("else", "tick")]
    h.bb.set("ok", True)
    assert h.tick() == R and h.log == [("c", "tick"), ("else", "halt"), ("then", "start"), ("then", "tick")]


def test_while_do_without_else_fails_and_halts_branch_when_condition_fails(tmp_path):
    h = Harness(tmp_path, """<WhileDoElse><Cond id="c" ok="{ok}"/><Fake id="then" ticks="1"/></WhileDoElse>""",
                ok=True)
    assert h.tick() == R
    h.bb.set("ok", False)
    assert h.tick() == F and h.log == [("c", "tick"), ("then", "halt")]
    h.bb.set("ok", True)
    assert h.tick() == R and h.log == [("c", "tick"), ("then", "start"), ("then", "tick")]
    assert h.tick() == S and h.log == [("c", "tick"), ("then", "tick")]


def test_while_do_else_running_condition_ticks_no_branch(tmp_path):
    h = Harness(tmp_path, """<WhileDoElse><Steps id="c" script="S;R;S"/>
        <Fake id="then" ticks="9"/><Fake id="else"/></WhileDoElse>""")
    assert h.tick() == R and h.log == [("c", "tick"), ("then", "start"), ("then", "tick")]
    assert h.tick() == R and h.log == [("c", "tick")]  # the branch is neither ticked nor halted
    assert h.tick() == R and h.log == [("c", "tick"), ("then", "tick")]


def test_parallel_all_must_succeed_and_finished_children_are_not_ticked_again(tmp_path):
    """py_trees' Parallel (without ``synchronise``) would tick the finished child "a" again."""
    h = Harness(tmp_path, """<Parallel>
        <Fake id="a"/><Fake id="b" ticks="2"/><Fake id="c" ticks="1"/></Parallel>""")
    assert h.tick() == R
    assert h.log == [("a", "start"), ("a", "tick"), ("b", "start"), ("b", "tick"), ("c", "start"), ("c", "tick")]
    assert h.tick() == R and h.log == [("b", "tick"), ("c", "tick")]
    assert h.tick() == S and h.log == [("b", "tick")]
    assert h.tick() == R and h.log[:2] == [("a", "start"), ("a", "tick")]  # reset: a new round


def test_parallel_first_failure_halts_the_others_before_later_children_are_ticked(tmp_path):
    h = Harness(tmp_path, """<Parallel>
        <Fake id="a" ticks="5"/><Fake id="b" ticks="1" result="FAILURE"/><Fake id="c" ticks="5"/></Parallel>""")
    assert h.tick() == R
    assert h.tick() == F
    assert h.log == [("a", "tick"), ("b", "tick"), ("a", "halt"), ("c", "halt")]  # "c" not ticked
    assert [c.status for c in h.root.children] == [Status.INVALID] * 3


def test_parallel_success_count_one_is_a_race(tmp_path):
    h = Harness(tmp_path, """<Parallel success_count="1" failure_count="-1">
        <Fake id="a" ticks="3"/><Fake id="b" ticks="1" result="FAILURE"/><Fake id="c" ticks="1"/></Parallel>""")
    assert h.tick() == R
    assert h.tick() == S and h.log == [("a", "tick"), ("b", "tick"), ("c", "tick"), ("a", "halt")]


def test_parallel_failure_count_two_tolerates_one_failure(tmp_path):
    """``success_count="-2"`` means N - 1 = 2 of 3. py_trees' Parallel fails on any FAILURE."""
    h = Harness(tmp_path, """<Parallel success_count="-2" failure_count="2">
        <Fake id="a" result="FAILURE"/><Fake id="b" ticks="1"/><Fake id="c" ticks="2"/></Parallel>""")
    assert h.tick() == R
    assert h.tick() == R and h.log == [("b", "tick"), ("c", "tick")]
    assert h.tick() == S and h.log == [("c", "tick")]


def test_parallel_fails_when_success_is_out_of_reach(tmp_path):
    h = Harness(tmp_path, """<Parallel failure_count="3">
        <Fake id="a" result="FAILURE"/><Fake id="b" ticks="5"/><Fake id="c" ticks="5"/></Parallel>""")
    assert h.tick() == F  # all three must succeed: after one FAILURE that is impossible
    assert h.log == [("a", "start"), ("a", "tick")]


def test_parallel_threshold_above_children_is_an_error_when_it_ticks(tmp_path):
    """As in BehaviorTree.CPP, which loads such a tree and throws at its first tick."""
    h = Harness(tmp_path, '<Parallel success_count="3"><Fake id="a"/><Fake id="b"/></Parallel>')
    with pytest.raises(HriError, match="less than success_count"):
        h.tick()


SWITCH = """<Switch3 variable="{mode}" case_1="walk" case_2="1" case_3="stop">
    <Fake id="walk" ticks="9"/><Fake id="one" ticks="9"/><Fake id="stop" result="FAILURE"/>
    <Fake id="default" ticks="9"/></Switch3>"""


def test_switch_ticks_matching_case_and_halts_the_previous_child(tmp_path):
    h = Harness(tmp_path, SWITCH, mode="walk")
    assert h.tick() == R and h.log == [("walk", "start"), ("walk", "tick")]
    assert h.tick() == R and h.log == [("walk", "tick")]
    h.bb.set("mode", "1.0")  # compared as numbers: "1.0" == "1"
    assert h.tick() == R and h.log == [("walk", "halt"), ("one", "start"), ("one", "tick")]
    h.bb.set("mode", "run")  # no case: the default (last) child
    assert h.tick() == R and h.log == [("one", "halt"), ("default", "start"), ("default", "tick")]
    h.bb.set("mode", "stop")
    assert h.tick() == F and h.log == [("default", "halt"), ("stop", "start"), ("stop", "tick")]


def test_switch_without_variable_entry_runs_default(tmp_path):
    h = Harness(tmp_path, SWITCH)
    assert h.tick() == R and h.log == [("default", "start"), ("default", "tick")]


@pytest.mark.parametrize("body, message", [
    ('<Switch2 variable="{x}" case_1="a" case_2="b"><Fake id="a"/><Fake id="b"/></Switch2>', "exactly 3 children"),
    ('<Switch6 variable="{x}" case_1="1" case_2="2" case_3="3" case_4="4" case_5="5" case_6="6" case_7="7">'
     + '<Fake id="a"/>' * 7 + '</Switch6>', "case_7"),
])
def test_switch_load_errors(tmp_path, body, message):
    with pytest.raises(HriError, match=message):
        Harness(tmp_path, body)


@pytest.mark.parametrize("inner", [
    '<WhileDoElse><Cond id="c" ok="true"/><Fake id="run" ticks="9"/><Fake id="else"/></WhileDoElse>',
    '<Switch2 variable="b" case_1="a" case_2="b"><Fake id="a"/><Fake id="run" ticks="9"/><Fake id="d"/></Switch2>',
    '<Parallel><Fake id="done"/><Fake id="run" ticks="9"/></Parallel>',
    '<SequenceWithMemory><Fake id="done"/><Fake id="run" ticks="9"/></SequenceWithMemory>',
    '<IfThenElse><Cond id="c" ok="true"/><Fake id="run" ticks="9"/></IfThenElse>',
])
def test_halting_a_control_halts_its_running_child(tmp_path, inner):
    h = Harness(tmp_path, f'<ReactiveSequence><Cond id="go" ok="{{go}}"/>{inner}</ReactiveSequence>', go=True)
    assert h.tick() == R and ("run", "tick") in h.log
    h.bb.set("go", False)
    assert h.tick() == F and h.log == [("go", "tick"), ("run", "halt")]
    assert h.root.children[1].status == Status.INVALID
    h.bb.set("go", True)
    assert h.tick() == R and ("run", "start") in h.log
