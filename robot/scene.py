"""The robot's private planning world: a second copy of the arm and the static scene.

:class:`PlanningScene` owns a ``p.DIRECT`` PyBullet client that nothing else touches.
It answers the planner's geometric questions without disturbing the simulation:
inverse kinematics for the ``tool0`` pose (the shared kinematics core, :mod:`hri.kinematics`,
on the same URDF chain), joint-limit and collision checks of a configuration (against the
static obstacles and the arm itself) and of a straight joint-space segment, and a
configuration-independent bound of any robot point's speed.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pybullet as p

from hri.geometry import Pose
from hri.kinematics import Chain, IkSettings


@dataclass(frozen=True)
class JointModel:
    """The revolute joints of the arm as read from the URDF."""

    indices: tuple[int, ...]
    names: tuple[str, ...]
    lower: np.ndarray
    upper: np.ndarray
    max_velocity: np.ndarray
    max_effort: np.ndarray
    tool_link: int
    num_links: int


def read_joint_model(client: int, body: int) -> JointModel:
    """The revolute joints (in chain order) and the index of the ``tool0`` link."""
    indices, names, lower, upper, vel, effort = [], [], [], [], [], []
    tool_link = -1
    count = p.getNumJoints(body, physicsClientId=client)
    for j in range(count):
        info = p.getJointInfo(body, j, physicsClientId=client)
        if info[2] == p.JOINT_REVOLUTE:
            indices.append(j)
            names.append(info[1].decode())
            lower.append(info[8])
            upper.append(info[9])
            effort.append(info[10])
            vel.append(info[11])
        if info[12].decode() == "tool0":
            tool_link = j
    if tool_link < 0:
        raise ValueError("the robot URDF has no link named 'tool0'")
    return JointModel(tuple(indices), tuple(names), np.array(lower), np.array(upper),
                      np.array(vel), np.array(effort), tool_link, count)


def quaternion_angle(q1: Sequence[float], q2: Sequence[float]) -> float:
    """The rotation angle (radians, 0..pi) between two unit quaternions."""
    dot = abs(float(np.dot(np.asarray(q1, float), np.asarray(q2, float))))
    return 2.0 * math.acos(min(1.0, dot))


class PlanningScene:
    """A private DIRECT client with the arm at ``base_pose`` and the static obstacles."""

    def __init__(self, urdf_path: Path, base_pose: Pose,
                 build_obstacles: Callable[[int], list[int]], home: np.ndarray,
                 collision_margin: float, self_collision_margin: float) -> None:
        self.client = p.connect(p.DIRECT)
        self.body = p.loadURDF(str(urdf_path), base_pose.position, base_pose.orientation,
                               useFixedBase=True, physicsClientId=self.client)
        self.model = read_joint_model(self.client, self.body)
        self.chain = Chain.from_urdf(urdf_path, "base_link", "tool0",
                                     base_pose=(base_pose.position, base_pose.orientation))
        if self.chain.joint_names != self.model.names:
            raise ValueError(f"{urdf_path}: the chain base_link..tool0 has joints {self.chain.joint_names}, "
                             f"the body {self.model.names}")
        self.obstacles = list(build_obstacles(self.client))
        self.margin = float(collision_margin)
        self.self_margin = float(self_collision_margin)
        self.home = np.asarray(home, dtype=float)
        self.self_pairs = self._self_collision_pairs()

    def close(self) -> None:
        if self.client >= 0 and p.isConnected(self.client):
            p.disconnect(self.client)
        self.client = -1

    # -- kinematics -------------------------------------------------------------------

    def set_configuration(self, q: np.ndarray) -> None:
        for j, value in zip(self.model.indices, q):
            p.resetJointState(self.body, j, float(value), 0.0, physicsClientId=self.client)

    def within_limits(self, q: np.ndarray) -> bool:
        return bool(np.all(q >= self.model.lower) and np.all(q <= self.model.upper))

    def solve_ik(self, target: Pose, seeds: Sequence[np.ndarray], position_tolerance: float,
                 orientation_tolerance: float, enough: int = 2) -> np.ndarray | None:
        """A collision-free configuration placing tool0 at ``target``, or None.

        The shared kinematics core (:meth:`hri.kinematics.Chain.inverse`) solves from each
        seed in turn for the joint values nearest that seed; the first seed (the current
        joints) also gets the core's restarts. Among the first ``enough`` valid, collision-free
        solutions the one nearest to ``seeds[0]`` wins.
        """
        reference = np.asarray(seeds[0], dtype=float)
        settings = IkSettings(position_tolerance=position_tolerance, orientation_tolerance=orientation_tolerance)
        found: list[np.ndarray] = []
        for k, seed in enumerate(seeds):
            result = self.chain.inverse(target, seed, settings, restarts=settings.restarts if k == 0 else 0)
            if not result.valid:
                continue
            q = np.array(result.q)
            if not self.configuration_valid(q):
                continue
            found.append(q)
            if len(found) >= enough:
                break
        if not found:
            return None
        return min(found, key=lambda c: float(np.sum(np.abs(c - reference))))

    # -- collisions -------------------------------------------------------------------

    def _self_collision_pairs(self) -> list[tuple[int, int]]:
        """Link pairs at least two joints apart that are apart at the home configuration."""
        links = [-1, *self.model.indices]
        self.set_configuration(self.home)
        pairs = []
        for a_pos, a in enumerate(links):
            for b in links[a_pos + 2:]:
                if p.getClosestPoints(self.body, self.body, 0.0, linkIndexA=a, linkIndexB=b,
                                      physicsClientId=self.client):
                    continue  # touching in the home pose: by construction, not a collision
                pairs.append((a, b))
        return pairs

    def configuration_valid(self, q: np.ndarray) -> bool:
        """Within the joint limits, ``margin`` away from the obstacles, no self-collision.

        The base link is not tested against the obstacles: it stands on one of them.
        """
        if not self.within_limits(q):
            return False
        self.set_configuration(q)
        for obstacle in self.obstacles:
            for point in p.getClosestPoints(self.body, obstacle, self.margin,
                                            physicsClientId=self.client):
                if point[3] != -1:
                    return False
        for a, b in self.self_pairs:
            if p.getClosestPoints(self.body, self.body, self.self_margin, linkIndexA=a,
                                  linkIndexB=b, physicsClientId=self.client):
                return False
        return True

    def segment_valid(self, q0: np.ndarray, q1: np.ndarray, resolution: float,
                      check_start: bool = False) -> bool:
        """Every configuration on the straight segment, ``resolution`` rad apart, is valid."""
        steps = max(1, int(math.ceil(float(np.max(np.abs(q1 - q0))) / resolution)))
        first = 0 if check_start else 1
        for k in range(first, steps + 1):
            if not self.configuration_valid(q0 + (q1 - q0) * (k / steps)):
                return False
        return True

    # -- speed bound ------------------------------------------------------------------

    def speed_capability(self) -> float:
        """Sum over joints of vmax_i times the largest distance of a robot point from axis i.

        Configuration independent: the distance of a point on link k from joint i's origin
        is at most the sum of the (rigid) joint-to-joint lengths from i to k plus link k's
        radius around its own joint origin (from its AABB at home, conservative).
        """
        self.set_configuration(self.home)
        chain = [*self.model.indices]
        if self.model.tool_link not in chain:
            chain.append(self.model.tool_link)
        origins, radii = [], []
        for link in chain:
            state = p.getLinkState(self.body, link, computeForwardKinematics=1,
                                   physicsClientId=self.client)
            origin = np.array(state[4])
            lo, hi = p.getAABB(self.body, link, physicsClientId=self.client)
            corners = np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1])
                                for z in (lo[2], hi[2])])
            origins.append(origin)
            radii.append(float(np.max(np.linalg.norm(corners - origin, axis=1))))
        total = 0.0
        for i in range(len(self.model.indices)):
            reach, along = 0.0, 0.0
            for k in range(i, len(chain)):
                if k > i:
                    along += float(np.linalg.norm(origins[k] - origins[k - 1]))
                reach = max(reach, along + radii[k])
            total += float(self.model.max_velocity[i]) * reach
        return total
