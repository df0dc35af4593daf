"""Demo: ``python -m hri.kinematics`` prints FK, IK and a Cartesian line of the robot arm,
and where the humanoid's right hand is in its rest pose."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pybullet_data

from hri.kinematics import Chain, cartesian_line, joint_path, solve, solve_path

ROBOT_URDF = Path(__file__).resolve().parent.parent.parent / "assets" / "robot" / "lbr_iisy.urdf"
HOME = [0.0, 0.2, 2.0, 0.0, 0.94159, 0.0]  # hri.robot.arm.HOME, rounded


def _fmt(values) -> str:
    return "(" + ", ".join(f"{v:+.4f}" for v in values) + ")"


def _robot() -> None:
    arm = Chain.from_urdf(ROBOT_URDF, "base_link", "tool0")
    print(f"robot chain {arm.base_link} -> {arm.tip_link}: joints {', '.join(arm.joint_names)}")
    (x, y, z), quat = arm.tip_pose(HOME)
    print(f"FK at home {_fmt(HOME)}: tool0 at {_fmt((x, y, z))}, quaternion {_fmt(quat)}")
    target = ((x + 0.1, y + 0.2, z - 0.1), quat)
    started = time.perf_counter()
    result = solve(arm, target, HOME)
    elapsed = (time.perf_counter() - started) * 1e3
    print(f"IK to {_fmt(target[0])}: valid={result.valid} q={_fmt(result.q)} "
          f"error {result.position_error_m:.1e} m / {result.orientation_error_rad:.1e} rad, "
          f"{result.iterations} iterations, {elapsed:.2f} ms")
    far = solve(arm, ((3.0, 0.0, 0.5), quat), HOME)
    print(f"IK to (3, 0, 0.5), out of reach: valid={far.valid}, "
          f"residual {far.position_error_m:.3f} m")
    line = cartesian_line(arm.tip_pose(HOME), target, v_max=0.25, a_max=1.0, rate_hz=50.0)
    joints = solve_path(arm, line.poses, HOME)
    print(f"Cartesian line: {len(line.poses)} poses over {line.duration:.3f} s at 50 Hz, "
          f"IK valid for all: {all(r.valid for r in joints)}")
    move = joint_path(HOME, result.q, arm.velocity_limits, 8.0, rate_hz=50.0)
    print(f"joint path home -> IK solution: {move.duration:.3f} s, {len(move.times)} samples")


def _person() -> None:
    urdf = Path(pybullet_data.getDataPath()) / "humanoid" / "humanoid.urdf"
    arm = Chain.from_urdf(urdf, "base", "right_wrist", scale=0.25)
    q = arm.neutral()
    hand = arm.forward(q)[:3, 3]
    print(f"humanoid right arm ({', '.join(arm.joint_names)}): hand at {_fmt(hand)} "
          f"in the model frame (y up), rest pose")
    reach = solve(arm, (hand + np.array([0.1, 0.1, 0.0]), (0, 0, 0, 1)), q, orientation=False)
    print(f"hand 10 cm forward and up: valid={reach.valid}, q={_fmt(reach.q)}")


if __name__ == "__main__":
    _robot()
    _person()
