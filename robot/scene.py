"""The robot's private planning world: a second copy of the arm and the static scene.

:class:`PlanningScene` owns a ``p.DIRECT`` PyBullet client that nothing else touches.
It answers the planner's geometric questions without disturbing the simulation:
inverse kinematics for the tool link's pose (the shared kinematics core, :mod:`hri.kinematics`,
on the same URDF chain), joint-limit and collision checks of a configuration (against the
static obstacles and the arm itself) and of a straight joint-space segment, and a
configuration-independent bound of any robot point's speed.

It also holds the tool's shape for the safety functions (:class:`ToolShape`, :func:`add_tool_body`):
a gripper's envelope that the separation, SSM and PFL count as part of the robot, kept out of
the physics and of the planner (planned paths are what they were without it).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pybullet as p

from hri.base.geometry import Pose
from hri.kinematics import IkSettings, solve
from hri.kinematics.arm_model import ArmModel

CLEARANCE_CAP_M = 0.5  # clearances are measured up to this; farther is as good for a step


@dataclass(frozen=True)
class ToolShape:
    """The tool (a gripper) at the arm's tool frame, as the safety functions see it: a cylinder
    on the tool frame's z axis from the frame ``length_m`` outwards (away from the flange, where
    a held part hangs), ``radius_m`` around it, of ``mass_kg`` (for power and force limiting's
    effective mass). The default is a simple two-finger gripper's envelope around the 6 cm parts
    of the presets (their half-diagonal is 4.2 cm), as long as a part is high and a little more."""

    radius_m: float = 0.045
    length_m: float = 0.07
    mass_kg: float = 0.5


#: the gripper an arm without one of its own gets (robot.tool in a scenario)
DEFAULT_TOOL = ToolShape()


def has_own_tool(client: int, body: int, model: "JointModel") -> bool:
    """Whether the arm's file models a tool: its tool link has a collision shape, or links hang
    off the chain (a hand's fingers, as on PyBullet's Panda)."""
    if p.getCollisionShapeData(body, model.tool_link, physicsClientId=client):
        return True
    return model.num_links > len(model.indices) + 1


def add_tool_body(client: int, shape: ToolShape) -> int:
    """A body of ``shape`` for the distance queries, put at the tool frame by :func:`pose_tool_body`:
    massless, with no collisions (the physics and the planner never see it; PyBullet's
    closest-point queries do)."""
    collision = p.createCollisionShape(p.GEOM_CYLINDER, radius=shape.radius_m, height=shape.length_m,
                                       collisionFramePosition=(0.0, 0.0, shape.length_m / 2.0),
                                       physicsClientId=client)
    body = p.createMultiBody(baseMass=0.0, baseCollisionShapeIndex=collision, basePosition=(0.0, 0.0, -50.0),
                             physicsClientId=client)
    p.setCollisionFilterGroupMask(body, -1, 0, 0, physicsClientId=client)
    return body


def pose_tool_body(client: int, body: int, frame: tuple) -> None:
    """Put the tool's body at the tool ``frame`` (position, quaternion)."""
    p.resetBasePositionAndOrientation(body, frame[0], frame[1], physicsClientId=client)


def _advance(items: list[int], found: dict[int, float], radius: dict[int, float], sweep: np.ndarray,
             left: float) -> float:
    """The smallest ``clearance / sweep`` over ``items``: how far (a fraction of a segment) the
    arm can advance before one of them may collide; -inf when one is within its margin now.
    ``found`` holds the clearances measured within each item's query ``radius``; an item not
    found is at least ``radius`` clear. An item that cannot collide over the ``left`` of the
    segment leaves ``items``."""
    advance = math.inf
    for item in list(items):
        clearance = found.get(item)
        if clearance is not None and clearance <= 0.0:
            advance = -math.inf
            continue
        lower = clearance if clearance is not None else radius[item]
        bound = lower / sweep[item] if sweep[item] > 0.0 else math.inf
        if bound >= left:
            items.remove(item)
        advance = min(advance, bound)
    return advance


def _ratio(clearance: float, sweep: float) -> float:
    """How far (a fraction of a segment) ``clearance`` lasts against ``sweep``; 0 for none."""
    if clearance <= 0.0:
        return 0.0
    return clearance / sweep if sweep > 0.0 else math.inf


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


def read_joint_model(client: int, body: int, arm: ArmModel) -> JointModel:
    """The revolute joints of ``arm``'s chain (in chain order) and the index of its tool link;
    joints off the chain (a gripper's fingers) are left to their default motors."""
    indices, names, lower, upper, vel, effort = [], [], [], [], [], []
    tool_link = -1
    count = p.getNumJoints(body, physicsClientId=client)
    chain = set(arm.joints)
    for j in range(count):
        info = p.getJointInfo(body, j, physicsClientId=client)
        if info[2] == p.JOINT_REVOLUTE and info[1].decode() in chain:
            indices.append(j)
            names.append(info[1].decode())
            lower.append(info[8])
            upper.append(info[9])
            effort.append(info[10])
            vel.append(info[11])
        if info[12].decode() == arm.tool_link:
            tool_link = j
    if tool_link < 0 or tuple(names) != arm.joints:  # resolve_model checked the file: not this body
        raise ValueError(f"{arm.urdf.name}: the body has joints {names} and tool link index {tool_link}, "
                         f"the chain {arm.base_link}..{arm.tool_link} joints {list(arm.joints)}")
    lower, upper, vel = (list(values) for values in zip(*arm.limits))  # the URDF's or the scenario's
    return JointModel(tuple(indices), tuple(names), np.array(lower), np.array(upper),
                      np.array(vel), np.array(effort), tool_link, count)


def quaternion_angle(q1: Sequence[float], q2: Sequence[float]) -> float:
    """The rotation angle (radians, 0..pi) between two unit quaternions."""
    dot = abs(float(np.dot(np.asarray(q1, float), np.asarray(q2, float))))
    return 2.0 * math.acos(min(1.0, dot))


class PlanningScene:
    """A private DIRECT client with the arm at ``base_pose`` and the static obstacles."""

    def __init__(self, arm: ArmModel, base_pose: Pose,
                 build_obstacles: Callable[[int], list[int]], home: np.ndarray,
                 collision_margin: float, self_collision_margin: float) -> None:
        self.client = p.connect(p.DIRECT)
        self.body = load_arm(self.client, arm.urdf, base_pose)
        self.model = read_joint_model(self.client, self.body, arm)
        self._joints = list(self.model.indices)
        self._zero_velocity = [[0.0]] * len(self._joints)
        self.chain = arm.chain((base_pose.position, base_pose.orientation))
        if self.chain.joint_names != self.model.names:
            raise ValueError(f"{arm.urdf}: the chain {arm.base_link}..{arm.tool_link} has joints "
                             f"{self.chain.joint_names}, the body {self.model.names}")
        self.obstacles = list(build_obstacles(self.client))
        self.margin = float(collision_margin)
        self.self_margin = float(self_collision_margin)
        self.home = np.asarray(home, dtype=float)
        self.self_pairs = self._self_collision_pairs()
        self._no_radius = dict.fromkeys(range(len(self.self_pairs)), 0.0)  # within the margin only
        self._reach = self.reach_matrix()
        self._axis_reach = self.reach_matrix(about_axes=True)  # for sweeps and speeds
        self._near_obstacles = self._obstacles_within_reach()
        self._tops = {obstacle: p.getAABB(obstacle, physicsClientId=self.client)[1][2]
                      for obstacle in self._near_obstacles}
        # The first joint's axis is fixed in the world: a turn about it moves a point up or down
        # by at most its reach times the axis's tilt from upright (not at all on a level base).
        self._vertical_reach = self._axis_reach.copy()
        self._vertical_reach[0] *= math.hypot(*self._world_axis(self.model.indices[0])[:2])
        self._last_judged: tuple[bytes, bool] = (b"", False)

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
        """A collision-free configuration placing the tool link at ``target``, or None: the
        first of :meth:`ik_solutions`."""
        return next(self.ik_solutions(target, seeds, position_tolerance, orientation_tolerance, enough), None)

    def ik_solutions(self, target: Pose, seeds: Sequence[np.ndarray], position_tolerance: float,
                     orientation_tolerance: float, enough: int = 2) -> Iterator[np.ndarray]:
        """Collision-free configurations placing the tool link at ``target``, best first.

        The shared kinematics core (:func:`hri.kinematics.solve`) solves from each
        seed in turn for the joint values nearest that seed; the first seed (the current
        joints) also gets the core's restarts, and its solution, when valid and collision-free,
        comes first. Then the first ``enough`` valid, collision-free solutions from the other
        seeds, nearest to ``seeds[0]`` first, then those of the remaining seeds in their order.
        Solving is lazy: a caller content with the first solves no further.
        """
        reference = np.asarray(seeds[0], dtype=float)
        settings = IkSettings(position_tolerance=position_tolerance, orientation_tolerance=orientation_tolerance)
        found: list[np.ndarray] = []

        def nearest_first() -> list[np.ndarray]:
            return sorted(found, key=lambda c: float(np.sum(np.abs(c - reference))))

        for k, seed in enumerate(seeds):
            result = solve(self.chain, target, seed, settings, restarts=settings.restarts if k == 0 else 0)
            if not result.valid:
                continue
            q = np.array(result.q)
            if not self.configuration_valid(q):
                continue
            if k == 0 or len(found) >= enough:
                yield q
                continue
            found.append(q)
            if len(found) >= enough:
                yield from nearest_first()
        if len(found) < enough:
            yield from nearest_first()

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
        key = np.asarray(q, float).tobytes()
        if key == self._last_judged[0]:
            return self._last_judged[1]  # a goal is judged by the IK and again by the planner
        valid = self.within_limits(q)
        if valid:
            self.set_configuration(q)
            valid = not self.obstacle_clearances(0.0) and not self.self_clearances(self._no_radius)
        self._last_judged = (key, valid)
        return valid

    def segment_valid(self, q0: np.ndarray, q1: np.ndarray, resolution: float,
                      check_start: bool = False) -> bool:
        """Every configuration on the straight segment ``q0``..``q1`` is valid.

        Conservative advancement, link by link: along the segment no point of link k moves
        farther than each joint's change times its reach to link k (:meth:`reach_matrix`),
        summed (``sweep_k``), and link b moves against link a only by the joints between them.
        From a configuration where link k is ``c_k`` from the obstacles (pair (a, b): ``c_ab``
        apart), it cannot touch them before the segment has advanced ``c_k / sweep_k``. So the
        next configuration checked is the nearest one any link could have reached, and the
        free part of the segment is proven free, not sampled; a link (or pair) whose clearance
        covers the rest of the segment is not asked again. The checks are never closer than
        ``resolution`` rad (the fixed spacing of the sampling this replaces, and its
        guarantee, where the arm works close to the table). A link above an obstacle's top
        has a second proof: it cannot sink to it before the segment has advanced its height
        over the top divided by how far the segment lifts or lowers it (:meth:`lifts`), which
        for a turn of the base, the arm's longest move over a table, is small.
        """
        q0 = np.asarray(q0, float)
        delta = np.asarray(q1, float) - q0
        length = float(np.max(np.abs(delta)))
        if length == 0.0:
            return not check_start or self.configuration_valid(q0)
        link_sweep, pair_sweep = self.sweeps(np.abs(delta))
        lift = self.lifts(np.abs(delta))
        links, pairs = list(range(len(link_sweep))), list(range(len(self.self_pairs)))
        obstacles = list(self._near_obstacles)
        finest = 1.0 / max(1, int(math.ceil(length / resolution)))
        s = 0.0
        while True:
            q = q0 + delta * s
            judged = s > 0.0 or check_start
            if not self.within_limits(q):
                if judged:
                    return False
                advance = finest
            else:
                self.set_configuration(q)
                left = 1.0 - s
                advance = min(self._obstacle_advance(links, obstacles, link_sweep, lift, left),
                              self._self_advance(pairs, pair_sweep, left))
                if advance == -math.inf and judged:
                    return False
            if s >= 1.0:
                return True
            s = min(1.0, s + max(finest, advance))

    def sweeps(self, dq: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """How far, at most, each link moves along a segment of joint changes ``dq`` (>= 0),
        and how far each self-collision pair's second link moves against its first."""
        reach = self._axis_reach
        link_sweep = dq @ reach
        moved = reach > 0.0  # moved[i, k]: joint i moves link k
        pair_sweep = np.array([float(np.dot(dq, reach[:, b] * (moved[:, b] & ~moved[:, a])))
                               if a >= 0 else float(link_sweep[b]) for a, b in self.self_pairs])
        return link_sweep, pair_sweep

    def lifts(self, dq: np.ndarray) -> np.ndarray:
        """How far, at most, each link moves up or down along a segment of joint changes ``dq``
        (>= 0): as its sweep, less the first joint's turn, which moves no point up or down."""
        return dq @ self._vertical_reach

    def _obstacle_advance(self, links: list[int], obstacles: list[int], sweep: np.ndarray,
                          lift: np.ndarray, left: float) -> float:
        """How far (a fraction of the segment) the arm can advance from the configuration set
        before a link may come within ``margin`` of an obstacle (-inf: one is now).

        Two proofs, per link and obstacle; the longer one counts. The clearance divided by the
        link's ``sweep``; and, for a link above the obstacle's top, its height over the top
        divided by ``lift``, how far it can sink (a turn of the first joint sweeps far but
        lifts nothing: the arm carrying a part over the table is proven free in a few checks).
        Links and obstacles proven free for the ``left`` of the segment are taken out of
        ``links`` and ``obstacles``; an obstacle no link can sink to is not asked at all."""
        if not links:
            return math.inf
        radius = min(CLEARANCE_CAP_M, max(sweep[k] for k in links) * left)
        lows = {k: p.getAABB(self.body, k, physicsClientId=self.client)[0][2] for k in links}
        bounds = dict.fromkeys(links, math.inf)
        for obstacle in list(obstacles):
            top = self._tops[obstacle] + self.margin
            lasts = {k: _ratio(lows[k] - top, lift[k]) for k in links}  # the heights' proof
            if min(lasts.values()) < left:  # a link may sink to it: its clearances too
                found = self._clearances_to(obstacle, radius)
                for k in links:
                    clearance = found.get(k, radius)
                    lasts[k] = -math.inf if clearance <= 0.0 else max(lasts[k], _ratio(clearance, sweep[k]))
            if min(lasts.values()) >= left:
                obstacles.remove(obstacle)
            for k in links:
                bounds[k] = min(bounds[k], lasts[k])
        for k in [k for k in links if bounds[k] >= left]:
            links.remove(k)
        return min(bounds.values())

    def _self_advance(self, pairs: list[int], sweep: np.ndarray, left: float) -> float:
        """As :meth:`_obstacle_advance`, for the self-collision pairs (indices into ``self_pairs``)."""
        radius = {n: min(CLEARANCE_CAP_M, sweep[n] * left) for n in pairs}
        return _advance(pairs, self.self_clearances(radius), radius, sweep, left)

    def obstacle_clearances(self, radius: float) -> dict[int, float]:
        """Per arm link (the base excepted: it stands on an obstacle), its distance to the
        nearest obstacle minus ``margin``, in the configuration set; links farther than
        ``margin + radius`` are left out."""
        found: dict[int, float] = {}
        for obstacle in self._near_obstacles:
            for link, clearance in self._clearances_to(obstacle, radius).items():
                found[link] = min(found.get(link, math.inf), clearance)
        return found

    def _clearances_to(self, obstacle: int, radius: float) -> dict[int, float]:
        """As :meth:`obstacle_clearances`, to one obstacle."""
        found: dict[int, float] = {}
        for point in p.getClosestPoints(self.body, obstacle, self.margin + radius, physicsClientId=self.client):
            if point[3] >= 0:
                found[point[3]] = min(found.get(point[3], math.inf), point[8] - self.margin)
        return found

    def self_clearances(self, radius: dict[int, float]) -> dict[int, float]:
        """Per self-collision pair ``n`` in ``radius`` (an index into ``self_pairs``), the distance
        between its links minus ``self_margin``, if within ``self_margin + radius[n]``."""
        found: dict[int, float] = {}
        for n, r in radius.items():
            a, b = self.self_pairs[n]
            for point in p.getClosestPoints(self.body, self.body, self.self_margin + r, linkIndexA=a,
                                            linkIndexB=b, physicsClientId=self.client):
                found[n] = min(found.get(n, math.inf), point[8] - self.self_margin)
        return found

    # -- speed bound ------------------------------------------------------------------

    @property
    def joint_reach(self) -> np.ndarray:
        """Per joint, how far from its axis a point it moves can be: a turn at qdot_i rad/s
        moves no point faster than ``joint_reach[i] * |qdot_i|``."""
        return self._axis_reach.max(axis=1)

    def speed_capability(self) -> float:
        """An upper bound (m/s) of any robot point's speed at full joint speed: the sum over
        joints of vmax_i times joint i's reach to the farthest link, from its origin. (Looser
        than from its axis, :attr:`joint_reach`: the separation queries are scheduled by it,
        and where they are taken decides when the person is posed, so a tighter bound would
        change the runs.)"""
        return float(np.dot(self.model.max_velocity, self._reach.max(axis=1)))

    def reach_matrix(self, about_axes: bool = False) -> np.ndarray:
        """(joints x links): how far a point of link k can be from joint i's origin, whatever the
        configuration (0 for links joint i does not move); a change of dq_i rad moves no point
        of link k farther than reach[i, k] * |dq_i|.

        The distance of a point on link k from joint i's origin is at most the sum of the
        (rigid) joint-to-joint lengths from i to k plus link k's radius around its own joint
        origin (from its AABB at home, conservative). A fixed link (the tool) counts as part
        of the chain after the last joint.

        ``about_axes``: the distance from joint i's axis instead, which is what a turn of joint
        i moves a point by, and tighter: the next joint's origin turns with joint i, so its
        distance from the axis is the same in every configuration, and only that counts of
        the first length (the forearm's length along the wrist roll axis, the shoulder's height
        along the base axis, do not); beyond it the lengths add up as before (the distance from
        a line grows no faster than the distance from a point on the line).
        """
        self.set_configuration(self.home)
        chain = [*self.model.indices]
        if self.model.tool_link not in chain:
            chain.append(self.model.tool_link)
        origins, radii, axes = [], [], []
        for link in chain:
            state = p.getLinkState(self.body, link, computeForwardKinematics=1,
                                   physicsClientId=self.client)
            origin = np.array(state[4])
            lo, hi = p.getAABB(self.body, link, physicsClientId=self.client)
            corners = np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1])
                                for z in (lo[2], hi[2])])
            origins.append(origin)
            radii.append(float(np.max(np.linalg.norm(corners - origin, axis=1))))
            axes.append(self._world_axis(link))
        reach = np.zeros((len(self.model.indices), self.model.num_links))
        for i in range(len(self.model.indices)):
            along = 0.0
            for k in range(i, len(chain)):
                if k > i:
                    along += self._length(origins[k] - origins[k - 1], axes[i] if about_axes and k == i + 1 else None)
                reach[i, chain[k]] = along + radii[k]
        self._add_links_off_chain(reach, chain, origins, radii)
        return reach

    def _add_links_off_chain(self, reach: np.ndarray, chain: list[int], origins: list[np.ndarray],
                             radii: list[float]) -> None:
        """Links that hang off the chain (a hand beside the tool frame, its fingers) move with
        the chain link they hang from: their points are as far from each joint as that link's
        origin plus their own distance from it (AABB at home, plus the travel of the joints
        between, a finger's opening). In place; none on an arm whose links are all its chain's."""
        moving = {link: n for n, link in enumerate(chain)}
        for link in range(self.model.num_links):
            if link in moving:
                continue
            anchor, travel = self._anchor(link, moving)
            if anchor is None:
                continue  # hangs from the base: does not move
            lo, hi = p.getAABB(self.body, link, physicsClientId=self.client)
            corners = np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])])
            extra = float(np.max(np.linalg.norm(corners - origins[anchor], axis=1))) + travel
            for i in range(min(anchor + 1, len(self.model.indices))):
                reach[i, link] = reach[i, chain[anchor]] - radii[anchor] + extra

    def _anchor(self, link: int, moving: dict[int, int]) -> tuple[int | None, float]:
        """The position in the chain of the chain link ``link`` hangs from (None: the base), and
        how much farther the joints between may take it than it is at home: a prismatic joint
        its range, another moving joint the link's AABB diagonal (a turn of it)."""
        travel = 0.0
        while link >= 0 and link not in moving:
            info = p.getJointInfo(self.body, link, physicsClientId=self.client)
            if info[2] == p.JOINT_PRISMATIC:
                travel += max(0.0, info[9] - info[8])
            elif info[2] != p.JOINT_FIXED:
                lo, hi = p.getAABB(self.body, link, physicsClientId=self.client)
                travel += float(np.linalg.norm(np.subtract(hi, lo)))
            link = info[16]
        return (moving[link] if link >= 0 else None), travel

    @staticmethod
    def _length(offset: np.ndarray, axis: np.ndarray | None) -> float:
        """``offset``'s length, or with ``axis`` (a unit vector) its length across that axis."""
        if axis is not None:
            offset = offset - float(offset @ axis) * axis
        return float(np.linalg.norm(offset))

    def _world_axis(self, link: int) -> np.ndarray:
        """The axis of the joint before ``link`` in the world, in the configuration set (zero
        for a fixed joint). The first joint's is the same in every configuration."""
        axis = p.getJointInfo(self.body, link, physicsClientId=self.client)[13]
        if not any(axis):
            return np.zeros(3)
        orientation = p.getLinkState(self.body, link, computeForwardKinematics=1, physicsClientId=self.client)[5]
        return np.array(p.rotateVector(orientation, axis))

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
