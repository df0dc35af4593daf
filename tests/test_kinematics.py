"""The shared kinematics core (hri.kinematics) checked against PyBullet and against itself.

Forward kinematics is compared with PyBullet's link frames on the robot, on two arms from
``pybullet_data`` (KUKA iiwa: rpy joint origins; Franka Panda: a prismatic finger) and on
the humanoid's arm (spherical joints, ``globalScaling``). PyBullet rounds the link frame it
reports in ``getLinkState``'s elements 4/5 to single precision (errors of ~1e-8 m), so the
double-precision link frame is rebuilt from the centre-of-mass frame (elements 0/1) and the
local inertial frame (elements 2/3); elements 4/5 are checked to single precision.
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pybullet as p
import pybullet_data
import pytest

from hri.base.geometry import Pose
from hri.kinematics import (Chain, cartesian_line, cartesian_waypoints, geometry_pose, joint_path,
                            pose_matrix, pose_tuple, read_urdf, sample_times, solve, solve_path, trapezoid)
from hri.kinematics.transforms import (invert, log_rotation, matrix_quaternion, quaternion_matrix,
                                       rotation_angle, transform)

ROBOT_URDF = Path(__file__).resolve().parent.parent / "assets" / "robot" / "lbr_iisy.urdf"
DATA = Path(pybullet_data.getDataPath())
HUMANOID_SCALE = 0.25  # as hri.actor.animation.SCALE


@pytest.fixture(scope="module")
def client():
    cid = p.connect(p.DIRECT)
    yield cid
    p.disconnect(cid)


@pytest.fixture(scope="module")
def robot() -> Chain:
    return Chain.from_urdf(ROBOT_URDF, "base_link", "tool0")


def random_pose(rng: np.random.Generator) -> tuple[list[float], list[float]]:
    quat = rng.normal(size=4)
    return rng.uniform(-1.0, 1.0, 3).tolist(), (quat / np.linalg.norm(quat)).tolist()


def link_frame(state) -> np.ndarray:
    """The URDF link frame in double precision: COM frame times inverse local inertial frame."""
    com = transform(quaternion_matrix(state[1]), state[0])
    return com @ invert(transform(quaternion_matrix(state[3]), state[2]))


def set_joints(client: int, body: int, chain: Chain, q: np.ndarray) -> None:
    index = {p.getJointInfo(body, j, physicsClientId=client)[1].decode(): j
             for j in range(p.getNumJoints(body, physicsClientId=client))}
    i = 0
    for joint in chain.movable:
        if joint.kind == "spherical":
            p.resetJointStateMultiDof(body, index[joint.name], q[i:i + 4].tolist(),
                                      physicsClientId=client)
        else:
            p.resetJointState(body, index[joint.name], float(q[i]), physicsClientId=client)
        i += joint.nq


def compare_with_pybullet(client: int, chain: Chain, body: int, rng: np.random.Generator,
                          samples: int) -> tuple[float, float, float]:
    """Largest position error, rotation-matrix error, and single-precision element-4 error."""
    links = {p.getJointInfo(body, j, physicsClientId=client)[12].decode(): j
             for j in range(p.getNumJoints(body, physicsClientId=client))}
    checked = [name for name in chain.link_names if name in links]
    assert chain.tip_link in checked
    position = rotation = single = 0.0
    for _ in range(samples):
        q = chain.random(rng)
        set_joints(client, body, chain, q)
        frames = chain.link_frames(q)
        assert np.allclose(frames[chain.tip_link], chain.forward(q), rtol=0.0, atol=1e-15)
        for name in checked:
            state = p.getLinkState(body, links[name], computeForwardKinematics=True,
                                   physicsClientId=client)
            theirs = link_frame(state)
            position = max(position, float(np.abs(theirs[:3, 3] - frames[name][:3, 3]).max()))
            rotation = max(rotation, float(np.abs(theirs[:3, :3] - frames[name][:3, :3]).max()))
            single = max(single, float(np.abs(np.array(state[4]) - frames[name][:3, 3]).max()))
    return position, rotation, single


@pytest.mark.parametrize("urdf, base, tip", [
    (ROBOT_URDF, "base_link", "tool0"),
    (DATA / "kuka_iiwa" / "model.urdf", None, None),
    (DATA / "franka_panda" / "panda.urdf", "panda_link0", "panda_leftfinger"),
])
def test_forward_kinematics_matches_pybullet(client, urdf, base, tip):
    rng = np.random.default_rng(7)
    base_position, base_orientation = random_pose(rng)
    body = p.loadURDF(str(urdf), base_position, base_orientation, useFixedBase=True,
                      physicsClientId=client)
    chain = Chain.from_urdf(urdf, base, tip, base_pose=(base_position, base_orientation))
    position, rotation, single = compare_with_pybullet(client, chain, body, rng, samples=100)
    assert position < 1e-9
    assert rotation < 1e-9
    assert single < 1e-6
    p.removeBody(body, physicsClientId=client)


def test_humanoid_hand_matches_the_person_body(client):
    """Where the hand is: the arm chain fed with a BodyPose as HumanoidBody poses it."""
    from hri.actor.pose import BALL_JOINTS, HINGE_JOINTS, BodyPose
    from hri.actor.body import HumanoidBody

    body = HumanoidBody(client)
    arm = Chain.from_urdf(DATA / "humanoid" / "humanoid.urdf", "base", "right_wrist",
                          scale=HUMANOID_SCALE)
    assert arm.joint_names == ("chest", "right_shoulder", "right_elbow")
    wrist = body.joint_index["right_wrist"]
    rng = np.random.default_rng(3)
    worst = 0.0
    for _ in range(50):
        pose = BodyPose.rest()
        pose.root = rng.uniform(-0.1, 0.1, 3)
        pose.balls = rng.normal(size=(len(BALL_JOINTS), 4))
        pose.balls /= np.linalg.norm(pose.balls, axis=1, keepdims=True)
        pose.hinges = rng.uniform(0.0, 2.0, len(HINGE_JOINTS))
        base_position, base_orientation = body.apply(pose, *rng.uniform(0.0, 5.0, 2),
                                                     rng.uniform(-math.pi, math.pi))
        arm.base_pose = (tuple(base_position), tuple(base_orientation))
        q = np.concatenate([pose.balls[BALL_JOINTS.index("chest")],
                            pose.balls[BALL_JOINTS.index("right_shoulder")],
                            [pose.hinges[HINGE_JOINTS.index("right_elbow")]]])
        state = p.getLinkState(body.body_id, wrist, computeForwardKinematics=True,
                               physicsClientId=client)
        theirs = link_frame(state)
        worst = max(worst, float(np.abs(theirs - arm.forward(q)).max()))
        hand_position, hand_orientation = body.hand_pose()  # what the parts use: the same chain
        worst = max(worst, float(np.abs(theirs - pose_matrix((hand_position, hand_orientation))).max()))
    assert worst < 1e-9
    body.remove()


def finite_difference_jacobian(chain: Chain, q: np.ndarray, h: float = 1e-6) -> np.ndarray:
    jac = np.zeros((6, chain.nv))
    for k in range(chain.nv):
        step = np.zeros(chain.nv)
        step[k] = h
        plus, minus = chain.forward(chain.integrate(q, step)), chain.forward(chain.integrate(q, -step))
        jac[:3, k] = (plus[:3, 3] - minus[:3, 3]) / (2 * h)
        jac[3:, k] = log_rotation(plus[:3, :3] @ minus[:3, :3].T) / (2 * h)
    return jac


@pytest.mark.parametrize("urdf, base, tip, scale", [
    (ROBOT_URDF, "base_link", "tool0", 1.0),
    (DATA / "franka_panda" / "panda.urdf", "panda_link0", "panda_leftfinger", 1.0),
    (DATA / "humanoid" / "humanoid.urdf", "base", "right_wrist", HUMANOID_SCALE),
])
def test_jacobian_matches_finite_differences(urdf, base, tip, scale):
    rng = np.random.default_rng(11)
    chain = Chain.from_urdf(urdf, base, tip, scale=scale, base_pose=random_pose(rng))
    for _ in range(20):
        q = chain.random(rng)
        assert np.abs(chain.jacobian(q) - finite_difference_jacobian(chain, q)).max() < 1e-7


def test_an_arm_walked_in_batches_gives_the_bits_of_the_joint_by_joint_walk():
    """The arm's chain (revolute and fixed joints) takes the batched path; the IK runs it per
    iteration, and a run's results depend on its last bits."""
    rng = np.random.default_rng(12)
    arm = Chain.from_urdf(ROBOT_URDF, "base_link", "tool0", base_pose=random_pose(rng))
    assert arm._revolute is not None
    batched = [arm.forward_and_jacobian(q) for q in (arm.random(rng) for _ in range(50))]
    rng = np.random.default_rng(12)
    random_pose(rng)
    arm._revolute = None  # the general walk, one joint at a time
    for tip, jac in batched:
        q = arm.random(rng)
        assert np.array_equal(arm.forward_and_jacobian(q)[0], tip)
        assert np.array_equal(arm.forward_and_jacobian(q)[1], jac)


def assert_reaches(chain: Chain, result, target: np.ndarray) -> None:
    assert result.valid, result
    reached = chain.forward(result.q)
    assert np.linalg.norm(reached[:3, 3] - target[:3, 3]) <= 1e-4
    assert rotation_angle(reached[:3, :3].T @ target[:3, :3]) <= 1e-3
    assert result.position_error_m <= 1e-4
    assert chain.within_limits(result.q)


def test_ik_reaches_reachable_targets_from_near_and_far(robot):
    rng = np.random.default_rng(5)
    for _ in range(40):
        q_goal = robot.random(rng)
        target = robot.forward(q_goal)
        near = robot.clip(q_goal + rng.normal(0.0, 0.2, robot.nv))
        assert_reaches(robot, solve(robot, target, near), target)
        assert_reaches(robot, solve(robot, target, robot.random(rng)), target)


def test_ik_on_a_redundant_arm_and_position_only_on_the_humanoid_arm():
    rng = np.random.default_rng(6)
    kuka = Chain.from_urdf(DATA / "kuka_iiwa" / "model.urdf")
    for _ in range(10):
        target = kuka.forward(kuka.random(rng))
        assert_reaches(kuka, solve(kuka, target, kuka.random(rng)), target)
    arm = Chain.from_urdf(DATA / "humanoid" / "humanoid.urdf", "base", "right_wrist",
                          scale=HUMANOID_SCALE)
    for _ in range(10):
        hand = arm.forward(arm.random(rng))[:3, 3]
        result = solve(arm, (hand, (0, 0, 0, 1)), arm.neutral(), orientation=False)
        assert result.valid and result.position_error_m <= 1e-4
        assert np.linalg.norm(arm.forward(result.q)[:3, 3] - hand) <= 1e-4


def test_ik_flags_targets_out_of_reach(robot):
    q_now = np.array([0.0, 0.2, 2.0, 0.0, 0.94, 0.0])
    for position in [(3.0, 0.0, 0.5), (0.0, -3.0, 1.0), (1.0, 1.0, 2.5)]:
        result = solve(robot, (position, (0.0, 0.0, 0.0, 1.0)), q_now)
        assert not result.valid
        reached = robot.forward(result.q)[:3, 3]
        assert result.position_error_m == pytest.approx(np.linalg.norm(reached - position))
        assert result.position_error_m > 1.0
        assert robot.within_limits(result.q)


def test_ik_flags_targets_reachable_only_outside_the_joint_limits(robot):
    narrow = Chain([replace(j, lower=-0.5, upper=0.5) if j.kind == "revolute" else j
                    for j in robot.joints], robot.base_link, robot.tip_link)
    rng = np.random.default_rng(8)
    for _ in range(5):
        q = rng.uniform(-0.4, 0.4, 6)
        q[1] = 1.5  # the shoulder well beyond its narrowed limit
        target = narrow.forward(q)
        result = solve(narrow, target, np.zeros(6))
        assert not result.valid
        assert result.position_error_m > 1e-3
        assert narrow.within_limits(result.q)
        assert solve(robot, target, np.zeros(6)).valid  # the real limits allow it


def test_ik_returns_the_solution_nearest_the_current_joints(robot):
    rng = np.random.default_rng(9)
    checked = 0
    while checked < 20:
        q = robot.random(rng) * 0.8
        if np.linalg.svd(robot.jacobian(q), compute_uv=False).min() < 0.05:
            continue  # near a singularity a small offset can need a large joint motion
        target = robot.forward(q)
        target[:3, 3] += rng.normal(0.0, 1.0, 3) * 0.01 / math.sqrt(3)
        result = solve(robot, target, q)
        assert result.valid
        assert robot.distance(result.q, q) < 0.1
        checked += 1
    # A6 turns +-350 deg: a pose reached at A6 = 5.5 rad must not jump to 5.5 - 2 pi
    q = np.array([0.3, 0.5, 1.2, 0.4, 0.8, 5.5])
    result = solve(robot, robot.forward(q), q + 0.05)
    assert result.valid and abs(result.q[5] - 5.5) < 0.01


def test_ik_along_a_cartesian_line(robot):
    q = np.array([0.0, 0.2, 2.0, 0.0, 0.94, 0.0])
    start = robot.tip_pose(q)
    (x, y, z), quat = start
    line = cartesian_line(start, ((x + 0.2, y - 0.1, z - 0.1), quat), 0.5, 2.0, 50.0)
    results = solve_path(robot, line.poses, q)
    assert all(r.valid for r in results)
    steps = np.abs(np.diff([q, *[r.q for r in results]], axis=0)).max()
    assert steps < 0.1


def test_trapezoid_and_sample_times():
    long = trapezoid(1.0, 0.5, 1.0)     # 0.5 s up, 1.5 s cruise, 0.5 s down
    assert long.duration == pytest.approx(2.5) and long.peak_velocity == 0.5
    assert float(long.position(long.duration)) == pytest.approx(1.0)
    short = trapezoid(0.1, 0.5, 1.0)    # triangular: peak sqrt(a d) < v_max
    assert short.cruise_time == 0.0 and short.peak_velocity == pytest.approx(math.sqrt(0.1))
    assert short.duration == pytest.approx(2 * math.sqrt(0.1))
    times = sample_times(0.25, 10.0)
    assert times.tolist() == pytest.approx([0.0, 0.1, 0.2, 0.25])
    assert sample_times(0.3, 10.0)[-1] == 0.3 and len(sample_times(0.3, 10.0)) == 4
    assert sample_times(0.0, 10.0).tolist() == [0.0]


def path_kinematics(times: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Speeds between samples and accelerations between those (divided differences)."""
    dt = np.diff(times)
    velocity = np.diff(values, axis=0) / dt[:, None]
    mid = times[:-1] + dt / 2
    return velocity, np.diff(velocity, axis=0) / np.diff(mid)[:, None]


@pytest.mark.parametrize("offset, v_max, a_max", [((0.6, -0.3, 0.2), 0.25, 1.0),
                                                  ((0.02, 0.0, 0.0), 0.25, 1.0)])
def test_cartesian_line_respects_limits_and_ends_at_the_goal(offset, v_max, a_max):
    start = Pose(0.4, 0.1, 0.8, *matrix_quaternion(np.eye(3)))
    end_quat = matrix_quaternion(quaternion_matrix((0.3, -0.2, 0.5, 0.8)))
    end = ((0.4 + offset[0], 0.1 + offset[1], 0.8 + offset[2]), end_quat)
    line = cartesian_line(start, end, v_max, a_max, rate_hz=100.0, eq_radius=0.05)
    times = np.array(line.times)
    positions = np.array([pose[0] for pose in line.poses])
    assert line.poses[0][0] == start.position
    assert line.poses[-1] == end and times[-1] == line.duration
    assert np.allclose(np.diff(times)[:-1], 0.01)
    velocity, acceleration = path_kinematics(times, positions)
    assert np.linalg.norm(velocity, axis=1).max() <= v_max * (1 + 1e-9)
    assert np.linalg.norm(acceleration, axis=1).max() <= a_max * (1 + 1e-6)
    # on the straight segment, and the rotation advances in step with the distance
    direction = np.array(offset) / np.linalg.norm(offset)
    along = (positions - positions[0]) @ direction
    assert np.abs(positions - positions[0] - np.outer(along, direction)).max() < 1e-12
    total = rotation_angle(pose_matrix(start)[:3, :3].T @ pose_matrix(end)[:3, :3])
    for pose, s in zip(line.poses, along / np.linalg.norm(offset)):
        turned = rotation_angle(pose_matrix(start)[:3, :3].T @ quaternion_matrix(pose[1]))
        assert turned == pytest.approx(s * total, abs=1e-9)


def test_cartesian_rotation_only_and_waypoints():
    start = ((0.5, 0.0, 0.5), (0.0, 0.0, 0.0, 1.0))
    turned = ((0.5, 0.0, 0.5), (0.0, 0.0, math.sin(0.5), math.cos(0.5)))  # 1 rad about z
    line = cartesian_line(start, turned, v_max=0.2, a_max=1.0, rate_hz=50.0, eq_radius=0.1)
    assert line.length == pytest.approx(0.1) and line.duration > 0.0
    angles = [rotation_angle(quaternion_matrix(q)) for _, q in line.poses]
    assert np.diff(angles).max() / (1 / 50.0) <= 0.2 / 0.1 * (1 + 1e-9)
    path = cartesian_waypoints([start, ((0.6, 0.0, 0.5), start[1]), ((0.6, 0.1, 0.5), start[1])],
                               0.2, 1.0, 50.0)
    assert path.poses[-1] == ((0.6, 0.1, 0.5), start[1])
    assert np.all(np.diff(path.times) > 0.0)
    assert path.duration == pytest.approx(2 * trapezoid(0.1, 0.2, 1.0).duration)


def test_joint_path_is_synchronised_within_per_joint_limits():
    q0 = np.array([0.0, 0.2, 2.0, 0.0, 0.94, 0.0])
    q1 = np.array([1.0, -0.3, 1.0, 0.5, 0.2, 3.0])
    v_max = np.array([2.0, 2.0, 3.0, 4.0, 4.0, 4.0])
    a_max = np.array([8.0, 8.0, 10.0, 15.0, 15.0, 20.0])
    path = joint_path(q0, q1, v_max, a_max, rate_hz=250.0)
    times, positions = np.array(path.times), np.array(path.positions)
    assert positions[-1].tolist() == q1.tolist() and positions[0] == pytest.approx(q0)
    velocity, acceleration = path_kinematics(times, positions)
    assert np.all(np.abs(velocity) <= v_max * (1 + 1e-9))
    assert np.all(np.abs(acceleration) <= a_max * (1 + 1e-6))
    fraction = (positions - q0) / (q1 - q0)       # one straight line: all joints in step
    assert np.abs(fraction - fraction[:, :1]).max() < 1e-9
    slowest = max(trapezoid(d, v, a).duration for d, v, a in zip(q1 - q0, v_max, a_max))
    assert path.duration == pytest.approx(slowest, rel=1e-9)  # time-optimal
    jerk_limited = joint_path(q0, q1, v_max, a_max, 250.0, j_max=100.0)
    assert jerk_limited.duration > path.duration and jerk_limited.positions[-1] == tuple(q1)
    assert joint_path(q0, q0, v_max, a_max, 250.0).positions == (tuple(q0),)


def test_pose_conversions_round_trip():
    rng = np.random.default_rng(2)
    for _ in range(100):
        position, quat = random_pose(rng)
        t = pose_matrix((position, quat))
        back = pose_tuple(t)
        assert np.allclose(back[0], position)
        assert abs(abs(np.dot(back[1], quat)) - 1.0) < 1e-12
        pose = geometry_pose(t)
        assert np.allclose(pose_matrix(pose), t, atol=1e-15)
        w = rng.normal(size=3)
        w *= (math.pi - rng.uniform(0, 1e-4)) / np.linalg.norm(w)  # near pi: the hard case
        r = quaternion_matrix(matrix_quaternion(transform(quaternion_matrix(quat))[:3, :3]))
        assert np.allclose(r, t[:3, :3])
        from hri.kinematics.transforms import exp_rotation
        assert np.allclose(exp_rotation(log_rotation(exp_rotation(w))), exp_rotation(w), atol=1e-12)


def test_the_rotation_vector_and_its_angle_at_once_are_the_numbers_of_each_alone():
    """The IK takes both from one call: the same bits as log_rotation and rotation_angle,
    near 0, in between and near pi (where the axis is read another way)."""
    from hri.kinematics.transforms import exp_rotation, log_rotation_and_angle
    rng = np.random.default_rng(5)
    for angle in (0.0, 1e-10, 1e-5, 0.3, 2.0, math.pi - 1e-4, math.pi):
        w = rng.normal(size=3)
        r = exp_rotation(w * angle / np.linalg.norm(w)) @ exp_rotation(rng.normal(size=3) * 1e-3)
        vector, alone = log_rotation_and_angle(r)
        assert np.array_equal(vector, log_rotation(r))
        assert alone == rotation_angle(r)


def test_urdf_errors_are_clear(tmp_path):
    with pytest.raises(ValueError, match="not below"):
        Chain.from_urdf(ROBOT_URDF, "tool0", "link3")
    with pytest.raises(ValueError, match="name the tip"):
        Chain.from_urdf(DATA / "humanoid" / "humanoid.urdf")
    floating = tmp_path / "floating.urdf"
    floating.write_text('<robot name="f"><link name="a"/><link name="b"/>'
                        '<joint name="j" type="floating"><parent link="a"/><child link="b"/>'
                        '</joint></robot>')
    with pytest.raises(ValueError, match="not supported"):
        read_urdf(floating)
    with pytest.raises(ValueError, match="takes 6 joint values"):
        Chain.from_urdf(ROBOT_URDF, "base_link", "tool0").forward([0.0] * 5)
