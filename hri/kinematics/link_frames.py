"""Named frames of a body with a revolute chain, from the chain's joint positions alone.

A :class:`LinkFrames` holds, per named frame, the chain's revolute frame it is rigid with (-1:
the chain's base) and the transform from that frame to it. Its :meth:`~LinkFrames.values` are
then every frame's world pose for a configuration, computed in batched NumPy without asking a
physics engine: the MCAP writer's process (:mod:`hri.view.writer_process`) draws the arm this
way from the joint positions it is sent. :meth:`LinkFrames.calibrated` takes the transforms
from the frames the physics reports in one configuration, so that a frame here is the same
frame the physics gives (a link's URDF frame, its base's centre of mass, a tool's body), with
quaternions signed as Bullet signs them.

Example::

    frames = LinkFrames.calibrated(chain, q0, names, rigid, world)   # world: 4x4 per name at q0
    frames.values(q)   # [x, y, z, qx, qy, qz, qw] per name, in the order of frames.names
"""

from __future__ import annotations

from itertools import chain as chained
from typing import Sequence

import numpy as np

from hri.kinematics.batched_chain import BatchedChain
from hri.kinematics.transforms import bullet_quaternion


class LinkFrames:
    """The world frames ``names`` of a body, each rigid with a revolute frame of ``chain``
    (``rigid``, -1 for the base) at ``offsets`` (4x4 each) from it."""

    def __init__(self, chain: BatchedChain, names: Sequence[str], rigid: Sequence[int], offsets: np.ndarray) -> None:
        if not len(names) == len(rigid) == len(offsets):
            raise ValueError(f"{len(names)} names, {len(rigid)} rigid frames and {len(offsets)} offsets")
        self.chain = chain
        self.names = tuple(names)
        offsets = np.asarray(offsets, dtype=float)
        # a frame named twice (a tool frame that is also a link's) is computed once
        kinds = [(k, offset.tobytes()) for k, offset in zip(rigid, offsets)]
        first = {kind: i for i, kind in reversed(list(enumerate(kinds)))}
        distinct = sorted(set(first.values()))
        self._of = [distinct.index(first[kind]) for kind in kinds]
        # frame k + 1 of the stacked [base, revolute frames...] for revolute frame k, 0 the base
        self._index = np.asarray(rigid, dtype=int)[distinct] + 1
        self._offsets = offsets[distinct]

    @classmethod
    def calibrated(cls, chain: BatchedChain, q: Sequence[float], names: Sequence[str], rigid: Sequence[int],
                   world: Sequence[np.ndarray]) -> "LinkFrames":
        """The frames that are at ``world`` (4x4 each) in configuration ``q``; ``chain.base``
        must be placed already (:meth:`BatchedChain.place`)."""
        stacked = chain.stacked(np.asarray(q, dtype=float))
        offsets = [np.linalg.solve(stacked[k + 1], frame) for k, frame in zip(rigid, world)]
        return cls(chain, names, rigid, np.array(offsets).reshape(len(names), 4, 4))

    def _distinct(self, q: Sequence[float]) -> np.ndarray:
        """The frames named once (:attr:`_of` maps every name to one), 4x4 each, at ``q``."""
        return self.chain.stacked(np.asarray(q, dtype=float))[self._index] @ self._offsets

    def values(self, q: Sequence[float]) -> list[float]:
        """Seven numbers per named frame, in :attr:`names` order: position and quaternion
        ``(x, y, z, qx, qy, qz, qw)``."""
        # plain floats: a few per frame, dozens of frames a second
        distinct = [(m[0][3], m[1][3], m[2][3], *bullet_quaternion(m)) for m in self._distinct(q).tolist()]
        return list(chained.from_iterable(distinct[i] for i in self._of))
