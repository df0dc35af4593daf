"""The arm's stopping distance and time: a bound from the jerk-limited braking profile, and
the braking test that measures them.

:class:`StoppingModel` is S_s and T_s of ISO/TS 15066:2016, clause 5.5.4, for our arm, as
functions of the velocity fraction ``f`` the arm runs at (every joint within ``f * vmax_i``).
For each ``f`` on a grid it brakes, with the arm's own :class:`~hri.robot.motion.JointMotion`
(ruckig, the velocity interface :meth:`~hri.robot.motion.JointMotion.brake` uses), from the
worst state a trajectory limited to ``f`` can be in: every joint at ``v_i`` and accelerating
at ``a_i`` with ``v_i + a_i^2 / (2 j_i) = f * vmax_i`` (a joint that reaches its limit must
bring its acceleration to zero with jerk ``j_i`` first, so no state on such a trajectory
lies beyond) and ``a_i`` as large as that allows, ``min(amax_i, sqrt(2 j_i f vmax_i))``:
the braking distance from such a state grows with ``a_i``. Braking when accelerating is the
worst case (the measurements show it too: halted while speeding up, the arm travels farther
than from a steady speed). Along the commanded braking, no point of the arm moves farther than
``sum_i joint_reach_i |dq_i|`` (:attr:`~hri.robot.arm.RobotArm.joint_reach`: the tool's and a
carried part's points included), which is
the distance. The profile is not monotonic everywhere (ruckig's time synchronisation follows
the slowest joint, which changes with ``f``: a drop of a few per cent where it does), so the
table holds at each grid point the running maximum up to the next one plus the largest rise
between neighbours, and between grid points takes the next one's value (the profile is
neither convex nor concave throughout: the time grows like ``sqrt(f)`` near rest). The tests
check the profile between grid points against the table.

:func:`measure_braking` is the braking test: it drives the arm at a velocity fraction, calls
:meth:`~hri.robot.arm.RobotArm.halt` and measures, in simulated time, how far the link frame
that travels farthest moves until every link frame is slower than ``REST_SPEED_M_S``, and how
long that takes (the PyBullet motors follow the command with a lag, included). The model is
checked against it (tests/test_stopping.py): never below.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

import numpy as np
import pybullet as p

from hri.robot.arm import RobotArm
from hri.robot.braking import JointState, Stop, link_points
from hri.robot.motion import JointMotion, MotionStatus, Progress

#: a robot point slower than this is at rest (the robot tests' threshold after halt())
REST_SPEED_M_S = 1e-3
#: velocity fractions the model is computed at
GRID_STEP = 0.001
_MAX_BRAKING_S = 5.0  # a braking that takes longer is an error, not a measurement


@dataclass(frozen=True)
class Braking:
    """One braking test: halted ``halt_after_s`` after starting at ``fraction``."""

    fraction: float
    halt_after_s: float
    speed_m_s: float       # the fastest link frame's speed at halt()
    distance_m: float      # the farthest any link frame travelled from halt() to rest
    time_s: float          # from halt() until every link frame is slower than REST_SPEED_M_S


@dataclass(frozen=True)
class StoppingModel:
    """S_s, T_s and the speed bound of the arm, tabulated over the velocity fraction."""

    fractions: tuple[float, ...]
    distances_m: tuple[float, ...]   # S_s(f): bound of any point's braking distance
    times_s: tuple[float, ...]       # T_s(f): the commanded braking's duration
    speed_per_fraction_m_s: float    # any point's speed at fraction f is at most f times this

    @classmethod
    def for_arm(cls, arm: RobotArm, dt: float) -> "StoppingModel":
        """The model of ``arm`` with its limits, braking in control cycles of ``dt`` seconds."""
        return cls.from_limits(arm.model.max_velocity, np.array(arm.config.max_acceleration),
                               np.array(arm.config.max_jerk), arm.joint_reach, dt)

    @classmethod
    def from_limits(cls, max_velocity: np.ndarray, max_acceleration: np.ndarray,
                    max_jerk: np.ndarray, joint_reach: np.ndarray, dt: float) -> "StoppingModel":
        """The model of an arm with these joint limits and reaches (one value per joint)."""
        count = int(round(1.0 / GRID_STEP))
        fractions = [k / count for k in range(count + 1)]
        brakes = np.array([commanded_braking(f, max_velocity, max_acceleration, max_jerk,
                                             joint_reach, dt) for f in fractions])
        # the profile is not monotonic everywhere (ruckig's time synchronisation follows the
        # slowest joint, which changes with f, and drops where that changes): grid point k
        # takes the running maximum up to point k + 1, plus the largest rise between two
        # neighbours, which covers what rises between the samples before a drop
        rise = np.max(np.diff(brakes, axis=0), axis=0)
        envelope = np.maximum.accumulate(np.vstack([brakes[1:], brakes[-1:]]), axis=0) + rise
        envelope[0] = 0.0
        return cls(tuple(fractions), tuple(envelope[:, 0].tolist()),
                   tuple(envelope[:, 1].tolist()), float(np.dot(joint_reach, max_velocity)))

    def distance(self, fraction: float) -> float:
        """S_s (m): no robot point travels farther while braking from ``fraction``."""
        return self.distances_m[self._at_or_above(fraction)]

    def time(self, fraction: float) -> float:
        """T_s (s): the commanded braking from ``fraction`` ends within this time."""
        return self.times_s[self._at_or_above(fraction)]

    def _at_or_above(self, fraction: float) -> int:
        """The index of the grid point at or above ``fraction`` (the last one beyond 1)."""
        return min(bisect.bisect_left(self.fractions, fraction), len(self.fractions) - 1)

    def speed(self, fraction: float) -> float:
        """v_r (m/s): no robot point is faster at ``fraction``."""
        return fraction * self.speed_per_fraction_m_s


def worst_state(fraction: float, max_velocity: np.ndarray, max_acceleration: np.ndarray,
                max_jerk: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Joint velocities and accelerations of the worst state to brake from at ``fraction``."""
    limit = fraction * np.asarray(max_velocity, dtype=float)
    acceleration = np.minimum(max_acceleration, np.sqrt(2.0 * max_jerk * limit))
    return limit - acceleration ** 2 / (2.0 * max_jerk), acceleration


def commanded_braking(fraction: float, max_velocity: np.ndarray, max_acceleration: np.ndarray,
                      max_jerk: np.ndarray, joint_reach: np.ndarray,
                      dt: float) -> tuple[float, float]:
    """(distance bound in m, duration in s) of the braking from :func:`worst_state`."""
    velocity, acceleration = worst_state(fraction, max_velocity, max_acceleration, max_jerk)
    return braking_bound(velocity, acceleration, max_velocity, max_acceleration, max_jerk,
                         joint_reach, dt)


def braking_bound(velocity: np.ndarray, acceleration: np.ndarray, max_velocity: np.ndarray,
                  max_acceleration: np.ndarray, max_jerk: np.ndarray, joint_reach: np.ndarray,
                  dt: float) -> tuple[float, float]:
    """(distance bound in m, duration in s) of JointMotion's braking from the joint state
    ``velocity``, ``acceleration``: ``sum_i joint_reach_i |dq_i|`` summed over its cycles."""
    motion = JointMotion(np.zeros(len(velocity)), max_velocity, max_acceleration, max_jerk, dt,
                         velocity=velocity, acceleration=acceleration)
    if motion.at_rest:
        return 0.0, 0.0
    motion.brake()
    reach = np.asarray(joint_reach, dtype=float)
    position, distance, steps = motion.position, 0.0, 0
    while steps * dt < _MAX_BRAKING_S:
        progress = motion.update(1.0)
        steps += 1
        new = motion.position
        distance += float(np.dot(reach, np.abs(new - position)))
        position = new
        if progress == Progress.STOPPED:
            return distance, steps * dt
        if progress == Progress.ERROR:
            break
    raise RuntimeError(f"braking from {list(velocity)} rad/s did not end")


def _link_positions(arm: RobotArm) -> np.ndarray:
    states = p.getLinkStates(arm.body_id, list(range(arm.model.num_links)),
                             physicsClientId=arm.client)
    return np.array([state[4] for state in states])


def _step(arm: RobotArm, dt: float) -> None:
    arm.step(dt)
    p.stepSimulation(physicsClientId=arm.client)


def measure_braking(arm: RobotArm, dt: float, fraction: float, goal: np.ndarray,
                    halt_after_s: float) -> Braking:
    """Drive ``arm`` (at rest) towards the joint values ``goal`` at ``fraction``, halt after
    ``halt_after_s`` and measure until rest. Steps the whole simulation of ``arm.client``
    (``dt`` per step, as the run's loop does): for a client of its own or before a run."""
    arm.set_velocity_fraction(fraction)
    arm.move_to_joints(goal)
    if arm.status != MotionStatus.MOVING:
        raise ValueError(f"no motion to {list(goal)}: {arm.failure}")
    for _ in range(int(round(halt_after_s / dt))):
        _step(arm, dt)
    speed = arm.fastest_point_speed()
    arm.halt()
    positions = _link_positions(arm)
    travelled = np.zeros(len(positions))
    steps = 0
    while arm.status != MotionStatus.STOPPED or arm.fastest_point_speed() >= REST_SPEED_M_S:
        if steps * dt > _MAX_BRAKING_S:
            raise RuntimeError(f"the arm did not come to rest within {_MAX_BRAKING_S} s")
        _step(arm, dt)
        steps += 1
        new = _link_positions(arm)
        travelled += np.linalg.norm(new - positions, axis=1)
        positions = new
    return Braking(fraction, halt_after_s, speed, float(travelled.max()), steps * dt)



class PointTracker:
    """The arm's points as the simulation has them: the corners of its links' boxes and their
    frame origins (:func:`hri.robot.braking.link_points`), moved with PyBullet's link frames."""

    def __init__(self, arm: RobotArm):
        self.arm = arm
        chain = set(arm.arm_model.chain().link_names[1:])
        found = link_points(arm.client, arm.body_id, chain)
        self.links = sorted(found)
        self.points = [found[link] for link in self.links]

    def positions(self) -> np.ndarray:
        """Every point's position in the world now (points x 3)."""
        states = p.getLinkStates(self.arm.body_id, self.links, computeForwardKinematics=1,
                                 physicsClientId=self.arm.client)
        out = []
        for state, points in zip(states, self.points):
            rotation = np.array(p.getMatrixFromQuaternion(state[5])).reshape(3, 3)
            out.append(points @ rotation.T + np.array(state[4]))
        return np.vstack(out)


def measure_stop(arm: RobotArm, dt: float, state: JointState,
                 tracker: PointTracker | None = None) -> Stop:
    """The braking test from a state: put ``arm`` at ``state`` (joints and command), call
    :meth:`~hri.robot.arm.RobotArm.halt` and step the simulation of ``arm.client`` until every
    link frame is slower than ``REST_SPEED_M_S``; S_s is the farthest any point of the arm got
    from where it was, T_s the time until rest (the motors' lag included)."""
    tracker = tracker or PointTracker(arm)
    arm.set_state(state.measured, state.velocity, state.acceleration, dt)
    arm.halt()
    start = tracker.positions()
    farthest, steps = 0.0, 0
    while arm.status != MotionStatus.STOPPED or arm.fastest_point_speed() >= REST_SPEED_M_S:
        if steps * dt > _MAX_BRAKING_S:
            raise RuntimeError(f"the arm did not come to rest within {_MAX_BRAKING_S} s")
        _step(arm, dt)
        steps += 1
        farthest = max(farthest, float(np.linalg.norm(tracker.positions() - start, axis=1).max()))
    return Stop(farthest, steps * dt)
