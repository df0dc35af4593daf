"""Power and force limiting that limits (hri.run.pfl_control, ``safety.mode: pfl`` and
``ssm+pfl``), clamping judged against the quasi-static limits and the contact area per robot
link (hri.run.pfl_contacts): contacts constructed in a real PyBullet world, the LBR iisy and
the humanoid, as in tests/test_pfl_contacts.py (whose geometry these reuse: the person in the
rest pose facing +y, the left elbow 5 mm from the flat end of link5's cylinder, which faces +x;
turning A1 at w < 0 moves the robot's point there along +x at 0.616 |w|).

Mutations these tests catch (each tried by hand):
* the controller's cap left at 1 (``self.robot.set_safety_cap`` not called): the sweep into
  the upper arm hits it at 0.967 m/s, ratio 1.38, in pfl and ssm+pfl mode;
* a pair's contact area ignored (every link 1 cm^2): the sweep without the limiter is judged
  within limits (0.967 against 1.1055 m/s);
* ``PflContact.violation`` above a ratio of 1.02 instead of 1: the contact at 1.01 times the
  permissible speed passes;
* the clamping test's direction reversed (the fixed body on the robot's side): the hand on the
  table is judged transient;
* quasi-static speeds with the transient reduced mass (m_H kept): 0.6745 m/s, not 0.1391;
* pfl's S_p chain without its break (every pair within the query binds): the head's 0 stops
  the robot before it reaches the upper arm;
* the run's mode not dispatched to the PFL controller (SSM's in its place): the run tests fail;
* ssm+pfl's SSM fraction from the table alone (S_s of the worst state at full speed): the arm
  at rest with the person 2.5 m away is capped below 1.
"""

from __future__ import annotations

import math
from pathlib import Path

import pybullet as p
import pytest

from hri.run import pfl
from hri.run.monitor import SafetyMonitor
from hri.run.pfl_contacts import PflSetup
from hri.run.pfl_control import PflController
from hri.run.ssm_control import CAP_STEP, SsmTerms
from hri.run.stats import EventLog, RunStats
from hri.run.sim import Simulation
from hri.scenario.load import load_scenario
from hri.scenario.model import SsmOptions
from test_pfl_contacts import A1, DT, ELBOW_AT, LIMITS, ZONES, _turn_a1, new_world

M_R = 27.001 / 2
TOUCH = Path(__file__).parent / "data" / "pfl" / "touch.yaml"
#: link5's contact area 0.5 cm^2 (a sharper edge than the default 1 cm^2): the upper arm's
#: permissible speed is then the humerus's pressure, 2 x 190 N/cm^2 x 0.5 cm^2 = 190 N,
#: 190 / 271.361 = 0.7002 m/s (tests/test_pfl_contacts.py has sqrt(mu K) = 271.361 N s/m)
SHARP = PflSetup(M_R, 0.01, 0.002, 1.0, (("link5", 0.5),))
PLAIN = PflSetup(M_R, 0.01, 0.002)


@pytest.fixture
def world():
    yield from new_world()  # each test its own: some move the robot


def _monitor(world, setup: PflSetup, terms: SsmTerms | None = None) -> SafetyMonitor:
    client, robot, person, _rest = world
    monitor = SafetyMonitor(client, ZONES, robot, person.body_id, LIMITS, RunStats("test", 0), EventLog(), DT,
                            ssm=terms, pfl=setup, ssm_invariant=False)
    monitor.pose_person = lambda: None  # the person stands still, posed once
    return monitor


def _contacts(monitor: SafetyMonitor) -> list[dict]:
    return [e for e in monitor.events.events if e["event"] == "pfl_contact"]


def _sweep(world, mode: str | None, seconds: float = 4.0) -> tuple[SafetyMonitor, PflController | None]:
    """The person 0.1 m farther along +x than ELBOW_AT; the robot turns A1 by -1 rad at full
    speed (a planned motion under the safety cap, as in a run), through the upper arm;
    ``mode``: the limiter's, None without one."""
    _client, robot, person, rest = world
    x, y = ELBOW_AT[0] + 0.1, ELBOW_AT[1]
    person.apply(rest, x, y, math.pi / 2)
    terms, _truth = SsmTerms.for_run(SsmOptions(), robot, DT, lambda: 0.0)
    monitor = _monitor(world, SHARP, terms)
    controller = None if mode is None else PflController(mode, robot, terms, [monitor], DT, monitor.events.emit)
    goal = robot.home.copy()
    goal[A1] -= 1.0
    robot.move_to_joints(goal)
    for k in range(int(seconds / DT)):
        t = k * DT
        if controller is not None:
            controller.step(t, monitor.separation_bound(t + DT), monitor.joint_fraction)
        robot.step(DT)
        p.stepSimulation(physicsClientId=robot.client)
        monitor.step(t + DT, x, y)
    monitor.pfl.finish(seconds)
    return monitor, controller


def test_without_the_limiter_the_sweep_hits_the_upper_arm_too_fast(world):
    monitor, _ = _sweep(world, None, seconds=1.0)
    [event] = _contacts(monitor)
    assert (event["person_link"], event["robot_link"], event["region"]) == (
        "left_shoulder", "link5", "upper_arms_and_elbow_joints")
    assert event["permissible_m_s"] == pytest.approx(0.7002, abs=1e-4)
    assert event["speed_m_s"] == pytest.approx(0.967, abs=2e-3) and event["violation"] is True


@pytest.mark.parametrize("mode", ["pfl", "ssm+pfl"])
def test_the_limiter_holds_the_sweep_to_the_permissible_speed_and_stops_at_contact(world, mode):
    """The cap is the permissible fraction of the limiting pair (here the chest's, the lowest
    near link5 with its 0.5 cm^2: 2 x 120 N/cm^2 x 0.5 cm^2 = 120 N; m_H = 40 kg, K = 25 N/mm,
    mu = 1 / (1/40 + 1/13.5005) = 10.0937 kg, sqrt(mu K) = 502.34 N s/m: 120 / 502.34 =
    0.2389 m/s, over v_r at full speed), rounded down to CAP_STEP;
    the sweep reaches the upper arm at that speed, judged within limits, and the robot stops
    at the contact."""
    monitor, controller = _sweep(world, mode)
    chest = pfl.permissible_speed(pfl.body_regions()["chest"], M_R, 0.5)
    assert chest == pytest.approx(0.2389, abs=1e-4)
    top = controller.terms.stopping.speed(1.0)
    limits = [e for e in monitor.events.events if e["event"] == "pfl_limit"]
    assert limits[0]["cap"] == pytest.approx(math.floor(chest / top / CAP_STEP) * CAP_STEP) == 0.02
    [event] = _contacts(monitor)
    assert event["person_link"] == "left_shoulder" and event["violation"] is False
    assert 0.0 < event["speed_m_s"] <= 0.02 * top
    stops = [e for e in monitor.events.events if e["event"] == "pfl_stop"]
    assert [(e["reason"], e["person_link"]) for e in stops] == [("contact", "left_shoulder")]
    assert controller.robot.safety_cap == 0.0 and controller.stops == 1


def test_ssm_pfl_runs_at_full_speed_while_the_person_is_beyond_s_p(world):
    client, robot, person, rest = world
    person.apply(rest, 6.0, 5.0, math.pi / 2)
    terms, _truth = SsmTerms.for_run(SsmOptions(), robot, DT, lambda: 0.0)
    monitor = _monitor(world, PLAIN, terms)
    monitor.step(DT, 6.0, 5.0)
    controller = PflController("ssm+pfl", robot, terms, [monitor], DT, monitor.events.emit)
    controller.step(DT, monitor.separation_bound(2 * DT), lambda: 0.0)
    assert robot.safety_cap == 1.0
    pfl_only = PflController("pfl", robot, terms, [monitor], DT, monitor.events.emit)
    pfl_only.step(DT, monitor.separation_bound(2 * DT), lambda: 0.0)  # PFL alone: the nearest region's speed
    assert 0.0 < robot.safety_cap < 0.2


def test_ssm_pfl_takes_the_stopping_distance_from_the_arm_s_state_as_ssm_does(world):
    """The arm at rest, the person 2.5 m away: S_p at full speed by the table (S_s of the worst
    state at full speed) does not fit, by the arm's state it does: the cap is 1, as SSM's own
    controller sets it."""
    client, robot, person, rest = world
    x, y = ELBOW_AT[0] + 2.5, ELBOW_AT[1]
    person.apply(rest, x, y, math.pi / 2)
    terms, _truth = SsmTerms.for_run(SsmOptions(), robot, DT, lambda: 0.0)
    monitor = _monitor(world, PLAIN, terms)
    monitor.step(DT, x, y)
    separation = monitor.separation_bound(2 * DT)
    assert 2.0 < separation < terms.table.full(terms.person_m_s())
    controller = PflController("ssm+pfl", robot, terms, [monitor], DT, monitor.events.emit)
    controller.step(DT, separation, lambda: 0.0)
    assert robot.safety_cap == 1.0


@pytest.mark.parametrize("share,violation", [(0.99, False), (1.01, True)])
def test_a_contact_at_the_permissible_speed_passes_and_one_above_it_fails(world, share, violation):
    """The upper arm against link5 with 0.5 cm^2: permissible 0.7002 m/s; A1 turned so that
    the robot's point moves at 0.99 and 1.01 times that (0.616 m from A1)."""
    _client, robot, person, rest = world
    _turn_a1(robot, -share * 0.700174 / 0.616)
    monitor = _monitor(world, SHARP)
    for k in range(2):
        person.apply(rest, *ELBOW_AT, math.pi / 2)
        monitor.step((k + 1) * DT, *ELBOW_AT)
    monitor.pfl.finish(3 * DT)
    [event] = _contacts(monitor)
    assert event["ratio"] == pytest.approx(share, abs=2e-3) and event["violation"] is violation
    assert event["contact"] == "transient" and event["clamped_by"] is None


def test_quasi_static_permissible_speed_against_a_hand_calculation():
    """Hands and fingers, quasi-static (Table A.2: F_s = 140 N, smallest p_s 190 N/cm^2, on
    1 cm^2 190 N; Table A.3: K = 75 N/mm), clamped: mu = m_R = 13.5005 kg:
      sqrt(m_R K) = sqrt(13.5005 x 75 000) = 1006.25 N s/m;  v = 140 / 1006.25 = 0.1391 m/s
    against transient 1.3489 m/s (the reduced mass with m_H = 0.6 kg, twice the limits)."""
    hands = pfl.body_regions()["hands_and_fingers"]
    assert pfl.permissible_speed(hands, M_R, kind=pfl.QUASI_STATIC) == pytest.approx(0.1391, abs=1e-4)
    assert pfl.permissible_speed(hands, M_R) == pytest.approx(1.3489, abs=1e-4)
    face = pfl.body_regions()["face"]  # no transient contact, but a quasi-static limit: 65 N
    assert pfl.permissible_speed(face, M_R) == 0.0
    assert pfl.permissible_speed(face, M_R, kind=pfl.QUASI_STATIC) == pytest.approx(
        65 / math.sqrt(M_R * 75_000), rel=1e-9)


def _press_on_hand(world, table: bool) -> SafetyMonitor:
    """The robot laid on its side (turned 90 degrees about y) so that link5's flat end faces
    down, 5 mm above the top of the person's left hand (the wrist link's sphere, radius 4 cm),
    A1 turning so the end moves down at 0.616 x 0.2 = 0.123 m/s; with ``table`` a table top
    (a fixed box) 5 mm below the hand: the hand is clamped between the robot and the table."""
    client, robot, person, rest = world
    x, y = 3.0, 3.0
    person.apply(rest, x, y, math.pi / 2)
    wrist = p.getLinkState(person.body_id, 14, physicsClientId=client)[0]
    face = (1.365, 1.066, 1.132327)  # link5's end-face point of the elbow geometry, upright
    top = (wrist[0], wrist[1], wrist[2] + 0.04 + 0.005)
    turn = (0.0, math.sin(math.pi / 4), 0.0, math.cos(math.pi / 4))  # 90 degrees about y: +x becomes -z
    position, orientation = p.getBasePositionAndOrientation(robot.body_id, physicsClientId=client)
    lever = p.multiplyTransforms((0, 0, 0), turn, [a - b for a, b in zip(position, face)], (0, 0, 0, 1))[0]
    p.resetBasePositionAndOrientation(robot.body_id, [a + b for a, b in zip(top, lever)],
                                      p.multiplyTransforms((0, 0, 0), turn, (0, 0, 0), orientation)[1],
                                      physicsClientId=client)
    monitor = _monitor(world, PLAIN)
    if table:
        half = (0.15, 0.15, 0.05)
        shape = p.createCollisionShape(p.GEOM_BOX, halfExtents=half, physicsClientId=client)
        box = p.createMultiBody(0, shape, basePosition=(wrist[0], wrist[1], wrist[2] - 0.04 - 0.005 - half[2]),
                                physicsClientId=client)
        monitor.pfl.fixed = {box: "table"}
    _turn_a1(robot, -0.2)
    for k in range(2):
        person.apply(rest, x, y, math.pi / 2)
        monitor.step((k + 1) * DT, x, y)
    monitor.pfl.finish(3 * DT)
    return monitor


def test_a_hand_pressed_onto_a_table_is_judged_quasi_static(world):
    """0.123 m/s on the hand clamped against the table: judged against the quasi-static
    0.1391 m/s, ratio 0.886 (transient it would be 0.123 / 1.3489 = 0.091)."""
    monitor = _press_on_hand(world, table=True)
    [event] = _contacts(monitor)
    assert (event["person_link"], event["robot_link"], event["region"]) == ("left_wrist", "link5", "hands_and_fingers")
    assert (event["contact"], event["clamped_by"]) == ("quasi-static", "table")
    assert event["speed_m_s"] == pytest.approx(0.1232, abs=1e-3)
    assert event["permissible_m_s"] == pytest.approx(0.1391, abs=1e-4)
    assert event["ratio"] == pytest.approx(0.1232 / 0.1391, abs=1e-2) and event["violation"] is False


def test_the_same_press_without_the_table_is_transient(world):
    monitor = _press_on_hand(world, table=False)
    [event] = _contacts(monitor)
    assert (event["contact"], event["clamped_by"]) == ("transient", None)
    assert event["permissible_m_s"] == pytest.approx(1.3489, abs=1e-4)


@pytest.mark.parametrize("mode", ["pfl", "ssm+pfl"])
def test_a_run_in_a_pfl_mode_limits_the_robot_near_the_person(mode):
    """tests/data/pfl/touch.yaml: the visitor stands at the robot's table, the worker far away;
    the zones lie in a far corner. The robot's zone subtree stands aside and the controller
    holds the robot at a permissible fraction (at most the hands', 0.12) from its first steps,
    judging every pair of both people."""
    scenario = load_scenario(str(TOUCH), [f"safety.mode={mode}"])
    with Simulation(scenario, 1) as sim:
        assert isinstance(sim.ssm, PflController) and len(sim.ssm.monitors) == 2
        sim.run(1.0)
        assert 0.0 <= sim.robot.safety_cap <= 0.12
        events = sim.events.events
    limits = [e for e in events if e["event"] == "pfl_limit"]
    if mode == "pfl":
        [limit] = limits
        assert limit["t"] <= 2 * DT and limit["cap"] <= 0.12
    else:  # the arm starts from rest uncapped (S_s from its state is then close to 0, as in SSM)
        assert limits and limits[0]["t"] <= 10 * DT  # and is graded down as its stopping distance grows
    assert not [e for e in events if e["event"] == "ssm_stop"]


@pytest.mark.parametrize("mode", ["pfl", "ssm+pfl"])
def test_in_a_pfl_mode_the_robot_touching_the_person_is_judged_by_pfl_not_a_violation(mode):
    """touch.yaml for 12 s: the visitor's hand reaches into the robot while it brakes at the
    contact; the PFL modes allow a contact at the permissible speed, so power and force
    limiting judges it (pfl_contact events) and the safety monitor counts no violation
    (mutation: the monitor's interpenetration check as in SSM mode gives violations at 3.2 s)."""
    with Simulation(load_scenario(str(TOUCH), [f"safety.mode={mode}"]), 1) as sim:
        stats = sim.run(12.0)
    assert stats["pfl_contacts"] > 0 and stats["safety_violations"] == 0, stats


@pytest.mark.parametrize("mode", ["pfl", "ssm+pfl"])
def test_a_query_before_the_world_step_never_poses_the_person_back(mode):
    """The controller's queries come after the step's animation has posed the person's body at
    the step's end: they take that pose, and never pose the body a step back, where the
    monitor's checks after the step would find it (as they did, up to 1.4 cm back, on about
    0.4 % of the steps of collaboration)."""
    scenario = load_scenario("collaboration", [f"safety.mode={mode}"])
    with Simulation(scenario, seed=1) as sim:
        last, back, queries = [""], [], []
        animate, pose_person = sim._animate, sim.monitor.pose_person

        def animating(person, t):
            last[0] = animate(person, t)
            return last[0]

        def posing():
            queries.append(sim.monitor.now)
            if last[0] and sim.monitor.now == sim.now():  # before the world step, after a posing
                back.append(sim.now())
            pose_person()

        sim._animate, sim.monitor.pose_person = animating, posing
        for _ in range(int(60.0 / sim.dt)):
            sim.step()
            last[0] = ""
    assert len(queries) >= 5  # the person came near: queries that needed a posing
    assert back == []
