"""The safety monitor: watches every physics step, independent of the trees.

It decides the person's zone from the pelvis position, checks the robot's measured speed
against the zone's limit once the allowed reaction (or stopping) time has passed, counts
protective stops, measures the person-robot separation, and keeps the statistics and
events of :mod:`hri.run.stats` up to date.

Speed limits. In the warning zone the robot's measured joint speeds, as a fraction of their
limits, must be at most ``reduced_velocity`` (within ``speed_tolerance``); that bounds the
speed of every robot point to the same fraction of what it reaches at full speed. In the stop
zone the fastest robot point must be slower than ``rest_speed_m_s``.

Violations. Every physics step that breaks a limit after its allowed time, and every step in
which the robot is inside the person's shapes (deeper than ``PENETRATION_TOLERANCE_M``) while
its point there moves faster than ``rest_speed_m_s`` (the robot moved into the person), is a
``safety_violation`` event (step, zone, speed, reason) and counts in ``safety_violations``;
with ``strict`` the first one ends the run (:class:`SafetyViolation`). The person inside the
robot at rest touched it: a ``robot_touched`` event and ``robot_touches``, once per touch, not
a violation. In the PFL modes a robot moving into the person is a contact that power and force
limiting judges (:mod:`hri.run.pfl_contacts`), not a violation of this check.

The robot. Its shapes are :class:`~hri.run.robot_shapes.RobotShapes`: the arm's links, and
outside zones mode its tool and the part it carries (zones runs measure the arm alone, as
they always did).

Separation. The 3-D distance between the person's body and the robot's links is queried on a
schedule that cannot miss what the statistics report. After a query that found ``d``, the
next waits as long as the two cannot have closed the gap below the *floor*: (d - floor) /
closing speed, where the closing speed bounds the fastest robot point
(:meth:`~hri.robot.arm.RobotArm.speed_capability`) plus ``PERSON_MAX_SPEED_M_S`` for any
point of the person. On a step whose joint speeds were measured (every step while the person
is in the warning or stop zone) the robot's part of that is what they show instead of its
top speed, and the person's part is always the bound of what it does
(``ActorPlugin.speed_bound``: a clip at its measured speed, nothing while it stands still):
the wait grows by what either did not use (a robot slowed to 10 % or at rest, a person at
work on a table, close the gap far more slowly than the bound). Each query measures the pair
of links closest at the last one first, then only the pairs within that distance. The floor is the
run's smallest separation so far (at most ``EXACT_M``, at least ``CONTACT_M``), so every
separation below both the minimum so far and ``EXACT_M`` is measured: ``min_separation_m``
is exact whenever it is below ``EXACT_M`` (as if the distance were queried every step), and
every step with the two closer than ``CONTACT_M`` is queried, so no interpenetration goes
uncounted. Queries happen on steps where the person was posed: on the person's own steps, a
query due before the next one is taken at once (earlier is as safe); between them the
simulation poses the body for a due query without the person acting
(:meth:`SafetyMonitor.separation_due`, ``ActorPlugin.preview``), so when the monitor asks
never changes what the person does. The trajectory's separation column is the newest query's
figure.

The robot's speed is checked every step while the person is in the warning or stop zone (the
safety limits), from the measured joint speeds; the fastest point's speed (a costlier query)
where it decides (at rest in the stop zone, unless the joint speeds already bound it below
``rest_speed_m_s``) and every ``SPEED_EVERY`` steps for the ``max_robot_speed_m_s``
statistic, unless the joint speeds' bound shows that no point moves faster than that maximum
already is. The zone is followed every step the pelvis moved (:class:`ZoneTracker`: exact, and
mostly one comparison).

SSM (``safety.mode: ssm``). The zones' speed limits are not checked; instead, on every step
on which the robot moves, the separation against S_p at the robot's measured speed, and the
monitor is the SSM controller's sensor: the controller caps the speed from
:meth:`SafetyMonitor.separation_bound`, the last query less what the gap can have closed since,
and a query is taken after a step when that bound grew stale for the controller or leaves the
margin too small to be judged without one, posing the person's body for it
(:meth:`SafetyMonitor.measure_posed`; the body has no collisions: when it is posed does not
change the physics). Both are :class:`~hri.run.ssm_watch.SsmWatch`'s.

Several people. Each person has a monitor of their own (``name``), which keeps the person's
figures (``person``, a :class:`~hri.run.stats.PersonStats`; with one person the run's own
statistics) and checks the robot's speed against that person's zone and separation: a
violation for any person is a violation, so the strictest zone of any person holds. The
robot's own figures (time by mode and speed band, velocity changes, the run's ``zone_time_s``)
follow the strictest zone of any person, kept by the first person's monitor
(:meth:`SafetyMonitor.account_robot`). With one person, :meth:`SafetyMonitor.step` does all
of it in the order it always did. With several people each monitor also keeps the person's
time within Hall's proxemic distances of the robot (:data:`PROXEMICS`, by the separation): a
query is then also due before the gap can cross one of their bounds, either way (the gap
changes no faster than the closing speed), so the time is exact to a physics step.

Contacts. With a :class:`~hri.run.pfl_contacts.PflSetup`, every step's newest separation goes
to power and force limiting (:mod:`hri.run.pfl_contacts`), which judges the steps below its
contact distance (at most ``CONTACT_M``: all of them measured).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pybullet as p
import shapely

from hri.actor.lookahead import TOP_SPEED_M_S
from hri.base.errors import SafetyViolation
from hri.base.geometry import Area
from hri.run.pfl_contacts import PflMonitor, PflSetup
from hri.run.robot_shapes import RobotShapes, link_names, point_velocity
from hri.run.ssm_watch import SsmWatch
from hri.run.stats import EventLog, PersonStats, RunStats, speed_band

if TYPE_CHECKING:
    from hri.run.ssm_control import SsmTerms

EXACT_M = 1.0  # a smallest separation below this is exact
CONTACT_M = 0.05  # below this the separation is queried every step (interpenetration)
PERSON_MAX_SPEED_M_S = TOP_SPEED_M_S  # any point of the person (hri.actor.lookahead)
SPEED_EVERY = 12
REST_DWELL_S = 0.1  # at rest this long in the stop zone: a protective stop (not a pause at a waypoint)
SEPARATION_CUTOFF_M = 50.0
PENETRATION_TOLERANCE_M = 1e-3  # deeper than this, person and robot interpenetrate: a violation
BOUND_SLACK_M = 1e-6  # the closest-pair query's cutoff beyond the bound, against rounding in the cutoff test
ROUNDING_M = 1e-12  # more than a distance of metres can be off by in rounding
_NO_GUARD = (math.nan, math.nan, -math.inf)  # _measure_intrusion: nothing measured in this stay
SPEED_BOUND_SLACK = 1e-6  # relative: a joint speeds' bound this close to the fastest speed so far does not decide

@dataclass(frozen=True)
class SafetyLimits:
    reduced_velocity: float
    reaction_time_s: float
    stopping_time_s: float
    rest_speed_m_s: float
    speed_tolerance: float


#: Hall's proxemic distances (E. T. Hall, The Hidden Dimension, 1966) as human-aware navigation
#: benchmarks report them: the separation below each bound, in metres; beyond the last, public
PROXEMICS = (("intimate", 0.45), ("personal", 1.2), ("social", 3.6))
PUBLIC = "public"


def proxemic_zone(separation_m: float) -> str:
    """Hall's distance a separation lies in: intimate, personal, social or public."""
    return next((name for name, bound in PROXEMICS if separation_m < bound), PUBLIC)


#: the zones from the least to the most strict: of several people's, the last present holds
ZONE_ORDER = ("safe", "warning", "stop")


def strictest(zones: "Iterable[str | None]") -> str | None:
    """The strictest of several people's zones (None: none decided yet)."""
    known = [zone for zone in zones if zone is not None]
    return max(known, key=ZONE_ORDER.index) if known else None


def zone_of(zones: dict[str, Area], x: float, y: float) -> str:
    """The innermost zone containing the point: ``stop``, ``warning`` or ``safe``."""
    if zones["stop"].contains(x, y):
        return "stop"
    if zones["warning"].contains(x, y):
        return "warning"
    return "safe"


class ZoneTracker:
    """:func:`zone_of` for a moving point, re-decided only when the point leaves the disc around
    where it was last decided that reaches no zone's border. Exact: no point of that disc can lie
    on another side of a border. The pelvis moves millimetres per physics step, the borders are
    decimetres away most of the time: most steps need one comparison instead of two polygon tests."""

    MARGIN_M = 1e-9  # shrinks the disc, so rounding in the distance cannot put a border inside it

    def __init__(self, zones: dict[str, Area]):
        self.zones = zones
        self._guarded = [zones["stop"], zones["warning"]]
        self._disc = (0.0, 0.0, -1.0)  # (x, y, radius squared): nothing decided yet
        self.zone = "safe"

    def at(self, x: float, y: float) -> str:
        cx, cy, r2 = self._disc
        if (x - cx) ** 2 + (y - cy) ** 2 < r2:
            return self.zone
        self.zone = zone_of(self.zones, x, y)
        radius = min(area.edge_distance(x, y) for area in self._guarded) - self.MARGIN_M
        self._disc = (x, y, radius * radius if radius > 0.0 else -1.0)
        return self.zone


class EntryCounter:
    """Counts visits to the warning and the stop zone, for the statistics (``zone_entries``).

    A visit starts when the person enters the zone and ends when they have been out of it for
    :attr:`GAP_S`: a person who stands on a border and sways across it makes one visit, not
    one per sway. A visit to the warning zone starts from the safe zone (stepping back from
    the stop zone into the warning zone is the same visit). Only the count is smoothed: the
    robot reacts to every crossing, at once.
    """

    GAP_S = 1.0
    """Seconds out of a zone after which coming back is a new visit."""

    def __init__(self) -> None:
        self.counts = {"warning": 0, "stop": 0}
        self._left: dict[str, float] = {}  # zone -> when the person last left it

    def crossed(self, t: float, before: str | None, after: str) -> None:
        """The person went from zone ``before`` (None: nowhere yet) to ``after`` at ``t``."""
        if before == "stop" or (before == "warning" and after == "safe"):
            self._left[before] = t
        entered = "stop" if after == "stop" else "warning" if after == "warning" and before in (None, "safe") else None
        if entered is not None and t - self._left.get(entered, -math.inf) >= self.GAP_S:
            self.counts[entered] += 1


class SafetyMonitor:
    """Per-step zone, speed, protective-stop and separation bookkeeping."""

    def __init__(self, client: int, zones: dict[str, Area], robot, person_body: int,
                 limits: SafetyLimits, stats: RunStats, events: EventLog, dt: float, strict: bool = False,
                 person_speed: Callable[[], float] | None = None, ssm: SsmTerms | None = None,
                 pfl: PflSetup | None = None, person: PersonStats | None = None, name: str | None = None,
                 shapes: RobotShapes | None = None, ssm_invariant: bool = True, contact_by_pfl: bool = False):
        self.client = client
        self.person = stats if person is None else person  # where the person's figures go
        self.name = name  # several people: whose monitor (in its events)
        # several people: time within Hall's distances (queried whenever the gap may cross one)
        self.proxemics = person is not None and hasattr(person, "proxemic_time_s")
        self._who = {} if name is None else {"person": name}
        self.ssm = ssm  # SSM mode: the separation is measured and checked against S_p every step
        self.person_speed = person_speed  # the person's bound now (ActorPlugin.speed_bound), else the top speed
        self.strict = strict
        self.zones = zones
        self.robot = robot
        self.person_body = person_body
        self.limits = limits
        self.stats = stats
        self.events = events
        self.dt = dt
        self.zone: str | None = None
        self._zones = ZoneTracker(zones)
        self.entries = EntryCounter()
        self.guarded_since: float | None = None  # entered warning or stop (from safe)
        self.stop_since: float | None = None
        self.stopped_this_stay = False
        self.rest_since: float | None = None  # the robot at rest since (in a stay in the stop zone)
        self.intrusion_m = 0.0  # how deep into the stop zone the person got in this stay before the robot rested
        self._intrusion_guard = _NO_GUARD  # (x, y, reach): no deeper within reach of (x, y)
        self.last_velocity = None
        self.last_xy: tuple[float, float] | None = None
        self.next_separation_t = 0.0
        self.robot_capability = robot.speed_capability()
        self.closing_speed = self.robot_capability + PERSON_MAX_SPEED_M_S
        self.steps = 0
        self._speed_at = self._joints_at = -1
        self._speed = 0.0
        self._joint_figures = (0.0, 0.0)
        self.last_separation = math.inf
        self.posed = False  # the body is posed where it is now (a query needs no posing first)
        self.posed_in_step = False  # the step itself posed the body (posed, before any query's posing)
        self.measured_t = -math.inf  # when the last query was taken
        self._bound_origin = 0.0  # the separation is at least last_separation - closing (t - this)
        self.pose_person: Callable[[], None] | None = None  # SSM: poses the body for a query after a step
        self._closest_links: tuple[int, int] | None = None  # (person link, robot link) of the last query
        self.closest: tuple[float, tuple] | None = None  # (t, PyBullet's closest-point record)
        self.now = 0.0
        # read now: at the end of a --gui run whose window was closed PyBullet cannot be asked
        self.link_names = {body: link_names(client, body) for body in (person_body, robot.body_id)}
        # the robot as the distances see it: the arm's links, with whole=True its tool and carried part
        self.shapes = shapes if shapes is not None else RobotShapes(client, robot)
        self._touching = False  # the person is inside the robot at rest (a touch, counted once)
        # the PFL modes: the robot may touch the person; power and force limiting judges how hard
        self.contact_by_pfl = contact_by_pfl
        # SSM mode: the robot's share of the separation bound is how far its points can be from
        # where they were at the last query, from the joints (separation_bound), not its top speed
        self._moved_bound = ssm is not None and ssm_invariant
        self._joints_then: list[float] | None = None  # the robot's joints at the last query (SSM)
        self._moved = (-1, 0.0)  # (step, the robot's share) of the last bound asked (SSM)
        # ssm_invariant: S_p is the safety function's invariant (not in the PFL modes, whose is PFL's)
        self.ssm_watch = None if ssm is None else SsmWatch(self, ssm, ssm_invariant)
        self.pfl = None if pfl is None else PflMonitor(client, person_body, self.shapes, pfl, self.link_names,
                                                      self.closing_speed * dt, stats, events, self._who, person)

    # --- zone ---------------------------------------------------------------------
    def _update_zone(self, t: float, x: float, y: float) -> str:
        zone = self._zones.at(x, y)
        if zone == self.zone:
            return zone
        if self.zone is not None:
            self.events.emit(t, "zone_exit", zone=self.zone, **self._who)
        self.events.emit(t, "zone_enter", zone=zone, x=round(x, 4), y=round(y, 4), **self._who)
        self.entries.crossed(t, self.zone, zone)
        self.person.zone_entries.update(self.entries.counts)
        if zone == "stop":
            self.stop_since = t
            self.stopped_this_stay = False
            self.rest_since = None
            self.intrusion_m = 0.0
            self._intrusion_guard = _NO_GUARD
            self.events.emit(t, "protective_stop_requested", **self._who)
        elif self.zone == "stop":
            self.stop_since = None
            self.events.emit(t, "protective_stop_released", stopped=self.stopped_this_stay, **self._who)
        if zone != "safe" and self.zone in (None, "safe"):
            self.guarded_since = t
        if zone == "safe":
            self.guarded_since = None
        self.zone = zone
        return zone

    # --- robot speed ------------------------------------------------------------------
    def robot_speeds(self) -> tuple[float, float]:
        """The robot's measured joint speed fraction and fastest point speed (m/s) after this
        step (measured once per step, whoever asks)."""
        fraction, _bound = self.joint_speeds()
        if self._speed_at != self.steps:
            self._speed_at = self.steps
            self._speed = self.robot.fastest_point_speed()
            self.stats.max_robot_speed_m_s = max(self.stats.max_robot_speed_m_s, self._speed)
        return fraction, self._speed

    def measured_speeds(self) -> tuple[float, float]:
        """:meth:`robot_speeds` for a reader: the same figures, the fastest point measured (if
        this step has not yet) without counting it in the statistics."""
        fraction, _bound = self.joint_speeds()
        return fraction, self._speed if self._speed_at == self.steps else self.robot.fastest_point_speed()

    def joint_fraction(self) -> float:
        """The largest joint speed fraction measured after the last step."""
        return self.joint_speeds()[0]

    def joint_speeds(self) -> tuple[float, float]:
        """The joint speed fraction and a bound of any point's speed, once per step."""
        if self._joints_at != self.steps:
            self._joints_at = self.steps
            if self._moved_bound:  # the robot's share of the separation bound from the same read
                fraction, bound, moved = self.robot.joint_speeds_and_reach(self._joints_then)
                self._joint_figures, self._moved = (fraction, bound), (self.steps, moved)
            else:
                self._joint_figures = self.robot.joint_speeds()
        return self._joint_figures

    def _check_speed(self, t: float, zone: str) -> None:
        """The speed limits. Joint speeds every step; the fastest point's speed (a costlier
        query) only where it decides: at rest in the stop zone unless the joint speeds' bound
        already shows it, a violation's report, and every ``SPEED_EVERY`` steps for
        ``max_robot_speed_m_s`` unless the bound shows that no point moves faster than the
        maximum so far (near the person the robot runs at 10 % or rests: most samples)."""
        fraction, bound = self.joint_speeds()
        if self.steps % SPEED_EVERY == 0:
            self._sample_speed()
        lim = self.limits
        if self.stop_since is not None:
            at_rest = bound < lim.rest_speed_m_s or self.robot_speeds()[1] < lim.rest_speed_m_s
            if not self.stopped_this_stay:
                self._follow_rest(t, at_rest)
            if t - self.stop_since > lim.stopping_time_s and not at_rest:
                speed = self.robot_speeds()[1]
                self.violation(t, zone, speed, fraction, f"moving at {speed:.4f} m/s in the stop zone")
                return
        if self.guarded_since is not None and t - self.guarded_since > lim.reaction_time_s:
            allowed = lim.reduced_velocity * (1.0 + lim.speed_tolerance)
            if fraction > allowed:
                self.violation(t, zone, self.robot_speeds()[1], fraction,
                                f"joint speed at {fraction:.3f} of the limit, allowed {lim.reduced_velocity:.3f}")

    def _sample_speed(self) -> None:
        """The ``max_robot_speed_m_s`` sample: the fastest point's speed, unless the joint
        speeds' bound shows that no point moves faster than the maximum so far."""
        if self.joint_speeds()[1] * (1.0 + SPEED_BOUND_SLACK) >= self.stats.max_robot_speed_m_s:
            self.robot_speeds()

    def _follow_rest(self, t: float, at_rest: bool) -> None:
        """A protective stop is the robot at rest for ``REST_DWELL_S`` in a stay in the stop
        zone (a pause at a waypoint is not one); it counts from when the rest began."""
        if not at_rest:
            self.rest_since = None
            return
        if self.rest_since is None:
            self.rest_since = t
        if t - self.rest_since >= REST_DWELL_S - 1e-9:
            self.stopped_this_stay = True
            self.stats.protective_stops += 1
            self.events.emit(t, "protective_stop", stopping_time_s=round(self.rest_since - self.stop_since, 6),
                             intrusion_m=round(self.intrusion_m, 6), **self._who)

    def _measure_intrusion(self, x: float, y: float) -> None:
        """The person's depth inside the stop zone (distance to its edge) while the robot still moves.

        The depth changes no faster than the pelvis moves: while the pelvis is no farther from
        where the depth was last measured than that depth fell short of the stay's deepest, it
        cannot be deeper, and is not measured again (in SSM mode the robot goes on working
        while the person stands at a table in the stop zone, and a shapely query every step
        cost a tenth of the step)."""
        ox, oy, reach = self._intrusion_guard
        if (x == ox and y == oy) or math.hypot(x - ox, y - oy) < reach - ROUNDING_M:
            return
        depth = self.zones["stop"].polygon.exterior.distance(shapely.Point(x, y))
        self.intrusion_m = max(self.intrusion_m, depth)
        self._intrusion_guard = (x, y, self.intrusion_m - depth)
        current = self.person.max_stop_intrusion_m
        self.person.max_stop_intrusion_m = depth if current is None else max(current, depth)

    def violation(self, t: float, zone: str, speed: float, fraction: float, why: str) -> None:
        self.stats.safety_violations += 1
        if self.person is not self.stats:
            self.person.safety_violations += 1
        self.events.emit(t, "safety_violation", step=self.steps, zone=zone, speed_m_s=round(speed, 6),
                         speed_fraction=round(fraction, 6), reason=why, **self._who)
        if self.strict:
            raise SafetyViolation(f"--strict: safety violation at t = {t:.3f} s (step {self.steps}, "
                                  f"{zone} zone): {why}")

    def _robot_mode(self, zone: str, limit: float) -> str:
        """``robot_time_s``'s key: stopped (the stop zone; in SSM mode the controller's
        protective stop), reduced or full."""
        if (zone == "stop") if self.ssm is None else (limit == 0.0):
            return "stopped"
        return "reduced" if limit < 1.0 else "full"

    def _speed_limit(self, zone: str) -> float:
        """The velocity fraction the safety function allows now: 0 in the stop zone, the
        trees' elsewhere; in SSM mode the trees' under the controller's cap."""
        if self.ssm is None:
            return 0.0 if zone == "stop" else self.robot.velocity_fraction
        return self.robot.effective_fraction

    # --- separation -------------------------------------------------------------------
    def _closest_within(self, cutoff: float):
        """PyBullet's closest point pair of the person and the robot, if within ``cutoff`` m
        (the narrow phase runs only for link pairs whose boxes are that close)."""
        return self.shapes.closest(self.person_body, cutoff)

    def separation_due(self, t: float) -> bool:
        """A separation query is due at time ``t`` for the statistics (the schedule above; the
        person must be posed for it). SSM's own queries are decided after the step
        (:class:`~hri.run.ssm_watch.SsmWatch`), which poses the body itself. In SSM mode, where
        the schedule's robot share is its top speed, a query due by the schedule waits while
        the bound from the robot's joints (:meth:`separation_bound`) keeps the gap above the
        floor until ``t``, and is scheduled again for when it could reach it."""
        if t < self.next_separation_t - 1e-12:
            return False
        if not self._moved_bound or self.proxemics or not math.isfinite(self.last_separation):
            return True
        room = self.separation_bound(self.now) - self.closing_speed * max(0.0, t - self.now) - self._floor()
        if room <= 0.0:
            return True
        self.next_separation_t = t + room / self.closing_speed
        return False

    def _floor(self) -> float:
        """How close the schedule lets the gap come before a query: the smallest separation so
        far, at most ``EXACT_M`` and at least ``CONTACT_M``."""
        return max(CONTACT_M, min(self.person.min_separation_m, EXACT_M))

    def _closest(self):
        """PyBullet's closest point pair of the person and the robot (None beyond the cutoff).

        The pair of links closest at the last query is measured first (a few microseconds): the
        separation is at most its distance, so only the link pairs within that distance are then
        asked. PyBullet builds a record for every pair within a query's cutoff, and the person
        moving away from the robot made the earlier guess (the last separation plus 5 cm) fall
        back to all 150 pairs at the full cutoff, four times the cost; the answer is the same."""
        if self._closest_links is not None:
            pair = self.shapes.closest(self.person_body, SEPARATION_CUTOFF_M, self._closest_links)
            if pair is not None:
                closest = self._closest_within(max(pair[8], 0.0) + BOUND_SLACK_M)
                if closest is not None:
                    return closest
        return self._closest_within(SEPARATION_CUTOFF_M)

    def _credit_measured_speed(self) -> None:
        """The next query waits as long as the gap cannot have closed at the robot's and the
        person's top speeds; the wait grows by what either did not use in this step. The robot:
        on a step whose joint speeds were measured (every step while the person is guarded) it
        moved no faster than they show (PyBullet moves a joint by its velocity after the step
        times the step, so that bound holds for the whole step). The person: as fast as its
        activity allows (a clip at its measured speed, nothing while standing still). Either
        faster than its top speed (a clip played fast) shortens the wait instead."""
        if not math.isfinite(self.last_separation):
            return
        unused = 0.0 if self.person_speed is None else PERSON_MAX_SPEED_M_S - self.person_speed()
        if self._moved_bound:  # the robot's share comes from its joints (separation_bound)
            if unused:
                self.next_separation_t += unused * self.dt / self.closing_speed
                self._bound_origin += unused * self.dt / PERSON_MAX_SPEED_M_S
            return
        if self._joints_at == self.steps:
            unused += self.robot_capability - self._joint_figures[1]
        if unused:
            credit = unused * self.dt / self.closing_speed
            self.next_separation_t += credit
            self._bound_origin += credit

    def separation_bound(self, t: float) -> float:
        """A lower bound of the separation at ``t`` from the last query: the gap closes no
        faster than the closing speed, less what the robot and the person left unused since.
        In SSM mode, the last query less how far the person can have come by ``t`` (its top
        speed, less what it left unused) and how far the robot's points can be now from where
        they were at the query (:meth:`RobotArm.reach_from`, read once per step): a robot point
        moves no farther than its path, often much less."""
        if not self._moved_bound:
            return self.last_separation - self.closing_speed * max(0.0, t - self._bound_origin)
        person = PERSON_MAX_SPEED_M_S * max(0.0, t - self._bound_origin)
        return self.last_separation - person - self._robot_moved()

    def _robot_moved(self) -> float:
        """How far the robot's points can be from where they were at the last query (SSM)."""
        if self._moved[0] != self.steps:
            self.joint_speeds()  # reads the joints once per step, and the robot's share with them
        return self._moved[1]

    def _update_separation(self, posed: bool, ahead_s: float) -> None:
        if posed and self.separation_due(self.now + ahead_s):
            self._measure_separation()

    def _measure_separation(self) -> None:
        """Query the separation now (the person posed), check it and schedule the next."""
        closest = self._closest()
        self._closest_links = None if closest is None else (closest[3], closest[2], closest[4])
        distance = closest[8] if closest is not None else SEPARATION_CUTOFF_M
        self.last_separation = distance
        self.measured_t = self._bound_origin = self.now
        if self._moved_bound:
            self._joints_then = self.robot.joint_position_list()
            self._moved = (self.steps, 0.0)
        if distance < -PENETRATION_TOLERANCE_M:
            self._interpenetration(closest)
        elif self._touching and distance >= 0.0:
            self._touching = False
        if distance < self.person.min_separation_m:
            self.person.min_separation_m = distance
            self.closest = (self.now, closest)
        wait = max(0.0, distance - self._floor())
        if self.proxemics:  # and before the gap can cross a bound of Hall's distances, either way
            wait = min(wait, min(abs(distance - bound) for _, bound in PROXEMICS))
        self.next_separation_t = self.now + wait / self.closing_speed

    def _interpenetration(self, closest) -> None:
        """The person's and the robot's shapes inside each other: who touched whom. The robot's
        point at the contact moving (faster than ``rest_speed_m_s``): the robot moved into the
        person, a ``safety_violation`` on every such step. At rest: the person touched the
        robot, a ``robot_touched`` event and one ``robot_touches`` per touch (until the two
        part), not a robot failure; while the person stays inside, a robot that starts moving
        is a violation again. In the PFL modes (``contact_by_pfl``) the robot may touch the person
        at the permissible speed: power and force limiting judges the contact
        (``pfl_contact``, ``pfl_violations`` above Annex A's limits), not this check."""
        names = self._closest_names(closest)
        depth = -closest[8]
        contact_speed = math.sqrt(sum(v * v for v in point_velocity(self.shapes, closest)))
        if contact_speed < self.limits.rest_speed_m_s:
            if not self._touching:
                self._touching = True
                self.stats.robot_touches += 1
                if self.person is not self.stats:
                    self.person.robot_touches += 1
                self.events.emit(self.now, "robot_touched", person_link=names[0], robot_link=names[1],
                                 depth_m=round(depth, 6), speed_m_s=round(contact_speed, 6), **self._who)
            return
        if self.contact_by_pfl:
            return  # a contact the PFL modes allow: PflMonitor judges it against Annex A's limits
        fraction, speed = self.robot_speeds()
        self.violation(self.now, self.zone, speed, fraction,
                       f"the robot's {names[1]}, moving at {contact_speed:.4f} m/s, is {depth:.4f} m inside "
                       f"the person's {names[0]}")

    # --- per step ---------------------------------------------------------------------
    def _closest_names(self, pt) -> list[str]:
        """The person's and the robot's link names of a closest-point record."""
        return [self.link_names[self.person_body][pt[3]], self.shapes.name(pt)]

    def closest_approach(self) -> dict | None:
        """Where and when the person and the robot came closest (for the event log)."""
        if self.closest is None or self.closest[1] is None:
            return None
        t, pt = self.closest
        names = self._closest_names(pt)
        return {"t": t, **self._who, "distance_m": round(pt[8], 6), "person_link": names[0], "robot_link": names[1],
                "at": [round(v, 4) for v in pt[5]]}

    def step(self, t: float, x: float, y: float, posed: bool = True, ahead_s: float = 0.0) -> None:
        """After a physics step at time ``t``: ``(x, y)`` is where the pelvis is now; ``posed``:
        the body was animated in this step (the separation is measured on such steps); ``ahead_s``:
        a query due within this time is taken now (earlier is as safe: the next is scheduled
        from it), because the body is posed now anyway and would have to be posed for it later.
        With several people the simulation calls the three parts itself, the robot's figures
        by the strictest zone of any person."""
        self.begin_step(t, x, y, posed)
        self.account_robot(t, self.zone)
        self.finish_step(t, x, y, posed, ahead_s)

    def begin_step(self, t: float, x: float, y: float, posed: bool) -> None:
        """The person's zone and distance after this step."""
        self.now = t
        self.steps += 1
        self.posed = self.posed_in_step = posed
        last = self.last_xy
        if last is None or last[0] != x or last[1] != y:
            self._update_zone(t, x, y)
            if last is not None:
                self.person.person_distance_m += math.hypot(x - last[0], y - last[1])
            self.last_xy = (x, y)
        self.person.zone_time_s[self.zone] += self.dt

    def account_robot(self, t: float, zone: str) -> None:
        """The robot's figures of this step, with ``zone`` the strictest of any person's (the
        run's ``zone_time_s`` too, when this monitor keeps a person's own)."""
        if self.person is not self.stats:
            self.stats.zone_time_s[zone] += self.dt
        limit = self._speed_limit(zone)
        self.stats.robot_time_s[self._robot_mode(zone, limit)] += self.dt
        self.stats.speed_band_time_s[speed_band(limit)] += self.dt
        if self.last_velocity != self.robot.velocity_fraction:
            if self.last_velocity is not None:
                self.events.emit(t, "velocity_change", fraction=self.robot.velocity_fraction)
            self.last_velocity = self.robot.velocity_fraction

    def finish_step(self, t: float, x: float, y: float, posed: bool, ahead_s: float) -> None:
        """The checks of this step against this person: speed, intrusion, separation, PFL, SSM."""
        zone = self.zone
        if self.ssm is not None:  # SSM, not the zones, is the safety function
            if self.steps % SPEED_EVERY == 0:
                self._sample_speed()
        elif self.guarded_since is not None or self.steps % SPEED_EVERY == 0:
            self._check_speed(t, zone)
        if self.stop_since is not None and not self.stopped_this_stay and self.rest_since is None:
            self._measure_intrusion(x, y)
        if self.ssm is not None and not self._moved_bound:
            self.joint_speeds()  # every step: the separation bound gains what the robot left unused
        self._credit_measured_speed()
        self._update_separation(posed, ahead_s)
        if self.proxemics:
            self.person.proxemic_time_s[proxemic_zone(self.last_separation)] += self.dt
        if self.pfl is not None:
            self.pfl.step(t, posed, self.last_separation)
        if self.ssm_watch is not None:
            self.ssm_watch.after_step(t, zone)

    def measure_posed(self) -> None:
        """Query the separation now, posing the person first if this step did not."""
        if not self.posed and self.pose_person is not None:
            self.pose_person()
            self.posed = True
        self._measure_separation()


#: no point of a person's body is farther than this from the pelvis horizontally (arms out):
#: two pelvises farther apart than twice this cannot touch, and PyBullet is not asked
PERSON_REACH_M = 1.0


class PeopleWatch:
    """Person–person interpenetration in a run with several people: on the steps on which every
    person was posed (their own steps, at the person rate), each pair whose pelvises are within
    twice :data:`PERSON_REACH_M` is asked for its closest points; a pair deeper inside each other
    than ``PENETRATION_TOLERANCE_M`` is a ``safety_violation`` (``people``: the two names) and
    counts in ``safety_violations`` and ``person_contacts``."""

    def __init__(self, client: int, bodies: dict[str, int], stats: RunStats, events: EventLog,
                 strict: bool = False) -> None:
        self.client = client
        self.bodies = bodies
        self.stats = stats
        self.events = events
        self.strict = strict
        self.link_names = {name: link_names(client, body) for name, body in bodies.items()}

    def check(self, t: float, places: dict[str, tuple[float, float]]) -> None:
        names = list(places)
        for i, first in enumerate(names):
            for second in names[i + 1:]:
                (x1, y1), (x2, y2) = places[first], places[second]
                if math.hypot(x1 - x2, y1 - y2) < 2.0 * PERSON_REACH_M:
                    self._check_pair(t, first, second)

    def _check_pair(self, t: float, first: str, second: str) -> None:
        points = p.getClosestPoints(self.bodies[first], self.bodies[second], 0.0, physicsClientId=self.client)
        deepest = min(points, key=lambda pt: pt[8], default=None)
        if deepest is None or deepest[8] >= -PENETRATION_TOLERANCE_M:
            return
        why = (f"{first}'s {self.link_names[first][deepest[3]]} is {-deepest[8]:.4f} m inside "
               f"{second}'s {self.link_names[second][deepest[4]]}")
        self.stats.safety_violations += 1
        self.stats.person_contacts += 1
        self.events.emit(t, "safety_violation", people=[first, second], reason=why)
        if self.strict:
            raise SafetyViolation(f"--strict: safety violation at t = {t:.3f} s: {why}")
