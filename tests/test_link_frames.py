"""The robot's frames computed from its joint positions (hri.kinematics.link_frames, calibrated by
hri.run.state.robot_link_frames) are the frames PyBullet gives, in every configuration: what the
MCAP writer draws the arm with instead of reading its links."""

from __future__ import annotations

import numpy as np
import pybullet as p
import pytest

from hri.robot.scene import pose_tool_body
from hri.run.sim import Simulation
from hri.scenario.load import load_scenario

#: PyBullet's link frames are single precision: about 3e-7 apart from double-precision ones
TOLERANCE = 1e-6


def _same_rotation(a, b) -> np.ndarray:
    """``a`` with the sign of the quaternion ``b`` (q and -q are one rotation)."""
    a = np.asarray(a)
    return -a if float(np.dot(a, b)) < 0.0 else a


@pytest.mark.parametrize("scenario, sets", [("coexistence", []), ("coexistence_ur5", ["safety.mode=ssm"])])
def test_the_frames_are_pybullets_in_sampled_configurations(scenario: str, sets: list[str]) -> None:
    with Simulation(load_scenario(scenario, sets), 1) as sim:
        frames = sim.view.robot_frames()
        assert frames is not None
        robot, client = sim.robot, sim.client
        assert frames.names == tuple(sim.view.bodies().robot)  # the links, tool (and the tool's body in SSM)
        assert ("tool_body" in frames.names) == bool(sets)
        rng = np.random.default_rng(7)
        lower = np.maximum(robot.model.lower, -np.pi)
        upper = np.minimum(robot.model.upper, np.pi)
        worst = 0.0
        for step in range(1, 41):
            q = rng.uniform(lower, upper)
            for joint, angle in zip(robot.model.indices, q):
                p.resetJointState(robot.body_id, joint, float(angle), physicsClientId=client)
            if robot.tool_body is not None:
                pose_tool_body(client, robot.tool_body, robot.tool_frame())
            sim.step_count += 1  # a new step for the view: the bodies read again
            truth = sim.view.bodies().robot
            values = frames.values(robot.joint_positions())
            for k, name in enumerate(frames.names):
                position, orientation = truth[name]
                got = values[7 * k:7 * k + 7]
                worst = max(worst, float(np.max(np.abs(np.subtract(got[:3], position)))),
                            float(np.max(np.abs(_same_rotation(got[3:], orientation) - orientation))))
        assert worst < TOLERANCE


def test_an_arm_whose_links_move_outside_its_chain_is_read() -> None:
    """The Panda's fingers move with joints of their own: no frames from the chain alone."""
    with Simulation(load_scenario("coexistence_panda"), 1) as sim:
        assert sim.view.robot_frames() is None
        assert any("finger" in name for name in sim.view.bodies().robot)
