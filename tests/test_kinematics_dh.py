"""Arms from Denavit-Hartenberg tables (hri.kinematics.dh): the shipped UR-5 on two independent
paths, the table's own product of DH matrices and PyBullet's tool link of the body built from it;
IK round trips; the UR-5's kinematics service on the network; one line for each bad table."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pybullet as p
import pytest

from hri.base.errors import HriError
from hri.kinematics import Chain, solve
from hri.kinematics.arm_model import SHIPPED, shipped_dh, shipped_dh_path
from hri.kinematics.dh import dh_forward, read_dh
from hri.kinematics.service import dh_kinematics_service
from hri.kinematics.transforms import matrix_rpy, pose_error, rpy_matrix
from hri.net import Broker, Network, Node

from test_kinematics import link_frame, random_pose

TOLERANCE = 1e-6  # m and rad


@pytest.fixture(scope="module")
def ur5():
    return shipped_dh("ur5")


@pytest.fixture(scope="module")
def client():
    cid = p.connect(p.DIRECT)
    yield cid
    p.disconnect(cid)


def tool_link_index(client: int, body: int, name: str) -> int:
    links = {p.getJointInfo(body, j, physicsClientId=client)[12].decode(): j
             for j in range(p.getNumJoints(body, physicsClientId=client))}
    return links[name]


def test_the_ur5_table_and_its_pybullet_body_agree_at_1000_configurations(ur5, client, tmp_path):
    """FK of the table (dh_forward) vs PyBullet's tool link of the generated body, base placed at
    random; also the chain the arm uses, and the chain read back from the URDF text."""
    rng = np.random.default_rng(42)
    base_position, base_orientation = random_pose(rng)
    urdf = ur5.write_urdf(tmp_path)
    body = p.loadURDF(str(urdf), base_position, base_orientation, useFixedBase=True, physicsClientId=client)
    tool = tool_link_index(client, body, ur5.tool_link)
    revolute = [j for j in range(p.getNumJoints(body, physicsClientId=client))
                if p.getJointInfo(body, j, physicsClientId=client)[2] == p.JOINT_REVOLUTE]
    assert len(revolute) == 6
    chain = ur5.chain((base_position, base_orientation))
    from_urdf = Chain.from_urdf(urdf, ur5.base_link, ur5.tool_link, base_pose=(base_position, base_orientation))
    base = chain.base_pose
    worst_position = worst_angle = 0.0
    for _ in range(1000):
        q = chain.random(rng)
        for j, value in zip(revolute, q):
            p.resetJointState(body, j, float(value), physicsClientId=client)
        theirs = link_frame(p.getLinkState(body, tool, computeForwardKinematics=True, physicsClientId=client))
        table = dh_forward(ur5, q, base)
        position, angle = pose_error(theirs, table)
        worst_position, worst_angle = max(worst_position, position), max(worst_angle, angle)
        assert np.allclose(chain.forward(q), table, rtol=0.0, atol=1e-12)
        assert np.allclose(from_urdf.forward(q), table, rtol=0.0, atol=1e-12)
    assert worst_position < TOLERANCE and worst_angle < TOLERANCE, (worst_position, worst_angle)
    p.removeBody(body, physicsClientId=client)


def test_ik_round_trips_on_the_ur5(ur5):
    """A pose the arm reaches (FK of a random configuration) is reached again by IK from
    another start, to 1e-6 m and 1e-6 rad, and the solution is within the limits."""
    chain = ur5.chain()
    rng = np.random.default_rng(3)
    solved = 0
    for _ in range(100):
        q = chain.random(rng)
        target = chain.forward(q)
        start = chain.clip(q + rng.normal(0.0, 0.5, 6))
        result = solve(chain, target, start, position_tolerance=TOLERANCE, orientation_tolerance=TOLERANCE)
        assert result.valid, result
        reached = dh_forward(ur5, result.q)
        position, angle = pose_error(reached, target)
        assert position < TOLERANCE and angle < TOLERANCE
        assert chain.within_limits(result.q)
        solved += 1
    assert solved == 100


def test_the_ur5_offsets_stand_it_upright_and_its_limits_and_masses_are_read(ur5):
    chain = ur5.chain()
    tool = chain.forward(np.zeros(6))
    reach = 0.089159 + 0.425 + 0.39225 + 0.09465
    assert tool[:3, 3] == pytest.approx([0.0, -(0.10915 + 0.0823), reach], abs=1e-12)
    assert ur5.velocity_limits == pytest.approx([math.pi] * 6)
    assert chain.lower == pytest.approx([-2 * math.pi] * 6) and chain.upper == pytest.approx([2 * math.pi] * 6)
    assert ur5.link_masses.sum() + ur5.base_mass == pytest.approx(18.4)
    assert ur5.payload_kg == 5.0
    assert len(ur5.acceleration_limits) == len(ur5.jerk_limits) == 6
    assert shipped_dh_path("ur5") == SHIPPED["ur5"].locate() and shipped_dh_path("ur5").name == "ur5.yaml"


def test_the_shipped_tables_are_the_shipped_robots_of_one_registry(tmp_path, monkeypatch):
    """shipped_dh reads the DH tables of arm_model.SHIPPED, the one registry of shipped robots:
    a table entered there is found by name, and a shipped robot that is a URDF is no table."""
    from hri.kinematics import arm_model

    table = tmp_path / "arm.yaml"
    table.write_text(shipped_dh_path("ur5").read_text().replace("name: UR-5", "name: UR-5 copy"))
    monkeypatch.setitem(SHIPPED, "ur5_copy", arm_model.Shipped(lambda: table, "base_link", "tool0"))
    assert shipped_dh("ur5_copy").name == "UR-5 copy" and shipped_dh_path("ur5_copy") == table
    with pytest.raises(HriError, match=r"no shipped DH robot named 'panda' \(shipped: ur5, ur5_copy\)"):
        shipped_dh("panda")


@pytest.mark.parametrize("rpy", [(0.3, -1.2, 2.5), (0.0, math.pi / 2, 0.7), (0.0, -math.pi / 2, -2.0), (math.pi, 0.0, 0.0)])
def test_matrix_rpy_inverts_rpy_matrix(rpy):
    r = rpy_matrix(*rpy)
    assert np.allclose(rpy_matrix(*matrix_rpy(r)), r, atol=1e-15)


def test_matrix_rpy_at_gimbal_lock_with_exact_zeros():
    """Rz(pi/2) Ry(pi/2) with its zeros exact (as products of DH rotations give them)."""
    r = np.array([[0.0, -1.0, 0.0], [0.0, 0.0, 1.0], [-1.0, 0.0, 0.0]])
    assert np.allclose(rpy_matrix(*matrix_rpy(r)), r, atol=1e-15)


def test_the_ur5_kinematics_service_is_found_by_the_original_identifiers(ur5):
    clock = [0.0]
    net = Network({}, seed=1)
    broker = Broker()
    joints = [0.0, -1.2, 1.5, -1.9, -1.57, 0.0]
    device = Node(net.endpoint("ur5"), clock=lambda: clock[0])
    broker.register(device.offer(dh_kinematics_service(ur5, joints=lambda: joints)))
    record = broker.discover(all_of=["inverse-kinematic", "UR-5"])
    assert list(record.identifiers) == ["inverse-kinematic", "UR-5", "service"]
    tree = Node(net.endpoint("tree"), clock=lambda: clock[0], timeout=1.0)
    client = tree.client(record)

    def call(op, payload=None):
        future = client.call(op, payload)
        while future.pending:
            clock[0] += 0.01
            net.advance(clock[0])
        if future.failed:
            raise future.error
        return future.value

    fk = call("GET_FORWARD_KINEMATIC")
    table = dh_forward(ur5, joints)
    assert fk["position"] == pytest.approx(table[:3, 3].tolist(), abs=1e-12)
    start = [fk["position"], fk["orientation"]]
    end = [[fk["position"][0], fk["position"][1] + 0.2, fk["position"][2]], fk["orientation"]]
    path = call("INTERPOLATE", {"points": [start, end], "v_max": 0.1, "a_max": 0.5})
    assert path["valid"]
    steps = np.diff(path["times"])
    assert steps[:-1] == pytest.approx([1 / 8] * (len(steps) - 1))  # the UR-5's update rate
    assert 0.0 < steps[-1] <= 1 / 8 + 1e-12
    with pytest.raises(HriError, match="rate_hz: at most 8 set-points a second"):
        call("INTERPOLATE", {"points": [start, end], "v_max": 0.1, "a_max": 0.5, "rate_hz": 50})
    ik = call("GET_INVERSE_KINEMATIC", {"position": end[0], "orientation": end[1]})
    assert ik["valid"] and ik["q"] == pytest.approx(path["q"][-1], abs=1e-3)


GOOD = shipped_dh_path("ur5").read_text()


def bad(tmp_path: Path, old: str, new: str, count: int = 1) -> Path:
    assert GOOD.count(old) >= count, old
    path = tmp_path / "arm.yaml"
    path.write_text(GOOD.replace(old, new, count))
    return path


def line_of(path: Path, text: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if text in line)


@pytest.mark.parametrize("old, new, at, message", [
    ("    a: -0.425\n", "", "- name: shoulder_lift", "joint 'shoulder_lift': missing the column 'a' (every joint has d, a, alpha, theta)"),
    ("    d: 0.10915\n", "    d: .nan\n", "d: .nan", "joint 'wrist_1': d must be a finite number, got nan"),
    ("  geometry: {shape: capsule, radius: 0.05}", "  geometry: {shape: capsule, radius: -0.05}",
     "radius: -0.05", "joint 'elbow': geometry.radius must be positive, got -0.05"),
    ("    limits: {position: [-2pi, 2pi], velocity: pi, acceleration: 20.0, jerk: 200.0, effort: 28.0}\n", "",
     "- name: wrist_3", "joint 'wrist_3': no limits (position, velocity, acceleration, jerk are required)"),
    ("acceleration: 20.0, ", "", "velocity: pi, jerk", "joint 'wrist_3': limits: missing 'acceleration'"),
    ("theta: -pi/2\n", "theta: -pie/2\n", "-pie/2", "joint 'shoulder_lift': theta must be a number or pi-text"),
    ("    mass: 2.33\n", "    mass: 2.33\n    mass: 0.5\n", "mass: 0.5", "joints[2]: duplicate key 'mass'"),
    ("tool_link: tool0", "tool_link: link_elbow", "tool_link: link_elbow",
     "tool_link 'link_elbow' is also another link's name"),
    ("  update_rate_hz: 8 ", "  update_rate_hz: 0 ", "update_rate_hz: 0", "service.update_rate_hz must be positive, got 0"),
    ("shape: capsule, radius: 0.035", "shape: cone, radius: 0.035", "shape: cone",
     "geometry.shape must be one of capsule, box, got 'cone'"),
])
def test_a_bad_table_gives_one_line_at_its_place(tmp_path, old, new, at, message):
    path = bad(tmp_path, old, new)
    with pytest.raises(HriError) as caught:
        read_dh(path)
    err = caught.value
    assert err.file == str(path) and message in err.message, str(err)
    if at is not None:
        assert err.line == line_of(path, at), str(err)
    assert "\n" not in str(err)


def test_a_missing_dh_file_is_one_line(tmp_path):
    with pytest.raises(HriError, match="cannot read: No such file or directory") as caught:
        read_dh(tmp_path / "none.yaml")
    assert caught.value.file == str(tmp_path / "none.yaml")


def test_a_box_geometry_and_a_table_of_seven_joints_load_in_pybullet(tmp_path, client):
    text = GOOD.replace("shape: capsule", "shape: box")
    extra = GOOD[GOOD.index("  - name: wrist_3"):].replace("wrist_3", "wrist_4")
    path = tmp_path / "seven.yaml"
    path.write_text(text + extra.replace("shape: capsule", "shape: box"))
    arm = read_dh(path)
    assert len(arm.table) == 7 and arm.chain().nq == 7
    body = p.loadURDF(str(arm.write_urdf(tmp_path)), useFixedBase=True, physicsClientId=client)
    rng = np.random.default_rng(1)
    chain = arm.chain()
    tool = tool_link_index(client, body, arm.tool_link)
    movable = [j for j in range(p.getNumJoints(body, physicsClientId=client))
               if p.getJointInfo(body, j, physicsClientId=client)[2] == p.JOINT_REVOLUTE]
    for _ in range(20):
        q = chain.random(rng)
        for j, value in zip(movable, q):
            p.resetJointState(body, j, float(value), physicsClientId=client)
        theirs = link_frame(p.getLinkState(body, tool, computeForwardKinematics=True, physicsClientId=client))
        position, angle = pose_error(theirs, dh_forward(arm, q))
        assert position < TOLERANCE and angle < TOLERANCE
    p.removeBody(body, physicsClientId=client)


def test_the_ur5_body_plans_and_moves_as_the_simulations_arm(ur5):
    """The body built from the table, loaded as the run loads an arm (RobotArm, planning scene,
    jerk-limited motion under gravity at the published torques), reaches a tool pose 20 cm away."""
    from hri.base.geometry import Pose
    from hri.kinematics.arm_model import resolve_model
    from hri.robot.arm import RobotArm, RobotConfig
    from hri.robot.motion import MotionStatus

    client = p.connect(p.DIRECT)
    try:
        p.setGravity(0.0, 0.0, -9.81, physicsClientId=client)
        model = resolve_model("ur5")  # robot.model: ur5, as a scenario names it
        config = RobotConfig(home=model.settings["home"], max_acceleration=tuple(ur5.acceleration_limits),
                             max_jerk=tuple(ur5.jerk_limits))
        arm = RobotArm(client, Pose.from_xy_yaw(0.0, 0.0, 0.0, z=0.75), lambda c: [], config, model)
        start = arm.tool_pose()
        target = Pose(start.position[0] + 0.1, start.position[1] + 0.15, start.position[2] - 0.1, *start.orientation)
        arm.move_to(target)
        for _ in range(240 * 5):
            arm.step(1 / 240)
            p.stepSimulation(physicsClientId=client)
            if arm.status in (MotionStatus.SUCCEEDED, MotionStatus.FAILED):
                break
        assert arm.status is MotionStatus.SUCCEEDED, arm.failure
        assert np.allclose(arm.tool_pose().position, target.position, atol=5e-3)
        arm.close()
    finally:
        p.disconnect(client)


def test_a_ur5_run_offers_the_original_identifiers_and_its_kinematics_service():
    """In a run of the UR-5 (``robot.model: ur5``) the broker finds the robot as the original
    service network named it and the kinematics service its table declares, on the run's arm:
    forward kinematics of the arm's joints, 8 set-points a second. The LBR iisy offers no such
    service and keeps its identifiers."""
    from hri.robot.service import identifiers
    from hri.run.sim import Simulation
    from hri.scenario.load import load_scenario

    with Simulation(load_scenario("coexistence_ur5"), seed=1) as sim:
        broker = sim.services.broker
        robot = broker.find(all_of=["UR-5", "robot"])
        assert [list(r.identifiers) for r in robot] == [["UR-5-1", "UR-5", "industrial-robot", "robot"]]
        service = broker.find(all_of=["inverse-kinematic", "UR-5"])
        assert [list(r.identifiers) for r in service] == [["inverse-kinematic", "UR-5", "service"]]
        assert {"GET_FORWARD_KINEMATIC", "INTERPOLATE"} <= set(service[0].ops)
        arm = sim.robot
        tool = arm.tool_pose()
        table = dh_forward(shipped_dh("ur5"), arm.joint_positions(), _base_matrix(arm.base_pose))
        assert np.allclose(table[:3, 3], tool.position, atol=1e-6)
    with Simulation(load_scenario("coexistence"), seed=1) as sim:
        broker = sim.services.broker
        assert not broker.find(any_of=["inverse-kinematic"])
        assert list(broker.find(all_of=["robot"], op="move_to")[0].identifiers) == list(identifiers("lbr-iisy"))


def _base_matrix(pose) -> np.ndarray:
    from hri.kinematics.transforms import pose_matrix

    return pose_matrix((pose.position, pose.orientation))
