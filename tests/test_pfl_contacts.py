"""Power and force limiting in a run (hri.run.pfl_contacts): contacts constructed in a real
PyBullet world, the LBR iisy and the humanoid, seen through the safety monitor as a run sees
them, against speeds and permissible speeds calculated by hand.

The robot turns about its first joint A1 (the vertical through its base at (1.3, 0.45)) at a
known rate w, all other joints still: a robot point at (x, y) moves at w z x (x - 1.3, y - 0.45).
The person stands in the rest pose facing +y with the left elbow (the end of the left upper
arm's capsule) 5 mm from the flat end of link5's cylinder, which faces +x: the contact normal
is +x, and the robot's point there is 0.616 m from A1 along y, so it moves along +x at
-0.616 w. Link5's centre of mass is 0.5761 m from A1 along y: its own velocity along +x is
-0.5761 w, so the point's speed differs from it by what the link's turning adds.

Mutations these tests catch (each tried by hand):
* the robot point's velocity taken as its link's centre-of-mass velocity (the angular term
  w x r dropped): 1.440 m/s instead of 1.540 m/s in the upper-arm contact;
* the contact normal reversed (the robot's velocity measured away from the person): no
  contact counted where one must be, and the receding robot counted;
* the person's velocity added instead of subtracted: 0.576 - 0.96 m/s, floored to 0, instead
  of 0.576 + 0.96 m/s when the person walks into the turning robot;
* an episode counted on every step of a contact instead of once: 3 contacts instead of 1.
"""

from __future__ import annotations

import math

import pybullet as p
import pytest

from hri.actor.animation import ClipLibrary
from hri.actor.body import HumanoidBody
from hri.base.geometry import Area, Pose
from hri.robot.arm import RobotArm, RobotConfig, default_model
from hri.run import monitor as monitor_module
from hri.run.monitor import SafetyLimits, SafetyMonitor
from hri.kinematics.arm_model import moving_mass
from hri.run.pfl import robot_effective_mass
from hri.run.pfl_contacts import PflSetup
from hri.run.sim import Simulation
from hri.run.stats import EventLog, RunStats
from hri.scenario import model
from hri.scenario.load import load_scenario

DT = 1 / 240
LIMITS = SafetyLimits(0.1, 0.6, 0.8, 0.002, 0.02)
ZONES = {"warning": Area([(8, 8), (10, 8), (10, 10), (8, 10)], "warning"),  # far away: the person stays safe
         "stop": Area([(9, 9), (10, 9), (10, 10), (9, 10)], "stop")}
BASE = Pose.from_xy_yaw(1.3, 0.45, math.pi / 2, z=0.52)
A1 = 0  # the joint index of A1
ELBOW_AT = (1.62215, 1.09005)  # the person (facing +y) with the left elbow 5 mm from link5's end
CONTACT = PflSetup(robot_mass_kg=27.001 / 2, contact_distance_m=0.01, rest_speed_m_s=0.002)


def new_world():
    """A world of its own with the robot at BASE and the humanoid: yields (client, robot,
    person, the rest pose) and closes it after."""
    client = p.connect(p.DIRECT)
    robot = RobotArm(client, BASE, lambda c: [], RobotConfig())
    person = HumanoidBody(client)
    yield client, robot, person, ClipLibrary.default().rest_pose()
    robot.close()
    p.disconnect(client)


@pytest.fixture(scope="module")
def world():
    yield from new_world()


def _turn_a1(robot: RobotArm, rate: float) -> None:
    p.resetJointState(robot.body_id, A1, float(robot.home[A1]), targetVelocity=rate, physicsClientId=robot.client)


def _monitor(world) -> SafetyMonitor:
    client, robot, person, _rest = world
    return SafetyMonitor(client, ZONES, robot, person.body_id, LIMITS, RunStats("test", 0), EventLog(), DT,
                         pfl=CONTACT)


def _walk(world, monitor: SafetyMonitor, places: list[tuple[float, float]], start: int = 0) -> int:
    """Pose the person at each of ``places`` in turn, one physics step each, as a run does."""
    _client, _robot, person, rest = world
    for k, (x, y) in enumerate(places, start):
        person.apply(rest, x, y, math.pi / 2)
        monitor.step((k + 1) * DT, x, y)
    return start + len(places)


def _contacts(monitor: SafetyMonitor) -> list[dict]:
    return [e for e in monitor.events.events if e["event"] == "pfl_contact"]


def test_the_geometry_is_as_the_hand_calculations_assume(world):
    client, robot, person, rest = world
    person.apply(rest, *ELBOW_AT, math.pi / 2)
    points = p.getClosestPoints(person.body_id, robot.body_id, 0.05, physicsClientId=client)
    closest = min(points, key=lambda pt: pt[8])
    assert closest[8] == pytest.approx(0.005, abs=1e-4)
    assert closest[3] == 12  # left_shoulder: the left upper arm's capsule, the elbow at its end
    assert closest[4] == 4  # link5
    assert closest[6][:2] == pytest.approx((1.365, 1.066), abs=1e-4)
    assert closest[7] == pytest.approx((1.0, 0.0, 0.0), abs=1e-6)
    centre = p.getLinkState(robot.body_id, 4, physicsClientId=client)[0]
    assert centre[1] - 0.45 == pytest.approx(0.5761, abs=1e-4)


def test_the_robot_mass_of_a_run_is_the_urdfs_moving_links_halved():
    assert robot_effective_mass(moving_mass(default_model().urdf)) == pytest.approx(CONTACT.robot_mass_kg)


def test_a_contact_on_the_upper_arm_at_a_known_speed_against_a_hand_calculation(world):
    """A1 at w = -2.5 rad/s: the robot's point moves along +x (towards the person) at
    0.616 x 2.5 = 1.540 m/s; the person stands still.
    Upper arms and elbow joints (Table A.3: m_H = 3 kg, K = 30 N/mm; Table A.2: F_s = 150 N,
    transient 300 N; deltoid 190 N/cm^2, humerus 220 N/cm^2, transient 380 N on 1 cm^2);
    robot m_R = 27.001 / 2 = 13.5005 kg:
      mu = 1 / (1/3 + 1/13.5005) = 1 / 0.407405 = 2.454562 kg
      sqrt(mu K) = sqrt(2.454562 x 30 000) = sqrt(73 636.9) = 271.361 N s/m
      v_F = 300 / 271.361 = 1.1055 m/s;  v_p = 380 / 271.361 = 1.4003 m/s;  v_max = 1.1055 m/s
    ratio 1.540 / 1.1055 = 1.3930: a violation. Three steps in contact, then the person steps
    back: one contact, one event."""
    _client, robot, _person, _rest = world
    _turn_a1(robot, -2.5)
    monitor = _monitor(world)
    x, y = ELBOW_AT
    _walk(world, monitor, [(x, y)] * 3 + [(x + 0.1, y)])
    stats = monitor.stats
    assert (stats.pfl_contacts, stats.pfl_violations) == (1, 1)
    assert stats.pfl_worst_ratio == pytest.approx(1.3930, abs=1e-4)
    assert stats.pfl_worst_region == "upper_arms_and_elbow_joints"
    [event] = _contacts(monitor)
    assert event["t"] == pytest.approx(4 * DT, abs=1e-6)  # when the two parted
    assert event["since_t"] == pytest.approx(DT, abs=1e-6)
    assert (event["person_link"], event["robot_link"], event["region"]) == (
        "left_shoulder", "link5", "upper_arms_and_elbow_joints")
    assert event["speed_m_s"] == pytest.approx(1.540, abs=1e-3)
    assert event["permissible_m_s"] == pytest.approx(1.1055, abs=1e-4)
    assert event["ratio"] == pytest.approx(1.3930, abs=1e-4) and event["violation"] is True
    as_dict = stats.as_dict()
    assert as_dict["pfl_contacts"] == 1 and as_dict["pfl_worst_region"] == "upper_arms_and_elbow_joints"


def test_a_slower_contact_is_no_violation(world):
    """A1 at w = -1.5 rad/s: 0.616 x 1.5 = 0.924 m/s; ratio 0.924 / 1.1055 = 0.8358."""
    _client, robot, _person, _rest = world
    _turn_a1(robot, -1.5)
    monitor = _monitor(world)
    _walk(world, monitor, [ELBOW_AT] * 2)
    monitor.pfl.finish(3 * DT)  # the run ends in the contact
    assert (monitor.stats.pfl_contacts, monitor.stats.pfl_violations) == (1, 0)
    [event] = _contacts(monitor)
    assert event["ratio"] == pytest.approx(0.8358, abs=1e-4) and event["violation"] is False


def test_a_robot_moving_away_from_the_person_or_at_rest_is_no_contact(world):
    _client, robot, _person, _rest = world
    for rate in (2.5, 0.0):  # the point moves along -x, away from the person; at rest
        _turn_a1(robot, rate)
        monitor = _monitor(world)
        _walk(world, monitor, [ELBOW_AT] * 3)
        monitor.pfl.finish(4 * DT)
        assert monitor.stats.pfl_contacts == 0 and not _contacts(monitor)
        assert monitor.stats.as_dict()["pfl_worst_ratio"] == 0.0
        assert monitor.stats.min_separation_m == pytest.approx(0.005, abs=1e-4)  # they were that close


def test_the_person_walking_into_the_turning_robot_adds_its_speed(world):
    """The person moves 4 mm along -x per step (0.004 x 240 = 0.96 m/s towards the robot):
    separations 13, 9 and 5 mm. A1 at w = -1 rad/s: the robot's point 0.616 m/s. Relative speed
    0.616 + 0.96 = 1.576 m/s from the first step in contact (the step before it, 13 mm apart,
    is where the person's velocity starts from)."""
    _client, robot, _person, _rest = world
    _turn_a1(robot, -1.0)
    monitor = _monitor(world)
    x, y = ELBOW_AT
    _walk(world, monitor, [(x + 0.008, y), (x + 0.004, y), (x, y), (x + 0.1, y)])
    [event] = _contacts(monitor)
    assert event["since_t"] == pytest.approx(2 * DT, abs=1e-6)
    assert event["speed_m_s"] == pytest.approx(1.576, abs=1e-3)


def test_each_episode_counts_once_from_onset_until_the_shapes_part(world):
    _client, robot, _person, _rest = world
    _turn_a1(robot, -2.5)
    monitor = _monitor(world)
    x, y = ELBOW_AT
    k = _walk(world, monitor, [(x, y)] * 3 + [(x + 0.008, y)])  # 13 mm apart: parted
    _walk(world, monitor, [(x, y), (x + 0.003, y), (x, y), (x + 0.1, y)], start=k)  # 8 mm: still in contact
    assert monitor.stats.pfl_contacts == 2 and monitor.stats.pfl_violations == 2
    assert [t for e in _contacts(monitor) for t in (e["since_t"], e["t"])] == pytest.approx(
        [DT, 4 * DT, 5 * DT, 8 * DT], abs=1e-6)


def test_a_contact_with_the_head_is_a_violation_at_any_speed(world):
    """Skull, forehead and face admit no transient contact (Table A.2 gives them no transient
    factor): permissible speed 0, the ratio infinite, written as null beside the region. The
    robot raised by 0.37 m puts link5's end face level with the head; A1 at w = -0.1 rad/s moves
    its point there (0.576 m from A1) at 0.0576 m/s."""
    client, robot, _person, _rest = world
    position, orientation = p.getBasePositionAndOrientation(robot.body_id, physicsClientId=client)
    p.resetBasePositionAndOrientation(robot.body_id, (position[0], position[1], position[2] + 0.37), orientation,
                                      physicsClientId=client)
    try:
        _turn_a1(robot, -0.1)
        monitor = _monitor(world)
        _walk(world, monitor, [(1.4725, 1.026), (2.0, 1.026)])  # the head 5 mm from link5's end, then away
    finally:
        p.resetBasePositionAndOrientation(robot.body_id, position, orientation, physicsClientId=client)
    [event] = _contacts(monitor)
    assert (event["person_link"], event["region"], event["permissible_m_s"]) == ("neck", "face", 0.0)
    assert event["speed_m_s"] == pytest.approx(0.0576, abs=1e-4)
    assert event["ratio"] is None and event["violation"] is True
    as_dict = monitor.stats.as_dict()
    assert (as_dict["pfl_violations"], as_dict["pfl_worst_ratio"], as_dict["pfl_worst_region"]) == (1, None, "face")


def test_the_contact_distance_is_one_the_monitor_measures_on_every_step():
    assert model.PFL_CONTACT_DISTANCE_MAX_M == monitor_module.CONTACT_M
    assert 0 < model.PFL_CONTACT_DISTANCE_M <= model.PFL_CONTACT_DISTANCE_MAX_M


def test_a_run_judges_contacts_in_every_mode_with_its_robot_and_payload():
    """collaboration feeds parts of 0.3 kg, and in SSM mode the default gripper of 0.5 kg counts:
    m_R = 27.001 / 2 + 0.3 + 0.5 = 14.3005 kg; coexistence feeds none, and zones mode sees the
    arm alone: 13.5005 kg."""
    for name, mode, mass in (("collaboration", "ssm", 14.3005), ("coexistence", "zones", 13.5005)):
        scenario = load_scenario(name, [f"safety.mode={mode}", "safety.pfl.contact_distance_m=0.02"])
        with Simulation(scenario, 1) as sim:
            assert sim.monitor.pfl.setup == PflSetup(pytest.approx(mass), 0.02, 0.002)
            stats = sim.run(0.5)
        assert (stats["pfl_contacts"], stats["pfl_violations"], stats["pfl_worst_ratio"],
                stats["pfl_worst_region"]) == (0, 0, 0.0, None)
    assert load_scenario("coexistence").safety.pfl.contact_distance_m == model.PFL_CONTACT_DISTANCE_M == 0.01


@pytest.mark.parametrize("rate_hz,distance_m", [(240.0, 0.01), (100.0, 0.024), (20.0, 0.05)])
def test_the_default_contact_distance_is_one_step_of_a_fast_touch(rate_hz, distance_m):
    """2.4 m/s for one physics step of the scenario's rate, at most the distance below which
    the monitor measures every step."""
    scenario = load_scenario("coexistence", [f"simulation.physics_rate_hz={rate_hz}"])
    assert scenario.safety.pfl.contact_distance_m == pytest.approx(distance_m, rel=1e-12)
