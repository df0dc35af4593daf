"""The robot arm in a simulated coexistence scene: reaching, velocity scaling, halting,
unreachable targets, obstacle avoidance, determinism, and the cost of one control step.

The scene is the coexistence scenario's: a table x 0.3..2.3, y 0.2..1.2, top at z = 0.75,
the robot base at (1.3, 0.45, 0.75) facing +y. Physics at 240 Hz, ``arm.step`` before
every ``stepSimulation`` as in the simulation loop.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from dataclasses import replace

import numpy as np
import pybullet as p
import pytest

from hri.base.geometry import Pose
from hri.robot.arm import MotionStatus, RobotArm, RobotConfig
from hri.kinematics import solve
from hri.robot.planner import PlannerSettings, plan_joint_path
from hri.scenario.load import load_scenario
from hri.workcell.world import build_static_scene
from hri.robot.scene import quaternion_angle

DT = 1.0 / 240.0
BASE = Pose.from_xy_yaw(1.3, 0.45, math.pi / 2.0, z=0.75)
DOWN = (1.0, 0.0, 0.0, 0.0)  # tool z axis along world -z
LEFT = Pose(0.6, 0.6, 0.85, *DOWN)
LEFT_NEAR = Pose(1.0, 0.5, 0.85, *DOWN)
RIGHT = Pose(2.0, 0.9, 0.85, *DOWN)
RIGHT_FAR = Pose(2.1, 1.0, 0.85, *DOWN)
#: after set_velocity_fraction, the measured speed must obey the new limit within this
#: time: the worst joint's jerk-limited braking from full speed,
#: max_i((1 - f) vmax_i / a_i + a_i / j_i) = 0.34 s with the defaults (f = 0.1), plus
#: 0.06 s for the PyBullet motors to follow the command
REACTION_TIME = 0.4
#: after halt(), every robot point slower than 1 mm/s within this time (the command is
#: at rest after at most max_i(vmax_i / a_i + a_i / j_i) = 0.36 s with the defaults)
STOPPING_TIME = 0.5


def build_table(client: int) -> list[int]:
    shape = p.createCollisionShape(p.GEOM_BOX, halfExtents=[1.0, 0.5, 0.375],
                                   physicsClientId=client)
    return [p.createMultiBody(0.0, shape, -1, [1.3, 0.7, 0.375], physicsClientId=client)]


def build_table_and_panel(client: int) -> list[int]:
    """The table plus an upright panel in front of the robot between the two sides."""
    panel = p.createCollisionShape(p.GEOM_BOX, halfExtents=[0.05, 0.25, 0.3],
                                   physicsClientId=client)
    return [*build_table(client),
            p.createMultiBody(0.0, panel, -1, [1.3, 0.95, 1.05], physicsClientId=client)]


class Sim:
    """A DIRECT client with gravity, the static scene and the arm."""

    def __init__(self, build: Callable[[int], list[int]] = build_table,
                 config: RobotConfig | None = None) -> None:
        self.client = p.connect(p.DIRECT)
        p.setGravity(0.0, 0.0, -9.81, physicsClientId=self.client)
        p.setTimeStep(DT, physicsClientId=self.client)
        self.obstacles = build(self.client)
        self.arm = RobotArm(self.client, BASE, build, config or RobotConfig())
        self.time = 0.0
        self.contacts = 0
        self.statuses: list[MotionStatus] = []
        self.trajectory: list[np.ndarray] = []
        self.step_seconds: list[float] = []

    def step(self) -> None:
        start = time.perf_counter()
        self.arm.step(DT)
        self.step_seconds.append(time.perf_counter() - start)
        p.stepSimulation(physicsClientId=self.client)
        self.time += DT
        for obstacle in self.obstacles:
            for point in p.getContactPoints(self.arm.body_id, obstacle,
                                            physicsClientId=self.client):
                if point[8] < 0.0:
                    self.contacts += 1
        self.statuses.append(self.arm.status)
        self.trajectory.append(self.arm.joint_positions())

    def run(self, seconds: float) -> None:
        for _ in range(int(round(seconds / DT))):
            self.step()

    def run_while_moving(self, limit: float = 15.0) -> None:
        end = self.time + limit
        while self.arm.status == MotionStatus.MOVING and self.time < end:
            self.step()

    def close(self) -> None:
        self.arm.close()
        p.disconnect(self.client)


@pytest.fixture
def sim() -> Iterator[Sim]:
    s = Sim()
    yield s
    s.close()


def assert_at(arm: RobotArm, target: Pose) -> None:
    pose = arm.tool_pose()
    assert np.linalg.norm(np.subtract(pose.position, target.position)) < 0.005
    assert quaternion_angle(pose.orientation, target.orientation) < 0.05


def test_config_from_dict() -> None:
    config = RobotConfig.from_dict({"max_acceleration": 4.0, "seed": 3})
    assert config.max_acceleration == (4.0,) * 6 and config.seed == 3
    assert RobotConfig.from_dict({}) == RobotConfig()
    with pytest.raises(ValueError, match="max_accel"):
        RobotConfig.from_dict({"max_accel": 1.0})
    with pytest.raises(ValueError):
        RobotConfig.from_dict({"max_jerk": [1.0, 2.0]})


def test_home_is_over_the_table_and_at_rest(sim: Sim) -> None:
    sim.run(0.5)
    pose = sim.arm.tool_pose()
    assert 0.3 < pose.x < 2.3 and 0.2 < pose.y < 1.2 and pose.z > 0.95
    assert sim.arm.fastest_point_speed() < 1e-3
    assert sim.arm.status == MotionStatus.IDLE


@pytest.mark.parametrize("first, second", [(LEFT, RIGHT), (LEFT_NEAR, RIGHT_FAR)])
def test_reaches_left_then_right_without_touching_the_table(sim: Sim, first: Pose,
                                                            second: Pose) -> None:
    capability = sim.arm.speed_capability()
    fastest = 0.0
    for target in (first, second):
        sim.arm.move_to(target)
        assert sim.arm.status == MotionStatus.MOVING
        while sim.arm.status == MotionStatus.MOVING and sim.time < 30.0:
            sim.step()
            speed = sim.arm.fastest_point_speed()
            assert speed <= sim.arm.joint_speeds()[1] + 1e-9  # the monitor's cheap bound holds
            fastest = max(fastest, speed)
        assert sim.arm.status == MotionStatus.SUCCEEDED
        assert_at(sim.arm, target)
    assert sim.contacts == 0
    assert 0.5 < fastest <= capability


def test_the_motors_are_commanded_only_when_the_command_changes(sim: Sim,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """At rest the arm's command repeats itself and is not sent again; the motors keep it and
    the arm holds. A new motion is sent on its first step, and every step while it changes."""
    sent: list[list[float]] = []
    real = p.setJointMotorControlArray

    def counting(*args, **kwargs):
        sent.append(list(kwargs["targetPositions"]))
        return real(*args, **kwargs)

    monkeypatch.setattr(p, "setJointMotorControlArray", counting)
    held = sim.arm.joint_positions()
    sim.run(0.5)
    assert sent == []
    assert np.max(np.abs(sim.arm.joint_positions() - held)) < 1e-3
    sim.arm.move_to(LEFT)
    steps = len(sim.statuses)
    sim.run_while_moving()
    moving_steps = len(sim.statuses) - steps
    assert sim.arm.status == MotionStatus.SUCCEEDED
    assert len(sent) >= 0.9 * moving_steps
    assert all(a != b for a, b in zip(sent, sent[1:]))  # never the same command twice in a row
    assert_at(sim.arm, LEFT)
    before = len(sent)
    sim.run(0.5)
    assert len(sent) == before


def test_velocity_fraction_applies_to_the_motion_in_progress(sim: Sim) -> None:
    sim.arm.move_to(LEFT)
    sim.run_while_moving()
    sim.arm.move_to(RIGHT)
    sim.run(0.4)
    assert sim.arm.joint_speed_fraction() > 0.5
    sim.arm.set_velocity_fraction(0.1)
    assert sim.arm.velocity_fraction == 0.1
    switched = sim.time
    worst_after_reaction = 0.0
    obeyed_since = None
    while sim.arm.status == MotionStatus.MOVING and sim.time < switched + 30.0:
        sim.step()
        if sim.arm.joint_speed_fraction() > 0.1 * 1.02:
            obeyed_since = None
        elif obeyed_since is None:
            obeyed_since = sim.time - switched
        if sim.time >= switched + REACTION_TIME:
            worst_after_reaction = max(worst_after_reaction, sim.arm.joint_speed_fraction())
    print(f"\nspeed fraction <= 0.102 from {obeyed_since:.3f} s after the change; "
          f"max after {REACTION_TIME} s: {worst_after_reaction:.4f}")
    assert worst_after_reaction <= 0.1 * 1.02
    assert sim.arm.status == MotionStatus.SUCCEEDED
    assert MotionStatus.FAILED not in sim.statuses
    assert_at(sim.arm, RIGHT)
    assert sim.contacts == 0


def test_zero_velocity_fraction_holds_then_continues(sim: Sim) -> None:
    sim.arm.move_to(LEFT)
    sim.run(0.4)
    sim.arm.set_velocity_fraction(0.0)
    sim.run(1.0)
    assert sim.arm.status == MotionStatus.MOVING
    assert sim.arm.fastest_point_speed() < 1e-3
    sim.arm.set_velocity_fraction(0.5)
    sim.run_while_moving()
    assert sim.arm.status == MotionStatus.SUCCEEDED
    assert_at(sim.arm, LEFT)


def test_new_target_while_moving(sim: Sim) -> None:
    sim.arm.move_to(LEFT)
    sim.run(0.5)
    sim.arm.move_to(RIGHT_FAR)
    assert sim.arm.status == MotionStatus.MOVING
    sim.run_while_moving()
    assert sim.arm.status == MotionStatus.SUCCEEDED
    assert_at(sim.arm, RIGHT_FAR)
    assert sim.contacts == 0


def test_halt_stops_and_the_same_target_resumes(sim: Sim) -> None:
    sim.arm.move_to(LEFT)
    sim.run(0.5)
    assert sim.arm.fastest_point_speed() > 0.3
    sim.arm.halt()
    assert sim.arm.status == MotionStatus.STOPPING
    halted = sim.time
    rest_at = None
    while sim.time < halted + 2.0:
        sim.step()
        if rest_at is None and sim.arm.fastest_point_speed() < 1e-3:
            rest_at = sim.time - halted
    stopped_at = sim.statuses.index(MotionStatus.STOPPED, len(sim.statuses) - 480) * DT
    print(f"\nat rest (< 1 mm/s) {rest_at:.3f} s after halt(), "
          f"STOPPED after {stopped_at - halted:.3f} s")
    assert rest_at is not None and rest_at <= STOPPING_TIME
    assert sim.arm.status == MotionStatus.STOPPED
    assert sim.arm.fastest_point_speed() < 1e-3
    sim.arm.move_to(LEFT)
    assert sim.arm.status == MotionStatus.MOVING
    sim.run_while_moving()
    assert sim.arm.status == MotionStatus.SUCCEEDED
    assert_at(sim.arm, LEFT)
    assert sim.contacts == 0


def test_halt_before_the_first_step(sim: Sim) -> None:
    sim.arm.move_to(RIGHT)
    sim.arm.halt()
    sim.run(0.1)
    assert sim.arm.status == MotionStatus.STOPPED
    sim.arm.move_to(RIGHT)
    sim.run_while_moving()
    assert sim.arm.status == MotionStatus.SUCCEEDED


def test_unreachable_target_fails_quickly(sim: Sim) -> None:
    far = Pose(4.3, 0.45, 0.85, *DOWN)
    start = time.perf_counter()
    assert not sim.arm.is_reachable(far)
    sim.arm.move_to(far)
    assert time.perf_counter() - start < 2.0
    assert sim.arm.status == MotionStatus.FAILED
    inside_table = Pose(1.3, 0.9, 0.6, *DOWN)
    assert not sim.arm.is_reachable(inside_table)
    assert sim.arm.is_reachable(RIGHT_FAR)
    sim.run(0.2)
    assert sim.arm.status == MotionStatus.FAILED


def test_plans_around_an_obstacle() -> None:
    sim = Sim(build_table_and_panel, RobotConfig(home=(0.0, 0.0, 0.5, 0.0, 1.0, 0.0)))
    try:
        for target in (Pose(0.7, 0.8, 0.85, *DOWN), Pose(1.9, 0.8, 0.85, *DOWN)):
            sim.arm.move_to(target)
            sim.run_while_moving(30.0)
            assert sim.arm.status == MotionStatus.SUCCEEDED
            assert_at(sim.arm, target)
        assert sim.contacts == 0
    finally:
        sim.close()


def _scripted_run() -> np.ndarray:
    s = Sim()
    try:
        s.arm.move_to(LEFT)
        s.run_while_moving()
        s.arm.move_to(RIGHT)
        s.run(0.3)
        s.arm.set_velocity_fraction(0.4)
        s.run(0.3)
        s.arm.halt()
        s.run(0.8)
        s.arm.set_velocity_fraction(1.0)
        s.arm.move_to(RIGHT)
        s.run_while_moving()
        assert s.arm.status == MotionStatus.SUCCEEDED
        return np.array(s.trajectory)
    finally:
        s.close()


def test_identical_runs_are_bit_identical() -> None:
    first, second = _scripted_run(), _scripted_run()
    assert first.shape == second.shape
    assert first.tobytes() == second.tobytes()


class _CountingPyBullet:
    """pybullet as robot.arm sees it, counting the calls made through it."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def __getattr__(self, name: str):
        value = getattr(p, name)
        if not callable(value):
            return value

        def counted(*args, **kwargs):
            self.calls.append(name)
            return value(*args, **kwargs)
        return counted


def test_a_step_costs_one_motor_command_at_most_and_nothing_at_rest(sim: Sim, monkeypatch) -> None:
    """What ``RobotArm.step`` does each physics step, counted, not timed (its time per step is
    the ``robot`` row of ``hri bench --only breakdown``): while it moves, one motor command and
    no query of PyBullet, no planning, no new trajectory generator; once arrived, two joint
    reads a step until it has settled; at rest, nothing (the same command is not sent again).
    A regression that re-plans, re-reads or rebuilds each step fails it on any machine."""
    import hri.robot.arm as arm_module

    sim.arm.move_to(RIGHT)
    counting = _CountingPyBullet()
    monkeypatch.setattr(arm_module, "p", counting)
    planned: list[object] = []
    monkeypatch.setattr(arm_module, "plan_joint_path", lambda *a, **k: planned.append(a))
    made = []
    build = arm_module.JointMotion
    monkeypatch.setattr(arm_module, "JointMotion", lambda *a, **k: made.append(a) or build(*a, **k))
    per_step: dict[str, list[list[str]]] = {"moving": [], "settling": [], "rest": []}
    arrived = False
    step = sim.arm.step

    def counted_step(dt: float) -> None:
        nonlocal arrived
        before, status = len(counting.calls), sim.arm.status
        step(dt)
        calls = counting.calls[before:]
        arrived = arrived or "getJointStates" in calls
        per_step["rest" if status == MotionStatus.SUCCEEDED else "settling" if arrived else "moving"].append(calls)

    monkeypatch.setattr(sim.arm, "step", counted_step)
    sim.run(8.0)
    assert not planned and len(made) == 1  # the generator the first step makes, then kept
    assert len(per_step["moving"]) > 100 and len(per_step["rest"]) > 100
    assert all(calls == ["setJointMotorControlArray"] for calls in per_step["moving"][1:])
    assert all(calls.count("getJointStates") == 2 and len(calls) <= 3 for calls in per_step["settling"])
    assert all(calls == [] for calls in per_step["rest"])


def test_the_planner_solves_ik_with_the_shared_kinematics_core(sim: Sim) -> None:
    """The goal of a move is the core's IK solution nearest the current joints, collision free."""
    scene = sim.arm.scene
    start = np.array(sim.arm.home)
    for target in (LEFT, RIGHT, RIGHT_FAR, LEFT_NEAR):
        goal = scene.solve_ik(target, [start, start], 0.005, 0.05)
        assert goal is not None and scene.configuration_valid(goal)
        position, orientation = scene.chain.tip_pose(goal)
        assert np.linalg.norm(np.subtract(position, target.position)) < 1e-4
        assert quaternion_angle(orientation, target.orientation) < 1e-3
        nearest = solve(scene.chain, target, start)
        assert nearest.valid and np.allclose(goal, nearest.q, atol=1e-3)  # the same solution, to the tolerance
    assert scene.solve_ik(Pose(4.0, 4.0, 0.85, *DOWN), [start], 0.005, 0.05) is None  # out of reach


def test_clearances_change_no_faster_than_the_sweeps_bound_them() -> None:
    """Conservative advancement rests on this: along a straight joint-space segment, each
    link's clearance to the obstacles, and each self-collision pair's, changes by at most its
    sweep times the fraction of the segment travelled (checked densely on random segments
    near the table and the panel)."""
    sim = Sim(build_table_and_panel)
    scene = sim.arm.scene
    rng = np.random.default_rng(7)
    cap = 10.0  # measure every clearance, however large
    pairs = dict.fromkeys(range(len(scene.self_pairs)), cap)
    try:
        for _ in range(12):
            q0 = np.clip(scene.home + rng.normal(0.0, 0.8, 6), scene.model.lower, scene.model.upper)
            q1 = np.clip(scene.home + rng.normal(0.0, 0.8, 6), scene.model.lower, scene.model.upper)
            link_sweep, pair_sweep = scene.sweeps(np.abs(q1 - q0))
            samples = []
            for s in np.linspace(0.0, 1.0, 201):
                scene.set_configuration(q0 + (q1 - q0) * s)
                samples.append((s, scene.obstacle_clearances(cap), scene.self_clearances(pairs)))
            for (s, links, selfs), (t, links_t, selfs_t) in zip(samples, samples[1:]):
                for k, c in links.items():
                    assert abs(links_t[k] - c) <= link_sweep[k] * (t - s) + 1e-9, (k, s)
                for n, c in selfs.items():
                    assert abs(selfs_t[n] - c) <= pair_sweep[n] * (t - s) + 1e-9, (scene.self_pairs[n], s)
    finally:
        sim.close()


def test_links_sink_towards_an_obstacle_no_faster_than_the_lifts_bound_them() -> None:
    """The second proof of conservative advancement: a link whose box is ``h`` above an
    obstacle's top stays at least ``h - lift * (t - s)`` from it along the segment (checked
    densely on random segments, against every pair of samples)."""
    sim = Sim(build_table_and_panel)
    scene = sim.arm.scene
    rng = np.random.default_rng(11)
    s = np.linspace(0.0, 1.0, 101)
    later = s[None, :] - s[:, None]  # later[i, j] = s_j - s_i
    try:
        for _ in range(12):
            q0 = np.clip(scene.home + rng.normal(0.0, 0.8, 6), scene.model.lower, scene.model.upper)
            q1 = np.clip(scene.home + rng.normal(0.0, 0.8, 6), scene.model.lower, scene.model.upper)
            lift = scene.lifts(np.abs(q1 - q0))
            lows, distances = [], []
            for fraction in s:
                scene.set_configuration(q0 + (q1 - q0) * fraction)
                lows.append([p.getAABB(scene.body, k, physicsClientId=scene.client)[0][2]
                             for k in range(scene.model.num_links)])
                distances.append([[min((pt[8] for pt in p.getClosestPoints(scene.body, obstacle, 10.0, linkIndexA=k,
                                                                            physicsClientId=scene.client)),
                                       default=math.inf)  # a link without a shape (tool0)
                                   for k in range(scene.model.num_links)] for obstacle in scene.obstacles])
            lows, distances = np.array(lows), np.array(distances)
            for j, obstacle in enumerate(scene.obstacles):
                top = p.getAABB(obstacle, physicsClientId=scene.client)[1][2]
                for k in range(scene.model.num_links):
                    bound = lows[:, k, None] - top - lift[k] * later  # from sample i, at sample j
                    violated = (later > 0) & (bound > 0) & (distances[None, :, j, k] < bound - 1e-9)
                    assert not violated.any(), (k, obstacle)
    finally:
        sim.close()


def test_a_turn_over_the_panel_is_proven_free_in_a_few_checks_and_one_below_its_top_is_not() -> None:
    """The base turns the hand from one side of the panel to the other. Five centimetres over
    the panel's top, the heights prove the turn free in a few checks (the clearances alone
    needed 31); ten centimetres below it, the hand hits the panel."""
    sim = Sim(build_table_and_panel, RobotConfig(home=(0.0, 0.0, 0.5, 0.0, 1.0, 0.0)))
    scene = sim.arm.scene
    checks = []
    set_configuration = scene.set_configuration
    scene.set_configuration = lambda q: (checks.append(q), set_configuration(q))
    try:
        top = 1.35
        for z, valid in ((top + 0.05, True), (top - 0.05, False)):
            left = scene.solve_ik(Pose(0.8, 0.9, z, *DOWN), [scene.home], 0.005, 0.05)
            right = scene.solve_ik(Pose(1.8, 0.9, z, *DOWN), [scene.home], 0.005, 0.05)
            assert left is not None and right is not None
            assert abs(right[0] - left[0]) > 1.5  # a turn of the base
            checks.clear()
            assert scene.segment_valid(left, right, 0.02) is valid
            assert len(checks) <= 12 or not valid
    finally:
        sim.close()


def test_a_turn_of_the_wrist_roll_sweeps_the_hand_by_its_distance_from_the_roll_axis(sim: Sim) -> None:
    """A turn of A4 (the forearm's roll) moves a point by its distance from A4's axis: the
    forearm's length from A4 to A5, which lies along that axis, does not count, as it does in
    the bound from A4's origin. (That the sweeps still bound every change is the test above.)"""
    scene = sim.arm.scene
    roll = np.zeros(6)
    roll[3] = 1.0
    link_sweep, _ = scene.sweeps(roll)
    from_origin = scene.reach_matrix()[3]
    a4, a5 = (np.array(p.getLinkState(scene.body, scene.model.indices[j], computeForwardKinematics=1,
                                      physicsClientId=scene.client)[4]) for j in (3, 4))
    forearm = float(np.linalg.norm(a5 - a4))
    assert forearm > 0.1
    hand = list(range(scene.model.indices[4], scene.model.num_links))
    assert link_sweep[hand] == pytest.approx(from_origin[hand] - forearm, abs=1e-6)
    assert link_sweep[scene.model.indices[3]] == pytest.approx(from_origin[scene.model.indices[3]])
    assert not link_sweep[:scene.model.indices[3]].any()


def test_a_segment_through_the_panel_is_invalid_and_one_beside_it_valid() -> None:
    """Conservative advancement finds the panel between two configurations a joint-1 turn
    apart, and proves free a short move that stays on one side of it."""
    sim = Sim(build_table_and_panel, RobotConfig(home=(0.0, 0.0, 0.5, 0.0, 1.0, 0.0)))
    scene = sim.arm.scene
    try:
        left = scene.solve_ik(Pose(0.7, 0.8, 0.85, *DOWN), [scene.home], 0.005, 0.05)
        right = scene.solve_ik(Pose(1.9, 0.8, 0.85, *DOWN), [scene.home], 0.005, 0.05)
        left_near = scene.solve_ik(Pose(0.8, 0.7, 0.9, *DOWN), [left], 0.005, 0.05)
        assert left is not None and right is not None and left_near is not None
        assert not scene.segment_valid(left, right, 0.02)
        assert scene.segment_valid(left, left_near, 0.02)
    finally:
        sim.close()


def test_a_calculation_ruckig_cannot_finish_is_an_error_not_a_crash(monkeypatch) -> None:
    """ruckig raises some of its errors (a time synchronisation it cannot finish, met with the
    speed capped anew on every step) and returns others: both end the move as an error."""
    import ruckig

    from hri.robot.motion import JointMotion, Progress

    limits = np.ones(6)
    motion = JointMotion(np.zeros(6), limits, limits, limits * 10.0, 1.0 / 240.0)
    motion.follow([np.full(6, 0.5)])
    assert motion.update(1.0) == Progress.MOVING

    def refuse(*args):
        raise ruckig.RuckigError("error in step 2 in dof: 4 for t sync")

    monkeypatch.setattr(motion, "_otg", type("Refusing", (), {"update": staticmethod(refuse),
                                                              "reset": staticmethod(lambda: None)})())
    assert motion.update(0.5) == Progress.ERROR


def test_a_failed_cycle_retried_unsynchronised_advances_the_motion_once() -> None:
    """A state met in an SSM run (collaboration): the arm moving at the cap 0.18 towards its
    next waypoint. ruckig fails to phase-synchronise the next cycle (it raises after taking the
    cycle's input as its own); the retry, unsynchronised, starts from the cycle's start state
    and moves the arm by one cycle: without a new calculation it went on along the last
    trajectory, the commanded position jumped two cycles at once and the measured joint speeds
    by a third (a safety violation of SSM)."""
    from hri.robot.motion import JointMotion, Progress

    position = [1.1783892120843296, 0.4229174200371862, 2.5105593774180743, -4.607638053936676e-10, 0.20775317779750155, -0.39898369457826377]
    velocity = [-0.41679372111431345, -0.023945143679460535, -0.02645869042912753, -3.298185698461313e-10, 0.05389395658297788, -0.39406912683731626]
    acceleration = [-0.5776197899222804, 0.11904546444436209, -0.18384611961379116, 0.0, 0.10304738520708456, 2.821101334113299]
    target = [-1.0724194862006835, 0.2795382516616887, 2.3521734875715983, -2.4531498609282713e-09, 0.5098809184445665, -2.643215811697526]
    vmax = np.array([2.094395, 2.094395, 3.141593, 3.926991, 3.926991, 3.926991])
    amax, jmax = np.array([8.0, 8.0, 10.0, 15.0, 15.0, 20.0]), np.array([80.0, 80.0, 100.0, 150.0, 150.0, 200.0])
    dt = 1.0 / 240.0
    motion = JointMotion(np.array(position), vmax, amax, jmax, dt, velocity=np.array(velocity),
                         acceleration=np.array(acceleration))
    motion.follow([np.array(target)])
    assert motion.update(0.18) == Progress.MOVING
    retried = []
    unsynchronised = motion._calculate_unsynchronised
    motion._calculate_unsynchronised = lambda: retried.append(1) or unsynchronised()
    before, speed_before = motion.position, motion.velocity
    assert motion.update(0.18) == Progress.MOVING and retried
    # one cycle: the trapezoid of the cycle's start and end velocities, up to the jerk's share
    one_cycle = 0.5 * (speed_before + motion.velocity) * dt
    assert np.abs(motion.position - before - one_cycle).max() < 1e-5


def test_a_synchronisation_ruckig_cannot_find_is_done_unsynchronised() -> None:
    """A state met in an SSM run (collaboration, seed 1): the arm braking towards its next
    waypoint with the cap at 0.5. ruckig fails to phase-synchronise it (it raises); the cycle
    goes on with each joint on its own profile, and the motion arrives instead of failing."""
    import ruckig

    from hri.robot.motion import JointMotion, Progress

    position = [-1.0413006928063109, 0.32915243720957044, 2.2739022958826105, -1.6357265095945558e-10,
                0.5370645132120831, -2.609475074974294]
    velocity = [-0.10322597389194976, -0.08561763247269148, 0.03825328183216148, -1.632314292251659e-10,
                0.06450460017568664, -0.2580649347298779]
    acceleration = [4.064007360071086, 1.6902615324467867, 0.0, 0.0, 0.0, 10.160018400177787]
    target = np.array([-1.0430486557965084, 0.3274915528172382, 2.275097391363781, -1.718647800080965e-10,
                       0.5390037092787378, -2.613844982449788])
    vmax = np.array([2.094395, 2.094395, 3.141593, 3.926991, 3.926991, 3.926991])
    amax, jmax = [8.0, 8.0, 10.0, 15.0, 15.0, 20.0], [80.0, 80.0, 100.0, 150.0, 150.0, 200.0]

    def motion() -> JointMotion:
        m = JointMotion(np.array(position), vmax, amax, jmax, 1.0 / 240.0, velocity=np.array(velocity),
                        acceleration=np.array(acceleration))
        m.follow([target])
        return m

    inp = ruckig.InputParameter(6)  # ruckig itself, phase-synchronised, fails on this state
    inp.current_position, inp.current_velocity, inp.current_acceleration = position, velocity, acceleration
    inp.target_position, inp.target_velocity, inp.target_acceleration = target.tolist(), [0.0] * 6, [0.0] * 6
    inp.max_velocity, inp.max_acceleration, inp.max_jerk = (vmax * 0.5).tolist(), amax, jmax
    inp.synchronization = ruckig.Synchronization.Phase
    with pytest.raises(ruckig.RuckigError, match="t sync"):
        ruckig.Ruckig(6, 1.0 / 240.0).update(inp, ruckig.OutputParameter(6))
    m = motion()
    progress = []
    for _ in range(240):
        progress.append(m.update(0.5))
        if progress[-1] == Progress.ARRIVED:
            break
    assert Progress.ERROR not in progress and progress[-1] == Progress.ARRIVED
    assert np.allclose(m.position, target)


def test_a_move_whose_first_ik_solution_is_cut_off_takes_another_solution() -> None:
    """The UR-5 of two_workers, its elbow up over the right side of the table, is sent near its
    base on the left: the IK's first solution (nearest the current joints) folds the elbow the
    other way round, valid but with no path to it; the move takes the next solution instead of
    failing with no_path (which the robot's tree would ask again and again)."""
    scenario = load_scenario("two_workers", check_trees=False)
    build = lambda client: build_static_scene(client, scenario.room, scenario.furniture)  # noqa: E731
    client = p.connect(p.DIRECT)
    try:
        build(client)
        arm = RobotArm(client, scenario.robot.base, build, replace(scenario.robot.config, seed=3833383372),
                       scenario.robot.model)
        start = np.array([-1.1, -0.695, -1.514, -2.504, -1.571, 2.041])
        arm.move_to_joints(list(start))
        for _ in range(2400):
            if arm.status != MotionStatus.MOVING:
                break
            arm.step(DT)
            p.stepSimulation(physicsClientId=client)
        assert arm.status == MotionStatus.SUCCEEDED
        target = Pose(0.9795, 0.5762, 0.85, *DOWN)
        seeds = [start, arm.home, *arm._ik_seeds]
        first = arm.scene.solve_ik(target, seeds, arm.config.position_tolerance, arm.config.orientation_tolerance)
        assert first is not None
        assert plan_joint_path(arm.scene, start, first, np.random.default_rng(0), PlannerSettings()) is None
        arm.move_to(target)
        assert arm.status == MotionStatus.MOVING and arm.failure is None
        assert not np.allclose(arm._goal, first)
        position, _ = arm.scene.chain.tip_pose(arm._goal)
        assert np.linalg.norm(np.subtract(position, target.position)) < arm.config.position_tolerance
        arm.close()
    finally:
        p.disconnect(client)
