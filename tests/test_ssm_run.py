"""Speed and separation monitoring in a run (``safety.mode: ssm``): the controller below the
trees keeps S_p, the monitor checks it and can fail, a preset runs without violations."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pybullet as p
import pytest

from hri.robot.scene import pose_tool_body
from hri.robot.stopping import PointTracker
from hri.run.sim import Simulation
from hri.run.ssm_control import SsmController
from hri.scenario.load import load_scenario

WALK = Path(__file__).parent / "data" / "ssm" / "walk_at_robot.xml"
INTRUSION_M = 0.1  # C: a separation the robot must keep at rest, so the test can see it
# the person walks straight at the robot (down the room along x = 1.3) and the zones are
# shrunk into the room's corner, out of the walk: the robot's tree never slows or halts it,
# SSM alone does
WALK_AT_ROBOT = ["safety.mode=ssm", f"trees.person={WALK}",
                 "person.start={position: [1.3, 5.6, 0.0], yaw_deg: -90}",
                 f"safety.ssm.intrusion_distance_m={INTRUSION_M}",
                 "zones.warning=[[7.6, 5.6], [8.0, 5.6], [8.0, 6.0], [7.6, 6.0]]",
                 "zones.stop=[[7.8, 5.8], [8.0, 5.8], [8.0, 6.0], [7.8, 6.0]]"]
WALK_S = 4.0


@dataclass(frozen=True)
class Sample:
    t: float
    separation_m: float  # the monitor's, after the step
    speed_m_s: float     # the robot's fastest point
    person_y: float
    margin_m: float      # the oracle's separation less S_p at the robot's measured joint speeds
    cap: float = 1.0     # the controller's cap after the step (0: a protective stop)
    bound_m: float = 0.0  # the monitor's lower bound of the separation after the step
    held: bool = False   # the controller's decision for the step held full speed without looking
    full_m: float = 0.0  # S_p at full speed with the arm's stop from its state now (the table's off a segment)
    queried: bool = False  # the monitor took a separation query on the step
    robot_share_m: float = 0.0  # the bound's share for the robot: how far its points can be from the query's
    robot_moved_m: float = 0.0  # how far its link frames are from where they were at the last query


def _separation(sim: Simulation) -> float:
    """The test's own oracle, every step: the person posed where it is (a preview changes
    nothing the person does, and the body has no collisions), PyBullet's closest points to the
    arm and to its gripper (put at the tool frame; SSM counts it, coexistence carries no part)."""
    sim.plugin.preview(sim.now() - sim.dt, sim.dt)
    pose_tool_body(sim.client, sim.robot.tool_body, sim.robot.tool_frame())
    return min(point[8] for body in (sim.robot.body_id, sim.robot.tool_body)
               for point in p.getClosestPoints(sim.plugin.body_id, body, 10.0, physicsClientId=sim.client))


def _walk(seconds: float = WALK_S) -> tuple[list[Sample], dict, Simulation]:
    scenario = load_scenario("coexistence", WALK_AT_ROBOT)
    with Simulation(scenario, seed=1) as sim:
        samples = []
        terms, tracker, at_query = sim.ssm.terms, PointTracker(sim.robot), None
        for _ in range(int(seconds / sim.dt)):
            held = sim._full_speed_held(sim.now())
            before, measured_t = tracker.positions(), sim.monitor.measured_t
            sim.step()
            queried = sim.monitor.measured_t == sim.now()
            if queried:
                at_query = tracker.positions()
            elif sim.monitor.measured_t != measured_t:  # the controller's refresh, before the step
                at_query = before
            moved = 0.0 if at_query is None else float(np.linalg.norm(tracker.positions() - at_query, axis=1).max())
            separation = _separation(sim)
            # S_p as the monitor takes it: S_s and T_s from the arm's state where the controller
            # asked them this step
            required = terms.required_m(sim.robot.joint_speeds()[0], stop=terms.latest_stop())
            samples.append(Sample(sim.now(), separation, sim.robot.fastest_point_speed(),
                                  sim.plugin.pose.y, separation - required, sim.robot.safety_cap,
                                  sim.monitor.separation_bound(sim.now()), held,
                                  terms.required_m(1.0, stop=terms.state.line() if terms.state else None),
                                  queried, sim.monitor._robot_moved(), moved))
        return samples, sim.stats.as_dict(), sim


def test_a_person_walking_at_the_working_robot_finds_it_at_rest_and_no_violation():
    samples, stats, sim = _walk()
    rest = sim.scenario.safety.rest_speed_m_s
    assert max(s.speed_m_s for s in samples) > 0.5  # the robot was working at speed
    # S_s from the arm's state lets it work on while the person stands at the table's edge,
    # slower as the person comes nearer, until S_p no longer fits: then it rests
    assert samples[-1].person_y <= 1.76  # the walk ended by the table
    standing = [s for s in samples if s.t >= samples[-1].t - 0.9]  # the person at the table
    assert all(s.speed_m_s < rest for s in standing)
    assert min(s.separation_m for s in standing) >= INTRUSION_M
    moving = [s for s in samples if s.speed_m_s >= rest]
    assert min(s.separation_m for s in moving) >= INTRUSION_M
    # the test's oracle: S_p kept on every step the robot moved outside a protective stop
    assert min(s.margin_m for s in moving if s.cap > 0.0) >= -1e-4
    assert stats["safety_violations"] == 0
    assert sim.ssm.stops >= 1  # counted into the statistics when a run finishes
    assert stats["ssm_margin_min_m"] >= -1e-4


def test_the_monitor_s_separation_bound_never_exceeds_the_separation():
    """The bound the controller acts on (the last query less how far the person can have come
    and how far the robot's points can be from where they were at it) is at most the oracle's
    separation on every step of the walk, up to what the queries themselves differ from the
    oracle (the person's body as its last step posed it, up to a person step ahead, against the
    oracle's body posed for the physics step: about a centimetre)."""
    samples, _stats, _sim = _walk()
    posing = max(s.bound_m - s.separation_m for s in samples if s.queried)
    assert 0.0 <= posing < 0.02
    assert max(s.bound_m - s.separation_m for s in samples) <= posing + 1e-9
    assert sum(s.separation_m - s.bound_m < 0.05 for s in samples if not s.queried) > 20  # and tight at times
    # the robot's share covers how far its points went since the query, and matters
    assert min(s.robot_share_m - s.robot_moved_m for s in samples) >= -1e-6  # PyBullet rounds the frames
    assert max(s.robot_moved_m for s in samples) > 0.05


def test_full_speed_held_without_looking_keeps_s_p_at_full_speed():
    """Where the controller held full speed without looking (a window after a decision with
    room to spare), the oracle's separation after the step keeps S_p at full speed, with the
    arm's straight segment's stop then (the lag then included) or the table's; coexistence
    holds it on most steps."""
    scenario = load_scenario("coexistence", ["safety.mode=ssm"])
    with Simulation(scenario, seed=1) as sim:
        terms, held, spare = sim.ssm.terms, 0, []
        for _ in range(int(20.0 / sim.dt)):
            was_held = sim._full_speed_held(sim.now())
            sim.step()
            if was_held:
                line = terms.state.line()
                full = min(terms.required_m(1.0), math.inf if line is None else terms.required_m(1.0, stop=line))
                spare.append(_separation(sim) - full)
                held += 1
    assert held > 0.5 * 20.0 / sim.dt
    assert min(spare) >= 0.0


def test_a_window_holds_only_decisions_that_looking_would_make(monkeypatch):
    """The controller driven by a separation that falls as fast as the bound may (the window's
    decay rate), from 8 m down to 3 m and again, the robot at work: every decision a window held is
    one the controller, looking, would also have made at full speed (S_p at full speed fits by
    the table, or by the arm's segment's stop or its quick bound then); and windows hold many."""
    scenario = load_scenario("coexistence", ["safety.mode=ssm"])
    with Simulation(scenario, seed=1) as sim:
        window, terms, dt = sim.ssm_window, sim.ssm.terms, sim.dt
        tooth_s = 5.0 / window.decay_m_s

        def falling(t: float, reported: float | None) -> float:
            return 8.0 - window.decay_m_s * ((t - 2.0) % tooth_s)

        monkeypatch.setattr(sim, "_controller_separation", falling)
        sim.run(2.0)
        held, short = 0, []
        for _ in range(int(10.0 / dt)):
            t = sim.now()
            if sim._full_speed_held(t):
                held += 1
                v_h = terms.person_m_s()
                room = falling(t, None) - (v_h + sim.ssm.room._robot_top_m_s) * dt
                stops = [terms.state.line(), terms.state.quick()]
                full = min([terms.required_m(1.0, v_h)] + [terms.required_m(1.0, v_h, stop) for stop in stops if stop])
                short.append(room - full)
            sim.step()
    assert min(short) >= 0.0
    assert held > 1000


def test_the_monitor_counts_a_violation_when_the_robot_ignores_s_p(monkeypatch):
    """The check can fail: a controller that never caps the speed."""
    def never_cap(self: SsmController, t: float, separation_m: float, joint_fraction: float) -> None:
        self.robot.set_safety_cap(1.0)

    monkeypatch.setattr(SsmController, "step", never_cap)
    samples, stats, sim = _walk(2.5)
    # the test's oracle: every step's separation against S_p at the measured speed while the
    # robot moves; every violation is measured, so the figures agree exactly
    rest = sim.scenario.safety.rest_speed_m_s
    moving = [s for s in samples if s.speed_m_s > rest]
    short = [s for s in moving if s.margin_m < -1e-4]
    assert len(short) > 100
    assert stats["safety_violations"] == len(short)
    assert stats["ssm_margin_min_m"] == pytest.approx(min(s.margin_m for s in moving), abs=1e-6)


def test_zone_mode_leaves_the_ssm_figures_empty():
    scenario = load_scenario("coexistence")
    with Simulation(scenario, seed=1) as sim:
        assert sim.ssm is None and sim.robot.safety_cap == 1.0
        sim.run(0.5)
        stats = sim.stats.as_dict()
    assert stats["ssm_margin_min_m"] is None and stats["ssm_stops"] == 0


def test_the_controller_stops_only_on_a_separation_measured_at_the_step():
    """With the ideal sensor a protective stop is decided on the separation measured at the
    step it begins, never on a bound that only grew stale since the last measurement (such
    stops were released on the next step: 943 of 1175 in 600 s of collaboration)."""
    scenario = load_scenario("collaboration", ["safety.mode=ssm"])
    with Simulation(scenario, seed=0) as sim:
        stops = []
        follow = sim.ssm._follow

        def spy(t: float, stop: bool, lost: bool = False) -> None:
            if stop and not sim.ssm.stopped:
                stops.append((sim.monitor.measured_t == sim.monitor.now, sim.ssm.separation_m,
                              sim.monitor.separation_bound(t + sim.dt)))
            follow(t, stop, lost)

        sim.ssm._follow = spy
        stats = sim.run(60.0)
    assert len(stops) >= 3
    assert all(fresh and acted == bound for fresh, acted, bound in stops)
    assert stats["safety_violations"] == 0


@pytest.mark.slow
@pytest.mark.parametrize("preset", ["coexistence", "cooperation", "collaboration"])
def test_a_preset_in_ssm_mode_runs_a_minute_without_violations(preset):
    scenario = load_scenario(preset, ["safety.mode=ssm"])
    with Simulation(scenario, seed=1) as sim:
        stats = sim.run(60.0)
    assert stats["safety_violations"] == 0
    assert stats["robot_cycles"] > 0
    assert stats["ssm_margin_min_m"] >= -1e-4


def test_the_robot_tree_sees_the_cap_and_skips_the_zones_in_ssm_mode():
    """The safety channel carries the controller's cap to the robot's blackboard, and the
    presets' zone subtree stands aside: the controller alone slows the robot."""
    scenario = load_scenario("coexistence", WALK_AT_ROBOT)
    caps = set()
    with Simulation(scenario, seed=1) as sim:
        blackboard = sim.trees["robot"].blackboard
        for _ in range(int(WALK_S / sim.dt)):
            sim.step()
            caps.add(blackboard.get("ssm_speed_cap") if blackboard.has("ssm_speed_cap") else None)
        stats = sim.stats.as_dict()
    assert 0.0 in caps and any(cap is not None and 0.0 < cap < 1.0 for cap in caps)
    assert stats["speed_band_time_s"]["0"] > 0.0
    assert sum(stats["speed_band_time_s"].values()) == pytest.approx(WALK_S)
    assert stats["robot_time_s"]["stopped"] == pytest.approx(stats["speed_band_time_s"]["0"])


def test_zone_mode_stats_band_the_trees_speed():
    scenario = load_scenario("coexistence")
    with Simulation(scenario, seed=1) as sim:
        sim.run(2.0)
        stats = sim.stats.as_dict()
    assert stats["speed_band_time_s"]["100%"] == pytest.approx(2.0)
    assert stats["robot_cycles_per_hour"] == stats["robot_cycles"] * 1800.0


@pytest.mark.parametrize("rate_hz", [240.0, 100.0])
def test_the_reaction_time_is_one_physics_step_of_the_scenario_unless_set(rate_hz):
    """The controller acts once a physics step: T_r by default is that step, at any rate."""
    scenario = load_scenario("coexistence", ["safety.mode=ssm", f"simulation.physics_rate_hz={rate_hz}"])
    with Simulation(scenario, seed=1) as sim:
        assert sim.ssm.terms.settings.reaction_time_s == 1.0 / rate_hz
    scenario = load_scenario("coexistence", ["safety.mode=ssm", "safety.ssm.reaction_time_s=0.05"])
    with Simulation(scenario, seed=1) as sim:
        assert sim.ssm.terms.settings.reaction_time_s == 0.05
