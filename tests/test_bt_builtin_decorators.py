"""BehaviorTree.CPP v4 built-in decorators and the Sleep action, tick by tick, from XML files.

Most semantics are checked against BehaviorTree.CPP itself by the differential tests
(``test_differential_*``); these pin what they cannot, the deliberate differences:

* timed nodes (Sleep, Delay, Timeout) run on simulated time, checked when the tree ticks,
  where BehaviorTree.CPP's timer threads use the wall clock and wake the tree at the
  deadline. The tests move a fake clock (``TreeContext.now``) between ticks, while the wall
  clock is made to jump by a day at every reading, so that any use of it would show;
* one ``tick_once()`` makes at most ``MAX_TICKS_PER_TICK_ONCE`` root ticks, where
  BehaviorTree.CPP would spin for ever on wake-ups that never end.
"""

from __future__ import annotations

import time

import pytest

from bt_harness import F, R, S, Harness
from hri.bt import Port, default_registry
from hri.bt import SKIPPED
from hri.bt.tree import MAX_TICKS_PER_TICK_ONCE as MAX_LOOPS_PER_TICK
from hri.base.errors import HriError

@pytest.fixture
def wall_clock_jumps(monkeypatch):
    """Every reading of the wall clock is a day later than the one before."""
    state = {"t": 1.0e9}

    def jump() -> float:
        state["t"] += 86400.0
        return state["t"]

    for name in ("time", "monotonic", "perf_counter"):
        monkeypatch.setattr(time, name, jump)


def test_builtin_nodes_are_registered_with_docstrings_and_typed_ports():
    registry = default_registry()
    expected = {
        "control": ["Sequence", "SequenceWithMemory", "ReactiveSequence", "Fallback", "ReactiveFallback",
                    "Parallel", "IfThenElse", "WhileDoElse", "Switch2", "Switch3", "Switch4", "Switch5", "Switch6"],
        "decorator": ["Inverter", "ForceSuccess", "ForceFailure", "Repeat", "RetryUntilSuccessful",
                      "KeepRunningUntilFailure", "Timeout", "Delay", "RunOnce"],
        "action": ["AlwaysSuccess", "AlwaysFailure", "Sleep", "SetBlackboard"],
    }
    for kind, ids in expected.items():
        for node_id in ids:
            node_type = registry.get(node_id)
            assert node_type.kind == kind, node_id
            assert (node_type.cls.__doc__ or "").strip(), node_id
            assert all(isinstance(port, Port) for port in node_type.cls.PORTS), node_id
    ports = {p.name: p for p in registry.get("Switch4").cls.PORTS}
    assert list(ports) == ["variable", "case_1", "case_2", "case_3", "case_4"]
    parallel = {p.name: (p.type, p.default) for p in registry.get("Parallel").cls.PORTS}
    assert parallel == {"success_count": (int, -1), "failure_count": (int, 1)}


@pytest.mark.parametrize("decorator, result, expected", [
    ("Inverter", "FAILURE", S), ("Inverter", "SUCCESS", F),
    ("ForceSuccess", "FAILURE", S), ("ForceSuccess", "SUCCESS", S),
    ("ForceFailure", "SUCCESS", F), ("ForceFailure", "FAILURE", F),
])
def test_status_mapping_decorators_pass_running_through(tmp_path, decorator, result, expected):
    h = Harness(tmp_path, f'<{decorator}><Fake id="a" ticks="2" result="{result}"/></{decorator}>')
    assert [h.tick(), h.tick(), h.tick()] == [R, R, expected]


def test_repeat_loops_within_one_tick_when_child_finishes_at_once(tmp_path):
    """BT.CPP v4 Repeat loops in the tick; ``py_trees.decorators.Repeat`` would need 3 ticks."""
    h = Harness(tmp_path, '<Repeat num_cycles="3"><Fake id="a"/></Repeat>')
    assert h.tick() == S
    assert h.log == [("a", "start"), ("a", "tick")] * 3
    assert h.tick() == S and len(h.log) == 6  # the count starts over


def test_repeat_with_running_child(tmp_path):
    h = Harness(tmp_path, '<Repeat num_cycles="2"><Fake id="a" ticks="1"/></Repeat>')
    assert h.tick() == R and h.log == [("a", "start"), ("a", "tick")]
    assert h.tick() == R and h.log == [("a", "tick"), ("a", "start"), ("a", "tick")]  # 1st success, 2nd run
    assert h.tick() == S and h.log == [("a", "tick")]


def test_repeat_stops_at_failure_and_resets_count(tmp_path):
    h = Harness(tmp_path, '<Repeat num_cycles="3"><Steps id="a" script="S;F;S"/></Repeat>')
    assert h.tick() == F and h.log == [("a", "tick")] * 2
    assert h.tick() == S and h.log == [("a", "tick")] * 3  # three fresh successes needed


def test_repeat_forever_and_zero_cycles(tmp_path):
    h = Harness(tmp_path, '<Repeat num_cycles="-1"><Fake id="a" ticks="1"/></Repeat>')
    assert all(h.tick() == R for _ in range(10))
    h = Harness(tmp_path, '<Repeat num_cycles="-1"><AlwaysSuccess/></Repeat>')
    # BehaviorTree.CPP would tick this for ever within one tick; the simulation must go on:
    # MAX_LOOPS_PER_TICK runs, then the next tick
    assert h.tick() == R
    h = Harness(tmp_path, '<Repeat num_cycles="-1"><Steps id="a" script="S"/></Repeat>')
    assert h.tick() == R and len(h.log) == MAX_LOOPS_PER_TICK
    h = Harness(tmp_path, '<Repeat num_cycles="0"><Fake id="a"/></Repeat>')
    assert h.tick() == S and h.log == []


def test_repeat_count_restarts_after_halt(tmp_path):
    h = Harness(tmp_path, """<ReactiveSequence><Cond id="go" ok="{go}"/>
        <Repeat num_cycles="2"><Fake id="a" ticks="1"/></Repeat></ReactiveSequence>""", go=True)
    assert [h.tick(), h.tick()] == [R, R]  # one success so far, 2nd run RUNNING
    h.bb.set("go", False)
    assert h.tick() == F and h.log == [("go", "tick"), ("a", "halt")]
    h.bb.set("go", True)
    assert [h.tick(), h.tick(), h.tick()] == [R, R, S]  # two successes again


def test_retry_until_successful_retries_within_one_tick(tmp_path):
    """BT.CPP v4 retries in the same tick; ``py_trees.decorators.Retry`` needs one tick per attempt."""
    h = Harness(tmp_path, '<RetryUntilSuccessful num_attempts="3"><Steps id="a" script="F;F;S"/></RetryUntilSuccessful>')
    assert h.tick() == S and h.log == [("a", "tick")] * 3


def test_retry_until_successful_gives_up_after_num_attempts(tmp_path):
    h = Harness(tmp_path, '<RetryUntilSuccessful num_attempts="3"><Fake id="a" result="FAILURE"/></RetryUntilSuccessful>')
    assert h.tick() == F and h.log == [("a", "start"), ("a", "tick")] * 3
    assert h.tick() == F and h.log == [("a", "start"), ("a", "tick")] * 3  # count starts over
    h = Harness(tmp_path, '<RetryUntilSuccessful num_attempts="0"><Fake id="a"/></RetryUntilSuccessful>')
    assert h.tick() == F and h.log == []


def test_retry_until_successful_counts_running_attempts(tmp_path):
    h = Harness(tmp_path, """<RetryUntilSuccessful num_attempts="2">
        <Fake id="a" ticks="1" result="FAILURE"/></RetryUntilSuccessful>""")
    assert h.tick() == R and h.log == [("a", "start"), ("a", "tick")]
    assert h.tick() == R and h.log == [("a", "tick"), ("a", "start"), ("a", "tick")]  # 1st failed, 2nd runs
    assert h.tick() == F and h.log == [("a", "tick")]


def test_retry_count_restarts_after_halt_and_forever_keeps_trying(tmp_path):
    h = Harness(tmp_path, """<ReactiveSequence><Cond id="go" ok="{go}"/>
        <RetryUntilSuccessful num_attempts="2"><Fake id="a" ticks="1" result="FAILURE"/></RetryUntilSuccessful>
        </ReactiveSequence>""", go=True)
    assert [h.tick(), h.tick()] == [R, R]  # one failed attempt, the 2nd RUNNING
    h.bb.set("go", False)
    assert h.tick() == F and h.log == [("go", "tick"), ("a", "halt")]
    h.bb.set("go", True)
    assert [h.tick(), h.tick(), h.tick()] == [R, R, F]  # two attempts again
    h = Harness(tmp_path, '<RetryUntilSuccessful num_attempts="-1"><Steps id="a" script="F"/></RetryUntilSuccessful>')
    assert h.tick() == R and len(h.log) == MAX_LOOPS_PER_TICK
    assert h.tick() == R


def test_keep_running_until_failure(tmp_path):
    h = Harness(tmp_path, '<KeepRunningUntilFailure><Steps id="a" script="S;R;S;F"/></KeepRunningUntilFailure>')
    assert [h.tick() for _ in range(4)] == [R, R, R, F]
    h = Harness(tmp_path, '<KeepRunningUntilFailure><Fake id="a"/></KeepRunningUntilFailure>')
    assert h.tick() == R and h.tick() == R and h.log == [("a", "start"), ("a", "tick")]  # restarted


def test_timeout_halts_child_after_msec_of_simulated_time(tmp_path, wall_clock_jumps):
    h = Harness(tmp_path, '<Timeout msec="500"><Fake id="a" ticks="99"/></Timeout>')
    assert h.tick(at=0.0) == R and h.log == [("a", "start"), ("a", "tick")]
    for _ in range(20):  # ticks without simulated time passing never time out
        assert h.tick() == R
    assert h.tick(at=0.3) == R and h.log == [("a", "tick")]
    assert h.tick(at=0.5) == F and h.log == [("a", "halt")]  # not ticked: halted
    assert h.tick(at=0.6) == R and h.log == [("a", "start"), ("a", "tick")]  # a new run, a new clock
    assert h.tick(at=1.0) == R
    assert h.tick(at=1.1) == F and h.log == [("a", "halt")]


def test_timeout_passes_the_child_result_before_the_deadline(tmp_path, wall_clock_jumps):
    h = Harness(tmp_path, '<Timeout msec="500"><Fake id="a" ticks="2" result="FAILURE"/></Timeout>')
    assert [h.tick(at=0.0), h.tick(at=0.2), h.tick(at=0.4)] == [R, R, F]
    assert h.log == [("a", "tick")]
    assert h.tick(at=10.0) == R and h.tick(at=10.4) == R  # the clock restarted at 10.0
    h = Harness(tmp_path, '<Timeout msec="0"><Fake id="a" ticks="99"/></Timeout>')
    assert h.tick(at=0.0) == R and h.tick(at=1000.0) == R  # 0: no timeout


def test_delay_waits_simulated_time_before_ticking_child(tmp_path, wall_clock_jumps):
    h = Harness(tmp_path, '<Delay delay_msec="500"><Fake id="a" ticks="1"/></Delay>')
    assert h.tick(at=0.0) == R and h.log == []
    for _ in range(20):
        assert h.tick() == R and h.log == []
    assert h.tick(at=0.3) == R and h.log == []
    assert h.tick(at=0.5) == R and h.log == [("a", "start"), ("a", "tick")]
    assert h.tick(at=0.6) == S and h.log == [("a", "tick")]
    assert h.tick(at=0.7) == R and h.log == []  # a new run waits again
    assert h.tick(at=1.2) == R and h.log == [("a", "start"), ("a", "tick")]


def test_delay_restarts_after_halt_and_zero_delay(tmp_path):
    h = Harness(tmp_path, """<ReactiveSequence><Cond id="go" ok="{go}"/>
        <Delay delay_msec="200"><Fake id="a" ticks="9"/></Delay></ReactiveSequence>""", go=True)
    assert h.tick(at=0.0) == R and h.tick(at=0.2) == R and ("a", "tick") in h.log
    h.bb.set("go", False)
    assert h.tick(at=0.3) == F and h.log == [("go", "tick"), ("a", "halt")]
    h.bb.set("go", True)
    assert h.tick(at=0.4) == R and h.log == [("go", "tick")]  # waiting again
    assert h.tick(at=0.6) == R and h.log == [("go", "tick"), ("a", "start"), ("a", "tick")]
    h = Harness(tmp_path, '<Delay delay_msec="0"><Fake id="a"/></Delay>')
    assert h.tick() == S and h.log == [("a", "start"), ("a", "tick")]


def test_run_once_then_skip_returns_skipped(tmp_path):
    h = Harness(tmp_path, '<RunOnce><Fake id="a" ticks="1" result="FAILURE"/></RunOnce>')
    assert h.tick() == R and h.tick() == F
    for _ in range(3):
        assert h.tick() is SKIPPED and h.log == []  # the child is never ticked again


def test_run_once_without_skip_repeats_the_child_result(tmp_path):
    h = Harness(tmp_path, '<RunOnce then_skip="false"><Fake id="a" ticks="1" result="FAILURE"/></RunOnce>')
    assert h.tick() == R and h.tick() == F
    for _ in range(3):
        assert h.tick() == F and h.log == []


def test_run_once_halted_before_completion_runs_again(tmp_path):
    h = Harness(tmp_path, """<ReactiveSequence><Cond id="go" ok="{go}"/>
        <RunOnce><Fake id="a" ticks="1"/></RunOnce></ReactiveSequence>""", go=True)
    assert h.tick() == R
    h.bb.set("go", False)
    assert h.tick() == F and h.log == [("go", "tick"), ("a", "halt")]
    h.bb.set("go", True)
    assert h.tick() == R and h.log == [("go", "tick"), ("a", "start"), ("a", "tick")]
    assert h.tick() == S
    assert h.tick() == S and h.log == [("go", "tick")]


def test_sleep_runs_for_msec_of_simulated_time(tmp_path, wall_clock_jumps):
    h = Harness(tmp_path, '<Sleep msec="300"/>')
    assert h.tick(at=0.0) == R
    for _ in range(20):
        assert h.tick() == R
    assert h.tick(at=0.2) == R
    assert h.tick(at=0.3) == S
    assert h.tick(at=0.4) == R  # a new sleep
    assert h.tick(at=0.7) == S  # 0.7 - 0.4 is 0.3 despite floating point
    h = Harness(tmp_path, '<Sleep msec="0"/>')
    assert h.tick() == S


def test_sleep_halted_starts_over(tmp_path):
    h = Harness(tmp_path, """<ReactiveSequence><Cond id="go" ok="{go}"/><Sleep msec="300"/></ReactiveSequence>""",
                go=True)
    assert h.tick(at=0.0) == R
    h.bb.set("go", False)
    assert h.tick(at=0.2) == F
    h.bb.set("go", True)
    assert h.tick(at=0.25) == R
    assert h.tick(at=0.5) == R  # 0.25 s since the new start
    assert h.tick(at=0.55) == S


@pytest.mark.parametrize("body, message", [
    ('<Timeout msec="-1"><AlwaysSuccess/></Timeout>', "msec"),
    ('<Delay delay_msec="-5"><AlwaysSuccess/></Delay>', "delay_msec"),
    ('<RunOnce then_skip="maybe"><AlwaysSuccess/></RunOnce>', "then_skip"),
    ('<Sleep msec="-1"/>', "msec"),
    ('<Sleep msec="1.5"/>', "msec"),
])
def test_port_errors_at_load_time(tmp_path, body, message):
    with pytest.raises(HriError, match=message):
        Harness(tmp_path, body)


def test_port_from_blackboard_checked_at_tick(tmp_path):
    h = Harness(tmp_path, '<Repeat num_cycles="{n}"><Fake id="a"/></Repeat>', n=2)
    assert h.tick() == S and len(h.log) == 4
    with pytest.raises(ValueError, match="'n' \\(int\\): expected an integer, got 'seven'"):
        h.bb.set("n", "seven")  # the entry is an int: the port declared it
    h.bb.set("n", "3")  # a string is parsed as the entry's type
    assert h.bb.get("n") == 3 and h.tick() == S and len(h.log) == 6


@pytest.mark.parametrize("body", ['<Repeat num_cycles="-2"><AlwaysSuccess/></Repeat>',
                                  '<RetryUntilSuccessful num_attempts="-3"><AlwaysFailure/></RetryUntilSuccessful>'])
def test_a_count_below_minus_one_runs_the_child_no_time(tmp_path, body):
    """BehaviorTree.CPP loads it and loops zero times: Repeat succeeds, Retry fails."""
    h = Harness(tmp_path, body)
    assert h.tick() == (S if "Repeat" in body else F)


def test_a_missing_count_is_an_error_when_it_ticks(tmp_path):
    h = Harness(tmp_path, '<Repeat><AlwaysSuccess/></Repeat>')
    with pytest.raises(HriError, match="missing port 'num_cycles'"):
        h.tick()


LEAN_TREES = ["""<ReactiveSequence>
  <Steps id="guard" script="S;S;S;F;S;S;S;S"/>
  <Inverter><ForceFailure><Fake id="a" ticks="1" result="SUCCESS"/></ForceFailure></Inverter>
  <Timeout msec="300"><Fake id="b" ticks="2" result="FAILURE"/></Timeout>
  <RetryUntilSuccessful num_attempts="2"><Steps id="c" script="F;R;S"/></RetryUntilSuccessful>
</ReactiveSequence>""", """<Repeat num_cycles="3">
  <Timeout msec="250"><Fake id="b" ticks="5"/></Timeout>
</Repeat>"""]


def _ticks(tmp_path, body: str) -> list:
    h = Harness(tmp_path, body)
    runs = []
    for k in range(12):
        status = h.tick(at=0.1 * k)
        runs.append((status, list(h.log), [(n.name, n.status) for n in h.root.iterate()]))
    return runs


def test_leaves_and_decorators_tick_and_halt_as_py_trees_own_behaviour_and_decorator(tmp_path, monkeypatch):
    """BTNode and BTDecorator tick and stop without py_trees' per-tick debug formatting; what
    they do must be what py_trees' Behaviour.tick/stop and Decorator.tick/stop do (halts,
    restarts, a child halted by its decorator), tick for tick."""
    import py_trees

    from hri.bt.node import BTDecorator, BTNode

    lean = [_ticks(tmp_path, body) for body in LEAN_TREES]
    monkeypatch.setattr(BTNode, "tick", py_trees.behaviour.Behaviour.tick)
    monkeypatch.setattr(BTNode, "stop", py_trees.behaviour.Behaviour.stop)
    monkeypatch.setattr(BTDecorator, "tick", py_trees.decorators.Decorator.tick)
    monkeypatch.setattr(BTDecorator, "stop", py_trees.decorators.Decorator.stop)
    assert lean == [_ticks(tmp_path, body) for body in LEAN_TREES]
    for runs in lean:
        assert "halt" in {what for _, log, _ in runs for _, what in log}


def test_a_leaf_that_returns_no_status_is_a_located_error(tmp_path):
    from bt_harness import Cond

    class Broken(Cond):
        def update(self):
            return "SUCCESS"  # a string, not a Status

    h = Harness(tmp_path, '<Sequence><Cond id="x" ok="true"/></Sequence>')
    h.root.children[0].__class__ = Broken
    with pytest.raises(HriError, match=r"tree.xml:3: Broken 'Cond': update\(\) returned 'SUCCESS', not a status"):
        h.tick()
