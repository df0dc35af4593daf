"""A pose of the person's body as numbers, apart from PyBullet and from any clip.

A :class:`BodyPose` is everything a clip says about the body, independent of where the person
stands: the pelvis offset in the person's frame, the pelvis rotation and the joint rotations
(see the class). Here too: blending two poses (:func:`blend`, slerp for the rotations; the
plugin cross-fades between activities with it), a pose as one row of numbers, and
:class:`PoseTable`, poses sampled densely once and read back by normalised linear
interpolation (what :mod:`hri.actor.animation`'s clips are played from).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hri.actor.quaternions import Q_IDENTITY, qslerp

#: Ball joints and hinge joints of the humanoid, in the order of a :class:`BodyPose`.
BALL_JOINTS = ("chest", "neck", "right_hip", "right_ankle", "right_shoulder",
               "left_hip", "left_ankle", "left_shoulder")
HINGE_JOINTS = ("right_knee", "right_elbow", "left_knee", "left_elbow")
JOINT_NAMES = frozenset(BALL_JOINTS) | frozenset(HINGE_JOINTS)
#: Hinge value = sign * bend angle (the URDF's knees bend negative, elbows positive).
HINGE_SIGN = {"right_knee": -1.0, "left_knee": -1.0, "right_elbow": 1.0, "left_elbow": 1.0}


@dataclass
class BodyPose:
    """A pose of the body relative to the person's place on the floor.

    ``root``: pelvis offset (forward, left, height) in metres in the person's frame;
    ``root_rotation``: pelvis rotation in the person's frame (x forward, y left, z up);
    ``balls``: (8, 4) quaternions of :data:`BALL_JOINTS` in the model's joint frames;
    ``hinges``: (4,) URDF angles of :data:`HINGE_JOINTS` (radians).
    """

    root: np.ndarray
    root_rotation: np.ndarray
    balls: np.ndarray
    hinges: np.ndarray

    @staticmethod
    def rest() -> "BodyPose":
        return BodyPose(np.zeros(3), Q_IDENTITY.copy(), np.tile(Q_IDENTITY, (len(BALL_JOINTS), 1)),
                        np.zeros(len(HINGE_JOINTS)))

    def copy(self) -> "BodyPose":
        return BodyPose(self.root.copy(), self.root_rotation.copy(), self.balls.copy(),
                        self.hinges.copy())


def blend(a: BodyPose, b: BodyPose, w: float) -> BodyPose:
    """Interpolate two poses: w=0 gives a, w=1 gives b (slerp for rotations)."""
    if w <= 0.0:
        return a
    if w >= 1.0:
        return b
    ra, rb = pose_row(a), pose_row(b)
    row = ra + w * (rb - ra)
    row[_QUATERNIONS] = qslerp(ra[_QUATERNIONS].reshape(9, 4), rb[_QUATERNIONS].reshape(9, 4), w).ravel()
    return pose_from_row(row)


def blend_root(a: list[float], b: list[float], w: float) -> list[float]:
    """The root of :func:`blend` of two poses with these roots (the same numbers)."""
    if w <= 0.0:
        return a
    if w >= 1.0:
        return b
    (xa, ya, za), (xb, yb, zb) = a, b
    return [xa + w * (xb - xa), ya + w * (yb - ya), za + w * (zb - za)]


def pose_distance(a: BodyPose, b: BodyPose) -> float:
    """Largest joint angle difference (radians) between two poses (for tests, diagnostics)."""
    dots = np.abs(np.sum(a.balls * b.balls, axis=-1))
    ball = 2.0 * np.arccos(np.clip(dots, -1.0, 1.0))
    return float(max(ball.max(), np.abs(a.hinges - b.hinges).max()))


#: A pose as one row of numbers: root (3), root rotation (4), ball joints (8 x 4), hinges (4).
_ROOT, _ROOT_ROTATION, _BALLS, _HINGES = slice(0, 3), slice(3, 7), slice(7, 39), slice(39, 43)
_QUATERNIONS = slice(3, 39)  # the root rotation and the ball joints: 9 quaternions


def pose_row(pose: BodyPose) -> np.ndarray:
    return np.concatenate([pose.root, pose.root_rotation, np.ravel(pose.balls), pose.hinges])


def pose_from_row(row: np.ndarray) -> BodyPose:
    return BodyPose(row[_ROOT], row[_ROOT_ROTATION], row[_BALLS].reshape(len(BALL_JOINTS), 4), row[_HINGES])


class PoseTable:
    """Poses sampled at uniform steps of a variable (time or phase) from 0 to ``end``, read
    back at any value by normalised linear interpolation of the neighbouring samples."""

    def __init__(self, sample, end: float, count: int) -> None:
        count = max(2, count)
        self.step = end / (count - 1) if end > 0.0 else 1.0
        rows = np.array([pose_row(sample(min(i * self.step, end))) for i in range(count)])
        quats = rows[:, _QUATERNIONS].reshape(count, 9, 4)
        for i in range(1, count):  # q and -q are the same rotation: keep neighbours on one side
            flip = np.sum(quats[i] * quats[i - 1], axis=1) < 0.0
            quats[i, flip] *= -1.0
        rows[:, _QUATERNIONS] = quats.reshape(count, 36)
        self.rows = rows
        self._deltas = rows[1:] - rows[:-1]  # what at() interpolates along (the same numbers)
        self._roots = rows[:, _ROOT].tolist()  # plain floats, for root_at
        self._last = count - 2

    def _between(self, x: float) -> tuple[int, float]:
        """The sample at or before ``x``, and how far ``x`` is towards the next (0..1)."""
        f = max(0.0, x / self.step)
        k = min(int(f), self._last)
        return k, min(f - k, 1.0)

    def at(self, x: float) -> BodyPose:
        k, a = self._between(x)
        row = self.rows[k] + a * self._deltas[k]
        quats = row[_QUATERNIONS].reshape(9, 4)
        quats /= np.sqrt(np.einsum("ij,ij->i", quats, quats))[:, None]
        return pose_from_row(row)

    def root_at(self, x: float) -> list[float]:
        """Only the root of :meth:`at` (the same numbers), a few times cheaper."""
        k, a = self._between(x)
        (x0, y0, z0), (x1, y1, z1) = self._roots[k], self._roots[k + 1]
        return [x0 + a * (x1 - x0), y0 + a * (y1 - y0), z0 + a * (z1 - z0)]
