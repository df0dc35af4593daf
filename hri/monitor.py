"""The safety monitor: watches every physics step, independent of the trees.

It decides the person's zone from the pelvis position, checks the robot's measured speed
against the zone's limit once the allowed reaction (or stopping) time has passed, counts
protective stops, measures the person-robot separation, and keeps the statistics and
events of :mod:`hri.stats` up to date.

Speed limits. In the warning zone the robot's measured joint speeds, as a fraction of their
limits, must be at most ``reduced_velocity`` (within ``speed_tolerance``); that bounds the
speed of every robot point to the same fraction of what it reaches at full speed. In the stop
zone the fastest robot point must be slower than ``rest_speed_m_s``.

Separation. The 3-D distance between the person's body and the robot's links is queried
every physics step while it is below ``NEAR_M``; farther away every ``FAR_EVERY`` steps (at a
relative speed below 5 m/s this misses at most 5 m/s x FAR_EVERY x dt of a minimum that is
above ``NEAR_M`` anyway).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pybullet as p
import shapely

from hri.geometry import Area, Pose
from hri.stats import EventLog, RunStats

NEAR_M = 1.0
FAR_EVERY = 8
SEPARATION_CUTOFF_M = 50.0


@dataclass(frozen=True)
class SafetyLimits:
    reduced_velocity: float
    reaction_time_s: float
    stopping_time_s: float
    rest_speed_m_s: float
    speed_tolerance: float


def zone_of(zones: dict[str, Area], x: float, y: float) -> str:
    """The innermost zone containing the point: ``stop``, ``warning`` or ``safe``."""
    if zones["stop"].contains(x, y):
        return "stop"
    if zones["warning"].contains(x, y):
        return "warning"
    return "safe"


def _link_names(client: int, body: int) -> dict[int, str]:
    """``{link index: name}`` of a body, -1 being its base."""
    names = {-1: "base"}
    for link in range(p.getNumJoints(body, physicsClientId=client)):
        names[link] = p.getJointInfo(body, link, physicsClientId=client)[12].decode()
    return names


class SafetyMonitor:
    """Per-step zone, speed, protective-stop and separation bookkeeping."""

    def __init__(self, client: int, zones: dict[str, Area], robot, person_body: int,
                 limits: SafetyLimits, stats: RunStats, events: EventLog, dt: float):
        self.client = client
        self.zones = zones
        self.robot = robot
        self.person_body = person_body
        self.limits = limits
        self.stats = stats
        self.events = events
        self.dt = dt
        self.zone: str | None = None
        self.guarded_since: float | None = None  # entered warning or stop (from safe)
        self.stop_since: float | None = None
        self.stopped_this_stay = False
        self.intrusion_m = 0.0  # how deep into the stop zone the person got in this stay before the robot rested
        self.last_velocity = None
        self.last_xy: tuple[float, float] | None = None
        self.separation_countdown = 0
        self.last_separation = math.inf
        self.closest: tuple[float, tuple] | None = None  # (t, PyBullet's closest-point record)
        self.now = 0.0
        # read now: at the end of a --gui run whose window was closed PyBullet cannot be asked
        self.link_names = {body: _link_names(client, body) for body in (person_body, robot.body_id)}

    # --- zone ---------------------------------------------------------------------
    def _update_zone(self, t: float, x: float, y: float) -> str:
        zone = zone_of(self.zones, x, y)
        if zone == self.zone:
            return zone
        if self.zone is not None:
            self.events.emit(t, "zone_exit", zone=self.zone)
        self.events.emit(t, "zone_enter", zone=zone, x=round(x, 4), y=round(y, 4))
        if zone == "stop":
            self.stats.zone_entries["stop"] += 1
            self.stop_since = t
            self.stopped_this_stay = False
            self.intrusion_m = 0.0
            self.events.emit(t, "protective_stop_requested")
        elif self.zone == "stop":
            self.stop_since = None
            self.events.emit(t, "protective_stop_released", stopped=self.stopped_this_stay)
        if zone == "warning" and self.zone in (None, "safe"):
            self.stats.zone_entries["warning"] += 1
        if zone != "safe" and self.zone in (None, "safe"):
            self.guarded_since = t
        if zone == "safe":
            self.guarded_since = None
        self.zone = zone
        return zone

    # --- robot speed ------------------------------------------------------------------
    def _check_speed(self, t: float, zone: str) -> None:
        fraction = self.robot.joint_speed_fraction()
        speed = self.robot.fastest_point_speed()
        self.stats.max_robot_speed_m_s = max(self.stats.max_robot_speed_m_s, speed)
        lim = self.limits
        if self.stop_since is not None:
            at_rest = speed < lim.rest_speed_m_s
            if at_rest and not self.stopped_this_stay:
                self.stopped_this_stay = True
                self.stats.protective_stops += 1
                self.events.emit(t, "protective_stop", stopping_time_s=round(t - self.stop_since, 6),
                                 intrusion_m=round(self.intrusion_m, 6))
            if t - self.stop_since > lim.stopping_time_s and not at_rest:
                self._violation(t, zone, speed, fraction, f"moving at {speed:.4f} m/s in the stop zone")
                return
        if self.guarded_since is not None and t - self.guarded_since > lim.reaction_time_s:
            allowed = lim.reduced_velocity * (1.0 + lim.speed_tolerance)
            if fraction > allowed:
                self._violation(t, zone, speed, fraction,
                                f"joint speed at {fraction:.3f} of the limit, allowed {lim.reduced_velocity:.3f}")

    def _measure_intrusion(self, x: float, y: float) -> None:
        """The person's depth inside the stop zone (distance to its edge) while the robot still moves."""
        depth = self.zones["stop"].polygon.exterior.distance(shapely.Point(x, y))
        self.intrusion_m = max(self.intrusion_m, depth)
        current = self.stats.max_stop_intrusion_m
        self.stats.max_stop_intrusion_m = depth if current is None else max(current, depth)

    def _violation(self, t: float, zone: str, speed: float, fraction: float, why: str) -> None:
        self.stats.safety_violations += 1
        self.events.emit(t, "safety_violation", zone=zone, speed_m_s=round(speed, 6),
                         speed_fraction=round(fraction, 6), reason=why)

    def _robot_mode(self, zone: str) -> str:
        if zone == "stop":
            return "stopped"
        return "reduced" if self.robot.velocity_fraction < 1.0 else "full"

    # --- separation -------------------------------------------------------------------
    def _update_separation(self) -> None:
        if self.separation_countdown > 0:
            self.separation_countdown -= 1
            return
        points = p.getClosestPoints(self.person_body, self.robot.body_id, SEPARATION_CUTOFF_M,
                                    physicsClientId=self.client)
        closest = min(points, key=lambda pt: pt[8], default=None)
        distance = closest[8] if closest is not None else SEPARATION_CUTOFF_M
        self.last_separation = distance
        if distance < self.stats.min_separation_m:
            self.stats.min_separation_m = distance
            self.closest = (self.now, closest)
        self.separation_countdown = 0 if distance < NEAR_M else FAR_EVERY - 1

    # --- per step ---------------------------------------------------------------------
    def closest_approach(self) -> dict | None:
        """Where and when the person and the robot came closest (for the event log)."""
        if self.closest is None or self.closest[1] is None:
            return None
        t, pt = self.closest
        names = [self.link_names[body][link] for body, link in ((self.person_body, pt[3]), (self.robot.body_id, pt[4]))]
        return {"t": t, "distance_m": round(pt[8], 6), "person_link": names[0], "robot_link": names[1],
                "at": [round(v, 4) for v in pt[5]]}

    def step(self, t: float, person: Pose) -> None:
        self.now = t
        zone = self._update_zone(t, person.x, person.y)
        self.stats.zone_time_s[zone] += self.dt
        self.stats.robot_time_s[self._robot_mode(zone)] += self.dt
        if self.last_velocity != self.robot.velocity_fraction:
            if self.last_velocity is not None:
                self.events.emit(t, "velocity_change", fraction=self.robot.velocity_fraction)
            self.last_velocity = self.robot.velocity_fraction
        if self.last_xy is not None:
            self.stats.person_distance_m += math.hypot(person.x - self.last_xy[0], person.y - self.last_xy[1])
        self.last_xy = (person.x, person.y)
        self._check_speed(t, zone)
        if self.stop_since is not None and not self.stopped_this_stay:
            self._measure_intrusion(person.x, person.y)
        self._update_separation()
