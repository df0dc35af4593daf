"""A serial kinematic chain from a URDF file: forward kinematics, Jacobian, configurations.

:class:`Chain` is the path of joints from a base link to a tip link. Its configuration
vector ``q`` holds one value per revolute/continuous/prismatic joint (rad or m) and four
per spherical joint (a quaternion ``(x, y, z, w)``, as PyBullet's
``resetJointStateMultiDof`` takes it); fixed joints take none. Velocities and Jacobian
columns have one entry per degree of freedom (three per spherical joint: its angular
velocity in the child link's frame), so ``q`` may be longer than a Jacobian row.

The base link's frame sits at :attr:`Chain.base_pose` in the world (identity unless set),
and all results are in the world frame.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hri.kinematics.transforms import (PoseLike, PoseTuple, exp_rotation, log_rotation, pose_matrix,
                                       pose_tuple, quaternion_matrix, quaternion_multiply, skew,
                                       matrix_quaternion, transform)
from hri.kinematics.urdf import JointSpec, read_urdf


_REVOLUTE, _PRISMATIC, _SPHERICAL, _FIXED = range(4)
_KIND = {"revolute": _REVOLUTE, "continuous": _REVOLUTE, "prismatic": _PRISMATIC,
         "spherical": _SPHERICAL, "fixed": _FIXED}


@dataclass(frozen=True)
class _Step:
    """One joint, precomputed so that its motion costs few NumPy operations.

    With the origin rotation ``O``: a revolute joint's child rotation is
    ``O + sin(q) * O K + (1 - cos(q)) * O K^2`` (Rodrigues, K = skew(axis)).
    """

    kind: int
    rotation: np.ndarray      # O
    translation: np.ndarray   # origin translation
    rot_k: np.ndarray         # O K      (revolute) | O axis (prismatic)
    rot_k2: np.ndarray        # O K^2    (revolute)
    axis: np.ndarray
    iq: int                   # first index in q
    iv: int                   # first index in velocities / Jacobian columns


def _make_step(joint: JointSpec, iq: int, iv: int) -> _Step:
    o = joint.origin[:3, :3]
    k = skew(joint.axis)
    kind = _KIND[joint.kind]
    rot_k = o @ joint.axis if kind == _PRISMATIC else o @ k
    return _Step(kind, o.copy(), joint.origin[:3, 3].copy(), rot_k, o @ k @ k,
                 joint.axis.copy(), iq, iv)


_LEVI_CIVITA = np.zeros((3, 3, 3))  # a x b = einsum("ijk,j,k->i", _LEVI_CIVITA, a, b)
_LEVI_CIVITA[0, 1, 2] = _LEVI_CIVITA[1, 2, 0] = _LEVI_CIVITA[2, 0, 1] = 1.0
_LEVI_CIVITA[0, 2, 1] = _LEVI_CIVITA[2, 1, 0] = _LEVI_CIVITA[1, 0, 2] = -1.0


class _RevoluteChain:
    """A chain of revolute and fixed joints (an arm) walked in a few batched NumPy operations.

    All joints' child rotations come from one Rodrigues evaluation over the stacked steps (a
    fixed joint's ``O K`` terms are zero, so its rotation is ``O`` whatever angle it is given),
    and each link frame is the one before times the joint's 4x4 transform: about a third of
    the operations of :meth:`Chain._walk`, which the inverse kinematics runs per iteration.
    """

    def __init__(self, steps: Sequence[_Step]) -> None:
        n = len(steps)
        revolute = [s.kind == _REVOLUTE for s in steps]
        self.index = np.array([s.iq if r else 0 for s, r in zip(steps, revolute)], dtype=int)
        self.rotation = np.array([s.rotation for s in steps])
        self.rot_k = np.array([s.rot_k if r else np.zeros((3, 3)) for s, r in zip(steps, revolute)])
        self.rot_k2 = np.array([s.rot_k2 if r else np.zeros((3, 3)) for s, r in zip(steps, revolute)])
        self.joint_frames = np.zeros((n, 4, 4))
        self.joint_frames[:, :3, 3] = [s.translation for s in steps]
        self.joint_frames[:, 3, 3] = 1.0
        self.moving = np.flatnonzero(revolute)
        self.axes = np.array([s.axis for s in steps])[self.moving]

    def frames(self, base: np.ndarray, q: np.ndarray) -> list[np.ndarray]:
        """Each joint's child link frame (4x4) in the world, base to tip."""
        angles = q[self.index]
        joint = self.joint_frames.copy()
        joint[:, :3, :3] = (self.rotation + np.sin(angles)[:, None, None] * self.rot_k
                            + (1.0 - np.cos(angles))[:, None, None] * self.rot_k2)
        frames = []
        frame = base
        for m in joint:
            frame = frame @ m
            frames.append(frame)
        return frames

    def forward_and_jacobian(self, base: np.ndarray, q: np.ndarray, nv: int) -> tuple[np.ndarray, np.ndarray]:
        """As :meth:`Chain.forward_and_jacobian`: the tip frame and the 6 x nv Jacobian."""
        frames = self.frames(base, q)
        tip = frames[-1]
        if not len(self.moving):
            return tip, np.zeros((6, nv))
        moving = np.array(frames)[self.moving]
        z = np.einsum("kij,kj->ik", moving[:, :3, :3], self.axes)  # world axes, one per column
        lever = (tip[:3, 3] - moving[:, :3, 3]).T
        return tip, np.concatenate((np.einsum("ijk,jn,kn->in", _LEVI_CIVITA, z, lever), z))


def _cross_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cross products of two (n, 3) arrays (np.cross costs ~20x more at this size)."""
    out = np.empty_like(a)
    out[:, 0] = a[:, 1] * b[:, 2] - a[:, 2] * b[:, 1]
    out[:, 1] = a[:, 2] * b[:, 0] - a[:, 0] * b[:, 2]
    out[:, 2] = a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0]
    return out


class Chain:
    """The joints from ``base_link`` to ``tip_link`` of a URDF model (see module doc)."""

    def __init__(self, joints: Sequence[JointSpec], base_link: str, tip_link: str,
                 base_pose: PoseLike | None = None, name: str = "") -> None:
        self.name = name
        self.base_link = base_link
        self.tip_link = tip_link
        self.joints: tuple[JointSpec, ...] = tuple(joints)
        self.movable: tuple[JointSpec, ...] = tuple(j for j in joints if j.kind != "fixed")
        self.joint_names: tuple[str, ...] = tuple(j.name for j in self.movable)
        self.link_names: tuple[str, ...] = (base_link, *(j.child for j in joints))
        self.nq = sum(j.nq for j in joints)
        self.nv = sum(j.nv for j in joints)
        self._steps = self._build_steps()
        self.lower, self.upper = self._limit_arrays()
        self.velocity_limits = np.concatenate(
            [[j.velocity] * j.nv for j in self.movable]) if self.movable else np.zeros(0)
        self._prismatic = np.array([j.kind == "prismatic" for j in self.movable for _ in range(j.nv)],
                                   dtype=bool)
        self._any_prismatic = bool(self._prismatic.any())
        arm = all(s.kind in (_REVOLUTE, _FIXED) for s in self._steps)
        self._revolute = _RevoluteChain(self._steps) if arm and self._steps else None
        self.base_pose = np.eye(4) if base_pose is None else pose_matrix(base_pose)

    @classmethod
    def from_urdf(cls, path: str | Path, base_link: str | None = None,
                  tip_link: str | None = None, *, scale: float = 1.0,
                  base_pose: PoseLike | None = None) -> "Chain":
        """The chain ``base_link`` -> ``tip_link`` (default: the root and the only leaf).

        ``scale`` multiplies all lengths (PyBullet's ``globalScaling``); ``base_pose`` is
        where the base link's frame is in the world.
        """
        model = read_urdf(path, scale)
        joints = model.path(base_link, tip_link)
        base = base_link or model.root
        tip = joints[-1].child if joints else base
        return cls(joints, base, tip, base_pose, name=model.name)

    # -- set-up ---------------------------------------------------------------------------

    @property
    def base_pose(self) -> np.ndarray:
        """The base link's frame in the world (4x4, a copy)."""
        return transform(self._base_r, self._base_p)

    @base_pose.setter
    def base_pose(self, pose: PoseLike) -> None:
        t = pose_matrix(pose)
        self._base_r, self._base_p = t[:3, :3].copy(), t[:3, 3].copy()
        self._base = transform(self._base_r, self._base_p)

    def _build_steps(self) -> list[_Step]:
        steps, iq, iv = [], 0, 0
        for joint in self.joints:
            steps.append(_make_step(joint, iq, iv))
            iq, iv = iq + joint.nq, iv + joint.nv
        return steps

    def _limit_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """Position limits per entry of q; a quaternion's entries are bounded by +-1."""
        lower, upper = [], []
        for j in self.movable:
            if j.kind == "spherical":
                lower += [-1.0] * 4
                upper += [1.0] * 4
            else:
                lower.append(j.lower)
                upper.append(j.upper)
        return np.array(lower, dtype=float), np.array(upper, dtype=float)

    # -- kinematics -----------------------------------------------------------------------

    def _walk(self, q: np.ndarray, frames: list | None = None,
              axes: list | None = None, origins: list | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Tip rotation and position; optionally every link frame, and per degree of freedom
        its world axis and a point on it (for the Jacobian)."""
        r, p = self._base_r, self._base_p
        for s in self._steps:
            p = r @ s.translation + p
            if s.kind == _REVOLUTE:
                angle = q[s.iq]
                r = r @ (s.rotation + math.sin(angle) * s.rot_k + (1.0 - math.cos(angle)) * s.rot_k2)
            elif s.kind == _PRISMATIC:
                p = p + r @ (s.rot_k * q[s.iq])
                r = r @ s.rotation
            elif s.kind == _SPHERICAL:
                r = r @ s.rotation @ quaternion_matrix(q[s.iq:s.iq + 4])
            else:
                r = r @ s.rotation
            if axes is not None and s.kind != _FIXED:
                # a revolute joint turns about its axis, which its own rotation leaves in place
                if s.kind == _SPHERICAL:
                    axes.extend(r.T)      # one column per axis of the child frame
                    origins.extend((p, p, p))
                else:
                    axes.append(r @ s.axis)
                    origins.append(p)
            if frames is not None:
                frames.append(transform(r, p))
        return r, p

    def as_configuration(self, q: Sequence[float]) -> np.ndarray:
        """``q`` as a float array, checked for length."""
        q = np.asarray(q, dtype=float)
        if q.shape != (self.nq,):
            raise ValueError(f"chain {self.base_link}->{self.tip_link} takes {self.nq} "
                             f"joint values, got shape {q.shape}")
        return q

    def forward(self, q: Sequence[float]) -> np.ndarray:
        """The tip link's frame in the world as a 4x4 transform."""
        r, p = self._walk(self.as_configuration(q))
        return transform(r, p)

    def tip_pose(self, q: Sequence[float]) -> PoseTuple:
        """The tip link's frame as plain data ``((x, y, z), (qx, qy, qz, qw))``."""
        return pose_tuple(self.forward(q))

    def link_frames(self, q: Sequence[float]) -> dict[str, np.ndarray]:
        """Every link frame of the chain (base to tip) in the world, by link name."""
        frames = [self.base_pose]
        self._walk(self.as_configuration(q), frames=frames)
        return dict(zip(self.link_names, frames))

    def forward_and_jacobian(self, q: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
        """The tip frame (4x4) and the 6 x nv Jacobian of the tip.

        Rows 0-2: the tip origin's linear velocity; rows 3-5: the tip's angular velocity;
        both in world coordinates.
        """
        q = self.as_configuration(q)
        if self._revolute is not None:
            return self._revolute.forward_and_jacobian(self._base, q, self.nv)
        axes: list = []
        origins: list = []
        r, p = self._walk(q, axes=axes, origins=origins)
        jac = np.zeros((6, self.nv))
        if axes:
            z = np.array(axes)
            linear = _cross_rows(z, p - np.array(origins))
            if self._any_prismatic:
                linear = np.where(self._prismatic[:, None], z, linear)
                z = np.where(self._prismatic[:, None], 0.0, z)
            jac[:3] = linear.T
            jac[3:] = z.T
        return transform(r, p), jac

    def jacobian(self, q: Sequence[float]) -> np.ndarray:
        """The 6 x nv world-frame Jacobian of the tip (see :meth:`forward_and_jacobian`)."""
        return self.forward_and_jacobian(q)[1]

    # -- configurations -------------------------------------------------------------------

    def neutral(self) -> np.ndarray:
        """All joints at zero (identity quaternions for spherical joints), clipped to limits."""
        q = np.zeros(self.nq)
        for s, j in zip(self._steps, self.joints):
            if j.kind == "spherical":
                q[s.iq + 3] = 1.0
        return self.clip(q)

    def integrate(self, q: Sequence[float], dv: Sequence[float]) -> np.ndarray:
        """``q`` moved by the velocity-space step ``dv`` (quaternions: ``q * exp(dv)``)."""
        out = np.array(q, dtype=float)
        for s in self._steps:
            if s.kind in (_REVOLUTE, _PRISMATIC):
                out[s.iq] += dv[s.iv]
            elif s.kind == _SPHERICAL:
                step = matrix_quaternion(exp_rotation(dv[s.iv:s.iv + 3]))
                out[s.iq:s.iq + 4] = quaternion_multiply(out[s.iq:s.iq + 4], step)
        return out

    def difference(self, q0: Sequence[float], q1: Sequence[float]) -> np.ndarray:
        """The velocity-space step from ``q0`` to ``q1`` (inverse of :meth:`integrate`)."""
        dv = np.zeros(self.nv)
        for s in self._steps:
            if s.kind in (_REVOLUTE, _PRISMATIC):
                dv[s.iv] = q1[s.iq] - q0[s.iq]
            elif s.kind == _SPHERICAL:
                r0 = quaternion_matrix(q0[s.iq:s.iq + 4])
                r1 = quaternion_matrix(q1[s.iq:s.iq + 4])
                dv[s.iv:s.iv + 3] = log_rotation(r0.T @ r1)
        return dv

    def distance(self, q0: Sequence[float], q1: Sequence[float]) -> float:
        """Euclidean length of :meth:`difference` (rad and m mixed, as joint space is)."""
        return float(np.linalg.norm(self.difference(q0, q1)))

    def clip(self, q: Sequence[float]) -> np.ndarray:
        """``q`` within the joint limits, quaternions normalised."""
        out = np.clip(np.asarray(q, dtype=float), self.lower, self.upper)
        for s in self._steps:
            if s.kind == _SPHERICAL:
                quat = out[s.iq:s.iq + 4]
                out[s.iq:s.iq + 4] = quat / np.linalg.norm(quat)
        return out

    def wrap(self, q: Sequence[float], q_ref: Sequence[float]) -> np.ndarray:
        """``q`` with each revolute joint turned by whole turns into its limits, nearest ``q_ref``.

        A revolute joint at ``a`` is where it is at ``a + 2 pi k``; joints with a range over
        a full turn (A6: +-350 deg) or none (continuous) have several such values.
        """
        out = np.array(q, dtype=float)
        for s, joint in zip(self._steps, self.joints):
            if s.kind != _REVOLUTE:
                continue
            value, ref = out[s.iq], float(q_ref[s.iq])
            if not (math.isfinite(joint.lower) and math.isfinite(joint.upper)):
                out[s.iq] = ref + math.remainder(value - ref, 2.0 * math.pi)
                continue
            k_low = math.ceil((joint.lower - value) / (2.0 * math.pi))
            k_high = math.floor((joint.upper - value) / (2.0 * math.pi))
            if k_low <= k_high:
                turns = value + 2.0 * math.pi * np.arange(k_low, k_high + 1)
                out[s.iq] = turns[np.argmin(np.abs(turns - ref))]
        return out

    def within_limits(self, q: Sequence[float], tolerance: float = 1e-9) -> bool:
        q = np.asarray(q, dtype=float)
        return bool(np.all(q >= self.lower - tolerance) and np.all(q <= self.upper + tolerance))

    def random(self, rng: np.random.Generator) -> np.ndarray:
        """A configuration drawn uniformly within the limits (+-pi where a joint has none)."""
        lower = np.where(np.isfinite(self.lower), self.lower, -math.pi)
        upper = np.where(np.isfinite(self.upper), self.upper, math.pi)
        q = rng.uniform(lower, upper)
        for s in self._steps:
            if s.kind == _SPHERICAL:
                v = rng.normal(size=4)
                q[s.iq:s.iq + 4] = v / np.linalg.norm(v)
        return self.clip(q)

    def reach(self) -> float:
        """An upper bound of the tip's distance from the base link's origin (m)."""
        total = 0.0
        for j in self.joints:
            total += float(np.linalg.norm(j.origin[:3, 3]))
            if j.kind == "prismatic":
                total += max(abs(j.lower), abs(j.upper))
        return total
