"""Who touched whom (hri.run.monitor): the robot moving into a person is a safety violation; a
person touching the robot at rest is a contact (``robot_touched``, ``robot_touches``), not a
failure of the robot's."""

from __future__ import annotations

from pathlib import Path

import pybullet as p

from hri.robot.scene import pose_tool_body
from hri.run.sim import Simulation
from hri.scenario.load import load_scenario

CHARGE = Path(__file__).parent / "data" / "touch" / "charge.yaml"
INSIDE_M = -1e-3  # deeper than the monitor's PENETRATION_TOLERANCE_M


def _inside(sim: Simulation) -> bool:
    """The test's own oracle: the person's body (posed where it is) inside the robot's arm or
    gripper, by PyBullet's closest points."""
    sim.plugin.preview(sim.now() - sim.dt, sim.dt)
    pose_tool_body(sim.client, sim.robot.tool_body, sim.robot.tool_frame())
    return any(point[8] < INSIDE_M for body in (sim.robot.body_id, sim.robot.tool_body)
               for point in p.getClosestPoints(sim.plugin.body_id, body, 0.0, physicsClientId=sim.client))


def test_the_charging_person_touches_the_robot_at_rest_a_contact_not_a_violation():
    with Simulation(load_scenario(str(CHARGE)), seed=1) as sim:
        rest = sim.scenario.safety.rest_speed_m_s
        inside_speeds = []
        for _ in range(int(sim.scenario.simulation.duration_s / sim.dt)):
            sim.step()
            if _inside(sim):
                inside_speeds.append(sim.robot.fastest_point_speed())
        stats = sim.stats.as_dict()
        events = sim.events.events
    assert len(inside_speeds) > 100  # the person's body went into the arm, for many steps
    assert max(inside_speeds) < rest  # the robot at rest at every step of contact
    assert stats["safety_violations"] == 0
    assert stats["robot_touches"] >= 1
    touches = [e for e in events if e["event"] == "robot_touched"]
    assert len(touches) == stats["robot_touches"]
    assert all(e["speed_m_s"] == 0.0 and e["depth_m"] > 0.0 for e in touches)
    assert not [e for e in events if e["event"] == "safety_violation"]


def test_the_robot_moving_into_the_person_is_a_violation():
    """The other side: the same contact while the robot's point there moves is the robot's."""
    with Simulation(load_scenario(str(CHARGE)), seed=1) as sim:
        for _ in range(int(sim.scenario.simulation.duration_s / sim.dt)):
            sim.step()
            if sim.stats.robot_touches:
                break
        assert sim.stats.robot_touches == 1 and sim.stats.safety_violations == 0
        robot, monitor = sim.robot, sim.monitor
        joint = robot.model.indices[0]
        q = p.getJointState(robot.body_id, joint, physicsClientId=sim.client)[0]
        p.resetJointState(robot.body_id, joint, q, 0.5, physicsClientId=sim.client)  # turning into the person
        monitor.measure_posed()
        assert monitor.last_separation < INSIDE_M
        [event] = [e for e in sim.events.events if e["event"] == "safety_violation"]
        assert "moving at" in event["reason"] and "inside the person's" in event["reason"]
        assert sim.stats.safety_violations == 1 and sim.stats.robot_touches == 1
