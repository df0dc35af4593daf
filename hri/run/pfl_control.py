"""Power and force limiting that limits: the robot's speed capped below the trees so that a
contact with the person stays within the permissible speed of ISO/TS 15066:2016, Annex A
(``safety.mode: pfl`` and ``ssm+pfl``).

The permissible speed of a pair of the person's link and the robot's link is Annex A's
transient one for the link's body regions (:meth:`hri.run.pfl_contacts.PflMonitor.limit`:
the robot's effective mass, the robot link's contact area); its velocity fraction is that
speed over v_r at full speed (the stopping model's bound: no robot point is faster than
f · Σ reach_i · vmax_i at fraction f), rounded down to ``CAP_STEP``. The cap acts as SSM's
does (:meth:`RobotArm.set_safety_cap`); ``hri.run.ssm_control`` gives S_p.

Each physics step, before the arm's own step, the controller takes PyBullet's closest points
of the pairs of links of each person and the robot that can matter, each distance less one
step's closing (v_h + v_r) dt, S_p as SSM has it (:mod:`hri.run.ssm_control`). The pairs are
measured (the person posed first, with the safety monitor's own query, so its separation bound
stays fresh) when their distances may have closed by ``PAIRS_STALE_M`` since the last
measurement (by the person's speed bound and the robot's measured bound of its fastest point,
step by step), on a step the person was posed anyway when the last is ``SSM_REFRESH_S`` old,
and whenever a pair may be within the contact distance; between, each distance less what it
may have closed. Per mode:

* ``pfl``, PFL alone: the robot never runs faster than the permissible fraction of the
  nearest pair, nor of any pair within S_p of that fraction (the robot could reach it before
  it could stop: the head nearby is not touched at the hand's speed), whatever the distance.
  Pairs farther than S_p at the largest permissible fraction cannot be reached before the
  controller reacts: while the separation bound keeps every pair that far, the nearest pair
  is measured only on the steps the person was posed anyway.
* ``ssm+pfl``: each pair allows the larger of its permissible fraction and SSM's fraction for
  its distance (the largest whose S_p fits, S_s and T_s from the arm's state as SSM's own
  controller takes them), so SSM's graded speed outside, PFL's speed inside S_p instead of a
  protective stop (ISO/TS 15066, 5.5.4 with 5.5.5, for a robot designed for contact). While
  the separation bound leaves S_p at full speed (by the table, or by the arm's state's quick
  bound), the cap is 1, unmeasured.

The cap is the smallest any pair allows. A region that admits no transient contact (skull and
forehead, face) allows 0: a protective stop. A pair within the contact distance
(``safety.pfl.contact_distance_m``) is a contact: the robot stops, as a robot designed for
contact does when it detects one, and goes on when the two have parted. Events: ``pfl_limit``
(the cap fell below 1, with the pair that limits it), ``pfl_release`` (back to 1), ``pfl_stop``
(cap 0: ``reason`` contact or region) and ``pfl_resume``; the stops count as ``ssm_stops``.

What the cap cannot limit: the person's own speed towards the robot, which the contact's
judgement adds (:mod:`hri.run.pfl_contacts`), and a clamping, which is judged against the
quasi-static limits while the cap holds the transient ones.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING


from hri.robot.arm import RobotArm
from hri.robot.braking import Stop
from hri.run.monitor import PERSON_MAX_SPEED_M_S
from hri.run.ssm_control import CAP_STEP, SeparationRoom, SsmTerms
from hri.run.ssm_watch import SSM_REFRESH_S

if TYPE_CHECKING:
    from hri.run.monitor import SafetyMonitor
    from hri.run.pfl_contacts import PflMonitor
    from hri.run.sensor import SafetySensor

PFL, SSM_PFL = "pfl", "ssm+pfl"
#: the pairs of links are measured again when their distances may have closed by this much
#: since the last measurement (a stale bound only lowers the cap: SSM's part of it), on a step
#: the person was posed anyway when the last is SSM_REFRESH_S old, and whenever a pair's bound
#: is within the contact distance
PAIRS_STALE_M = 0.1


CONTACT, REGION = "contact", "region"  # why a pair stops the robot
SENSOR_LOST = "sensor_lost"  # ssm+pfl with a safety sensor: its update was lost


@dataclass(frozen=True)
class Limit:
    """The cap of a step and the pair of links that set it (None: nothing near); ``why`` a
    cap of 0 is one."""

    cap: float
    person_link: str | None = None
    robot_link: str | None = None
    region: str | None = None
    why: str = REGION


class PflController:
    """Caps the arm's speed every physics step so that a contact stays within Annex A's
    permissible speed (the module's rule for ``mode``, ``pfl`` or ``ssm+pfl``); ``monitors``
    are the safety monitors of the people, ``emit`` the run's event log's, ``sensor`` the safety
    sensor whose reports ssm+pfl's full speed acts on (None: the ideal sensor)."""

    def __init__(self, mode: str, robot: RobotArm, terms: SsmTerms, monitors: Sequence[SafetyMonitor], dt: float,
                 emit: Callable[..., None], sensor: SafetySensor | None = None):
        if mode not in (PFL, SSM_PFL):
            raise ValueError(f"PflController: no mode {mode!r}")
        self.mode = mode
        self.robot = robot
        self.terms = terms
        self.room = None if sensor is None else SeparationRoom(robot, terms, dt, sensor)
        self.monitors = list(monitors)
        self.dt = dt
        self.emit = emit  # (t, event, **fields)
        self._robot_top_m_s = terms.stopping.speed(1.0)  # v_r at full speed
        self._top = self.fraction(max(region_speeds(monitors[0].pfl)))  # the largest permissible fraction
        self._kept = [Limit(0.0)] * len(self.monitors)  # pfl: each person's limit, kept while they are far
        self._cache: list[tuple[float, float, list[tuple]] | None] = [None] * len(self.monitors)  # (t, cutoff, records)
        # how far each person's gap can have closed since the pairs were measured: the person's
        # speed bound and the robot's measured bound of its fastest point, step by step
        self._closed = [0.0] * len(self.monitors)
        self._fractions: dict[tuple[int, int, str], float] = {}  # (person body, its link, robot link's name): fraction
        self.limit = Limit(1.0)
        self.stops = 0

    def fraction(self, speed_m_s: float) -> float:
        """The largest cap (a multiple of ``CAP_STEP``) at which no robot point is faster than
        ``speed_m_s``."""
        return math.floor(speed_m_s / self._robot_top_m_s / CAP_STEP + 1e-9) * CAP_STEP

    def step(self, t: float, separation_m: float | None, joint_fraction: Callable[[], float]) -> None:
        """Decide and set the cap for the arm's step from ``t``: ``separation_m`` is a lower
        bound of the separation at the step's end as if the robot stood still (the smallest of
        any person's; with a safety sensor its newest report, None: its update was lost, which
        in ssm+pfl is a protective stop until it reports again); ``joint_fraction`` is not asked
        (the cap holds whatever the speed)."""
        v_h = self.terms.person_m_s()
        closing = (v_h + self._robot_top_m_s) * self.dt
        for k, monitor in enumerate(self.monitors):  # what the last step closed at most
            person = PERSON_MAX_SPEED_M_S if monitor.person_speed is None else monitor.person_speed()
            self._closed[k] += (person + monitor.joint_speeds()[1]) * self.dt
        if self.mode == SSM_PFL:
            limit = Limit(0.0, why=SENSOR_LOST) if separation_m is None else self._ssm_pfl(separation_m, closing, v_h)
        else:
            reach = self.terms.required_m(self._top, v_h) + closing  # S_p at the largest permissible fraction
            for k, monitor in enumerate(self.monitors):
                near = monitor.separation_bound(t + self.dt) - closing < reach
                pairs = list(self._pairs(k, monitor, reach)) if near else []
                if pairs or monitor.posed or self._kept[k].person_link is None:
                    if not pairs:  # far: the nearest pair as the person is posed now
                        if not math.isfinite(monitor.measured_t):
                            monitor.measure_posed()  # the first step: no separation measured yet
                        upper = monitor.last_separation + monitor.closing_speed * (monitor.now - monitor.measured_t)
                        pairs = [(record[8], record) for record in self._query(monitor, max(upper, 0.0) + reach)]
                    self._kept[k] = self._nearest(pairs, monitor, closing, v_h) if pairs else Limit(1.0)
            limit = min(self._kept, key=lambda item: item.cap)
        self._follow(t, limit)
        if self.robot.safety_cap != limit.cap:
            self.robot.set_safety_cap(limit.cap)

    def _ssm_pfl(self, separation_m: float, closing: float, v_h: float) -> Limit:
        """ssm+pfl: cap 1 while S_p at full speed fits the separation bound, by the table or by
        the arm's state (as :class:`~hri.run.ssm_control.SsmController` takes S_s and T_s:
        the quick bound first, then the forward kinematics'); else the pairs' graded cap, SSM's
        fraction of each pair by the same stop. With a safety sensor, full speed acts on its
        report as SSM's controller does (:class:`~hri.run.ssm_control.SeparationRoom`)."""
        if self.room is None:
            fits = self.terms.full_speed_fits(separation_m - closing, self.terms.table.full(v_h), v_h)
        else:
            room_v_h, room = self.room.room(self.room.since_report(separation_m))
            fits = self.terms.full_speed_fits(room, self.terms.full_m(), room_v_h)
        if fits:
            return Limit(1.0)
        stop = self.terms.state_stop()
        full = self.terms.required_m(1.0, v_h, stop)
        return min((self._graded(self._pairs(k, m, full + closing), m, closing, v_h, stop)
                    for k, m in enumerate(self.monitors)), key=lambda item: item.cap)

    def _query(self, monitor: SafetyMonitor, cutoff: float) -> list[tuple]:
        """PyBullet's closest-point records of the person's and the robot's links within
        ``cutoff`` of each other, the person as posed now, nearest first."""
        return sorted(monitor.shapes.records(monitor.person_body, cutoff), key=lambda record: record[8])

    def _pairs(self, k: int, monitor: SafetyMonitor, cutoff: float) -> Iterable[tuple[float, tuple]]:
        """Every pair of person ``k``'s links and the robot's that may be within ``cutoff`` now:
        (a lower bound of its distance, its closest-point record), nearest first. From the
        last measurement while that is fresh enough (the module's schedule), else measured now,
        the person posed first with the safety monitor's own query."""
        now = monitor.now
        cache = self._cache[k]
        if cache is not None:
            then, reached, records = cache
            slack = self._closed[k]
            if (slack < PAIRS_STALE_M and reached - slack >= cutoff
                    and not (monitor.posed and now - then >= SSM_REFRESH_S)
                    and (not records or records[0][8] - slack > monitor.pfl.distance)):  # nearest first
                return ((record[8] - slack, record) for record in records)
        if monitor.measured_t != now:
            monitor.measure_posed()
        records = self._query(monitor, cutoff + PAIRS_STALE_M)
        self._cache[k] = (now, cutoff + PAIRS_STALE_M, records)
        self._closed[k] = 0.0
        return ((record[8], record) for record in records)

    def _pair_limit(self, monitor: SafetyMonitor, distance: float, record: tuple, cap: float) -> Limit:
        """The limit of ``record``'s pair, ``distance`` apart, at ``cap``: 0 in contact."""
        robot_link = monitor.shapes.name(record)
        pair = monitor.pfl.limit(record[3], robot_link)
        why = CONTACT if distance <= monitor.pfl.distance else REGION
        return Limit(0.0 if why == CONTACT else cap, pair.link, robot_link, pair.region, why)

    def _permissible(self, monitor: SafetyMonitor, record: tuple) -> float:
        """The permissible fraction of ``record``'s pair."""
        key = (monitor.person_body, record[3], monitor.shapes.name(record))
        if key not in self._fractions:
            self._fractions[key] = self.fraction(monitor.pfl.limit(record[3], key[2]).permissible_speed)
        return self._fractions[key]

    def _graded(self, pairs: Iterable[tuple[float, tuple]], monitor: SafetyMonitor, closing: float, v_h: float,
                stop: Stop | None) -> Limit:
        """ssm+pfl: the cap one person's ``pairs`` allow (``stop``: S_s and T_s from the arm's
        state, None: the table's)."""
        limit = Limit(1.0)
        for distance, record in pairs:
            ssm = self.terms.largest(distance - closing, v_h, stop)
            ssm = 0.0 if ssm is None else math.floor(ssm / CAP_STEP) * CAP_STEP
            if ssm >= limit.cap and distance > monitor.pfl.distance:
                break  # SSM's fraction only grows with the distance: no farther pair allows less
            allowed = max(self._permissible(monitor, record), ssm)
            if allowed < limit.cap or distance <= monitor.pfl.distance:
                pair = self._pair_limit(monitor, distance, record, allowed)
                if pair.cap < limit.cap:
                    limit = pair
        return limit

    def _nearest(self, pairs: list[tuple[float, tuple]], monitor: SafetyMonitor, closing: float, v_h: float) -> Limit:
        """pfl: the cap one person's ``pairs`` (nearest first) allow: the nearest pair's, and of
        those within S_p of the cap so far."""
        distance, record = pairs[0]
        limit = self._pair_limit(monitor, distance, record, self._permissible(monitor, record))
        for distance, record in pairs[1:]:
            if distance - closing >= self.terms.required_m(limit.cap, v_h):
                break  # this pair and every farther one: the robot stops before it could reach them
            pair = self._pair_limit(monitor, distance, record, self._permissible(monitor, record))
            if pair.cap < limit.cap:
                limit = pair
        return limit

    def _follow(self, t: float, limit: Limit) -> None:
        """The ``pfl_limit``, ``pfl_release``, ``pfl_stop`` and ``pfl_resume`` events."""
        before = self.limit
        self.limit = limit
        if (before.cap < 1.0) != (limit.cap < 1.0):
            if limit.cap < 1.0:
                self.emit(t, "pfl_limit", cap=round(limit.cap, 6), person_link=limit.person_link,
                          robot_link=limit.robot_link, region=limit.region)
            else:
                self.emit(t, "pfl_release")
        if (before.cap == 0.0) != (limit.cap == 0.0):
            if limit.cap == 0.0:
                self.stops += 1
                self.emit(t, "pfl_stop", reason=limit.why, person_link=limit.person_link,
                          robot_link=limit.robot_link, region=limit.region)
            else:
                self.emit(t, "pfl_resume", cap=round(limit.cap, 6))


def region_speeds(contacts: PflMonitor) -> list[float]:
    """The permissible transient speed (m/s) of every pair of a person's link and the robot's."""
    return [contacts.limit(person, robot).permissible_speed for person in contacts.person_link_indices
            for robot in contacts.robot_link_names]
