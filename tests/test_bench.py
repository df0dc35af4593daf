"""``hri bench`` (hri/bench/): every benchmark runs at tiny sizes and returns sane, positive
figures under the documented keys; the instrumented step is the real step and its split adds
up to the step; the bare PyBullet world holds the same bodies as the simulation's; ``--json``
parses. No speed is asserted: speeds are measured by the benchmarks, not tested."""

from __future__ import annotations

import argparse
import io
import json
import math
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pybullet as p
import pytest
from rich.console import Console

from hri.bench import BENCHMARKS, BenchSettings, add_bench_parser, bench_command, run_benchmarks
from hri.bench.bare_pybullet import ArmCommands, build_bare_world, step_bare_moving, world_counts
from hri.bench.registry import ON_REQUEST
from hri.bench.report import print_report
from hri.bench.step_breakdown import COMPONENTS, STEP_KINDS, ExclusiveTimer, instrument, instrumented_step, measure_once, per_step
from hri.base.errors import HriError
from hri.base.files import is_alive
from hri.scenario.load import PRESETS, load_scenario
from hri.run.sim import Simulation
from processes import grandchildren, stop

TINY = BenchSettings(scenarios=("coexistence",), duration_s=0.5, repeat=2, messages=300, batch_runs=2,
                     batch_workers=2, memory_duration_s=3.0)


@pytest.fixture(scope="module")
def document() -> dict:
    """The whole suite once, tiny."""
    return run_benchmarks(TINY)


def _parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="hri")
    add_bench_parser(parser.add_subparsers(dest="command"))
    return parser.parse_args(argv)


def _positive(value: float) -> bool:
    return isinstance(value, (int, float)) and math.isfinite(value) and value > 0


def test_document_has_every_benchmark(document: dict) -> None:
    assert list(document["results"]) == [name for name in BENCHMARKS if name not in ON_REQUEST]
    assert document["settings"]["repeat"] == 2 and document["machine"]["cpus"] >= 1
    assert "blas" in document["machine"]  # the kernels a seeded run depends on (None off numpy's OpenBLAS)


def test_realtime_factor_beside_bare_pybullet(document: dict) -> None:
    r = document["results"]["realtime"]["coexistence"]
    assert r["steps"] == 120 and r["physics_rate_hz"] == 240
    for key in ("full_rtf", "bare_rtf", "ratio", "bare_moving_rtf", "ratio_moving", "setup_s", "ssm_rtf", "ssm_ratio",
                "mcap_rtf", "mcap_ratio", "foxglove_rtf", "foxglove_ratio"):
        assert len(r[key]["runs"]) == 2 and all(_positive(v) for v in r[key]["runs"])
        assert min(r[key]["runs"]) <= r[key]["median"] <= max(r[key]["runs"])
    assert _positive(r["full_step_us"]) and _positive(r["bare_step_us"]) and _positive(r["bare_moving_step_us"])
    assert r["ssm_cycle_ratio"] is None  # no robot cycle in half a second
    assert r["mcap_bytes"] > 0


def test_breakdown_has_every_component(document: dict) -> None:
    r = document["results"]["breakdown"]["coexistence"]
    assert list(r["components"]) == list(COMPONENTS)
    for key in ("physics", "actor_animation", "actor_messages", "robot", "trees", "monitor", "network"):
        assert _positive(r["components"][key]["us_per_step"]), key
    assert all(c["us_per_step"] >= 0 and c["percent"] >= 0 for c in r["components"].values())
    assert r["accounted_us_per_step"] <= r["total_us_per_step"] * 1.001
    kinds = r["step_kinds"]
    assert list(kinds) == list(STEP_KINDS) and sum(k["steps"] for k in kinds.values()) == r["steps"]
    assert kinds["trees"]["steps"] == 10 and _positive(kinds["trees"]["us_each"])
    assert all(k["physics_us_each"] <= k["us_each"] for k in kinds.values())
    assert sum(k["us_per_step"] for k in kinds.values()) <= r["total_us_per_step"] * 1.001


def test_roundtrip_in_one_and_in_two_processes(document: dict) -> None:
    r = document["results"]["roundtrip"]
    assert {"in_process", "split_process", "split_process_same_cpu", "split_process_asleep",
            "split_process_spin"} >= set(r) >= {"in_process", "split_process", "split_process_asleep",
                                                "split_process_spin"}
    for mode in r.values():
        assert mode["messages"] == 300
        assert _positive(mode["median_us"]["median"]) and mode["p95_us"]["median"] >= mode["median_us"]["median"]


def test_batch_throughput_with_one_and_all_workers(document: dict) -> None:
    r = document["results"]["batch"]
    assert set(r["sim_h_per_h"]) == {"1", "2"} and r["workers"] == 2
    assert all(_positive(s["median"]) for s in r["sim_h_per_h"].values())
    assert _positive(r["speedup"]["median"])


def test_memory_peak_and_growth(document: dict) -> None:
    r = document["results"]["memory"]["coexistence"]
    assert r["sim_s"] == pytest.approx(3.0)
    assert r["peak_rss_mb"] >= r["after_setup_mb"] > r["before_setup_mb"] > 0
    assert math.isfinite(r["growth_mb_per_sim_h"]) and r["events"] > 0 and r["trajectory_rows"] == 30
    assert len(r["samples"]) >= 10


def test_groot2_cost_without_and_with_a_client(document: dict) -> None:
    r = document["results"]["groot2"]["coexistence"]
    for key in ("plain_rtf", "idle_rtf", "client_rtf", "idle_ratio", "client_ratio"):
        assert len(r[key]["runs"]) == 2 and all(_positive(v) for v in r[key]["runs"]), key
    assert r["client_hz"] == 20


def test_xml_pre_pass_beside_expat(document: dict) -> None:
    r = document["results"]["xml"]
    assert 4.5e6 < r["bytes"] <= 5 * 1024 * 1024 and r["nodes"] == 72_000  # about the loader's limit
    for key in ("pre_pass_s", "expat_s", "parse_xml_s", "pre_pass_per_expat"):
        assert len(r[key]["runs"]) == 2 and all(_positive(v) for v in r[key]["runs"]), key


def test_the_groot2_client_is_answered_during_the_run() -> None:
    from hri.bench.groot2_cost import run_once

    r = run_once(load_scenario("coexistence"), 10.0, 0, groot2=True, client=True)
    assert r["steps"] == 2400 and _positive(r["answers_per_s"])


def test_tables_show_every_benchmark(document: dict) -> None:
    out = io.StringIO()
    print_report(document, Console(file=out, width=220))
    text = out.getvalue()
    for title in ("Real-time factor", "Time per simulation step", "Steps by kind", "round trip", "Batch throughput",
                  "Memory", "Groot2", "Reading a tree file"):
        assert title in text
    assert "physics (stepSimulation)" in text and "split process" in text


@pytest.mark.parametrize("name", PRESETS)
def test_bare_moving_world_moves_the_arm_as_the_run_did(name: str) -> None:
    """The run's motor commands, replayed on their steps in the bare world, put the arm where
    the run's arm ended, to the bit; the arm has moved."""
    scenario = load_scenario(name)
    commands = ArmCommands()
    with Simulation(scenario, seed=0, observers=[commands]) as sim:
        commands.robot = sim.robot
        sim.run(8.0)
        steps, ended = sim.step_count, sim.robot.joint_positions()
        home = np.array(sim.robot.home)
    with build_bare_world(scenario, seed=0) as bare:
        step_bare_moving(bare, steps, commands.changes)
        joints = bare.motors["jointIndices"]
        replayed = np.array([state[0] for state in p.getJointStates(bare.robot_id, joints, physicsClientId=bare.client)])
    assert np.max(np.abs(ended - home)) > 0.1
    assert np.array_equal(replayed, ended)


@pytest.mark.parametrize("name", PRESETS)
def test_bare_world_holds_the_simulations_bodies(name: str) -> None:
    scenario = load_scenario(name)
    with Simulation(scenario, seed=0) as sim, build_bare_world(scenario, seed=0) as bare:
        assert world_counts(bare.client) == world_counts(sim.client)
        assert bare.dt == sim.dt


def test_instrumented_step_is_the_real_step() -> None:
    """Same trajectory and events as Simulation.step: the breakdown measures the real loop; and it
    tells each step's kind right (seed 0: the first preview comes after about 840 steps)."""
    scenario = load_scenario("collaboration")
    with Simulation(scenario, seed=0) as plain:
        for _ in range(1080):
            plain.step()
        expected = (plain.trajectory.items, plain.events.events)
    with Simulation(scenario, seed=0) as sim:
        timer = ExclusiveTimer()
        instrument(sim, timer)
        acted: list[str] = []
        for name in ("step", "preview"):  # what the plugin was asked to do, step by step
            real = getattr(sim.plugin, name)
            setattr(sim.plugin, name, lambda *a, _real=real, _name=name: (acted.append(_name), _real(*a))[1])
        kinds = []
        for n in range(1080):
            acted.clear()
            kind = instrumented_step(sim, timer)
            kinds.append(kind)
            expected_kind = "trees" if n % sim.tree_every == 0 else {"step": "person", "preview": "preview"}.get(
                acted[0] if acted else "", "plain")
            assert kind == expected_kind, n
        assert (sim.trajectory.items, sim.events.events) == expected
        assert set(timer.totals) <= set(COMPONENTS)
        assert kinds.count("trees") == 1080 // sim.tree_every and {"preview", "plain"} <= set(kinds)


SENSOR = "safety.sensor={preset: laser_scanner, dropout_probability: 0.2}"  # lost updates in 600 steps


@pytest.mark.parametrize("overrides", [["safety.mode=ssm"], ["safety.mode=ssm", SENSOR], [SENSOR]],
                         ids=["ssm", "ssm, sensor", "zones, sensor"])
def test_instrumented_step_is_the_real_step_in_ssm_mode(overrides: list[str]) -> None:
    """With the SSM controller, which the breakdown times as a component of its own, and
    with a safety sensor (its reports, lost ones too), in SSM and zones mode."""
    scenario = load_scenario("collaboration", overrides)
    with Simulation(scenario, seed=0) as plain:
        for _ in range(600):
            plain.step()
        expected = (plain.trajectory.items, plain.events.events, plain.robot.safety_cap)
    with Simulation(scenario, seed=0) as sim:
        timer = ExclusiveTimer()
        instrument(sim, timer)
        for _ in range(600):
            instrumented_step(sim, timer)
        assert (sim.trajectory.items, sim.events.events, sim.robot.safety_cap) == expected
        assert timer.totals["ssm"] > 0.0 or sim.ssm is None
    assert (SENSOR in overrides) == any(event["event"] == "sensor_dropout" for event in expected[1])


def test_component_split_adds_up_to_the_step() -> None:
    """The components cover the step: all but the loop's own gaps. A wall-clock figure: when
    the process is preempted in a gap the gap grows, so a busy machine gets three tries; the
    upper bound (no time counted twice) must hold on every one."""
    shares = []
    for _ in range(3):
        us = per_step(measure_once(load_scenario("coexistence"), 1.0, seed=0))
        accounted = sum(us[c] for c in COMPONENTS)
        assert accounted <= us["total"] * 1.001
        shares.append(accounted / us["total"])
        if shares[-1] >= 0.85:
            break
    assert max(shares) >= 0.85, shares


def test_exclusive_timer_takes_nested_time_out_of_the_parent() -> None:
    timer = ExclusiveTimer()
    inner = timer.wrap("inner", lambda: sum(range(20000)))
    timer.push("outer")
    inner()
    timer.pop()
    assert timer.totals["inner"] > 0 and timer.totals["outer"] > 0
    assert set(timer.totals) == {"outer", "inner"}


def test_json_output_parses(capsys: pytest.CaptureFixture) -> None:
    args = _parse(["bench", "--only", "roundtrip", "--repeat", "1", "--messages", "200", "--json"])
    assert bench_command(args) == 0
    doc = json.loads(capsys.readouterr().out)
    assert list(doc["results"]) == ["roundtrip"]
    assert doc["results"]["roundtrip"]["in_process"]["median_us"]["median"] > 0


@pytest.mark.parametrize("argv, message", [
    (["--only", "nope"], "--only: unknown benchmark 'nope'"),
    (["--repeat", "0"], "--repeat: must be positive"),
    (["--duration", "-1"], "--duration: must be positive"),
    (["--scenario", "nowhere"], "unknown scenario 'nowhere'"),
    (["--set", "safety.mode=fast"], "--set safety.mode: must be one of zones, ssm"),
])
def test_mistakes_are_one_line_errors(argv: list[str], message: str) -> None:
    with pytest.raises(HriError, match=message):
        bench_command(_parse(["bench", *argv]))


def test_safety_hours_run_only_on_request_and_count_violations() -> None:
    """``--only safety``: the simulated hours split over the scenarios, violations summed."""
    settings = BenchSettings(scenarios=("coexistence", "collaboration"), batch_workers=2,
                             safety_hours=2 * 12 / 3600, safety_run_s=6.0)
    document = run_benchmarks(settings, ["safety"])
    r = document["results"]["safety"]
    assert set(r["scenarios"]) == {"coexistence", "collaboration"}
    assert r["total"]["runs"] == 4 and r["total"]["failed_runs"] == 0
    assert math.isclose(r["total"]["sim_h"], 24 / 3600)
    assert r["total"]["safety_violations"] == 0 and r["total"]["runs_with_violations"] == 0
    assert r["total"]["ssm_margin_min_m"] is None and r["total"]["pfl_violations"] == 0
    # none in 24 s: the rate's 95 % upper bound is -ln(0.05) / T (mutation: per run, not per hour)
    assert math.isclose(r["total"]["violations_per_h_upper"], -math.log(0.05) / (24 / 3600), rel_tol=1e-9)
    assert r["total"]["person_contacts"] == 0
    out = io.StringIO()
    print_report(document, Console(file=out, width=220))
    assert "Safety: " in out.getvalue() and "min SSM margin" not in out.getvalue()


def test_safety_hours_in_ssm_mode_report_the_ssm_margin() -> None:
    settings = BenchSettings(scenarios=("collaboration",), batch_workers=2, safety_hours=2 * 6 / 3600,
                             safety_run_s=6.0, sets=("safety.mode=ssm",))
    document = run_benchmarks(settings, ["safety"])
    total = document["results"]["safety"]["total"]
    assert total["runs"] == 2 and total["safety_violations"] == 0
    assert total["ssm_margin_min_m"] is not None and total["ssm_margin_min_m"] >= -1e-4
    out = io.StringIO()
    print_report(document, Console(file=out, width=220))
    assert "min SSM margin" in out.getvalue() and "SSM stops" in out.getvalue()


def test_safety_dir_keeps_the_batches_and_resumes(tmp_path) -> None:
    """``--safety-dir``: the batches stay; the same command again runs nothing new."""
    settings = BenchSettings(scenarios=("coexistence",), batch_workers=1, safety_hours=2 * 6 / 3600,
                             safety_run_s=6.0, safety_dir=str(tmp_path))
    first = run_benchmarks(settings, ["safety"])["results"]["safety"]["total"]
    stats = sorted(tmp_path.glob("coexistence/runs/*/stats.json"))
    assert len(stats) == 2
    written = [path.stat().st_mtime_ns for path in stats]
    again = run_benchmarks(settings, ["safety"])["results"]["safety"]["total"]
    assert [path.stat().st_mtime_ns for path in stats] == written
    assert {k: v for k, v in again.items() if k != "wall_h"} == {k: v for k, v in first.items() if k != "wall_h"}


def test_set_reaches_every_run_of_the_safety_benchmark(tmp_path) -> None:
    """``--set safety.mode=ssm``: the safety benchmark's runs are SSM runs."""
    settings = _parse(["bench", "--only", "safety", "--scenario", "coexistence", "--set", "safety.mode=ssm",
                       "--safety-hours", str(6 / 3600), "--safety-run", "6", "--batch-workers", "1",
                       "--safety-dir", str(tmp_path)])
    assert bench_command(settings) == 0
    (stats,) = tmp_path.glob("coexistence/runs/*/stats.json")
    assert json.loads(stats.read_text())["ssm_margin_min_m"] is not None


def test_a_killed_memory_benchmark_takes_its_run_with_it() -> None:
    """The memory run's child process (from the forkserver, a grandchild) ends when the
    benchmark is killed, instead of simulating its hours on to the end for nobody."""
    script = ("from hri.bench.common import BenchSettings\n"
              "from hri.bench.memory import measure_scenario\n"
              "measure_scenario('coexistence', BenchSettings(memory_duration_s=36000.0))\n")
    bench = subprocess.Popen([sys.executable, "-c", script], start_new_session=True)
    runs: list[int] = []
    try:
        deadline = time.monotonic() + 60
        while not (runs := grandchildren(bench.pid)):
            assert time.monotonic() < deadline and bench.poll() is None, "the memory run never started"
            time.sleep(0.1)
        time.sleep(3.0)  # the run is building its world, or simulating
        os.kill(bench.pid, signal.SIGKILL)
        bench.wait(timeout=10)
        deadline = time.monotonic() + 15
        while [pid for pid in runs if is_alive(pid)]:
            assert time.monotonic() < deadline, "the memory run outlived the benchmark"
            time.sleep(0.2)
    finally:
        stop(bench, runs)
