"""Rigid transforms and rotations for the kinematics core, in plain NumPy.

Transforms are 4x4 homogeneous matrices; quaternions are ``(x, y, z, w)`` (PyBullet's
order, as everywhere in the project). A *pose tuple* ``((x, y, z), (qx, qy, qz, qw))`` is
the plain-data form used at the API edge (service messages, JSON); :func:`pose_matrix`
accepts that, an :class:`hri.base.geometry.Pose` or a 4x4 matrix.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Union

import numpy as np

from hri.base.geometry import Pose

Vector3 = tuple[float, float, float]
Quaternion = tuple[float, float, float, float]
PoseTuple = tuple[Vector3, Quaternion]
PoseLike = Union[Pose, PoseTuple, np.ndarray]

_NEAR_PI = 1e-3  # below this distance to pi the axis is read from the diagonal


def skew(v: Sequence[float]) -> np.ndarray:
    """The cross-product matrix: ``skew(a) @ b == cross(a, b)``."""
    x, y, z = v
    return np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])


def rpy_matrix(roll: float, pitch: float, yaw: float) -> np.ndarray:
    """URDF's fixed-axis roll-pitch-yaw: ``Rz(yaw) @ Ry(pitch) @ Rx(roll)``."""
    cr, sr = math.cos(roll), math.sin(roll)
    cp, sp = math.cos(pitch), math.sin(pitch)
    cy, sy = math.cos(yaw), math.sin(yaw)
    return np.array([
        [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
        [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
        [-sp, cp * sr, cp * cr],
    ])


def matrix_rpy(r: np.ndarray) -> tuple[float, float, float]:
    """The URDF roll-pitch-yaw of the rotation ``r`` (inverse of :func:`rpy_matrix`).

    At pitch +-pi/2 (gimbal lock) roll and yaw turn about one axis: roll is taken as 0.
    """
    pitch = math.atan2(-r[2, 0], math.hypot(r[0, 0], r[1, 0]))
    if math.hypot(r[0, 0], r[1, 0]) < 1e-12:
        return 0.0, pitch, math.atan2(-r[0, 1], r[1, 1])
    return math.atan2(r[2, 1], r[2, 2]), pitch, math.atan2(r[1, 0], r[0, 0])


def axis_angle_matrix(axis: Sequence[float], angle: float) -> np.ndarray:
    """Rotation by ``angle`` about the unit vector ``axis`` (Rodrigues)."""
    k = skew(axis)
    return np.eye(3) + math.sin(angle) * k + (1.0 - math.cos(angle)) * (k @ k)


def exp_rotation(w: Sequence[float]) -> np.ndarray:
    """The rotation whose rotation vector (axis times angle) is ``w``."""
    angle = math.sqrt(float(np.dot(w, w)))
    if angle < 1e-12:
        return np.eye(3) + skew(w)
    return axis_angle_matrix(np.asarray(w, dtype=float) / angle, angle)


def log_rotation(r: np.ndarray) -> np.ndarray:
    """The rotation vector of ``r`` (angle in [0, pi]); accurate near 0 and near pi."""
    return log_rotation_and_angle(r)[0]


def _sin_cos(r: np.ndarray) -> tuple[np.ndarray, float, float]:
    """2 sin(a) times the axis, 2 sin(a) and 2 cos(a) of the rotation ``r`` by angle ``a``."""
    v = np.array([r[2, 1] - r[1, 2], r[0, 2] - r[2, 0], r[1, 0] - r[0, 1]])
    return v, math.sqrt(float(v @ v)), float(np.trace(r)) - 1.0


def log_rotation_and_angle(r: np.ndarray) -> tuple[np.ndarray, float]:
    """:func:`log_rotation` and :func:`rotation_angle` of ``r`` at once (the same numbers)."""
    v, s2, c2 = _sin_cos(r)
    angle = math.atan2(s2, c2)
    if angle < 1e-9:
        return 0.5 * v, angle
    if math.pi - angle > _NEAR_PI:
        return v * (angle / s2), angle
    # near pi, sin(a) carries no axis information: read it from the symmetric part
    cos_a = c2 / 2.0
    diag = (np.diag(r) - cos_a) / (1.0 - cos_a)
    i = int(np.argmax(diag))
    axis = np.empty(3)
    axis[i] = math.sqrt(max(diag[i], 0.0))
    for j in range(3):
        if j != i:
            axis[j] = (r[i, j] + r[j, i]) / (2.0 * axis[i] * (1.0 - cos_a))
    axis /= np.linalg.norm(axis)
    if float(axis @ v) < 0.0:
        axis = -axis
    return axis * angle, angle


def rotation_angle(r: np.ndarray) -> float:
    """The angle (radians, 0..pi) of the rotation ``r``."""
    _v, s2, c2 = _sin_cos(r)
    return math.atan2(s2, c2)


def quaternion_matrix(q: Sequence[float]) -> np.ndarray:
    """Rotation matrix of the quaternion ``(x, y, z, w)`` (normalised first)."""
    x, y, z, w = (float(c) for c in q)
    n = x * x + y * y + z * z + w * w
    if n < 1e-300:
        raise ValueError("the null quaternion has no rotation")
    s = 2.0 / n
    return np.array([
        [1.0 - s * (y * y + z * z), s * (x * y - z * w), s * (x * z + y * w)],
        [s * (x * y + z * w), 1.0 - s * (x * x + z * z), s * (y * z - x * w)],
        [s * (x * z - y * w), s * (y * z + x * w), 1.0 - s * (x * x + y * y)],
    ])


def matrix_quaternion(r: np.ndarray) -> Quaternion:
    """The unit quaternion ``(x, y, z, w)`` of ``r``, with ``w >= 0`` (Shepperd's method)."""
    t = float(np.trace(r))
    candidates = (t, r[0, 0], r[1, 1], r[2, 2])
    i = int(np.argmax(candidates))
    if i == 0:
        s = 2.0 * math.sqrt(1.0 + t)
        q = ((r[2, 1] - r[1, 2]) / s, (r[0, 2] - r[2, 0]) / s, (r[1, 0] - r[0, 1]) / s, s / 4.0)
    elif i == 1:
        s = 2.0 * math.sqrt(max(1.0 + r[0, 0] - r[1, 1] - r[2, 2], 0.0))
        q = (s / 4.0, (r[0, 1] + r[1, 0]) / s, (r[0, 2] + r[2, 0]) / s, (r[2, 1] - r[1, 2]) / s)
    elif i == 2:
        s = 2.0 * math.sqrt(max(1.0 + r[1, 1] - r[0, 0] - r[2, 2], 0.0))
        q = ((r[0, 1] + r[1, 0]) / s, s / 4.0, (r[1, 2] + r[2, 1]) / s, (r[0, 2] - r[2, 0]) / s)
    else:
        s = 2.0 * math.sqrt(max(1.0 + r[2, 2] - r[0, 0] - r[1, 1], 0.0))
        q = ((r[0, 2] + r[2, 0]) / s, (r[1, 2] + r[2, 1]) / s, s / 4.0, (r[1, 0] - r[0, 1]) / s)
    sign = -1.0 if q[3] < 0.0 else 1.0
    norm = math.sqrt(sum(c * c for c in q))
    return tuple(float(sign * c / norm) for c in q)  # type: ignore[return-value]


def bullet_quaternion(r: Sequence[Sequence[float]]) -> Quaternion:
    """The unit quaternion ``(x, y, z, w)`` of the rotation ``r`` (rows, plain floats or an
    array) with the sign Bullet's ``btMatrix3x3::getRotation`` gives it, so that a frame
    computed here and one PyBullet reports agree component by component: ``w > 0`` where the
    trace is positive, else the component of the largest diagonal entry positive."""
    trace = r[0][0] + r[1][1] + r[2][2]
    if trace > 0.0:
        s = math.sqrt(trace + 1.0)
        f = 0.5 / s
        return ((r[2][1] - r[1][2]) * f, (r[0][2] - r[2][0]) * f, (r[1][0] - r[0][1]) * f, 0.5 * s)
    i = (2 if r[1][1] < r[2][2] else 1) if r[0][0] < r[1][1] else (2 if r[0][0] < r[2][2] else 0)
    j, k = (i + 1) % 3, (i + 2) % 3
    s = math.sqrt(r[i][i] - r[j][j] - r[k][k] + 1.0)
    f = 0.5 / s
    q = [0.0, 0.0, 0.0, (r[k][j] - r[j][k]) * f]
    q[i], q[j], q[k] = 0.5 * s, (r[j][i] + r[i][j]) * f, (r[k][i] + r[i][k]) * f
    return q[0], q[1], q[2], q[3]


def quaternion_multiply(a: Sequence[float], b: Sequence[float]) -> Quaternion:
    """Hamilton product ``a * b`` of ``(x, y, z, w)`` quaternions (apply b, then a)."""
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return (aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
            aw * bw - ax * bx - ay * by - az * bz)


def transform(rotation: np.ndarray | None = None,
              translation: Sequence[float] | None = None) -> np.ndarray:
    """A 4x4 transform from a 3x3 rotation and a translation (identity where omitted)."""
    t = np.eye(4)
    if rotation is not None:
        t[:3, :3] = rotation
    if translation is not None:
        t[:3, 3] = translation
    return t


def invert(t: np.ndarray) -> np.ndarray:
    """Inverse of a rigid 4x4 transform (no general matrix inverse needed)."""
    r = t[:3, :3].T
    return transform(r, -r @ t[:3, 3])


def pose_matrix(pose: PoseLike) -> np.ndarray:
    """A 4x4 transform from a :class:`Pose`, a pose tuple or a 4x4 matrix (copied)."""
    if isinstance(pose, Pose):
        if pose.has_null_orientation:
            raise ValueError("a pose with the null quaternion has no orientation")
        return transform(quaternion_matrix(pose.orientation), pose.position)
    if isinstance(pose, np.ndarray) and pose.shape == (4, 4):
        return pose.astype(float, copy=True)
    position, orientation = pose  # type: ignore[misc]
    return transform(quaternion_matrix(orientation), [float(v) for v in position])


def pose_tuple(t: np.ndarray) -> PoseTuple:
    """The plain-data pose ``((x, y, z), (qx, qy, qz, qw))`` of a 4x4 transform."""
    x, y, z = (float(v) for v in t[:3, 3])
    return (x, y, z), matrix_quaternion(t[:3, :3])


def geometry_pose(t: PoseLike) -> Pose:
    """The :class:`hri.base.geometry.Pose` of a 4x4 transform or pose tuple."""
    position, orientation = pose_tuple(pose_matrix(t))
    return Pose(*position, *orientation)


def pose_error(current: np.ndarray, target: np.ndarray) -> tuple[float, float]:
    """Position distance (m) and rotation angle (rad) between two 4x4 transforms."""
    dp = target[:3, 3] - current[:3, 3]
    return math.sqrt(float(dp @ dp)), rotation_angle(target[:3, :3] @ current[:3, :3].T)


def interpolate_pose(start: np.ndarray, end: np.ndarray, s: float) -> np.ndarray:
    """The pose a fraction ``s`` (0..1) from ``start`` to ``end``: straight line, slerp.

    The slerp is the geodesic ``R0 exp(s log(R0^T R1))``, i.e. the shortest rotation.
    """
    r0 = start[:3, :3]
    w = log_rotation(r0.T @ end[:3, :3])
    rotation = r0 @ exp_rotation(s * w)
    translation = start[:3, 3] + s * (end[:3, 3] - start[:3, 3])
    return transform(rotation, translation)
