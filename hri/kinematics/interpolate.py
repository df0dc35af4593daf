"""Interpolation with velocity and acceleration limits, sampled at an update rate.

* :func:`cartesian_line`: a straight line between two poses, orientation by slerp, both
  on one trapezoidal velocity profile (triangular when the line is too short to reach
  ``v_max``), as the INTERPOLATE service of seed ``000`` does with KDL's ``Path_Line`` and
  ``VelocityProfile_Trap``. As there, the path length is ``max(distance, eq_radius *
  angle)``, so a pure rotation moves too, with its angular speed bounded by
  ``v_max / eq_radius``. :func:`cartesian_waypoints` chains lines, stopping at each point.
* :func:`joint_path`: a straight line in joint space with per-joint limits, all joints
  starting and arriving together (time-optimal, phase-synchronised, by ruckig; jerk
  limited when ``j_max`` is given, else trapezoidal).

Samples are at ``0, 1/rate, 2/rate, ...`` while before the end, and the last sample is the
goal itself at the end time (so the last interval may be shorter).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from ruckig import InputParameter, Result, Ruckig, Synchronization, Trajectory

from hri.base.geometry import Pose
from hri.kinematics.transforms import (PoseLike, PoseTuple, interpolate_pose, pose_matrix, pose_tuple,
                                       rotation_angle)

_SAME_TIME = 1e-9  # s: a regular sample this close to the end is replaced by the end


@dataclass(frozen=True)
class Trapezoid:
    """Rest-to-rest motion over ``length`` with a trapezoidal (or triangular) speed profile."""

    length: float
    peak_velocity: float
    acceleration: float
    accel_time: float    # also the deceleration time
    cruise_time: float

    @property
    def duration(self) -> float:
        return 2.0 * self.accel_time + self.cruise_time

    def position(self, t: np.ndarray | float) -> np.ndarray:
        """Distance travelled at time(s) ``t`` (clamped to 0..duration)."""
        t = np.clip(np.asarray(t, dtype=float), 0.0, self.duration)
        a, ta, v = self.acceleration, self.accel_time, self.peak_velocity
        t_brake = ta + self.cruise_time
        rising = 0.5 * a * t * t
        cruising = 0.5 * a * ta * ta + v * (t - ta)
        remaining = self.duration - t
        braking = self.length - 0.5 * a * remaining * remaining
        return np.where(t < ta, rising, np.where(t < t_brake, cruising, braking))

    def velocity(self, t: np.ndarray | float) -> np.ndarray:
        t = np.clip(np.asarray(t, dtype=float), 0.0, self.duration)
        a = self.acceleration
        return np.minimum(np.minimum(a * t, self.peak_velocity), a * (self.duration - t))


def trapezoid(length: float, v_max: float, a_max: float) -> Trapezoid:
    """The fastest rest-to-rest profile over ``length`` within ``v_max`` and ``a_max``."""
    if v_max <= 0.0 or a_max <= 0.0:
        raise ValueError("v_max and a_max must be positive")
    length = abs(float(length))
    if length == 0.0:
        return Trapezoid(0.0, 0.0, a_max, 0.0, 0.0)
    accel_time = v_max / a_max
    if a_max * accel_time * accel_time >= length:  # v_max is never reached: triangular
        accel_time = math.sqrt(length / a_max)
        return Trapezoid(length, a_max * accel_time, a_max, accel_time, 0.0)
    cruise = (length - a_max * accel_time * accel_time) / v_max
    return Trapezoid(length, v_max, a_max, accel_time, cruise)


def sample_times(duration: float, rate_hz: float) -> np.ndarray:
    """``0, 1/rate, ...`` before ``duration``, then ``duration`` itself."""
    if rate_hz <= 0.0:
        raise ValueError("rate_hz must be positive")
    if duration <= 0.0:
        return np.zeros(1)
    # k / rate rather than accumulated steps: no drift, and the same instants every time
    count = math.ceil(duration * rate_hz - _SAME_TIME * rate_hz)
    return np.append(np.arange(count) / rate_hz, duration)


@dataclass(frozen=True)
class CartesianPath:
    """Sampled poses ``((x, y, z), (qx, qy, qz, qw))`` and their times (s)."""

    times: tuple[float, ...]
    poses: tuple[PoseTuple, ...]
    length: float   # path parameter length: max(distance, eq_radius * angle), m
    duration: float


@dataclass(frozen=True)
class JointPath:
    """Sampled joint positions and velocities and their times (s)."""

    times: tuple[float, ...]
    positions: tuple[tuple[float, ...], ...]
    velocities: tuple[tuple[float, ...], ...]
    duration: float


def _exact_pose_tuple(pose: PoseLike) -> PoseTuple:
    """The caller's own numbers for the end sample, so the path ends exactly there."""
    if isinstance(pose, Pose):
        return pose.position, pose.orientation
    if isinstance(pose, np.ndarray):
        return pose_tuple(pose)
    position, orientation = pose  # type: ignore[misc]
    return (tuple(float(v) for v in position),  # type: ignore[return-value]
            tuple(float(v) for v in orientation))


def cartesian_line(start: PoseLike, end: PoseLike, v_max: float, a_max: float,
                   rate_hz: float, eq_radius: float = 0.1) -> CartesianPath:
    """Poses along the straight line ``start`` -> ``end`` (see module doc).

    ``v_max`` (m/s) and ``a_max`` (m/s^2) bound the speed and acceleration along the
    line; ``eq_radius`` (m per rad) converts the rotation into path length.
    """
    t0, t1 = pose_matrix(start), pose_matrix(end)
    distance = float(np.linalg.norm(t1[:3, 3] - t0[:3, 3]))
    angle = rotation_angle(t0[:3, :3].T @ t1[:3, :3])
    length = max(distance, eq_radius * angle)
    profile = trapezoid(length, v_max, a_max)
    times = sample_times(profile.duration, rate_hz)
    fractions = profile.position(times) / length if length > 0.0 else np.ones_like(times)
    poses = [pose_tuple(interpolate_pose(t0, t1, float(s))) for s in fractions[:-1]]
    poses.append(_exact_pose_tuple(end))
    return CartesianPath(tuple(float(t) for t in times), tuple(poses), length, profile.duration)


def cartesian_waypoints(points: Sequence[PoseLike], v_max: float, a_max: float,
                        rate_hz: float, eq_radius: float = 0.1) -> CartesianPath:
    """Straight lines through ``points`` in turn, at rest at each (seed ``000``'s list)."""
    if len(points) < 2:
        raise ValueError("a path needs at least two points")
    times: list[float] = [0.0]
    poses: list[PoseTuple] = [_exact_pose_tuple(points[0])]
    length = offset = 0.0
    for a, b in zip(points[:-1], points[1:]):
        line = cartesian_line(a, b, v_max, a_max, rate_hz, eq_radius)
        times += [offset + t for t in line.times[1:]]
        poses += line.poses[1:]
        length += line.length
        offset += line.duration
    return CartesianPath(tuple(times), tuple(poses), length, offset)


def _per_joint(value: float | Sequence[float], n: int, name: str) -> list[float]:
    values = [float(value)] * n if np.isscalar(value) else [float(v) for v in value]  # type: ignore[union-attr]
    if len(values) != n:
        raise ValueError(f"{name} needs 1 or {n} values, got {len(values)}")
    if min(values) <= 0.0:
        raise ValueError(f"{name} must be positive")
    return values


def joint_path(q_start: Sequence[float], q_end: Sequence[float],
               v_max: float | Sequence[float], a_max: float | Sequence[float],
               rate_hz: float, j_max: float | Sequence[float] | None = None) -> JointPath:
    """Joint samples from ``q_start`` to ``q_end``, straight in joint space (see module doc).

    Limits are per joint (or one value for all): rad/s, rad/s^2, rad/s^3.
    """
    start = [float(v) for v in q_start]
    end = [float(v) for v in q_end]
    n = len(start)
    if len(end) != n:
        raise ValueError("q_start and q_end differ in length")
    inp = InputParameter(n)
    inp.current_position, inp.target_position = start, end
    inp.max_velocity = _per_joint(v_max, n, "v_max")
    inp.max_acceleration = _per_joint(a_max, n, "a_max")
    inp.max_jerk = [math.inf] * n if j_max is None else _per_joint(j_max, n, "j_max")
    inp.synchronization = Synchronization.Phase  # all joints on one straight line
    trajectory = Trajectory(n)
    result = Ruckig(n).calculate(inp, trajectory)
    if result not in (Result.Working, Result.Finished):
        raise ValueError(f"ruckig could not plan the joint path: {result}")
    times = sample_times(trajectory.duration, rate_hz)
    positions, velocities = [], []
    for t in times[:-1]:
        position, velocity, _ = trajectory.at_time(float(t))
        positions.append(tuple(position))
        velocities.append(tuple(velocity))
    positions.append(tuple(end))
    velocities.append((0.0,) * n)
    return JointPath(tuple(float(t) for t in times), tuple(positions), tuple(velocities),
                     float(trajectory.duration))
