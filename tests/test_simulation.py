"""The whole simulation: the robot slows in the warning zone and stops in the stop zone,
runs are reproducible, and no message queue outlives its run."""

from pathlib import Path
from types import SimpleNamespace

import pybullet
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hri.base.mqueue import queue_exists
from hri.scenario.load import load_scenario
from hri.run.sim import Simulation, run_scenario
from hri.run.stats import WALL_CLOCK_KEYS

ZONE_WALK = Path(__file__).parent / "data" / "zone_walk_person.xml"


@pytest.fixture(scope="module")
def zone_walk_trace():
    """Step a coexistence run whose person walks safe -> warning -> stop -> safe; record each step."""
    scenario = load_scenario("coexistence", [f"trees.person={ZONE_WALK}"])
    trace = []
    with Simulation(scenario, seed=3) as sim:
        for _ in range(int(30 / sim.dt)):  # one round of the tree (it starts over at ~25 s)
            sim.step()
            trace.append((sim.now(), sim.monitor.zone, sim.robot.joint_speed_fraction(),
                          sim.robot.fastest_point_speed()))
        stats = sim.stats.as_dict()
        queue_names = list(sim.queues.names)
    return scenario, trace, stats, queue_names


def _since_entry(trace):
    """For each step: (t, zone, fraction, speed, seconds since the person entered this zone)."""
    entered, last = 0.0, None
    for t, zone, fraction, speed in trace:
        if zone != last:
            entered, last = t, zone
        yield t, zone, fraction, speed, t - entered


def test_the_person_visits_all_three_zones(zone_walk_trace):
    _, trace, stats, _ = zone_walk_trace
    zones = [z for _, z, _, _ in trace]
    assert zones[0] == "safe" and "warning" in zones and "stop" in zones and zones[-1] == "safe"
    assert stats["zone_entries"] == {"warning": 1, "stop": 1}


def test_robot_runs_fast_in_safe_zone_slow_in_warning_and_stops_in_stop(zone_walk_trace):
    scenario, trace, stats, _ = zone_walk_trace
    safety = scenario.safety
    reduced = scenario.robot.reduced_velocity
    fast = [f for _, z, f, _, _ in _since_entry(trace) if z == "safe"]
    slow = [f for _, z, f, _, dt in _since_entry(trace) if z == "warning" and dt > safety.reaction_time_s]
    stopped = [v for _, z, _, v, dt in _since_entry(trace) if z == "stop" and dt > safety.stopping_time_s]
    assert max(fast) > 0.5, "the robot never ran near full speed: the test would prove nothing"
    assert slow and max(slow) <= reduced * (1 + safety.speed_tolerance)
    assert max(slow) > 0.02, "the robot should still work, slowly, in the warning zone"
    assert stopped and max(stopped) < safety.rest_speed_m_s
    assert stats["protective_stops"] == 1
    assert stats["safety_violations"] == 0
    assert stats["min_separation_m"] > 0.05, "the person and the robot must not touch"
    assert stats["robot_time_s"]["reduced"] > 5 and stats["robot_time_s"]["stopped"] > 5


def test_queues_are_gone_after_the_run(zone_walk_trace):
    *_, names = zone_walk_trace
    assert len(names) == 2
    assert not any(queue_exists(name) for name in names)


def test_queues_are_gone_after_a_run_that_raised():
    scenario = load_scenario("coexistence")
    names = []
    with pytest.raises(RuntimeError, match="injected"):
        with Simulation(scenario, seed=1) as sim:
            names = list(sim.queues.names)
            assert all(queue_exists(n) for n in names)
            for _ in range(50):
                sim.step()
            raise RuntimeError("injected fault")
    assert len(names) == 2 and not any(queue_exists(n) for n in names)


def test_same_seed_same_statistics_and_events(tmp_path):
    scenario = load_scenario("coexistence")
    a = run_scenario(scenario, 120.0, seed=7, out_dir=tmp_path / "a")
    b = run_scenario(scenario, 120.0, seed=7, out_dir=tmp_path / "b")
    for key in WALL_CLOCK_KEYS:
        a.pop(key), b.pop(key)
    assert a == b
    for name in ("events.jsonl", "person.btlog", "robot.btlog"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    c = run_scenario(scenario, 120.0, seed=8)
    assert c["person_distance_m"] != a["person_distance_m"]


def test_stop_zone_intrusion_is_the_depth_reached_before_the_robot_rests():
    """Seed 10 walks the person into the stop zone within seconds; the intrusion is measured
    from the pelvis to the zone's edge, only until the robot is at rest (the protective stop is
    confirmed REST_DWELL_S later and counts from when the rest began)."""
    import shapely

    from hri.run.monitor import REST_DWELL_S

    scenario = load_scenario("coexistence")
    stop_zone = scenario.zones["stop"].polygon
    depths: list[tuple[float, float]] = []
    with Simulation(scenario, seed=10) as sim:
        for _ in range(int(12 / sim.dt)):
            sim.step()
            x, y = sim.monitor.last_xy  # the pelvis the monitor judged this step
            if sim.monitor.zone == "stop":
                depths.append((sim.now(), stop_zone.exterior.distance(shapely.Point(x, y))))
        stops = [e for e in sim.events.events if e["event"] == "protective_stop"]
        entry = next(e["t"] for e in sim.events.events if e["event"] == "protective_stop_requested")
        intrusion = sim.stats.max_stop_intrusion_m
    assert len(stops) == 1 and depths
    rest_t = entry + stops[0]["stopping_time_s"]
    assert stops[0]["t"] == pytest.approx(rest_t + REST_DWELL_S, abs=1e-5)
    before_rest = max(d for t, d in depths if t < rest_t - 1e-5)  # up to the step before rest (event times are rounded)
    deepest = max(d for _, d in depths)
    assert intrusion == pytest.approx(before_rest, abs=1e-9) == pytest.approx(stops[0]["intrusion_m"], abs=1e-6)
    assert 0 < intrusion < deepest  # the person kept walking in after the robot had stopped


def test_a_run_leaves_no_pybullet_client_behind():
    """The robot's planning client too: left connected, it held ~28 MB per run (a batch
    worker or the soak test running hundreds of runs in one process grew by gigabytes)."""
    with Simulation(load_scenario("coexistence"), 0) as sim:
        sim.run(1.0)
        clients = [sim.client, sim.robot.scene.client]
    assert all(c >= 0 for c in clients)
    assert not any(pybullet.isConnected(physicsClientId=c) for c in clients)



@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.floats(-0.05, 0.05), st.floats(-0.05, 0.05)), min_size=1, max_size=200),
       st.floats(-0.6, 0.6), st.floats(-0.6, 0.6))
def test_intrusion_skips_only_points_that_cannot_be_deeper(moves, x0, y0):
    """The monitor measures the depth in the stop zone only where the pelvis may have gone
    deeper than the stay's deepest (the depth changes no faster than the pelvis moves): along
    a swaying walk the deepest depth is that of measuring every step, to the bit."""
    import shapely

    from hri.base.geometry import Area
    from hri.run.monitor import _NO_GUARD, SafetyMonitor

    zone = Area([(-0.5, -0.4), (0.5, -0.4), (0.5, 0.4), (-0.5, 0.4)])
    figures = SimpleNamespace(max_stop_intrusion_m=None)  # the person's figures: the run's with one person
    monitor = SimpleNamespace(zones={"stop": zone}, stats=figures, person=figures,
                              intrusion_m=0.0, _intrusion_guard=_NO_GUARD)
    x, y, deepest = x0, y0, 0.0
    for dx, dy in [(0.0, 0.0), *moves]:
        x, y = x + dx, y + dy
        SafetyMonitor._measure_intrusion(monitor, x, y)
        deepest = max(deepest, zone.polygon.exterior.distance(shapely.Point(x, y)))
    assert monitor.intrusion_m == deepest == monitor.stats.max_stop_intrusion_m
