"""The tool and the carried part count as the robot in the safety functions' distances
(hri.run.robot_shapes): the separation, SSM's S_p check and PFL; zones mode keeps the arm alone."""

from __future__ import annotations

import pybullet as p
import pytest

from hri.base.errors import HriError
from hri.robot.scene import DEFAULT_TOOL, pose_tool_body
from hri.run.robot_shapes import PART_NAME, TOOL_NAME, RobotShapes
from hri.run.sim import Simulation
from hri.scenario.load import load_scenario

# The robot at home holds a large flat part (30 x 30 x 4 cm, wider than its gripper) under its
# tool; the person stands in front of the table facing it, 0.4 m from the tool's axis: the
# part's edge, not the arm or the gripper, is nearest to them.
HOLDING = ["parts.size=[0.3, 0.3, 0.04]", "person.start={position: [1.3, 1.45, 0.0], yaw_deg: -90}"]


def _holding(sim: Simulation) -> None:
    """Put the first part under the tool and let the robot grasp it."""
    tool = sim.robot.tool_pose()
    part = sim.parts.parts[0]
    below = (tool.position[0], tool.position[1], tool.position[2] - sim.parts.half[2])
    p.resetBasePositionAndOrientation(part.body_id, below, (0.0, 0.0, 0.0, 1.0), physicsClientId=sim.client)
    assert sim.parts.robot_grasp()
    sim.plugin.preview(0.0, sim.dt)  # the person's body posed where they stand


def _nearest(sim: Simulation, body: int) -> float:
    """The test's own oracle: PyBullet's distance of the person to one body (the tool's put at
    the tool frame first)."""
    if body == sim.robot.tool_body:
        pose_tool_body(sim.client, body, sim.robot.tool_frame())
    return min(pt[8] for pt in p.getClosestPoints(sim.plugin.body_id, body, 10.0, physicsClientId=sim.client))


def _fraction_for(terms, required_m: float) -> float:
    """The joint speed fraction at which S_p is ``required_m`` (S_p grows with the speed)."""
    low, high = 0.0, 1.0
    assert terms.required_m(low) < required_m < terms.required_m(high)
    for _ in range(50):
        middle = (low + high) / 2.0
        low, high = (middle, high) if terms.required_m(middle) < required_m else (low, middle)
    return low


def _step_monitor_moving(sim: Simulation, fraction: float) -> None:
    """The base joint turning at ``fraction`` of its top speed (nothing else moved), and one
    step of the safety monitor on it."""
    robot = sim.robot
    joint = robot.model.indices[0]
    q = p.getJointState(robot.body_id, joint, physicsClientId=sim.client)[0]
    p.resetJointState(robot.body_id, joint, q, fraction * robot.model.max_velocity[0], physicsClientId=sim.client)
    t, pose = sim.now() + sim.dt, sim.plugin.pose
    sim.monitor.begin_step(t, pose.x, pose.y, True)
    sim.monitor.finish_step(t, pose.x, pose.y, True, 0.0)


def test_the_carried_part_not_the_arm_is_nearest_and_s_p_is_checked_against_it():
    scenario = load_scenario("collaboration", ["safety.mode=ssm", *HOLDING])
    with Simulation(scenario, seed=1) as sim:
        _holding(sim)
        part = sim.parts.robot_part_body()
        arm, tool, carried = (_nearest(sim, body) for body in (sim.robot.body_id, sim.robot.tool_body, part))
        assert carried + 0.05 < min(arm, tool)  # the part comes nearest, by 5 cm at least
        # S_p at the robot's speed lies between the part's distance and the arm's: the robot
        # moving at that speed is too fast for the part, fast enough for the arm alone
        fraction = _fraction_for(sim.ssm.terms, (carried + min(arm, tool)) / 2.0)
        _step_monitor_moving(sim, fraction)
        assert sim.stats.safety_violations == 1  # 0 with the part left out of the distances
        assert sim.monitor.last_separation == pytest.approx(carried, abs=1e-9)
        assert sim.monitor.closest_approach()["robot_link"] == PART_NAME
        assert sim.stats.ssm_margin_min_m < 0.0
        event = next(e for e in sim.events.events if e["event"] == "safety_violation")
        assert "below S_p" in event["reason"]


def test_the_same_speed_keeps_s_p_to_the_arm_alone():
    """The oracle's other side: without the part (the robot holds nothing), the same speed is
    within S_p, so the violation above is the part's."""
    scenario = load_scenario("collaboration", ["safety.mode=ssm", *HOLDING])
    with Simulation(scenario, seed=1) as sim:
        sim.plugin.preview(0.0, sim.dt)
        arm, tool = _nearest(sim, sim.robot.body_id), _nearest(sim, sim.robot.tool_body)
        fraction = _fraction_for(sim.ssm.terms, min(arm, tool) - 0.05)
        _step_monitor_moving(sim, fraction)
        assert sim.stats.safety_violations == 0
        assert sim.monitor.last_separation == pytest.approx(min(arm, tool), abs=1e-9)


def test_the_tool_is_measured_where_the_tool_frame_is():
    scenario = load_scenario("collaboration", ["safety.mode=ssm"])
    with Simulation(scenario, seed=1) as sim:
        shapes = sim.monitor.shapes
        assert shapes.bodies() == [sim.robot.body_id, sim.robot.tool_body]
        position, orientation = p.getBasePositionAndOrientation(sim.robot.tool_body, physicsClientId=sim.client)
        frame = sim.robot.tool_frame()
        assert position == pytest.approx(frame[0], abs=1e-9)
        assert orientation == pytest.approx(frame[1], abs=1e-6)  # PyBullet renormalises
        # the gripper's cylinder reaches length_m along the tool frame's z axis
        axis = p.rotateVector(frame[1], (0.0, 0.0, 1.0))
        tip = [c + (DEFAULT_TOOL.length_m - 1e-3) * a for c, a in zip(frame[0], axis)]
        probe = p.createCollisionShape(p.GEOM_SPHERE, radius=1e-3, physicsClientId=sim.client)
        body = p.createMultiBody(0.0, probe, basePosition=tip, physicsClientId=sim.client)
        record = min(p.getClosestPoints(body, sim.robot.tool_body, 1.0, physicsClientId=sim.client), key=lambda r: r[8])
        assert record[8] <= 0.0
        assert shapes.name((0, body, sim.robot.tool_body, -1, -1)) == TOOL_NAME


def test_zones_mode_measures_the_arm_alone_and_adds_no_body():
    scenario = load_scenario("collaboration", HOLDING)
    with Simulation(scenario, seed=1) as sim:
        assert sim.robot.tool_body is None
        _holding(sim)
        sim.monitor.measure_posed()
        assert sim.monitor.shapes.bodies() == [sim.robot.body_id]
        assert sim.monitor.last_separation == pytest.approx(_nearest(sim, sim.robot.body_id), abs=1e-9)


def test_an_arm_with_a_hand_of_its_own_gets_no_default_gripper():
    scenario = load_scenario("coexistence_panda", ["safety.mode=ssm"])
    with Simulation(scenario, seed=1) as sim:
        assert sim.robot.tool_body is None
        assert RobotShapes(sim.client, sim.robot, whole=True).bodies() == [sim.robot.body_id]


def test_pfl_takes_the_tool_mass_into_the_effective_mass():
    ssm = load_scenario("collaboration", ["safety.mode=ssm", "robot.tool={mass_kg: 2.0}"])
    zones = load_scenario("collaboration")
    with Simulation(ssm, seed=1) as with_tool, Simulation(zones, seed=1) as without:
        assert with_tool.robot.tool_mass_kg == 2.0
        assert with_tool._pfl_setup().robot_mass_kg == pytest.approx(without._pfl_setup().robot_mass_kg + 2.0)


@pytest.mark.parametrize("setting, message", [
    ("robot.tool={radius_m: -0.05}", "robot.tool.radius_m must be within 0.001..0.5 m"),
    ("robot.tool={length_m: 0}", "robot.tool.length_m must be within 0.001..1 m"),
    ("robot.tool={mass_kg: -1}", "robot.tool.mass_kg must be within 0..1000 kg"),
])
def test_a_tool_out_of_range_is_refused_with_its_key(setting, message):
    with pytest.raises(HriError, match=message):
        load_scenario("collaboration", [setting])
