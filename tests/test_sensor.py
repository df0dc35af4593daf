"""The safety sensor in the loop (``safety.sensor``, :mod:`hri.run.sensor`): its timing, noise
and dropouts, T_r and Z_d that follow from it, and SSM acting on its reports while the monitor
checks the truth: a person walking straight at the working robot at 1.6 and 2.0 m/s finds it at
rest, and a lost update is a protective stop within one sensor period plus T_r; ssm+pfl acts
on its reports as SSM does."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pybullet as p
import pytest

from hri.base.errors import HriError
from hri.run.sensor import SafetySensor
from hri.run.sensor_view import SensorView
from hri.run.sim import Simulation
from hri.run import ssm_control
from hri.run.ssm_control import sensed_person_speed, ssm_settings, truth_settings
from hri.scenario.load import load_scenario, sensor_presets
from hri.scenario.model import SENSOR_NOISE_BOUND, SensorMount, SensorOptions, SsmOptions

DATA = Path(__file__).parent / "data"
WALK_16 = DATA / "ssm" / "walk_at_robot.xml"
WALK_20 = DATA / "sensor" / "walk_at_robot_2mps.xml"
INTRUSION_M = 0.1  # C: a separation the robot must keep at rest, so the test can see it
DT = 1.0 / 240.0


def _walk_at_robot(tree: Path, sensor: str) -> list[str]:
    """As tests/test_ssm_run.py: the person walks down the room along x = 1.3 straight at the
    robot, the zones shrunk into a corner (SSM alone slows and stops the robot)."""
    return ["safety.mode=ssm", f"trees.person={tree}", "person.start={position: [1.3, 5.6, 0.0], yaw_deg: -90}",
            f"safety.ssm.intrusion_distance_m={INTRUSION_M}", f"safety.sensor={sensor}",
            "zones.warning=[[7.6, 5.6], [8.0, 5.6], [8.0, 6.0], [7.6, 6.0]]",
            "zones.stop=[[7.8, 5.8], [8.0, 5.8], [8.0, 6.0], [7.8, 6.0]]"]


def _in_mode(mode: str, overrides: list[str]) -> list[str]:
    """``overrides`` with ``safety.mode`` set to ``mode``."""
    return [item if not item.startswith("safety.mode=") else f"safety.mode={mode}" for item in overrides]


# --- the sensor alone ----------------------------------------------------------------------

def test_period_and_latency_round_up_to_physics_steps_and_make_the_age():
    sensor = SafetySensor(SensorOptions(25.0, 0.040, 0.0, 0.0), DT, np.random.default_rng(1))
    assert (sensor.period_steps, sensor.latency_steps) == (10, 10)  # 9.6 and 9.6 steps, up
    assert sensor.age_s == pytest.approx(20 * DT)
    assert [k for k in range(1, 32) if sensor.due(k)] == [1, 11, 21, 31]
    camera = SafetySensor(SensorOptions(30.0, 0.0666667, 0.0, 0.0), DT, np.random.default_rng(1))
    assert (camera.period_steps, camera.latency_steps) == (8, 16)  # a written 2/30 s is 16 steps, not 17


def test_a_report_arrives_after_the_latency_and_its_noise_stays_within_the_tolerance():
    sensor = SafetySensor(SensorOptions(240.0, 2 * DT, 0.05, 0.0), DT, np.random.default_rng(7))
    errors = []
    for step in range(1, 2001):
        assert sensor.deliver(step) is None
        if step > 3:
            assert sensor.current.t == pytest.approx((step - 2) * DT)  # measured two steps ago
            errors.append(sensor.current.separation_m - 1.0)
        sensor.measure(step, [1.0], [(2.0, 3.0)])
    assert max(map(abs, errors)) <= SENSOR_NOISE_BOUND * 0.05 + 1e-12
    assert np.std(errors) == pytest.approx(0.05, rel=0.1)  # truncation at 3 sigma takes little


def test_a_lost_update_arrives_as_no_report_then_the_next_one_restores_it():
    sensor = SafetySensor(SensorOptions(240.0, 0.0, 0.0, 0.5), DT, np.random.default_rng(3))
    lost_steps = [step for step in range(1, 200) if sensor.measure(step, [1.0], [(0.0, 0.0)])]
    assert 50 < len(lost_steps) < 150
    sensor2 = SafetySensor(SensorOptions(240.0, 0.0, 0.0, 0.5), DT, np.random.default_rng(3))
    for step in range(1, 200):
        sensor2.measure(step, [1.0], [(0.0, 0.0)])
        lost = sensor2.deliver(step)
        assert (lost is not None) == (step in lost_steps) == (sensor2.current is None)


def test_the_measured_approach_speed_is_the_walk_towards_the_robot():
    sensor = SafetySensor(SensorOptions(25.0, 0.0, 0.0, 0.0), DT, np.random.default_rng(0), robot_xy=(0.0, 0.0))
    for step in range(1, 200):
        if sensor.due(step):
            sensor.measure(step, [1.0], [(5.0 - 1.3 * step * DT, 0.0)])  # 1.3 m/s towards the base
        sensor.deliver(step)
    assert sensor.approach_m_s() == pytest.approx(1.3)


def test_a_null_sensor_is_none_and_an_empty_one_is_refused(tmp_path):
    """``safety.sensor: null`` (``--set safety.sensor=null``) is the ideal sensor, for a
    sweep that compares a sensor with none; an empty mapping names no sensor and is refused."""
    assert load_scenario("coexistence", overrides=["safety.sensor=null"]).safety.sensor is None
    with_one = load_scenario("coexistence", overrides=["safety.sensor={preset: laser_scanner}"])
    assert with_one.safety.sensor is not None
    with pytest.raises(HriError, match="safety.sensor: needs a preset or a rate_hz"):
        load_scenario("coexistence", overrides=["safety.sensor={}"])


def test_t_r_and_z_d_follow_from_the_sensor_and_the_scenario_overrides_them():
    sensor = SafetySensor(SensorOptions(25.0, 0.040, 0.02, 0.0), DT, np.random.default_rng(0))
    settings = ssm_settings(SsmOptions(), DT, sensor)
    assert settings.reaction_time_s == pytest.approx(21 * DT)  # latency + period (steps) + the cycle
    assert settings.person_uncertainty_m == pytest.approx(0.06)
    truth = truth_settings(settings, DT, sensor)
    assert (truth.reaction_time_s, truth.person_uncertainty_m) == (pytest.approx(DT), 0.0)
    # over the report's age the robot's travel is measured: S_r's v_r covers the one cycle ahead
    assert (settings.robot_measured_s, settings.robot_reaction_s) == (pytest.approx(20 * DT), pytest.approx(DT))
    assert truth.robot_measured_s == 0.0 and truth.robot_reaction_s == pytest.approx(DT)
    given = ssm_settings(SsmOptions(reaction_time_s=0.5, person_uncertainty_m=0.2), DT, sensor)
    assert (given.reaction_time_s, given.person_uncertainty_m) == (0.5, 0.2)
    assert ssm_settings(SsmOptions(), DT) == ssm_settings(SsmOptions(), DT, None)  # ideal: as before


def test_every_preset_names_its_source_and_loads():
    for name, preset in sensor_presets().items():
        assert preset["source"] and preset["device"]
        options = load_scenario("coexistence", [f"safety.sensor={{preset: {name}}}"]).safety.sensor
        assert options.preset == name and options.rate_hz == preset["rate_hz"]
        assert options.mount is None  # a preset's field is about nothing until a scenario mounts it


@pytest.mark.parametrize("preset, field, reach", [("laser_scanner", 270.0, math.inf), ("safety_camera", 68.0, 4.0)])
def test_a_mounted_preset_takes_its_devices_field_of_view_and_range(preset, field, reach):
    mount = "{position: [1.3, 1.25, 0.3], yaw_deg: 90}"
    options = load_scenario("coexistence", [f"safety.sensor={{preset: {preset}, mount: {mount}}}"]).safety.sensor
    assert (options.mount.field_of_view_deg, options.mount.range_m) == (field, reach)
    given = load_scenario("coexistence", [f"safety.sensor={{preset: {preset}, mount: {mount}, range_m: 9.0}}"])
    assert given.safety.sensor.mount.range_m == 9.0  # the scenario's figure over the preset's


# --- in a run ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Sample:
    t: float
    separation_m: float  # the truth, the test's own query
    speed_m_s: float     # the robot's fastest point
    person_y: float
    cap: float


def _separation(sim: Simulation) -> float:
    sim.plugin.preview(sim.now() - sim.dt, sim.dt)
    points = p.getClosestPoints(sim.plugin.body_id, sim.robot.body_id, 10.0, physicsClientId=sim.client)
    return min(point[8] for point in points)


def _run(overrides: list[str], seconds: float, seed: int = 1) -> tuple[list[Sample], dict, list, Simulation]:
    scenario = load_scenario("coexistence", overrides)
    with Simulation(scenario, seed=seed) as sim:
        samples = []
        for _ in range(int(seconds / sim.dt)):
            sim.step()
            samples.append(Sample(sim.now(), _separation(sim), sim.robot.fastest_point_speed(), sim.plugin.pose.y,
                                  sim.robot.safety_cap))
        return samples, sim.stats.as_dict(), list(sim.events.events), sim


def _arrived(samples: list[Sample], events: list) -> int:
    """The first sample once the person's walk has ended (its ``person_action_finished``: by the
    table, facing the robot)."""
    end = next(e["t"] for e in events if e["event"] == "person_action_finished" and e.get("animation") == "walk")
    return next(k for k, s in enumerate(samples) if s.t >= end - 1e-9)


@pytest.mark.parametrize("tree, seconds", [(WALK_16, 4.0), (WALK_20, 3.5)], ids=["1.6 m/s", "2.0 m/s"])
@pytest.mark.parametrize("preset", ["laser_scanner", "safety_camera"])
def test_a_person_walking_at_the_working_robot_finds_it_at_rest(tree, seconds, preset):
    samples, stats, events, sim = _run(_walk_at_robot(tree, f"{{preset: {preset}}}"), seconds)
    rest = sim.scenario.safety.rest_speed_m_s
    assert max(s.speed_m_s for s in samples) > 0.5  # the robot was working at speed
    arrived = _arrived(samples, events)  # the walk's end, by the table
    assert all(s.speed_m_s < rest for s in samples[arrived:])  # at rest when the person arrives, and since
    rested = arrived
    while rested > 0 and samples[rested - 1].speed_m_s < rest:
        rested -= 1
    assert samples[rested].separation_m >= INTRUSION_M  # the separation when it came to rest: C at least
    assert min(s.separation_m for s in samples if s.speed_m_s >= rest) >= INTRUSION_M  # moving: never within C
    assert stats["safety_violations"] == 0
    assert stats["ssm_margin_min_m"] >= -1e-4


def _first_slowing(samples: list[Sample]) -> Sample:
    """The first sample with the cap below 1 after the first at 1 (before the first report the
    robot waits at cap 0)."""
    running = next(k for k, s in enumerate(samples) if s.cap == 1.0)
    return next(s for s in samples[running:] if s.cap < 1.0)


def test_the_robot_s_travel_since_a_report_is_measured_so_it_slows_later_and_safely(monkeypatch):
    """S_r over the report's age is the robot's measured travel since the report, not v_r times
    it: the robot walked at keeps full speed until the person is a third of a metre nearer than
    with v_r over the whole T_r (2.14 m against 2.50 m), and is at rest in time all the same."""
    walk = _walk_at_robot(WALK_16, "{preset: laser_scanner}")
    samples, stats, _, _ = _run(walk, 4.0)
    bound_settings = ssm_control.ssm_settings
    monkeypatch.setattr(ssm_control, "ssm_settings",
                        lambda *args: replace(bound_settings(*args), robot_measured_s=0.0))
    monkeypatch.setattr(ssm_control.SeparationRoom, "since_report", lambda self, reported_m: reported_m)
    bounded, bounded_stats, _, _ = _run(walk, 4.0)
    assert _first_slowing(samples).separation_m < _first_slowing(bounded).separation_m - 0.25
    assert stats["safety_violations"] == bounded_stats["safety_violations"] == 0
    assert stats["ssm_margin_min_m"] >= -1e-4


def _lost_stop(event: dict) -> bool:
    """A protective stop for a lost sensor update: SSM's, or ssm+pfl's."""
    return (event["event"] == "ssm_stop" and event.get("sensor_lost", False)
            or event["event"] == "pfl_stop" and event["reason"] == "sensor_lost")


@pytest.mark.parametrize("mode", ["ssm", "ssm+pfl"])
def test_a_lost_update_during_the_approach_is_a_protective_stop_within_a_period_and_t_r(mode):
    sensor = "{preset: laser_scanner, dropout_probability: 0.05}"
    samples, stats, events, sim = _run(_in_mode(mode, _walk_at_robot(WALK_16, sensor)), 4.0, seed=2)
    period = sim.sensor.period_steps * sim.dt
    reaction = sim.ssm.terms.settings.reaction_time_s
    lost = [(e["t"], e["measured_t"]) for e in events if e["event"] == "sensor_dropout"]
    assert len(lost) >= 2
    caps = {round(s.t - sim.dt, 6): s.cap for s in samples}  # the cap set at the step from t
    for t, measured in lost:
        assert t - measured <= period + reaction + 1e-9
        assert caps[round(t, 6)] == 0.0
    assert any(_lost_stop(e) for e in events)
    assert stats["safety_violations"] == stats["pfl_contacts"] == 0


def test_zones_mode_stops_the_robot_while_an_update_is_lost():
    sensor = "{preset: laser_scanner, dropout_probability: 0.05}"
    scenario = load_scenario("collaboration", [f"safety.sensor={sensor}"])
    with Simulation(scenario, seed=3) as sim:
        for _ in range(int(3.0 / sim.dt)):
            sim.step()
            assert (sim.robot.safety_cap == 0.0) == (sim.sensor.current is None)
        names = [e["event"] for e in sim.events.events]
    assert "sensor_dropout" in names and "sensor_stop" in names and "sensor_resume" in names


def test_a_seeded_run_with_a_sensor_reruns_bit_for_bit():
    overrides = ["safety.mode=ssm", "safety.sensor={preset: laser_scanner, dropout_probability: 0.02}"]
    first, second = (_run(overrides, 2.0, seed=5) for _ in range(2))
    assert first[0] == second[0] and first[2] == second[2]


# --- ssm+pfl on the sensor's reports ---------------------------------------------------------



@pytest.mark.parametrize("tree, seconds", [(WALK_16, 4.0), (WALK_20, 3.5)], ids=["1.6 m/s", "2.0 m/s"])
def test_in_ssm_pfl_the_sensor_s_reports_end_full_speed_farther_than_the_ideal_sensor(tree, seconds):
    """ssm+pfl leaves full speed where S_p at full speed no longer fits the sensor's report
    (its T_r and Z_d, the robot's travel since the report, room for the next one): farther from
    the person walking at the robot than with the ideal sensor, and no contact either way."""
    ideal, ideal_stats, _, _ = _run(_in_mode("ssm+pfl", _walk_at_robot(tree, "null")), seconds)
    sensed, sensed_stats, _, _ = _run(_in_mode("ssm+pfl", _walk_at_robot(tree, "{preset: laser_scanner}")), seconds)
    assert _first_slowing(sensed).separation_m > _first_slowing(ideal).separation_m + 0.2
    for stats in (ideal_stats, sensed_stats):
        assert stats["safety_violations"] == stats["pfl_contacts"] == 0


def test_in_ssm_pfl_full_speed_acts_on_the_report_less_the_robot_s_travel_since_it(monkeypatch):
    reports = []
    since_report = ssm_control.SeparationRoom.since_report

    def spy(room, reported_m):
        reports.append((reported_m, since_report(room, reported_m)))
        return reports[-1][1]

    monkeypatch.setattr(ssm_control.SeparationRoom, "since_report", spy)
    _run(_in_mode("ssm+pfl", _walk_at_robot(WALK_16, "{preset: laser_scanner}")), 2.0)
    assert len(reports) > 200
    assert all(bound <= reported for reported, bound in reports)
    assert sum(bound < reported - 0.01 for reported, bound in reports) > 50  # the robot moved since


def test_the_measured_person_speed_with_a_sensor_never_falls_below_iso_13855s():
    sensor = SafetySensor(SensorOptions(25.0, 0.0, 0.0, 0.0), DT, np.random.default_rng(0), robot_xy=(0.0, 0.0))
    settings = ssm_settings(SsmOptions(person_speed_m_s="measured"), DT, sensor)
    assert sensed_person_speed(settings, sensor.approach_m_s, 2.0) == 1.6  # no reports yet: the floor
    assert sensed_person_speed(settings, sensor.approach_m_s, 0.3) == 2.0  # close in: ISO 13855's 2.0 m/s
    for step in range(1, 100):
        if sensor.due(step):
            sensor.measure(step, [1.0], [(5.0 - 2.4 * step * DT, 0.0)])  # seen coming at 2.4 m/s
        sensor.deliver(step)
    assert sensed_person_speed(settings, sensor.approach_m_s, 2.0) == pytest.approx(2.4)


def test_a_measured_person_speed_with_a_sensor_stops_the_robot_in_time_and_is_judged_by_iso_13855s():
    """The controller's measured v_h (sensed, floored) against the monitor's check with ISO
    13855's: the person walking at the robot at 2.0 m/s finds it at rest, no violation."""
    overrides = [*_walk_at_robot(WALK_20, "{preset: laser_scanner}"), "safety.ssm.person_speed_m_s=measured"]
    samples, stats, events, sim = _run(overrides, 3.5)
    rest = sim.scenario.safety.rest_speed_m_s
    arrived = _arrived(samples, events)
    assert all(s.speed_m_s < rest for s in samples[arrived:])
    assert min(s.separation_m for s in samples if s.speed_m_s >= rest) >= INTRUSION_M
    assert sim.ssm.terms.person_m_s() >= 1.6
    assert stats["safety_violations"] == 0


def test_without_a_sensor_the_measured_person_speed_is_the_ideal_sensors_walk_towards_the_robot():
    """The person walking at the robot at 2.0 m/s: the ideal sensor's filtered speed sees 2.0
    m/s on the way (not the actor's bound of every body point), v_h never below 1.6, no
    violation."""
    overrides = [item for item in _walk_at_robot(WALK_20, "x") if not item.startswith("safety.sensor")]
    scenario = load_scenario("coexistence", [*overrides, "safety.ssm.person_speed_m_s=measured"])
    with Simulation(scenario, seed=1) as sim:
        seen = []
        for _ in range(int(3.0 / sim.dt)):
            sim.step()
            seen.append(sim.ssm.terms.person_m_s())
        stats = sim.stats.as_dict()
    assert min(seen) >= 1.6
    assert max(seen) == pytest.approx(2.0, abs=0.2)  # the pelvis speeds up and slows down within a stride
    assert stats["safety_violations"] == 0



# --- a mounted sensor: field of view, range and occlusion ----------------------------------

def _box(client: int, center: tuple[float, float, float], half: tuple[float, float, float]) -> int:
    shape = p.createCollisionShape(p.GEOM_BOX, halfExtents=half, physicsClientId=client)
    return p.createMultiBody(0.0, shape, -1, center, physicsClientId=client)


def test_a_mounted_sensor_sees_a_body_in_its_field_and_in_plain_sight_only():
    client = p.connect(p.DIRECT)
    try:
        person = _box(client, (3.0, 0.0, 0.5), (0.1, 0.2, 0.5))
        ahead = SensorView(client, SensorMount(0.0, 0.0, 0.3, 0.0, 270.0))
        assert ahead.sees(person)
        assert not SensorView(client, SensorMount(0.0, 0.0, 0.3, math.pi, 270.0)).sees(person)  # behind it
        assert SensorView(client, SensorMount(0.0, 0.0, 0.3, math.pi, 360.0)).sees(person)  # all round
        assert not SensorView(client, SensorMount(0.0, 0.0, 0.3, 0.0, 270.0, range_m=2.5)).sees(person)
        wall = _box(client, (1.5, 0.0, 0.5), (0.05, 1.0, 1.0))  # furniture, the robot or another person
        assert not ahead.sees(person)
        p.resetBasePositionAndOrientation(wall, (1.5, 0.0, -2.0), (0, 0, 0, 1), physicsClientId=client)
        assert ahead.sees(person)
    finally:
        p.disconnect(client)


@pytest.mark.parametrize("looks, seen", [(90, True), (-90, False)], ids=["towards the person", "away"])
def test_ssm_acts_on_the_people_a_mounted_sensor_sees_and_the_monitor_on_the_truth(looks, seen):
    """The laser scanner on the robot's table at its front edge: looking into the room it sees
    the person coming and the robot is at rest when they arrive; looking at the wall behind the
    robot it sees nobody, the robot keeps working at speed, and the monitor's truth shows the
    separation falling below S_p (a negative SSM margin)."""
    sensor = f"{{preset: laser_scanner, mount: {{position: [1.3, 1.25, 0.3], yaw_deg: {looks}}}}}"
    samples, stats, events, sim = _run(_walk_at_robot(WALK_16, sensor), 4.0)
    rest = sim.scenario.safety.rest_speed_m_s
    arrived = _arrived(samples, events)
    at_rest = all(s.speed_m_s < rest for s in samples[arrived:])
    assert at_rest == seen
    assert (stats["ssm_margin_min_m"] >= -1e-4) == seen


def test_of_several_people_the_robot_s_tree_is_told_of_the_nearest_the_sensor_reports(monkeypatch):
    """With a safety sensor, of the people in the strictest zone the robot's tree is told of the
    one whose reported pelvis is nearest the robot's base: not of the one whose true separation
    is smallest, which the sensor does not report."""
    from hri.base.geometry import Pose

    scenario = load_scenario("two_workers", ["safety.sensor={preset: laser_scanner}"])
    base = scenario.robot.base
    with Simulation(scenario, seed=1) as sim:
        sim.run(1.0)
        near, far = sim.people
        # the sensor puts `near` 1.5 m from the base and `far` 2.5 m, both in the warning zone...
        reported = {0: Pose(base.x + 1.5, base.y, 0.0), 1: Pose(base.x + 2.5, base.y, 0.0)}
        monkeypatch.setattr(sim, "_published", lambda index, pose: (reported[index], "warning"))
        # ... while the truth has `far` nearer the robot (an arm stretched out, say)
        near.monitor.last_separation, far.monitor.last_separation = 1.2, 0.4
        told = []
        monkeypatch.setattr(sim.services, "publish", lambda pose, zone, cap, name=None: told.append(name))
        sim._tick_trees()
        assert told == [near.name]
