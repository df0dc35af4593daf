"""Forward kinematics of a revolute chain for many configurations at once, in batched NumPy.

:class:`BatchedChain` gives the frame after each revolute joint of a URDF chain (fixed joints
folded into the next revolute joint's origin) for every row of a configuration array: the
braking bound (:mod:`hri.robot.braking`) moves the arm's points along a whole braking with it,
and :class:`~hri.kinematics.link_frames.LinkFrames` gives every link frame of a body from it.
"""

from __future__ import annotations

import numpy as np

from hri.kinematics.urdf import JointSpec


class BatchedChain:
    """Forward kinematics of a URDF chain of revolute and fixed joints for many configurations
    at once: the frames of the links after each revolute joint. A fixed joint's transform goes
    into the next revolute joint's origin (:attr:`fixed_after` keeps, per chain link, the
    revolute frame it is rigid with and the transform from it), so a configuration costs one
    batched 4x4 product per revolute joint."""

    def __init__(self, joints: tuple[JointSpec, ...], base: np.ndarray):
        self.base = base
        origins, axes = [], []
        pending = np.eye(4)
        #: per chain link (index k: the child of joint k): (revolute frame index or -1 for the
        #: base, transform from that frame to the link's)
        self.fixed_after: list[tuple[int, np.ndarray]] = []
        for joint in joints:
            if joint.kind in ("revolute", "continuous"):
                origins.append(pending @ joint.origin)
                axes.append(np.asarray(joint.axis, dtype=float))
                pending = np.eye(4)
                self.fixed_after.append((len(origins) - 1, np.eye(4)))
            elif joint.kind == "fixed":
                pending = pending @ joint.origin
                self.fixed_after.append((len(origins) - 1, pending.copy()))
            else:
                raise ValueError(f"joint {joint.name} is {joint.kind}: a batched chain takes "
                                 "revolute and fixed joints")
        self.origins = np.array(origins)
        k = np.array([[[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]] for a in axes])
        self.rot_k = self.origins[:, :3, :3] @ k          # O K
        self.rot_k2 = self.origins[:, :3, :3] @ k @ k     # O K^2

    def frames(self, q: np.ndarray) -> np.ndarray:
        """(configurations, revolute joints, 4, 4): the frame after each revolute joint in the
        world for each row of ``q``."""
        n, count = len(q), len(self.origins)
        joint = np.broadcast_to(self.origins, (n, count, 4, 4)).copy()
        angles = q[:, :, None, None]
        joint[:, :, :3, :3] += np.sin(angles) * self.rot_k + (1.0 - np.cos(angles)) * self.rot_k2
        out = np.empty((n, count, 4, 4))
        frame = self.base
        for k in range(count):
            frame = frame @ joint[:, k]
            out[:, k] = frame
        return out

    def stacked(self, q: np.ndarray) -> np.ndarray:
        """(1 + revolute joints, 4, 4): :attr:`base`, then the frame after each revolute joint,
        in the one configuration ``q`` (:meth:`frames`' arithmetic on plain 4x4 products: a
        third of its time for a single row)."""
        joints = self.origins.copy()
        joints[:, :3, :3] += np.sin(q)[:, None, None] * self.rot_k + (1.0 - np.cos(q))[:, None, None] * self.rot_k2
        frames = [self.base]
        for joint in joints:
            frames.append(frames[-1] @ joint)
        return np.array(frames)

    def place(self, q: np.ndarray, frame: int, offset: np.ndarray, world: np.ndarray) -> None:
        """Set :attr:`base` so that the link ``offset`` from revolute frame ``frame`` (-1: the
        base) is at ``world`` (4x4) in configuration ``q``: the chain's base in the world, from
        one link frame the physics reports."""
        self.base = np.eye(4)
        at = (self.frames(np.asarray(q, dtype=float)[None, :])[0, frame] if frame >= 0 else self.base) @ offset
        self.base = world @ np.linalg.inv(at)
