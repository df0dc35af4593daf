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

CLEARANCE_CAP_M = 0.5  # clearances are measured up to this; farther is as good for a step


def load_arm(client: int, urdf_path: Path, base_pose: Pose) -> int:
    """The arm's body in ``client``, fixed at ``base_pose``. Its cylinders stay cylinders
    (``URDF_USE_IMPLICIT_CYLINDER``): PyBullet otherwise turns each into a convex hull, and
    a distance query against hulls costs several times more (and is less exact)."""
    return p.loadURDF(str(urdf_path), base_pose.position, base_pose.orientation, useFixedBase=True,
                      flags=p.URDF_USE_IMPLICIT_CYLINDER, physicsClientId=client)


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
        self.body = load_arm(self.client, urdf_path, base_pose)
        self.model = read_joint_model(self.client, self.body)
        self._joints = list(self.model.indices)
        self._zero_velocity = [[0.0]] * len(self._joints)
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
        self._reach = self.reach_matrix()
        self._near_obstacles = self._obstacles_within_reach()

    def close(self) -> None:
        if self.client >= 0 and p.isConnected(self.client):
            p.disconnect(self.client)
        self.client = -1

    # -- kinematics -------------------------------------------------------------------

    def set_configuration(self, q: np.ndarray) -> None:
        p.resetJointStatesMultiDof(self.body, self._joints, [[v] for v in np.asarray(q, float).tolist()],
                                   self._zero_velocity, physicsClientId=self.client)

    def within_limits(self, q: np.ndarray) -> bool:
        return bool(np.all(q >= self.model.lower) and np.all(q <= self.model.upper))

    def solve_ik(self, target: Pose, seeds: Sequence[np.ndarray], position_tolerance: float,
                 orientation_tolerance: float, enough: int = 2) -> np.ndarray | None:
        """A collision-free configuration placing tool0 at ``target``, or None.

        The shared kinematics core (:meth:`hri.kinematics.Chain.inverse`) solves from each
        seed in turn for the joint values nearest that seed; the first seed (the current
        joints) also gets the core's restarts, and its solution, when valid and collision-free,
        is the answer. Otherwise, among the first ``enough`` valid, collision-free solutions
        from the other seeds, the one nearest to ``seeds[0]`` wins.
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
            if k == 0:
                return q  # the core's answer from the current joints is the nearest there is
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
        for obstacle in self._near_obstacles:
            for point in p.getClosestPoints(self.body, obstacle, self.margin,
                                            physicsClientId=self.client):
                if point[3] != -1:
                    return False
        for a, b in self.self_pairs:
            if p.getClosestPoints(self.body, self.body, self.self_margin, linkIndexA=a,
                                  linkIndexB=b, physicsClientId=self.client):
                return False
        return True

    def clearance(self, q: np.ndarray) -> float:
        """How far configuration ``q`` is from invalid, in metres: the smallest distance to the
        obstacles minus ``margin`` and between the self-collision pairs minus ``self_margin``,
        at most ``CLEARANCE_CAP_M``; zero or less: invalid (outside the joint limits: -inf)."""
        if not self.within_limits(q):
            return -math.inf
        self.set_configuration(q)
        free = CLEARANCE_CAP_M
        for obstacle in self._near_obstacles:  # each query only looks as far as the clearance found so far
            for point in p.getClosestPoints(self.body, obstacle, self.margin + free, physicsClientId=self.client):
                if point[3] != -1:  # the base stands on an obstacle
                    free = min(free, point[8] - self.margin)
        for a, b in self.self_pairs:
            for point in p.getClosestPoints(self.body, self.body, self.self_margin + free, linkIndexA=a,
                                            linkIndexB=b, physicsClientId=self.client):
                free = min(free, point[8] - self.self_margin)
        return free

    def segment_valid(self, q0: np.ndarray, q1: np.ndarray, resolution: float,
                      check_start: bool = False) -> bool:
        """Every configuration on the straight segment ``q0``..``q1`` is valid.

        Conservative advancement: from a configuration with clearance ``c`` no robot point can
        reach a collision before it has moved ``c``, and along the segment no point moves
        farther than each joint's change times its reach (:meth:`reach_matrix`), summed; so the
        next configuration checked is the farthest one that cannot have been reached, and the
        free part of the segment is proven free, not sampled. The checks are never closer than
        ``resolution`` rad (the fixed spacing of the sampling this replaces, and its
        guarantee, where the arm works close to the table).
        """
        q0 = np.asarray(q0, float)
        delta = np.asarray(q1, float) - q0
        length = float(np.max(np.abs(delta)))
        if length == 0.0:
            return not check_start or self.configuration_valid(q0)
        sweep = float(np.dot(self._reach.max(axis=1), np.abs(delta)))  # farthest any point moves
        finest = 1.0 / max(1, int(math.ceil(length / resolution)))
        s = 0.0
        while True:
            free = self.clearance(q0 + delta * s)
            if free <= 0.0 and (s > 0.0 or check_start):
                return False
            if s >= 1.0:
                return True
            s = min(1.0, s + max(finest, free / sweep))

    # -- speed bound ------------------------------------------------------------------

    def speed_capability(self) -> float:
        """An upper bound (m/s) of any robot point's speed at full joint speed: the sum over
        joints of vmax_i times joint i's reach to the farthest link."""
        return float(np.dot(self.model.max_velocity, self._reach.max(axis=1)))

    def reach_matrix(self) -> np.ndarray:
        """(joints x links): how far a point of link k can be from joint i's axis, whatever the
        configuration (0 for links joint i does not move); a change of dq_i rad moves no point
        of link k farther than reach[i, k] * |dq_i|.

        The distance of a point on link k from joint i's origin is at most the sum of the
        (rigid) joint-to-joint lengths from i to k plus link k's radius around its own joint
        origin (from its AABB at home, conservative). A fixed link (the tool) counts as part
        of the chain after the last joint.
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
        reach = np.zeros((len(self.model.indices), self.model.num_links))
        for i in range(len(self.model.indices)):
            along = 0.0
            for k in range(i, len(chain)):
                if k > i:
                    along += float(np.linalg.norm(origins[k] - origins[k - 1]))
                reach[i, chain[k]] = along + radii[k]
        return reach

    def _obstacles_within_reach(self) -> list[int]:
        """The obstacles the arm can come within ``margin`` of: their boxes are nearer to the
        first joint than the arm reaches (the others need not be asked)."""
        origin = np.array(p.getLinkState(self.body, self.model.indices[0], computeForwardKinematics=1,
                                         physicsClientId=self.client)[4])
        limit = float(self._reach[0].max()) + self.margin
        near = []
        for obstacle in self.obstacles:
            lo, hi = (np.array(corner) for corner in p.getAABB(obstacle, physicsClientId=self.client))
            if float(np.linalg.norm(origin - np.clip(origin, lo, hi))) <= limit:
                near.append(obstacle)
        return near
