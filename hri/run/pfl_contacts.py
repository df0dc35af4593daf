"""Power and force limiting in a run: the robot's contacts with the person, each judged by
ISO/TS 15066:2016, Annex A (:mod:`hri.run.pfl`: the permissible transient contact speed of
each body region).

The person's and the robot's shapes are *in contact* while they are closer than the contact
distance (``safety.pfl.contact_distance_m``). On every physics step of a contact, each pair
of closest points within that distance (PyBullet's ``getClosestPoints``, one per pair of
links) whose robot point moves towards the person faster than the scenario's rest speed
(``safety.rest_speed_m_s``) is judged:

* n is the unit normal from the robot's point to the person's (PyBullet's contact normal
  on the robot);
* the robot point's velocity is its link's linear velocity at the centre of mass plus the
  angular velocity crossed with the lever from there, ``v + w x r``, after the step;
* the person's point velocity is that material point's displacement since the body's last
  posing near the robot, by the person's link frames then and now, over the time between
  (the body is posed kinematically and has no velocity in PyBullet);
* the contact speed is the relative speed along n, ``(v_robot - v_person) . n`` (0 when
  the two part), and its ratio to the permissible speed of the person's link's region
  (:func:`hri.run.pfl.assess_contact`, for the robot's effective mass of start-up and the
  contact area of the robot's link, ``safety.pfl.contact_area_cm2``);
* the contact is *clamping* (quasi-static, judged against Table A.2's quasi-static limits)
  when the person's link has a fixed body (furniture) within ``CLAMP_GAP_M`` on the far side
  of the contact: a point of that body within ``CLAMP_GAP_M`` of the link whose direction
  from the robot's point is within ``CLAMP_ANGLE_DEG`` of n; else it is transient.

A contact is an *episode*: it starts at the first such pair and lasts until the shapes part
beyond the contact distance; it counts once (``pfl_contacts``), as a violation if its worst
ratio is above 1 (``pfl_violations``), and ends with one ``pfl_contact`` event that names its
worst pair (the person's link and its body region, ``contact``: transient or quasi-static,
``clamped_by``: the fixed body of a clamping; in a run with several people, ``person``: whose
body it was). ``pfl_worst_ratio`` and ``pfl_worst_region`` are the run's worst; with
several people each person's figures (``people.NAME.pfl_contacts``, ...) count their own
contacts.

Cost. The safety monitor measures the separation on every step below its ``CONTACT_M``,
at least the contact distance; between its measurements the two cannot come closer than
that (:mod:`hri.run.monitor`). So a step whose newest separation is at least the contact
distance needs no work here but a comparison. The person's link frames are kept on the
posed steps whose separation is within one step's closing (the robot's top speed and the
person's) of the contact distance: among them the step before a contact's first whenever the
monitor measured it, as it does with the two within ``CONTACT_M``. Otherwise (the gap closed
by more than ``CONTACT_M`` less the contact distance, 4 cm, in one step) the contact's first
step takes the person as still.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pybullet as p

from hri.run.pfl import DEFAULT_CONTACT_AREA_CM2, QUASI_STATIC, TRANSIENT, PflContact, assess_contact
from hri.run.robot_shapes import PART_NAME, TOOL_NAME, RobotShapes, point_velocity
from hri.run.stats import EventLog, PersonStats, RunStats

Vector = tuple[float, float, float]
Frame = tuple[Vector, tuple[float, float, float, float]]  # a link's centre of mass and orientation
_NO_TURN = (0.0, 0.0, 0.0, 1.0)
_UNIT_SLACK = 1e-6  # PyBullet's contact normal is a unit vector to this much, else it is rebuilt
#: a person's link with a fixed body this close behind the contact is clamped (quasi-static):
#: the tissue a clamp compresses is thinner than this, and a hand resting on a table is closer
CLAMP_GAP_M = 0.02
#: ... behind: the fixed body's point seen from the robot's within this angle of the normal
CLAMP_ANGLE_DEG = 45.0
_CLAMP_COS = math.cos(math.radians(CLAMP_ANGLE_DEG))


@dataclass(frozen=True)
class PflSetup:
    """What power and force limiting needs of a run: the robot's effective mass m_R (kg),
    the contact distance (m), and the speed (m/s) below which a robot point is at rest."""

    robot_mass_kg: float
    contact_distance_m: float
    rest_speed_m_s: float
    contact_area_cm2: float = DEFAULT_CONTACT_AREA_CM2  # of the robot's links not in contact_areas
    contact_areas: tuple[tuple[str, float], ...] = ()  # (robot link, cm^2)

    def area_cm2(self, robot_link: str) -> float:
        """The contact area (cm^2) of a contact with the robot's link ``robot_link``."""
        return dict(self.contact_areas).get(robot_link, self.contact_area_cm2)


@dataclass
class _Episode:
    """One contact: when it began, its worst pair so far and when that was."""

    since: float
    worst: PflContact
    worst_t: float
    robot_link: str
    clamped_by: str | None = None
    violated: bool = False


def _dot(a: Vector, b: Vector) -> float:
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def _normal(record: tuple) -> Vector | None:
    """The unit normal from the robot's point of a closest-point record to the person's."""
    n = record[7]
    if abs(_dot(n, n) - 1.0) > _UNIT_SLACK:
        n = tuple(a - b for a, b in zip(record[5], record[6]))
        length = math.sqrt(_dot(n, n))
        if length == 0.0:
            return None
        n = tuple(c / length for c in n)
    return n


class PflMonitor:
    """Contact episodes of the person's body (PyBullet body ``person``) with the robot's
    (``robot``), counted into ``stats`` and ``events``; ``names`` are each body's link names
    by index, ``closing_step_m`` how far the gap can close in one physics step; ``who``: with
    several people, ``{"person": NAME}``, added to each ``pfl_contact`` event, and ``figures``
    the person's own, counted besides the run's ``stats``."""

    def __init__(self, client: int, person: int, robot: RobotShapes, setup: PflSetup, names: dict[int, dict[int, str]],
                 closing_step_m: float, stats: RunStats, events: EventLog, who: dict[str, str] | None = None,
                 figures: PersonStats | None = None) -> None:
        self.client = client
        self.who = who or {}
        self._tallies = (stats,) if figures is None else (stats, figures)
        self.person = person
        self.robot = robot
        self.setup = setup
        self.distance = setup.contact_distance_m
        self.near = setup.contact_distance_m + closing_step_m  # closer: a contact may begin next step
        self.stats = stats
        self.events = events
        person_names = names[person]
        self._person_names = person_names
        # each (person link, robot link's name, kind)'s region and permissible speed, for m_R fixed at start-up
        self._limits: dict[tuple[int, str, str], PflContact] = {}
        self.fixed: dict[int, str] = {}  # the fixed bodies a person's link can be clamped against, by id
        self.person_link_indices = tuple(person_names)
        # the robot's side by name: the arm's links, and where the distances count them its tool and a part
        self.robot_link_names = (*names[robot.arm].values(), *((TOOL_NAME,) if robot.tool is not None else ()),
                                 *((PART_NAME,) if robot.held_part is not None else ()))
        self._person_links = sorted(link for link in person_names if link >= 0)
        self._frames: tuple[float, list[Frame]] | None = None  # (t, the person's link frames) near the robot
        self._episode: _Episode | None = None

    def step(self, t: float, posed: bool, separation: float) -> None:
        """After a physics step at ``t``: ``separation`` is the safety monitor's newest; ``posed``:
        the person's body was posed in this step."""
        if separation >= self.near and self._episode is None and self._frames is None:
            return
        frames = self._person_frames() if posed and separation < self.near else None
        if separation >= self.distance:
            self.finish(t)
        elif posed:
            self._judge(t, self.robot.records(self.person, self.distance), frames)
        if separation >= self.near:
            self._frames = None
        elif frames is not None:  # unposed, the body is where the kept frames have it
            self._frames = (t, frames)

    def finish(self, t: float) -> None:
        """End the contact in progress, if any, with its ``pfl_contact`` event at ``t``."""
        episode = self._episode
        if episode is None:
            return
        self._episode = None
        worst = episode.worst
        ratio = worst.ratio
        self.events.emit(t, "pfl_contact", since_t=round(episode.since, 6), at_t=round(episode.worst_t, 6),
                         person_link=worst.link, robot_link=episode.robot_link, region=worst.region,
                         speed_m_s=round(worst.speed, 6), permissible_m_s=round(worst.permissible_speed, 6),
                         ratio=round(ratio, 6) if math.isfinite(ratio) else None, violation=worst.violation,
                         contact=worst.kind, clamped_by=episode.clamped_by, **self.who)

    # --- one step of a contact ------------------------------------------------------
    def _judge(self, t: float, records: list, frames: list[Frame]) -> None:
        """Judge every pair of ``records`` whose robot point moves towards the person, the
        person's link ``frames`` now."""
        if not records:
            self.finish(t)
            return
        for record in records:
            assessed = self._assess(t, record, frames)
            if assessed is not None:
                self._count(t, *assessed, self.robot.name(record))

    def _assess(self, t: float, record: tuple, frames: list[Frame]) -> tuple[PflContact, str | None] | None:
        """The contact of one closest-point record, or None when its robot point does not move
        towards the person (faster than rest)."""
        n = _normal(record)
        if n is None:
            return None
        robot_velocity = point_velocity(self.robot, record)
        if _dot(robot_velocity, n) <= self.setup.rest_speed_m_s:
            return None
        person_velocity = self._person_point_velocity(t, record[3], record[5], frames)
        relative = tuple(a - b for a, b in zip(robot_velocity, person_velocity))
        clamped_by = self._clamped_by(record, n)
        limit = self.limit(record[3], self.robot.name(record), TRANSIENT if clamped_by is None else QUASI_STATIC)
        return PflContact(limit.link, limit.region, max(0.0, _dot(relative, n)), limit.permissible_speed,
                          limit.kind), clamped_by

    def limit(self, person_link: int, robot_link: str, kind: str = TRANSIENT) -> PflContact:
        """The region and permissible speed of a contact of ``kind`` between the person's link
        (by index) and the robot's (by name: an arm link, the tool or the carried part), with the
        robot link's contact area."""
        key = (person_link, robot_link, kind)
        if key not in self._limits:
            area = self.setup.area_cm2(robot_link)
            self._limits[key] = assess_contact(self._person_names[person_link], 0.0, self.setup.robot_mass_kg,
                                               area, kind)
        return self._limits[key]

    def _clamped_by(self, record: tuple, n: Vector) -> str | None:
        """The fixed body the person's link of ``record`` is clamped against (the module's
        test), or None: the contact is transient."""
        for body, name in self.fixed.items():
            for point in p.getClosestPoints(self.person, body, CLAMP_GAP_M, linkIndexA=record[3],
                                            physicsClientId=self.client):
                behind = tuple(a - b for a, b in zip(point[6], record[6]))
                length = math.sqrt(_dot(behind, behind))
                if length > 0.0 and _dot(behind, n) >= _CLAMP_COS * length:
                    return name
        return None

    def _count(self, t: float, contact: PflContact, clamped_by: str | None, robot_link: str) -> None:
        """Add a judged pair to the episode (starting one) and to the figures (the run's, and
        with several people the person's)."""
        episode = self._episode
        started = episode is None
        if started:
            episode = self._episode = _Episode(t, contact, t, robot_link, clamped_by)
        elif contact.ratio > episode.worst.ratio:
            episode.worst, episode.worst_t, episode.robot_link = contact, t, robot_link
            episode.clamped_by = clamped_by
        violated = contact.violation and not episode.violated
        episode.violated = episode.violated or contact.violation
        for tally in self._tallies:
            tally.pfl_contacts += started
            tally.pfl_violations += violated
            if contact.ratio > tally.pfl_worst_ratio or tally.pfl_worst_region is None:
                tally.pfl_worst_ratio = contact.ratio
                tally.pfl_worst_region = contact.region

    # --- point velocities ---------------------------------------------------------------
    def _person_frames(self) -> list[Frame]:
        """The person's link frames as posed, the base first (index link + 1)."""
        base = p.getBasePositionAndOrientation(self.person, physicsClientId=self.client)
        states = p.getLinkStates(self.person, self._person_links, physicsClientId=self.client)
        return [base] + [(state[0], state[1]) for state in states]

    def _person_point_velocity(self, t: float, link: int, point: Vector, frames: list[Frame]) -> Vector:
        """The velocity (m/s) at ``t`` of the person's material point at ``point`` on ``link``
        (the person's link ``frames`` now): from where the link's frame at the last posing near
        the robot had that point; 0 without such a posing."""
        if self._frames is None or self._frames[0] >= t:
            return (0.0, 0.0, 0.0)
        then_t, then = self._frames
        centre, turn = frames[link + 1]
        local = p.multiplyTransforms(*p.invertTransform(centre, turn), point, _NO_TURN)[0]
        before = p.multiplyTransforms(*then[link + 1], local, _NO_TURN)[0]
        return tuple((a - b) / (t - then_t) for a, b in zip(point, before))
