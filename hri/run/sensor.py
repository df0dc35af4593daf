"""The safety sensor in the loop (``safety.sensor``): what the SSM controller and the zones act
on, instead of PyBullet's exact separation and the person's exact position. The safety monitor
keeps checking the truth.

The sensor measures at its update rate: after the physics step that ends at a multiple of its
period (``period_steps``: the period rounded up to whole physics steps, so the simulated sensor
is never faster than the device), it takes the true separation of each person (a fresh
closest-point query) and each person's pelvis position. Each update is lost with the dropout
probability; otherwise every figure gets a range error drawn from a normal distribution with
the range noise as standard deviation, clipped at ``SENSOR_NOISE_BOUND`` standard deviations
(the tolerance a data sheet states: a safety sensor's error is bounded, and Z_d covers it).
The report reaches the controller ``latency_steps`` later (the latency rounded up to steps);
the controller acts at the start of a step on the newest report that has arrived. A lost
update arrives as no report: the controller makes a protective stop until a report arrives
again, as a safety controller does when its sensor's update is missing.

So a report the controller acts on was measured at most ``(latency_steps + period_steps)``
physics steps before the end of the step it controls (:attr:`SafetySensor.age_s`): T_r of S_p
is that plus one step, the controller's cycle, by default (:func:`hri.run.ssm_control.ssm_settings`),
and Z_d the noise bound.

The random draws come from the run's own stream for the sensor (a child of the run's seed
sequence that no other part uses), four per update whether it is lost or not: a seeded run with
a sensor reruns bit for bit, and a run without one draws nothing.

A sensor with a ``mount`` sees only the people in its field and in plain sight
(:mod:`hri.run.sensor_view`): the report's separation is the smallest of those it sees
(infinite when it sees nobody: SSM lets the robot run), and a person it does not see has no
place in the report; the robot's tree is told the place where the sensor saw them last (where
they started, before it ever saw them), so the zones keep what the sensor last knew. The
safety monitor keeps checking the truth: an occluded approach shows there.

``person_speed_m_s: measured`` with a sensor is the person's speed towards the robot as the
sensor sees it (:meth:`SafetySensor.approach_m_s`): the slope of a least-squares line through
the distance from each sensed pelvis position to the robot's base over the reports of the last
``APPROACH_WINDOW_S``, never below ISO 13855's speed (a person standing may start walking within
the robot's stopping time, and the filter lags a person speeding up): the measurement raises
v_h for a person who is seen to come faster, up to the fastest the scenario allows.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass

import numpy as np

from hri.scenario.model import SENSOR_NOISE_BOUND, SensorOptions

#: a period or latency within this fraction of a physics step above a whole number of steps is
#: that number (a latency written 0.0666667 s is 16 steps at 240 Hz, not 17)
STEP_ROUNDING = 1e-4
#: the reports the measured approach speed is fitted to: those of the last this many seconds
APPROACH_WINDOW_S = 0.3


@dataclass(frozen=True)
class Reading:
    """One update as the controller receives it: when it was measured, the smallest sensed
    separation of any person it saw (m; infinite when it saw nobody), each person's sensed
    pelvis ``(x, y)``, None for a person it did not see, and the robot's measured joint
    positions then (what the separation was measured to; the robot's controller knows its own
    joints at any time, so it knows how far the robot has moved since)."""

    t: float
    separation_m: float
    places: tuple[tuple[float, float] | None, ...]
    robot_joints: np.ndarray | None = None


class ApproachFilter:
    """The people's speed towards a point (the robot's base) from their positions over time:
    for each person the least-squares slope of the distance over the positions of the last
    ``APPROACH_WINDOW_S``, positive towards; the fastest person's; 0 with fewer than three."""

    def __init__(self, robot_xy: tuple[float, float]):
        self.robot_xy = robot_xy
        self._history: deque[tuple[float, tuple[tuple[float, float] | None, ...]]] = deque()
        self._speed: float | None = 0.0  # None: to be fitted to the history anew

    def add(self, t: float, places: tuple[tuple[float, float] | None, ...]) -> None:
        self._history.append((t, places))
        while self._history[0][0] < t - APPROACH_WINDOW_S - 1e-9:
            self._history.popleft()
        self._speed = None

    def speed(self) -> float:
        if self._speed is None:
            self._speed = self._fit()
        return self._speed

    def _fit(self) -> float:
        if len(self._history) < 3:
            return 0.0
        fastest = 0.0
        for person in range(len(self._history[0][1])):
            seen = [(t, places[person]) for t, places in self._history if places[person] is not None]
            if len(seen) < 3:
                continue
            times = np.array([t for t, _ in seen])
            times -= times.mean()
            distances = np.array([math.dist(place, self.robot_xy) for _, place in seen])
            slope = float(np.dot(times, distances - distances.mean()) / np.dot(times, times))
            fastest = max(fastest, -slope)
        return fastest


class SafetySensor:
    """A safety sensor with the scenario's figures, stepped in physics steps of ``dt``."""

    def __init__(self, options: SensorOptions, dt: float, rng: np.random.Generator,
                 robot_xy: tuple[float, float] = (0.0, 0.0)):
        self.options = options
        self.dt = dt
        self.rng = rng
        # rounded up; a figure within STEP_ROUNDING of a whole step (a written 2/30 s) is that step
        self.period_steps = max(1, math.ceil(1.0 / (options.rate_hz * dt) - STEP_ROUNDING))
        self.latency_steps = max(0, math.ceil(options.latency_s / dt - STEP_ROUNDING))
        self.tolerance_m = SENSOR_NOISE_BOUND * options.range_noise_m
        self._pending: deque[tuple[int, float, Reading | None]] = deque()  # (arrives at step, measured at, report)
        self.current: Reading | None = None  # the newest report that has arrived; None: lost
        self.last: Reading | None = None  # the newest report that was not lost
        self.last_places: dict[int, tuple[float, float]] = {}  # each person's place when last seen
        self.approach = ApproachFilter(robot_xy)  # the people's speed towards the robot, as reported
        self.updates = 0
        self.dropouts = 0

    @property
    def age_s(self) -> float:
        """The oldest a report can be at the end of a step the controller acts on it in."""
        return (self.latency_steps + self.period_steps) * self.dt

    def due(self, step: int) -> bool:
        """Whether the sensor measures after the physics step that ends at step ``step``."""
        return (step - 1) % self.period_steps == 0  # the first after the first step

    def measure(self, step: int, separations: list[float], places: list[tuple[float, float]],
                seen: list[bool] | None = None, robot_joints: np.ndarray | None = None) -> bool:
        """One update from the truth after step ``step`` of the people ``seen`` (None: all),
        the robot at ``robot_joints``; whether it was lost."""
        self.updates += 1
        lost, *errors = self.rng.random(), *self.rng.standard_normal(3)
        bound = SENSOR_NOISE_BOUND
        e = [max(-bound, min(bound, v)) * self.options.range_noise_m for v in errors]
        if lost < self.options.dropout_probability:
            self.dropouts += 1
            self._pending.append((step + self.latency_steps, step * self.dt, None))
            return True
        seen = seen if seen is not None else [True] * len(places)
        sensed = [separation for separation, visible in zip(separations, seen) if visible]
        reading = Reading(step * self.dt, min(sensed) + e[0] if sensed else math.inf,
                          tuple((x + e[1], y + e[2]) if visible else None for (x, y), visible in zip(places, seen)),
                          robot_joints)
        self._pending.append((step + self.latency_steps, step * self.dt, reading))
        return False

    def deliver(self, step: int) -> float | None:
        """The reports that have arrived by the start of step ``step``; when one of them was
        lost, the time it was to be measured at (else None)."""
        lost = None
        while self._pending and self._pending[0][0] <= step:
            _, measured_t, reading = self._pending.popleft()
            self.current = reading
            if reading is None:
                lost = measured_t
            else:
                self.last = reading
                self.last_places.update((k, place) for k, place in enumerate(reading.places) if place is not None)
                self.approach.add(reading.t, reading.places)
        return lost

    def approach_m_s(self) -> float:
        """The person's speed towards the robot's base in the sensor's reports (m/s, positive
        towards, :class:`ApproachFilter`); with several people the fastest one's."""
        return self.approach.speed()
