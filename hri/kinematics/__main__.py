"""Demo: ``python -m hri.kinematics [MODEL]`` prints FK, IK and a Cartesian line of a robot
arm, and where the humanoid's right hand is in its rest pose.

MODEL is what a scenario's ``robot.model`` takes (:mod:`hri.kinematics.arm_model`): a shipped
robot's name (default ``lbr_iisy``) or a URDF file (here relative to the current folder), with
``--base-link`` and ``--tool-link`` as ``robot.base_link`` and ``robot.tool_link``. The arm
starts at the shipped robot's home pose, a file's at its joints' zero clipped to their limits.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pybullet_data

from hri.kinematics import Chain, cartesian_line, joint_path, solve, solve_path
from hri.kinematics.arm_model import DEFAULT_MODEL, SHIPPED, ArmModel, resolve_model


def _fmt(values) -> str:
    return "(" + ", ".join(f"{v:+.4f}" for v in values) + ")"


def _robot(model: ArmModel) -> None:
    arm = model.chain()
    print(f"robot {model.name}, chain {arm.base_link} -> {arm.tip_link}: joints {', '.join(arm.joint_names)}")
    home = list(model.settings.get("home", arm.neutral()))
    (x, y, z), quat = arm.tip_pose(home)
    print(f"FK at home {_fmt(home)}: {arm.tip_link} at {_fmt((x, y, z))}, quaternion {_fmt(quat)}")
    target = ((x + 0.1, y + 0.2, z - 0.1), quat)
    started = time.perf_counter()
    result = solve(arm, target, home)
    elapsed = (time.perf_counter() - started) * 1e3
    print(f"IK to {_fmt(target[0])}: valid={result.valid} q={_fmt(result.q)} "
          f"error {result.position_error_m:.1e} m / {result.orientation_error_rad:.1e} rad, "
          f"{result.iterations} iterations, {elapsed:.2f} ms")
    far = solve(arm, ((3.0, 0.0, 0.5), quat), home)
    print(f"IK to (3, 0, 0.5), out of reach: valid={far.valid}, "
          f"residual {far.position_error_m:.3f} m")
    line = cartesian_line(arm.tip_pose(home), target, v_max=0.25, a_max=1.0, rate_hz=50.0)
    joints = solve_path(arm, line.poses, home)
    print(f"Cartesian line: {len(line.poses)} poses over {line.duration:.3f} s at 50 Hz, "
          f"IK valid for all: {all(r.valid for r in joints)}")
    move = joint_path(home, result.q, arm.velocity_limits, 8.0, rate_hz=50.0)
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m hri.kinematics", description=__doc__.split("\n\n")[0])
    parser.add_argument("model", nargs="?", default=DEFAULT_MODEL,
                        help=f"a shipped robot ({', '.join(SHIPPED)}) or a URDF file")
    parser.add_argument("--base-link", help="the link the arm is mounted by (default: the model's)")
    parser.add_argument("--tool-link", help="the link at the tool (default: the model's)")
    args = parser.parse_args(argv)
    try:
        model = resolve_model(args.model, None, args.base_link, args.tool_link)
    except ValueError as err:
        print(f"python -m hri.kinematics: {args.model}: {err}", file=sys.stderr)
        return 2
    _robot(model)
    _person()
    return 0


if __name__ == "__main__":
    sys.exit(main())
