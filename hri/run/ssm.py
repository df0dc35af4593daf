"""Speed and separation monitoring: the protective separation distance of ISO/TS 15066:2016,
clause 5.5.4, and the largest robot speed that keeps it.

Sources: ISO/TS 15066:2016 "Robots and robotic devices -- Collaborative robots", 5.5.4,
formula (1) with constant speeds; J. A. Marvel and R. Norcross, "Implementing speed and
separation monitoring in collaborative robot workcells", Robotics and Computer-Integrated
Manufacturing 44 (2017) 144-155 (NIST); ISO 13855:2010 for the person's speed.

    S_p = S_h + S_r + S_s + C + Z_d + Z_r

    S_h = v_h (T_r + T_s)   the person's travel during the robot's reaction and stopping time
    S_r = v_r T_r           the robot's travel during its reaction time (where the controller
                            knows where the robot was, its measured travel instead)
    S_s                     the robot's stopping distance from its speed v_r
    C                       the intrusion distance (ISO 13855: how far a body part reaches
                            past the point where it is detected)
    Z_d, Z_r                the position uncertainties of the person (sensing) and the robot

The robot's speed is expressed by its velocity fraction ``f`` (every joint within
``f * vmax_i``); a :class:`Stopping` model gives v_r(f), S_s(f) and T_s(f) (our arm's:
:class:`hri.robot.stopping.StoppingModel`). :func:`largest_fraction` inverts S_p(f) <= the
separation. At rest (f = 0) S_p is v_h T_r + C + Z_d + Z_r: what the separation must be for
the robot to start moving at all; below it :func:`largest_fraction` returns None (a protective
stop).
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass
from typing import Protocol

#: ISO 13855:2010 and ISO/TS 15066:2016 5.5.4: the person's speed when it is not measured
PERSON_SPEED_M_S = 1.6
#: ISO 13855:2010, 6.2.3: the approach speed of the body close in, K = 2000 mm/s, where the
#: minimum distance is at most 500 mm (beyond it K = 1600 mm/s, the distance not below 500 mm):
#: v_h where the separation is below ``NEAR_SEPARATION_M``
PERSON_SPEED_NEAR_M_S = 2.0
NEAR_SEPARATION_M = 0.5
#: the presets' physics step (240 Hz): a controller that acts on every step's measurement
#: reacts within one step
DEFAULT_REACTION_TIME_S = 1.0 / 240.0
_TOLERANCE = 1e-9  # fraction resolution of the inverse


@dataclass(frozen=True)
class SsmSettings:
    """The terms of S_p that are parameters (SI units); defaults and their sources:

    - ``person_speed_m_s`` v_h: 1.6 m/s, ISO 13855 via ISO/TS 15066 5.5.4, and
      ``person_speed_near_m_s`` 2.0 m/s where the separation is below ``NEAR_SEPARATION_M``
      (ISO 13855's K close in; :meth:`person_speed_at`);
    - ``reaction_time_s`` T_r: one physics step, for a controller that acts on every step's
      separation (a run's is its scenario's step, :func:`hri.run.ssm_control.ssm_settings`;
      here the presets', 1/240 s; add a sensor's latency where there is one);
    - ``intrusion_distance_m`` C: 0 m, the separation is measured to the person's own shapes,
      hands included: a detection capability that sees every body part, for which ISO 13855's
      C = 8 (d - 14 mm) is 0 (see :func:`iso13855_intrusion_distance` for a real sensor);
    - ``person_uncertainty_m`` Z_d and ``robot_uncertainty_m`` Z_r: 0 m, the simulation
      measures both positions exactly (a sensor's tolerance goes here);
    - ``robot_measured_s``: 0 s, the part of T_r over which the controller measures the robot's
      travel instead of bounding it by v_r: a safety sensor's report is that old at most, and
      the controller knows where the robot was when it was measured (it subtracts how far the
      robot's points have moved since from the reported separation, ISO/TS 15066 5.5.4.2.3's
      S_r as the integral of the robot's speed), so S_r is v_r over the rest of T_r only
      (:attr:`robot_reaction_s`).
    """

    person_speed_m_s: float = PERSON_SPEED_M_S
    reaction_time_s: float = DEFAULT_REACTION_TIME_S
    intrusion_distance_m: float = 0.0
    person_uncertainty_m: float = 0.0
    robot_uncertainty_m: float = 0.0
    person_speed_near_m_s: float = PERSON_SPEED_NEAR_M_S
    robot_measured_s: float = 0.0

    @property
    def robot_reaction_s(self) -> float:
        """The part of T_r over which S_r bounds the robot's travel by v_r (the rest is measured)."""
        return max(0.0, self.reaction_time_s - self.robot_measured_s)

    def person_speed_at(self, separation_m: float) -> float:
        """v_h (m/s) at ``separation_m``: ISO 13855's speed close in below ``NEAR_SEPARATION_M``."""
        return self.person_speed_near_m_s if separation_m < NEAR_SEPARATION_M else self.person_speed_m_s

    def __post_init__(self) -> None:
        for name, value in vars(self).items():
            if not value >= 0.0:
                raise ValueError(f"SSM setting {name} must not be negative, got {value}")

    @property
    def constant_m(self) -> float:
        """C + Z_d + Z_r."""
        return self.intrusion_distance_m + self.person_uncertainty_m + self.robot_uncertainty_m


@dataclass(frozen=True)
class Separation:
    """S_p and its terms (m)."""

    person_m: float       # S_h
    reaction_m: float     # S_r
    stopping_m: float     # S_s
    constant_m: float     # C + Z_d + Z_r

    @property
    def total_m(self) -> float:
        return self.person_m + self.reaction_m + self.stopping_m + self.constant_m


class StopBound(Protocol):
    """S_s (m) and T_s (s) from the robot's state now (:class:`hri.robot.braking.Stop`)."""

    distance_m: float
    time_s: float


class Stopping(Protocol):
    """The robot's speed bound, stopping distance and time at a velocity fraction."""

    def speed(self, fraction: float) -> float: ...
    def distance(self, fraction: float) -> float: ...
    def time(self, fraction: float) -> float: ...


def iso13855_intrusion_distance(detection_capability_m: float) -> float:
    """C (m) of ISO 13855:2010 for an electro-sensitive device approached at right angles:
    8 (d - 14 mm), not below 0, for a detection capability d up to 40 mm; 850 mm above."""
    if detection_capability_m > 0.040:
        return 0.850
    return max(0.0, 8.0 * (detection_capability_m - 0.014))


def protective_separation(settings: SsmSettings, robot_speed_m_s: float,
                          stopping_distance_m: float, stopping_time_s: float,
                          person_speed_m_s: float | None = None) -> Separation:
    """S_p for the robot at ``robot_speed_m_s`` (v_r) with stopping distance S_s and time T_s;
    ``person_speed_m_s`` (v_h) replaces the settings' when given (a measured speed)."""
    v_h = settings.person_speed_m_s if person_speed_m_s is None else person_speed_m_s
    t_r = settings.reaction_time_s
    return Separation(v_h * (t_r + stopping_time_s), robot_speed_m_s * settings.robot_reaction_s,
                      stopping_distance_m, settings.constant_m)


def separation_at(settings: SsmSettings, stopping: Stopping, fraction: float,
                  person_speed_m_s: float | None = None) -> Separation:
    """S_p with the robot at velocity fraction ``fraction``, by the ``stopping`` model."""
    return protective_separation(settings, stopping.speed(fraction), stopping.distance(fraction),
                                 stopping.time(fraction), person_speed_m_s)


def rest_fits(settings: SsmSettings, separation_m: float,
              person_speed_m_s: float | None = None) -> bool:
    """Whether ``separation_m`` is at least S_p at rest, v_h T_r + C + Z_d + Z_r."""
    rest = protective_separation(settings, 0.0, 0.0, 0.0, person_speed_m_s)
    return separation_m >= rest.total_m


def largest_fraction(settings: SsmSettings, stopping: Stopping, separation_m: float,
                     person_speed_m_s: float | None = None) -> float | None:
    """The largest velocity fraction in 0..1 whose S_p is at most ``separation_m``, None when
    even rest does not fit. S_p grows with the fraction (every term does), so bisection finds
    it; the result fits, and one ``_TOLERANCE`` more does not (unless it is 1)."""
    if not rest_fits(settings, separation_m, person_speed_m_s):
        return None

    def fits(fraction: float) -> bool:
        return separation_at(settings, stopping, fraction, person_speed_m_s).total_m <= separation_m

    if fits(1.0):
        return 1.0
    low, high = 0.0, 1.0
    while high - low > _TOLERANCE:
        middle = 0.5 * (low + high)
        low, high = (middle, high) if fits(middle) else (low, middle)
    return low


class Tabulated(Protocol):
    """A stopping model tabulated over the velocity fraction (:class:`StoppingModel`): at a
    fraction ``f`` with ``fractions[k-1] < f <= fractions[k]`` S_s and T_s are those of point
    ``k``, which grow with ``k``, and v_r is ``f * speed_per_fraction_m_s``."""

    fractions: tuple[float, ...]
    distances_m: tuple[float, ...]
    times_s: tuple[float, ...]
    speed_per_fraction_m_s: float


class SeparationTable:
    """S_p and :func:`largest_fraction` for a tabulated stopping model, exact, without
    bisection and in plain floats: the robot's speed controller and the monitor ask them on
    every physics step.

    At the grid points S_p = v_h (T_r + T_s[k]) + f_k v T_r + S_s[k] + C, which grows with
    ``k``; the largest point that fits is found by binary search, and between it and the next
    S_p is linear in ``f`` (that point's S_s and T_s), so the largest fitting fraction there
    follows in closed form."""

    def __init__(self, settings: SsmSettings, stopping: Tabulated):
        self.fractions = list(stopping.fractions)
        self.distances_m = list(stopping.distances_m)
        self.times_s = list(stopping.times_s)
        self._reaction_s = settings.reaction_time_s
        self._constant_m = settings.constant_m
        self._slope = stopping.speed_per_fraction_m_s * settings.robot_reaction_s  # dS_r / df
        self._person_m_s = math.nan
        self._points: list[float] = []

    def required(self, fraction: float, person_m_s: float, stop: StopBound | None = None) -> float:
        """S_p (m) at ``fraction`` (as :func:`separation_at` with the tabulated model); with
        ``stop``, the robot's state's S_s and T_s where they are smaller than the table's."""
        return self._required_at(min(bisect.bisect_left(self.fractions, fraction), len(self.fractions) - 1),
                                 fraction, person_m_s, stop)

    def _required_at(self, k: int, fraction: float, person_m_s: float, stop: StopBound | None) -> float:
        """:meth:`required` at ``fraction`` whose grid point (at or above it) is ``k``."""
        distance, time = self.distances_m[k], self.times_s[k]
        if stop is not None:
            distance, time = min(distance, stop.distance_m), min(time, stop.time_s)
        return (person_m_s * (self._reaction_s + time) + fraction * self._slope
                + distance + self._constant_m)

    def full(self, person_m_s: float) -> float:
        """S_p (m) at full speed."""
        if person_m_s != self._person_m_s:  # asked on every physics step: no call when it is kept
            self._at_points(person_m_s)
        return self._points[-1]

    def largest(self, separation_m: float, person_m_s: float,
                stop: StopBound | None = None) -> float | None:
        """The largest fraction in 0..1 whose S_p fits ``separation_m``; None: not even rest.
        With ``stop`` (the state's S_s and T_s), S_p at each grid point takes the smaller of
        the table's and the state's, which still grows with the point: a binary search over
        the points, each computed when asked."""
        if stop is None:
            points = self._at_points(person_m_s)
            k = bisect.bisect_right(points, separation_m) - 1
            above = points[k + 1] if -1 <= k < len(points) - 1 else math.nan
        else:
            low, high = -1, len(self.fractions) - 1  # S_p fits at low (or low is -1), not above high
            while low < high:
                middle = (low + high + 1) // 2
                if self._required_at(middle, self.fractions[middle], person_m_s, stop) <= separation_m:
                    low = middle
                else:
                    high = middle - 1
            k = low
            above = (self._required_at(k + 1, self.fractions[k + 1], person_m_s, stop)
                     if k < len(self.fractions) - 1 else math.nan)
        if k < 0:
            return None
        if k == len(self.fractions) - 1:
            return 1.0
        # between point k and k + 1, S_p takes point k + 1's S_s and T_s, and grows with f
        low_f, high_f = self.fractions[k], self.fractions[k + 1]
        rest = separation_m - (above - high_f * self._slope)  # what f * slope may take
        if rest >= high_f * self._slope:
            return high_f
        if rest <= low_f * self._slope:
            return low_f
        return rest / self._slope

    def _at_points(self, person_m_s: float) -> list[float]:
        """S_p at the grid points for the person's speed (kept while it stays the same)."""
        if person_m_s != self._person_m_s:
            self._person_m_s = person_m_s
            self._points = [self.required(f, person_m_s) for f in self.fractions]
        return self._points
