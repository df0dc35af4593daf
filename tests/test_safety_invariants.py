"""The safety monitor's invariants: speed limits after the allowed times, no robot moving into
the person (a person touching the robot at rest is a contact),
and ``--strict`` ending a run at the first violation."""

from __future__ import annotations

import json
import math

import numpy as np
import pybullet as p
import pytest

from hri.actor.animation import ClipLibrary
from hri.actor.body import HumanoidBody
from hri.base.errors import SafetyViolation
from hri.base.geometry import Area, Pose
from hri.run.monitor import SPEED_EVERY, SafetyLimits, SafetyMonitor, ZoneTracker, zone_of
from hri.robot.arm import RobotArm, RobotConfig
from hri.scenario.load import load_scenario
from hri.run.sim import Simulation
from hri.run.stats import WALL_CLOCK_KEYS, EventLog, RunStats
from test_cli import hri

LIMITS = SafetyLimits(0.1, 0.6, 0.8, 0.002, 0.02)
ZONES = {"warning": Area([(0, 0), (4, 0), (4, 3), (0, 3)], "warning"),
         "stop": Area([(0, 0), (3, 0), (3, 2), (0, 2)], "stop")}


@pytest.fixture
def world():
    client = p.connect(p.DIRECT)
    robot = RobotArm(client, Pose.from_xy_yaw(1.3, 0.45, math.pi / 2, z=0.75), lambda c: [], RobotConfig())
    person = HumanoidBody(client)
    yield client, robot, person
    robot.close()
    p.disconnect(client)


def test_the_zone_tracker_decides_as_zone_of_on_every_point_of_a_walk_across_the_borders():
    """It re-decides only when the point leaves a disc that no border crosses: a walk in
    millimetre steps, in and out of both zones and along a border, must never see it disagree."""
    rng = np.random.default_rng(5)
    tracker = ZoneTracker(ZONES)
    xy = np.array([5.0, 4.0])
    walk = [xy.copy()]
    for target in [(2.0, 1.0), (3.5, 2.5), (3.0, 1.0), (3.0, 2.5), (-1.0, 1.5), (4.0, 1.5), (5.0, 4.0)]:
        while np.linalg.norm(target - xy) > 0.004:
            xy = xy + 0.004 * (target - xy) / np.linalg.norm(target - xy) + rng.normal(0.0, 0.0005, 2)
            walk.append(xy.copy())
    walk += [np.array(corner, float) for corner in [(3.0, 2.0), (3.0, 0.5), (4.0, 3.0), (2.0, 2.0)]]  # on borders
    decided = [tracker.at(float(x), float(y)) for x, y in walk]
    assert decided == [zone_of(ZONES, float(x), float(y)) for x, y in walk]
    assert {"safe", "warning", "stop"} <= set(decided)


def _monitor(world, strict: bool = False) -> SafetyMonitor:
    client, robot, person = world
    return SafetyMonitor(client, ZONES, robot, person.body_id, LIMITS, RunStats("test", 0), EventLog(),
                         1 / 240, strict=strict)


def _turning(robot: RobotArm, speed: float = 0.5) -> None:
    """The arm's first joint turning at ``speed`` rad/s where it is (no physics step follows)."""
    joint = robot.model.indices[0]
    q = p.getJointState(robot.body_id, joint, physicsClientId=robot.client)[0]
    p.resetJointState(robot.body_id, joint, q, speed, physicsClientId=robot.client)


def test_a_robot_moving_inside_the_person_is_a_violation_every_step(world):
    client, robot, person = world
    rest = ClipLibrary.default().rest_pose()
    person.apply(rest, 1.3, 0.65, 0.0)  # standing where the arm is: their shapes overlap
    _turning(robot)
    monitor = _monitor(world)
    for k in range(3):
        monitor.step(k / 240, 1.3, 0.65)
    violations = [e for e in monitor.events.events if e["event"] == "safety_violation"]
    assert monitor.stats.safety_violations == len(violations) == 3
    assert monitor.stats.min_separation_m < 0
    assert [e["step"] for e in violations] == [1, 2, 3]
    assert violations[0]["zone"] == "stop" and "inside the person's" in violations[0]["reason"]
    assert monitor.stats.robot_touches == 0


def _three_steps(world, x: float, y: float):
    """The person at rest at (x, y) and three monitored steps of the robot at rest."""
    client, robot, person = world
    person.apply(ClipLibrary.default().rest_pose(), x, y, 0.0)
    monitor = _monitor(world)
    for k in range(3):
        monitor.step(k / 240, x, y)
    return monitor


def test_a_person_inside_the_robot_at_rest_is_one_touch_not_a_violation(world):
    monitor = _three_steps(world, 1.3, 0.65)
    assert monitor.stats.safety_violations == 0 and monitor.stats.min_separation_m < 0
    [touch] = [e for e in monitor.events.events if e["event"] == "robot_touched"]
    assert monitor.stats.robot_touches == 1 and touch["speed_m_s"] == 0.0 and touch["depth_m"] > 0.0
    assert monitor.stats.as_dict()["robot_touches"] == 1


def test_a_person_beside_the_robot_is_no_violation(world):
    monitor = _three_steps(world, 3.5, 2.5)
    assert monitor.stats.safety_violations == 0 and monitor.stats.min_separation_m > 0.5


def test_strict_raises_at_the_first_violation(world):
    client, robot, person = world
    person.apply(ClipLibrary.default().rest_pose(), 1.3, 0.65, 0.0)
    _turning(robot)
    monitor = _monitor(world, strict=True)
    with pytest.raises(SafetyViolation, match=r"^--strict: safety violation at t = 0\.000 s \(step 1, stop zone\)"):
        monitor.step(0.0, 1.3, 0.65)
    assert monitor.stats.safety_violations == 1


def test_strict_run_ends_with_exit_3_one_line_and_its_statistics(tmp_path):
    """Seed 10 walks into the warning zone at once; a 0.6 s late safety signal breaks the
    0.6 s reaction time."""
    result = hri("run", "coexistence", "--duration", "20", "--seed", "10", "--strict", "--json",
                 "--set", "net.safety.latency=0.6", "--out", str(tmp_path / "run"))
    assert result.returncode == 3
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("--strict: safety violation at t = ")
    stats = json.loads((tmp_path / "run" / "stats.json").read_text())
    assert stats["complete"] is False and stats["safety_violations"] == 1
    printed = json.loads(result.stdout)  # the statistics so far on stdout too, as with a whole run
    assert {k: v for k, v in printed.items() if k not in WALL_CLOCK_KEYS} == {
        k: v for k, v in stats.items() if k not in WALL_CLOCK_KEYS}
    assert stats["sim_time_s"] < 20
    events = [json.loads(line) for line in (tmp_path / "run" / "events.jsonl").read_text().splitlines()]
    violation = next(e for e in events if e["event"] == "safety_violation")
    assert set(violation) >= {"t", "step", "zone", "speed_m_s", "speed_fraction", "reason"}
    assert np.isclose(violation["t"], violation["step"] / 240)


def test_without_strict_the_same_run_counts_its_violations(tmp_path):
    result = hri("run", "coexistence", "--duration", "8", "--seed", "10", "--json",
                 "--set", "net.safety.latency=0.6")
    assert result.returncode == 0
    assert json.loads(result.stdout)["safety_violations"] > 1


class SampledSpeeds:
    """An observer that measures the robot's fastest point on every ``SPEED_EVERY``-th step, and
    the bound the joint speeds give."""

    def __init__(self) -> None:
        self.speeds: list[float] = []
        self.bounds: list[float] = []
        self.sim: Simulation | None = None  # given by the test: an oracle may look inside

    def start(self, run) -> None: ...

    def after_step(self, run) -> None:
        if self.sim.monitor.steps % SPEED_EVERY == 0:
            self.speeds.append(RobotArm.fastest_point_speed(self.sim.robot))  # not the counted one
            self.bounds.append(self.sim.robot.joint_speeds()[1])

    def finish(self, run) -> None: ...


def test_the_robots_top_speed_is_every_sample_although_most_are_not_asked():
    oracle = SampledSpeeds()
    with Simulation(load_scenario("cooperation"), 0, observers=[oracle]) as sim:
        oracle.sim = sim
        asked = 0
        fastest = sim.robot.fastest_point_speed

        def counted() -> float:
            nonlocal asked
            asked += 1
            return fastest()

        sim.robot.fastest_point_speed = counted
        sim.run(60.0)
        top = sim.monitor.stats.max_robot_speed_m_s
    assert top == max(oracle.speeds) > 1.0
    assert all(bound >= speed for bound, speed in zip(oracle.bounds, oracle.speeds))
    # the joint speeds' bound below the top so far skips the sample (the trajectory's rows, every
    # other sample, and the stop zone's rest checks ask as well)
    assert asked < 0.8 * len(oracle.speeds), (asked, len(oracle.speeds))
