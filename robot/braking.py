"""The arm's stopping distance S_s and time T_s from its current state: the braking its own
controller would command from there, followed through the arm's forward kinematics.

:class:`BrakingBound` takes the arm's commanded joint state (position, velocity, acceleration:
what :class:`~hri.robot.motion.JointMotion` holds) and its measured joint positions. It computes
the braking :meth:`~hri.robot.motion.JointMotion.brake` commands from that state (ruckig's
velocity interface to rest, phase synchronised, unsynchronised where that fails, as the motion
does), samples it at every control cycle and moves the arm's points along it with a batched
forward kinematics of the URDF chain. The points are each link's box (PyBullet's AABB of the
link's shapes, taken in the link's own frame, its frame origin included): the displacement of
a point of a rigid link is affine in the point, so its length is largest at a corner of any box
around the link's shapes; no point of the arm (tool and hand shapes included) moves farther
from where it was than the largest corner displacement. A tool of its own body and a part the
robot carries (:meth:`~hri.robot.arm.RobotArm.add_tool`) lie within
:attr:`~hri.robot.arm.RobotArm.tool_reach_m` of the tool frame: a cube of that half-size around
the tool frame's origin, moving with the tool link, holds them, and its corners count too. S_s is the largest displacement of any
corner from its measured position before the braking, over the braking; T_s the braking's
duration.

The measured joints lag the command (the motors follow it through PyBullet's position control)
and settle on the commanded rest position with a small overshoot: the displacement starts from
the measured position, and ``TRACKING_MARGIN`` (relative) and ``TRACKING_MARGIN_M`` (absolute)
cover the overshoot; the tests (tests/test_braking.py) check the bound against the simulation's
braking from sampled states: never below.

``ahead=N`` bounds the braking N control cycles later instead: from the state the arm reaches
after N more cycles of the hardest jerk towards more speed (per joint, in the direction it
moves), those cycles' travel included. SSM's controller decides now what the arm does until it
looks again; :class:`StateStops` is how it asks.

Two bounds need no forward kinematics: :meth:`BrakingBound.quick` (the joints' reaches times how
far each joint gets) from a state, and :meth:`BrakingBound.line` over a whole straight segment
of the arm's motion (from rest to rest, phase synchronised), taken once per segment.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
import pybullet as p
from ruckig import (ControlInterface, InputParameter, Result, Ruckig, RuckigError, Synchronization,
                    Trajectory)

from hri.base.bodies import link_names
from hri.kinematics.batched_chain import BatchedChain
from hri.robot.arm import RobotArm

#: the measured arm's overshoot past the commanded rest, relative to the braking distance and
#: absolute (m): the largest the sampled-state test sees, rounded up
TRACKING_MARGIN = 0.05
TRACKING_MARGIN_M = 0.002
#: ... and the time (s) the measured arm takes to come to rest after the command has
TRACKING_TIME_S = 0.05
_CORNERS = np.array([[x, y, z] for x in (0, 1) for y in (0, 1) for z in (0, 1)], dtype=float)


@dataclass(frozen=True)
class JointState:
    """The arm's commanded joint state and its measured joint positions (rad, rad/s, rad/s^2)."""

    measured: np.ndarray
    position: np.ndarray
    velocity: np.ndarray
    acceleration: np.ndarray

    @classmethod
    def of(cls, arm: RobotArm) -> "JointState":
        """``arm``'s state now."""
        return cls(arm.joint_positions(), *arm.commanded_state())

    @property
    def at_rest(self) -> bool:
        return not (np.any(self.velocity) or np.any(self.acceleration))


@dataclass(frozen=True)
class Stop:
    """S_s (m) and T_s (s) of one braking."""

    distance_m: float
    time_s: float


def link_points(client: int, body: int, chain_links: set[str]) -> dict[int, np.ndarray]:
    """Per PyBullet link named in ``chain_links``, the corners of the boxes (AABB now) of every
    link that moves with it, and its frame origin, in its own frame's coordinates. A link off
    the chain (a gripper's finger) goes with the chain link it hangs from."""
    infos = [p.getJointInfo(body, j, physicsClientId=client) for j in range(p.getNumJoints(body, physicsClientId=client))]
    points: dict[int, list[np.ndarray]] = {}
    for link in range(len(infos)):
        anchor = link
        while anchor >= 0 and infos[anchor][12].decode() not in chain_links:
            anchor = infos[anchor][16]
        if anchor < 0:
            continue  # hangs from the base: does not move
        frame = p.getLinkState(body, anchor, computeForwardKinematics=1, physicsClientId=client)
        origin, rotation = np.array(frame[4]), np.array(p.getMatrixFromQuaternion(frame[5])).reshape(3, 3)
        lo, hi = (np.array(c) for c in p.getAABB(body, link, physicsClientId=client))
        corners = lo + _CORNERS * (hi - lo)
        points.setdefault(anchor, [np.zeros((1, 3))]).append((corners - origin) @ rotation)
    return {anchor: np.vstack(found) for anchor, found in points.items()}


class BrakingBound:
    """S_s and T_s of the arm from its state (see the module doc)."""

    def __init__(self, chain: BatchedChain, points: dict[int, np.ndarray], joint_reach: np.ndarray,
                 max_velocity: np.ndarray, max_acceleration: np.ndarray, max_jerk: np.ndarray, dt: float):
        self.chain = chain
        self.links = sorted(points)
        self.points = np.zeros((len(self.links), max(len(points[k]) for k in self.links), 3))
        for row, link in enumerate(self.links):  # shorter sets repeat their first point (the origin)
            self.points[row] = points[link][np.arange(self.points.shape[1]) % len(points[link])]
        homogeneous = np.concatenate([self.points, np.ones(self.points.shape[:2] + (1,))], axis=2)
        self._points_t = homogeneous.transpose(0, 2, 1).copy()  # (links, 4, points)
        self.reach = [float(r) for r in joint_reach]
        self.max_velocity = np.asarray(max_velocity, dtype=float)
        self.max_acceleration = np.asarray(max_acceleration, dtype=float)
        self.max_jerk = np.asarray(max_jerk, dtype=float)
        self._max_acceleration, self._max_jerk = self.max_acceleration.tolist(), self.max_jerk.tolist()
        self.dt = float(dt)
        dof = len(self.max_jerk)
        self._otg = Ruckig(dof)
        self._trajectory = Trajectory(dof)
        self._inp = InputParameter(dof)
        self._inp.control_interface = ControlInterface.Velocity
        self._inp.max_velocity = [1e9] * dof  # unused by the velocity interface, must be set
        self._inp.max_acceleration = self.max_acceleration.tolist()
        self._inp.max_jerk = self.max_jerk.tolist()
        self._inp.target_velocity = [0.0] * dof
        self._inp.target_acceleration = [0.0] * dof
        self._zeros = [0.0] * dof
        self._cache: tuple[tuple, Stop] | None = None  # the last exact stop, by commanded state

    @classmethod
    def for_arm(cls, arm: RobotArm, dt: float) -> "BrakingBound":
        """The bound of ``arm`` braking in control cycles of ``dt`` seconds."""
        chain = arm.arm_model.chain()
        names = {index: name for index, name in link_names(arm.client, arm.body_id).items() if index >= 0}
        pybullet = set(names.values())
        batched = BatchedChain(chain.joints, np.eye(4))
        # chain link name -> (revolute frame, transform from it to the link's frame)
        rigid = dict(zip(chain.link_names[1:], batched.fixed_after))
        found = link_points(arm.client, arm.body_id, {name for name in rigid if name in pybullet
                                                      and rigid[name][0] >= 0})
        points: dict[int, list[np.ndarray]] = {}
        for link, corners in found.items():
            frame, offset = rigid[names[link]]
            points.setdefault(frame, []).append(corners @ offset[:3, :3].T + offset[:3, 3])
        if arm.tool_reach_m > 0.0:  # the tool and a carried part: a cube around the tool frame holds them
            frame, offset = rigid[names[arm.model.tool_link]]
            points.setdefault(frame, []).append(offset[:3, 3] + arm.tool_reach_m * (2.0 * _CORNERS - 1.0))
        # the chain's base in the world: a chain link's PyBullet frame over its chain frame
        link = min(found)
        state = p.getLinkState(arm.body_id, link, computeForwardKinematics=1, physicsClientId=arm.client)
        world = np.eye(4)
        world[:3, :3] = np.array(p.getMatrixFromQuaternion(state[5])).reshape(3, 3)
        world[:3, 3] = state[4]
        batched.place(arm.joint_positions(), *rigid[names[link]], world)
        return cls(batched, {frame: np.vstack(found) for frame, found in points.items()}, arm.joint_reach,
                   arm.model.max_velocity, np.array(arm.config.max_acceleration), np.array(arm.config.max_jerk), dt)

    def _calculate(self, position: list[float], velocity: list[float], acceleration: list[float],
                   trajectory: Trajectory | None = None) -> Trajectory:
        """ruckig's braking from this commanded state, as the arm's motion computes it (into
        ``trajectory``, by default one kept for it)."""
        inp, trajectory = self._inp, trajectory or self._trajectory
        inp.current_position, inp.current_velocity, inp.current_acceleration = position, velocity, acceleration
        for synchronization in (Synchronization.Phase, Synchronization.No):
            inp.synchronization = synchronization
            try:
                if self._otg.calculate(inp, trajectory) in (Result.Working, Result.Finished):
                    return trajectory
            except RuckigError:
                pass
        raise RuntimeError(f"ruckig found no braking from {velocity} rad/s, {acceleration} rad/s^2")

    def extrema(self, velocity: list[float], acceleration: list[float]) -> tuple[list[float], list[float], float]:
        """How far below and above where it starts each joint gets over the braking from this
        commanded velocity and acceleration, and the braking's duration. ruckig's
        ``position_extrema`` also count the trajectory's final position as the position
        interface sets it, which braking (the velocity interface) leaves as it was: 0 in a new
        trajectory, an earlier braking's end in a kept one. So the braking is taken from 0 into a
        new trajectory, where that value is its start."""
        trajectory = self._calculate(self._zeros, velocity, acceleration, Trajectory(len(velocity)))
        extrema = trajectory.position_extrema
        return [e.min for e in extrema], [e.max for e in extrema], trajectory.duration

    def braking(self, position: list[float], velocity: list[float], acceleration: list[float]) -> np.ndarray:
        """The commanded positions of the braking from this state, one row per control cycle
        (the first the state's own position, the last at rest): ruckig's profiles (per joint,
        phases of constant jerk) evaluated at the cycles at once."""
        trajectory = self._calculate(position, velocity, acceleration)
        duration = trajectory.duration
        steps = max(1, math.ceil(duration / self.dt - 1e-9))
        times = np.minimum(np.arange(steps + 1) * self.dt, duration)
        profiles = trajectory.profiles[0]
        if any(profile.brake.duration > 0.0 for profile in profiles):  # a pre-braking phase
            at = trajectory.at_time
            return np.array([position, *(at(t)[0] for t in times[1:].tolist())])
        starts = np.zeros((len(profiles), 8))
        np.cumsum([profile.t for profile in profiles], axis=1, out=starts[:, 1:])
        jerk = np.array([[*profile.j, 0.0] for profile in profiles])
        a, v, q = (np.array([getattr(profile, name) for profile in profiles]) for name in "avp")
        rows = np.arange(len(profiles))[:, None]
        phase = np.minimum((starts[:, None, :] <= times[None, :, None]).sum(axis=2) - 1, 7)  # (joints, cycles)
        t = times[None, :] - starts[rows, phase]
        out = q[rows, phase] + t * (v[rows, phase] + t * (a[rows, phase] / 2.0 + t * jerk[rows, phase] / 6.0))
        out[:, 0] = position
        return out.T

    def ahead(self, state: JointState, cycles: int = 1) -> tuple[list[float], list[float], list[float]]:
        """The commanded state ``cycles`` control cycles later with the hardest jerk towards
        more speed in every cycle (per joint, in the direction it moves)."""
        positions, velocity, acceleration = self._ahead(state, cycles)
        return positions[-1], velocity, acceleration

    def _ahead(self, state: JointState, cycles: int) -> tuple[list[list[float]], list[float], list[float]]:
        """:meth:`ahead` with the positions of every cycle (one list per cycle)."""
        dt, velocity, acceleration = self.dt, [], []
        columns = []
        for q, v, a, a_max, j_max in zip(state.position.tolist(), state.velocity.tolist(),
                                         state.acceleration.tolist(), self._max_acceleration, self._max_jerk):
            column = []
            for _ in range(cycles):
                jerk = j_max if v + a * dt >= 0.0 else -j_max
                a_next = min(a_max, max(-a_max, a + jerk * dt))
                q = q + v * dt + (a / 2.0 + jerk / 6.0) * dt * dt
                v = v + 0.5 * (a + a_next) * dt
                a = a_next
                column.append(q)
            columns.append(column)
            velocity.append(v)
            acceleration.append(a)
        return [list(row) for row in zip(*columns)], velocity, acceleration

    def reach_m(self, a: np.ndarray, b: np.ndarray) -> float:
        """How far a point can be between joint positions ``a`` and ``b``: ``sum_i joint_reach_i
        |a_i - b_i|`` (no forward kinematics)."""
        return sum(r * abs(x - y) for r, x, y in zip(self.reach, a.tolist(), b.tolist()))

    def lag_m(self, state: JointState) -> float:
        """How far a point can be from where the command has it: the measured joints' lag."""
        return self.reach_m(state.measured, state.position)

    def stop(self, state: JointState, ahead: int = 0) -> Stop:
        """S_s and T_s from ``state`` through the forward kinematics of every cycle of the
        braking; ``ahead``: braking that many control cycles later (after the hardest jerk
        towards more speed, :meth:`ahead`), those cycles included."""
        return self.margin(self.commanded(state, ahead), state, 0.0)

    def commanded(self, state: JointState, ahead: int = 0) -> Stop:
        """:meth:`stop` of the command alone: the farthest displacement from the commanded
        position, without the measured lag and the margins. The same commanded state (an arm
        holding still) gives the kept result."""
        key = (ahead, *state.position.tolist(), *state.velocity.tolist(), *state.acceleration.tolist())
        if self._cache is not None and self._cache[0] == key:
            return self._cache[1]
        if ahead:
            positions, velocity, acceleration = self._ahead(state, ahead)
            path = self.braking(positions[-1], velocity, acceleration)
            rows = np.vstack([state.position[None, :], np.array(positions[:-1]).reshape(-1, len(velocity)), path])
        elif state.at_rest:
            rows = state.position[None, :]
        else:
            rows = self.braking(state.position.tolist(), state.velocity.tolist(), state.acceleration.tolist())
        kept = Stop(self._farthest_m(rows), (len(rows) - 1) * self.dt)
        self._cache = (key, kept)
        return kept

    def _farthest_m(self, rows: np.ndarray) -> float:
        """The farthest any corner is, over the joint positions ``rows``, from where the first
        row has it (the forward kinematics of every row)."""
        world = self.chain.frames(rows)[:, self.links] @ self._points_t  # (rows, links, 4, points)
        moved = world - world[0]
        return math.sqrt(float((moved * moved).sum(axis=2).max()))

    def quick(self, state: JointState, ahead: int = 0) -> Stop:
        """:meth:`commanded`'s stop bounded without the forward kinematics: the joints' reaches
        times how far each joint gets from where it is over the same motion (the cycles ahead,
        then the braking's position extrema, ruckig's own), ``sum_i joint_reach_i max_t |q_i(t) -
        q_i|``; never below :meth:`commanded` (a point moves no farther between two
        configurations than that sum for them), and the same T_s."""
        if ahead:
            positions, velocity, acceleration = self._ahead(state, ahead)
            start = positions[-1]
        elif state.at_rest:
            return Stop(0.0, 0.0)
        else:
            positions, start = [], state.position.tolist()
            velocity, acceleration = state.velocity.tolist(), state.acceleration.tolist()
        low, high, duration = self.extrema(velocity, acceleration)
        here = state.position.tolist()
        far = [max(abs(s + top - q), abs(s + bottom - q)) for s, bottom, top, q in zip(start, low, high, here)]
        for row in positions[:-1]:  # the last is the braking's start, within its extrema
            far = [max(f, abs(x - q)) for f, x, q in zip(far, row, here)]
        steps = max(1, math.ceil(duration / self.dt - 1e-9))
        return Stop(sum(r * f for r, f in zip(self.reach, far)), (ahead + steps) * self.dt)

    def line(self, start: np.ndarray, end: np.ndarray, scale: float) -> Stop:
        """:meth:`quick`'s stop bounded over a whole straight segment of the arm's motion, from
        rest at ``start`` to rest at ``end`` with every joint within ``scale`` times its top
        speed (:attr:`JointMotion.line <hri.robot.motion.JointMotion.line>`): phase
        synchronised, the joints move as one coordinate along the segment, whose speed,
        acceleration and jerk the most constrained joint limits. The braking from its worst
        state (as :func:`~hri.robot.stopping.worst_state` for one coordinate: accelerating at
        the most that still lets it reach its top speed at zero acceleration) stays on the
        segment's line and goes farther than from any other state on it (the braking distance
        grows with the speed and the acceleration), so the stop holds on every cycle of the
        segment: taken once per segment instead of once per cycle. It covers a braking one
        cycle after the segment's end too, when the next segment may have begun from rest."""
        after = self._from_rest  # the next segment's first cycle
        limits = self._line_limits(start, end, scale)
        if limits is None:
            return after
        top, most, jerk = limits
        acceleration = min(most, math.sqrt(2.0 * jerk * top))
        speed = top - acceleration ** 2 / (2.0 * jerk)
        direction = end - start
        worst = self.quick(JointState(start, start, speed * direction, acceleration * direction))
        # T_s counts from the decision, one cycle before the braking begins
        return Stop(max(worst.distance_m, after.distance_m), max(worst.time_s + self.dt, after.time_s))

    @functools.cached_property
    def _from_rest(self) -> Stop:
        """:meth:`quick`'s stop one cycle after rest (the same wherever the arm rests)."""
        rest = np.zeros(len(self.reach))
        return self.quick(JointState(rest, rest, rest, rest), ahead=1)

    def line_speed_m_s(self, start: np.ndarray, end: np.ndarray, scale: float) -> float:
        """No point of the commanded arm moves faster on that segment (:meth:`line`): its top
        speed along the line times ``sum_i joint_reach_i |end_i - start_i|``."""
        limits = self._line_limits(start, end, scale)
        return 0.0 if limits is None else limits[0] * self.reach_m(end, start)

    def _line_limits(self, start: np.ndarray, end: np.ndarray, scale: float) -> tuple[float, float, float] | None:
        """The segment's top speed, acceleration and jerk along the line (its length 1), set
        by the most constrained joint; None for a segment of no length."""
        span = np.abs(end - start)
        moving = span > 0.0
        if not np.any(moving):
            return None
        return (scale * float(np.min(self.max_velocity[moving] / span[moving])),
                float(np.min(self.max_acceleration[moving] / span[moving])),
                float(np.min(self.max_jerk[moving] / span[moving])))

    def margin(self, commanded: Stop, state: JointState, moved_m: float) -> Stop:
        """A commanded stop's S_s and T_s for the arm in ``state``: plus the measured lag,
        plus ``moved_m`` (how far the arm's points can have gone since the command's position
        the stop was taken at), with the tracking margins."""
        return self.with_lag(commanded, self.lag_m(state) + moved_m)

    @staticmethod
    def with_lag(commanded: Stop, lag_m: float) -> Stop:
        """A commanded stop's S_s and T_s for an arm whose points can be ``lag_m`` from where
        the command has them (the measured lag, and what the arm can have moved since), with
        the tracking margins."""
        return BrakingBound._margin(commanded.distance_m + lag_m, commanded.time_s)

    def displacement_m(self, start: np.ndarray, end: np.ndarray) -> float:
        """The farthest any point of the arm is from where it was, with the arm at joint
        positions ``end`` against ``start``: the largest corner displacement of the links' boxes
        between the two configurations (the forward kinematics of both)."""
        return self._farthest_m(np.stack([start, end]))

    def moved_m(self, since: np.ndarray, state: JointState) -> float:
        """How far a point can have gone from where the commanded position ``since`` had it
        (:meth:`reach_m`)."""
        return self.reach_m(state.position, since)

    @staticmethod
    def _margin(distance_m: float, time_s: float) -> Stop:
        """The tracking margins (module doc) on a commanded braking's distance and time."""
        return Stop(distance_m * (1.0 + TRACKING_MARGIN) + TRACKING_MARGIN_M, time_s + TRACKING_TIME_S)


#: SSM's controller takes the forward kinematics' bound once in this many control cycles, for
#: the braking after as many cycles of the hardest jerk, and in between adds how far the arm
#: can have gone since (:class:`StateStops`)
REUSE_CYCLES = 4


@dataclass(slots=True)
class _SegmentStop:
    """:meth:`StateStops.line`'s kept bound of one straight segment (:attr:`RobotArm.motion_line`):
    its commanded stop and speed, and the arm cycle and stop (the lag added) of the last ask."""

    segment: tuple
    commanded: Stop
    speed_m_s: float
    cycle: int = -1
    stop: Stop | None = None


class StateStops:
    """S_s and T_s of a running arm from its state, for speed and separation monitoring: the
    controller asks :meth:`ahead` once per physics step where the table's S_p at full speed
    does not fit, and the monitor's check after the step reuses it as :attr:`latest` (a bound
    of the braking from the state the step reached).

    The forward kinematics' bound (:meth:`BrakingBound.stop`) costs more than a physics step:
    it is taken once in ``REUSE_CYCLES`` cycles, for the braking ``REUSE_CYCLES`` cycles later
    (the hardest jerk until then: a bound of every state the arm reaches in those cycles, and
    of their braking), and each step in between adds how far the arm's points can have moved
    since it was taken (``sum_i joint_reach_i |q_i - q_i(then)|``) and the lag now. The quick
    bound is reused so too (over the arm's cycles, :attr:`RobotArm.cycles`), and the straight
    segment's for as long as the arm runs that segment."""

    def __init__(self, arm: RobotArm, dt: float):
        self.arm = arm
        self.bound = BrakingBound.for_arm(arm, dt)
        self.latest: Stop | None = None  # the controller's of this step, None when it asked none
        self._taken: tuple[Stop, np.ndarray] | None = None  # the commanded bound and its position
        self._age = 0
        self._quick: tuple[Stop, np.ndarray, int] | None = None  # quick's bound, its position and cycle
        self._line: _SegmentStop | None = None

    def ahead(self) -> Stop:
        """S_s and T_s for the braking one control cycle from now (set as :attr:`latest`)."""
        state = JointState.of(self.arm)
        if self._taken is None or self._age >= REUSE_CYCLES - 1:
            self._taken = (self.bound.commanded(state, REUSE_CYCLES), state.position)
            self._age = 0
        else:
            self._age += 1
        commanded, since = self._taken
        self.latest = self.bound.margin(commanded, state, self.bound.moved_m(since, state))
        return self.latest

    def quick(self) -> Stop:
        """S_s and T_s for the braking one control cycle from now, bounded without the forward
        kinematics (:meth:`BrakingBound.quick`, ``REUSE_CYCLES`` ahead, reused as :meth:`ahead`
        reuses its bound: taken once in ``REUSE_CYCLES`` of the arm's cycles, plus how far the
        arm can have gone since): looser than :meth:`ahead`, and cheaper. Not :attr:`latest`
        until :meth:`take` makes it so."""
        state = JointState.of(self.arm)
        kept, cycle = self._quick, self.arm.cycles
        if kept is None or not 0 <= cycle - kept[2] < REUSE_CYCLES:
            kept = self._quick = (self.bound.quick(state, REUSE_CYCLES), state.position, cycle)
            return self.bound.margin(kept[0], state, 0.0)
        return self.bound.margin(kept[0], state, self.bound.moved_m(kept[1], state))

    def line(self) -> Stop | None:
        """S_s and T_s of a braking from any cycle of the straight segment the arm's command is
        on (:meth:`BrakingBound.line`, taken once per segment), with the lag now; None off such
        a segment. Not :attr:`latest` until :meth:`take` makes it so."""
        line, cycle = self.arm.motion_line, self.arm.cycles
        if line is None:
            return None
        kept = self._line
        if kept is None or kept.segment is not line:
            kept = self._line = _SegmentStop(line, self.bound.line(*line), self.bound.line_speed_m_s(*line))
        if kept.cycle != cycle:  # the lag now, once per cycle (the controller and the watch both ask)
            kept.cycle, kept.stop = cycle, self.bound.with_lag(kept.commanded, self.arm.lag_m())
        return kept.stop

    def line_growth_m_s(self, stop: Stop) -> float | None:
        """How fast :meth:`line`'s stop can grow while the arm stays on its segment, if
        ``stop`` is that stop of this cycle (else None): only its lag changes, by no more than
        the measured arm (``speed_capability``) and the command (the segment's speed,
        :meth:`BrakingBound.line_speed_m_s`) move apart."""
        kept = self._line
        if (kept is None or kept.stop is not stop or kept.cycle != self.arm.cycles
                or kept.segment is not self.arm.motion_line):
            return None
        return self.arm.speed_capability() + kept.speed_m_s

    def take(self, stop: Stop) -> None:
        """The controller decided this step on ``stop`` (a :meth:`quick` one): it is
        :attr:`latest`, and the reuse of :meth:`ahead` starts anew (this step did not age it)."""
        self.latest = stop
        self._taken = None

    def forget(self) -> None:
        """The controller did not ask this step (S_p at full speed fitted): the next asks anew."""
        self.latest = None
        self._taken = None
