"""The shared kinematics core: poses, URDF chains, forward and inverse kinematics, interpolation.

Used by the robot (where is the tool, which joints reach a pose, a straight tool path) and
by the person (where is the hand for a pose of the humanoid), and meant to be offered as
the network services of seed ``000`` (GET_FORWARD_KINEMATIC, GET_INVERSE_KINEMATIC,
INTERPOLATE): plain data in and out, poses as ``((x, y, z), (qx, qy, qz, qw))`` tuples
(convertible with :func:`geometry_pose` / :func:`pose_matrix`). Plain NumPy at run time;
PyBullet serves only to check it (``tests/test_kinematics.py``).

Example (``python -m hri.kinematics`` runs a longer one)::

    from hri.kinematics import Chain, cartesian_line, solve
    arm = Chain.from_urdf("assets/robot/lbr_iisy.urdf", "base_link", "tool0")
    q = [0.0, 0.2, 2.0, 0.0, 0.94, 0.0]
    tool = arm.tip_pose(q)                       # ((x, y, z), (qx, qy, qz, qw))
    (x, y, z), quat = tool
    result = solve(arm, ((x + 0.05, y, z), quat), q)
    result.valid, result.q                       # True, joints nearest q
    line = cartesian_line(tool, ((x + 0.05, y, z), quat), v_max=0.25, a_max=1.0, rate_hz=50)

Modules: :mod:`~hri.kinematics.transforms` (rotations, 4x4 transforms, pose conversions),
:mod:`~hri.kinematics.urdf` (reading joints), :mod:`~hri.kinematics.dh` (an arm from a
Denavit-Hartenberg table: :func:`read_dh`; its chain and its URDF body),
:mod:`~hri.kinematics.arm_model` (the arm a scenario names; the shipped robots, :func:`shipped_dh`),
:mod:`~hri.kinematics.chain` (:class:`Chain`:
forward kinematics, Jacobian), :mod:`~hri.kinematics.batched_chain` (a revolute chain's frames for
many configurations at once), :mod:`~hri.kinematics.link_frames` (a body's named frames from its
joint positions), :mod:`~hri.kinematics.ik` (:func:`solve`, :class:`IkResult`),
:mod:`~hri.kinematics.interpolate` (:func:`cartesian_line`, :func:`joint_path`).
"""

from hri.kinematics.arm_model import shipped_dh, shipped_dh_path
from hri.kinematics.chain import Chain
from hri.kinematics.dh import DhRobot, dh_forward, read_dh
from hri.kinematics.ik import IkResult, IkSettings, solve, solve_path
from hri.kinematics.interpolate import (CartesianPath, JointPath, Trapezoid, cartesian_line,
                                        cartesian_waypoints, joint_path, sample_times, trapezoid)
from hri.kinematics.transforms import (PoseLike, PoseTuple, geometry_pose, invert, pose_error,
                                       pose_matrix, pose_tuple, transform)
from hri.kinematics.urdf import JointSpec, UrdfModel, read_urdf

__all__ = [
    "CartesianPath", "Chain", "DhRobot", "IkResult", "IkSettings", "JointPath", "JointSpec", "PoseLike",
    "PoseTuple", "Trapezoid", "UrdfModel", "cartesian_line", "cartesian_waypoints",
    "dh_forward", "geometry_pose", "invert", "joint_path", "pose_error", "pose_matrix", "pose_tuple",
    "read_dh", "read_urdf", "sample_times", "shipped_dh", "shipped_dh_path", "solve", "solve_path",
    "transform", "trapezoid",
]
