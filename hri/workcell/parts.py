"""Parts: the objects the robot and the person carry, the feeders that supply them, and conveyors.

A part is a small rigid box with real physics while it lies somewhere. While carried it is
attached: kinematic (massless), following the robot's tool or the right hand of the person who
took it every physics step (each person of a run has a hand of their own: :class:`PersonHand`). Released, it is put down on the surface below it (a ray test) and is dynamic
again. A *feeder* keeps a number of parts in an area (parts presented by an upstream process,
or a pallet that is restocked); a *conveyor* moves the parts lying on its belt and takes them
away at its end. Every pick, place and delivery is an event and a statistic.

A part put down on a belt rides it: it stays kinematic and moves with the belt's surface, by
the belt's speed times the physics step on every step, as a part held by a belt's friction
does, until it reaches the belt's end (delivered) or is picked up. A dynamic part on a belt
would cost the physics a box-on-box contact every step (about 3 µs each, measured), for
the same motion. Where a riding part is, is kept here and put into PyBullet only before
something looks at it (:meth:`PartManager.place_riders`: a query of this manager, a picture):
kinematic on a static belt, it pushes nothing, and putting it there every step cost 2 µs
per part and step.

The scenario's ``parts`` section configures this (:class:`~hri.workcell.layout.PartsSettings`, docs/scenarios.md); scenarios without it
have no parts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pybullet as p

from hri.base.errors import HriError
from hri.base.geometry import Area, Pose
from hri.workcell.layout import Furniture, PartsSettings

REFILL_EVERY = 120  # physics steps between feeder and sink checks
PARKING = (1000.0, 0.0, -100.0)  # where the bodies of parts taken away wait, one metre apart, out of every view and query


def _inset(area: Area, margin: float) -> Area:
    """The area shrunk by ``margin``, so a part placed anywhere in it lies wholly inside."""
    inner = area.polygon.buffer(-margin, join_style="mitre")
    return Area(list(inner.exterior.coords)[:-1], area.name) if not inner.is_empty else area


@dataclass(frozen=True)
class PersonHand:
    """A person as the parts see them: their body, their pelvis pose, and their right hand's
    frame (position and quaternion; one object per posing of the body)."""

    body: int
    pose: Callable[[], Pose]
    frame: Callable[[], tuple]


@dataclass
class Part:
    body_id: int
    number: int
    holder: str | None = None  # "robot", "person" or None
    carrier: str | None = None  # held by a person: whose hand (their name)
    grip_offset: tuple = ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0))
    placed_at: float | None = None  # simulated time it was last put down
    surface: str = "floor"  # what it stands on (for a stack: what the stack stands on)
    riding: "Ride | None" = None  # on a belt: moves with it every physics step
    followed: object = None  # the holder's frame the part was last put at


@dataclass
class Feeder:
    area: Area
    surface_z: float
    keep: int = 1
    min_spacing: float = 0.1


@dataclass
class Sink:
    """Parts left in ``area`` for ``after_s`` seconds are taken away (the next process)."""

    area: Area
    after_s: float


@dataclass
class Conveyor:
    name: str
    body_id: int
    center: tuple[float, float]
    half_length: float
    half_width: float
    top_z: float
    direction: tuple[float, float]
    speed: float


@dataclass
class Ride:
    """A part on a belt: where it is, kept here so that moving it needs no query."""

    conveyor: Conveyor
    position: list[float]
    orientation: tuple[float, float, float, float]
    along: float  # from the belt's centre along its direction


@dataclass
class PersonParts:
    """One person's part tallies: the parts they took, and put down by surface."""

    taken: int = 0
    put: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"taken": self.taken, "put": dict(self.put)}


@dataclass
class PartCounts:
    """The run's part tallies; the people's in all (``taken_by_person``, ``put_by_person``) and
    each person's (``by_person``, by name)."""

    picked_by_robot: int = 0
    placed_by_robot: dict[str, int] = field(default_factory=dict)
    taken_by_person: int = 0
    put_by_person: dict[str, int] = field(default_factory=dict)
    delivered: int = 0
    collected: int = 0
    by_person: dict[str, PersonParts] = field(default_factory=dict)

    def of(self, person: str) -> PersonParts:
        """``person``'s tallies (made at their first part)."""
        return self.by_person.setdefault(person, PersonParts())


class PartManager:
    """All parts of one run: spawning, carrying, putting down, conveying."""

    def __init__(self, client: int, settings: PartsSettings, areas: dict[str, Area],
                 furniture: dict[str, int], furniture_specs: Mapping[str, Furniture], rng: np.random.Generator,
                 events: Callable[..., None]):
        self.client = client
        self.dt = float(p.getPhysicsEngineParameters(physicsClientId=client)["fixedTimeStep"])
        self.size = settings.size
        self.half = tuple(v / 2 for v in self.size)
        self.mass = settings.mass
        self.color = settings.color
        self.grasp_distance = settings.grasp_distance
        self.reach = settings.person_reach
        self.put_distance = settings.person_put_distance
        self.put_spread = settings.person_put_spread
        self.rng = rng
        self.events = events
        self.surface_names = {body: name for name, body in furniture.items()}
        self.feeders = [Feeder(_inset(areas[f.area], max(self.half[:2])), f.surface_z, f.keep, f.min_spacing)
                        for f in settings.feeders]
        self._steps = 0
        self.sinks = [Sink(areas[k.area], k.after_s) for k in settings.sinks]
        self.conveyors = [self._conveyor(furniture[name], piece)
                          for name, piece in furniture_specs.items() if piece.kind == "conveyor"]
        self.parts: list[Part] = []
        self.counts = PartCounts()
        self._numbers = 0
        self._parked: list[int] = []  # bodies of parts taken away, for new parts (_remove, _new_body)
        self._riders_moved = False  # a riding part moved since PyBullet was told (place_riders)
        self._shape = p.createCollisionShape(p.GEOM_BOX, halfExtents=self.half, physicsClientId=client)
        self._visual = p.createVisualShape(p.GEOM_BOX, halfExtents=self.half, rgbaColor=self.color,
                                           physicsClientId=client)
        self.robot = None
        self.hands: dict[str, PersonHand] = {}  # each person's, by name, the first the default
        self._bodies: set[int] = set()  # the people's bodies, which nothing is put down on
        self.now: Callable[[], float] = lambda: 0.0

    @staticmethod
    def _conveyor(body: int, piece: Furniture) -> Conveyor:
        sx, sy, sz = piece.size
        yaw = math.radians(piece.yaw_deg)
        return Conveyor(piece.name, body, piece.center, sx / 2, sy / 2, sz, (math.cos(yaw), math.sin(yaw)),
                        piece.speed)

    def connect(self, robot, people: Mapping[str, PersonHand], now: Callable[[], float]) -> None:
        """Give the manager the robot (its tool) and the people (by name, in the scenario's
        order) once they exist."""
        self.robot = robot
        self.hands = dict(people)
        self._bodies = {hand.body for hand in self.hands.values()}
        self.now = now
        self.refill()

    def _person(self, person: str | None) -> str:
        """The name of the person a request is for (None: the first); HriError for nobody's."""
        if person is None:
            return next(iter(self.hands))
        if person not in self.hands:
            raise HriError(f"parts: no person {person!r} (people: {', '.join(self.hands)})")
        return person

    def _who(self, person: str) -> dict[str, str]:
        """The fields that name the person in an event, with several people."""
        return {"person": person} if len(self.hands) > 1 else {}

    # --- queries ----------------------------------------------------------------------
    def position(self, part: Part) -> tuple[float, float, float]:
        self.place_riders()
        return p.getBasePositionAndOrientation(part.body_id, physicsClientId=self.client)[0]

    def place_riders(self) -> None:
        """Put the parts riding a belt where they are now into PyBullet, as every physics step
        would have (call before anything reads them from PyBullet: a query, a picture)."""
        if not self._riders_moved:
            return
        self._riders_moved = False
        for part in self.parts:
            ride = part.riding
            if ride is not None:
                p.resetBasePositionAndOrientation(part.body_id, ride.position, ride.orientation,
                                                  physicsClientId=self.client)

    def free_parts_in(self, area: Area) -> list[Part]:
        return [part for part in self.parts if part.holder is None and area.contains(*self.position(part)[:2])]

    def find(self, area: Area) -> Pose | None:
        """The top centre of the oldest free part lying in ``area`` (null orientation), or None."""
        parts = self.free_parts_in(area)
        if not parts:
            return None
        x, y, z = self.position(parts[0])
        return Pose(x, y, z + self.half[2], 0.0, 0.0, 0.0, 0.0)

    def holding(self, holder: str, carrier: str | None = None) -> Part | None:
        """The part ``holder`` ("robot", "person") holds; a person's: ``carrier``'s (None: anyone's)."""
        return next((part for part in self.parts
                     if part.holder == holder and (carrier is None or part.carrier == carrier)), None)

    # --- the robot's gripper --------------------------------------------------------------
    def robot_part_body(self) -> int | None:
        """The body of the part the robot holds (None: none): part of the robot for the safety
        functions (:mod:`hri.run.robot_shapes`)."""
        part = self.holding("robot")
        return None if part is None else part.body_id

    def follow_robot(self) -> None:
        """Put the part the robot holds where the tool frame has it now: the next physics step
        puts it there first (:meth:`step`), so this only does it earlier, for a distance query."""
        part = self.holding("robot")
        if part is not None:
            self._follow(part)

    def reach_beyond_tool(self) -> float:
        """How far (m) a point of a part the robot holds can be from its tool frame: the part's
        diagonal beyond the grasp distance (its top within that of the tool when grasped)."""
        return self.grasp_distance + math.hypot(*self.size)

    def robot_grasp(self) -> bool:
        """Attach the free part whose top is at the tool (within grasp_distance); False if none."""
        if self.holding("robot") is not None:
            return True
        tool = self.robot.tool_pose()
        best = self._nearest(np.array(tool.position) - np.array([0.0, 0.0, self.half[2]]), self.grasp_distance)
        if best is None:
            return False
        self._attach(best, "robot", tool.position, tool.orientation)
        self.counts.picked_by_robot += 1
        self.events("part_picked", part=best.number, by="robot")
        return True

    def robot_release(self) -> str | None:
        """Put the held part down below the tool; the surface's name, or None if nothing held."""
        part = self.holding("robot")
        return None if part is None else self._release(part, self.position(part), self.counts.placed_by_robot)

    # --- the people's hands -----------------------------------------------------------------
    def person_grab(self, area: Area | None, person: str | None = None) -> bool:
        """Take the free part nearest to ``person``'s right hand (None: the first person's),
        within reach (and in ``area``), into that hand; True if the hand now holds a part."""
        name = self._person(person)
        if self.holding("person", name) is not None:
            return True
        hand = self.hands[name].frame()
        candidates = self.parts if area is None else self.free_parts_in(area)
        best = self._nearest(np.array(hand[0]), self.reach, candidates)
        if best is None:
            return False
        self._attach(best, "person", *hand)
        best.carrier = name
        best.grip_offset = ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0))  # in the hand, not where it lay
        self.counts.taken_by_person += 1
        self.counts.of(name).taken += 1
        self.events("part_picked", part=best.number, by="person", **self._who(name))
        return True

    def person_release(self, person: str | None = None) -> str | None:
        """Put the part in ``person``'s hand (None: the first person's) down where the reach
        ends: ``person_put_distance`` ahead of the pelvis, at the hand's height, on the surface
        below (a shelf board, a table)."""
        name = self._person(person)
        part = self.holding("person", name)
        if part is None:
            return None
        hand = self.hands[name]
        pose = hand.pose()
        hand_z = hand.frame()[0][2]
        side = self.rng.uniform(-self.put_spread, self.put_spread)  # not always the same spot
        ahead, left = (math.cos(pose.yaw), math.sin(pose.yaw)), (-math.sin(pose.yaw), math.cos(pose.yaw))
        at = (pose.x + self.put_distance * ahead[0] + side * left[0],
              pose.y + self.put_distance * ahead[1] + side * left[1], hand_z)
        surface = self._release(part, at, self.counts.put_by_person)
        put = self.counts.of(name).put
        put[surface] = put.get(surface, 0) + 1
        return surface

    # --- per physics step ------------------------------------------------------------------
    def step(self) -> None:
        for part in tuple(self.parts):  # a copy: a part at its belt's end leaves the list
            if part.holder is not None:
                self._follow(part)
            elif part.riding is not None:
                self._ride(part)
        self._steps += 1
        if self._steps % REFILL_EVERY == 0:  # cheap enough twice a second, not every step
            for sink in self.sinks:
                self._collect(sink)
            self.refill()

    def refill(self) -> None:
        """Feeders top their areas up (called when a part leaves one)."""
        for feeder in self.feeders:
            missing = feeder.keep - len(self.free_parts_in(feeder.area))
            for _ in range(max(0, missing)):
                self._spawn(feeder)

    # --- internals --------------------------------------------------------------------
    def _nearest(self, point: np.ndarray, limit: float, candidates: list[Part] | None = None) -> Part | None:
        best, best_distance = None, limit
        for part in self.parts if candidates is None else candidates:
            if part.holder is not None:
                continue
            distance = float(np.linalg.norm(np.array(self.position(part)) - point))
            if distance <= best_distance:
                best, best_distance = part, distance
        return best

    def _spawn(self, feeder: Feeder) -> None:
        # Held parts count too: a feeder refills when a part is gripped, which is still there.
        taken = [xy for xy in (self.position(part)[:2] for part in self.parts) if feeder.area.contains(*xy)]
        for _ in range(50):
            x, y = feeder.area.sample(self.rng)
            if all(math.hypot(x - tx, y - ty) >= feeder.min_spacing for tx, ty in taken):
                break
        body = self._new_body((x, y, feeder.surface_z + self.half[2] + 1e-3))
        self._let_sleep(body)
        self._numbers += 1
        surface = self._surface_name(self._surface_below(x, y, feeder.surface_z + 0.01)[0])
        part = Part(body, self._numbers, surface=surface)
        self.parts.append(part)
        belt = self._belt(surface)
        if belt is not None:
            self._start_ride(part, belt, [x, y, feeder.surface_z + self.half[2]], (0.0, 0.0, 0.0, 1.0))
        if self.robot is not None:  # the gripper model has no fingers: parts never push the arm
            for link in range(-1, p.getNumJoints(self.robot.body_id, physicsClientId=self.client)):
                p.setCollisionFilterPair(self.robot.body_id, body, link, -1, 0, physicsClientId=self.client)
        self.events("part_supplied", part=self._numbers, x=round(x, 4), y=round(y, 4))

    def _attach(self, part: Part, holder: str, position, orientation) -> None:
        inverse = p.invertTransform(position, orientation)
        self.place_riders()
        part_pos, part_orn = p.getBasePositionAndOrientation(part.body_id, physicsClientId=self.client)
        part.grip_offset = p.multiplyTransforms(*inverse, part_pos, part_orn)
        part.holder, part.riding, part.followed = holder, None, None
        p.changeDynamics(part.body_id, -1, mass=0.0, physicsClientId=self.client)  # kinematic while carried
        self.refill()

    def _follow(self, part: Part) -> None:
        if part.holder == "robot":
            frame = self.robot.tool_frame()
        else:
            frame = self.hands[part.carrier].frame()  # the same object until the person is posed again
            if frame is part.followed:
                return
            part.followed = frame
        position, orientation = p.multiplyTransforms(*frame, *part.grip_offset)
        p.resetBasePositionAndOrientation(part.body_id, position, orientation, physicsClientId=self.client)

    def _release(self, part: Part, at: tuple[float, float, float], tally: dict[str, int]) -> str:
        x, y, z = at
        orientation = p.getBasePositionAndOrientation(part.body_id, physicsClientId=self.client)[1]
        surface_body, surface_z = self._surface_below(x, y, z)
        name = self._surface_name(surface_body)
        upright = p.getQuaternionFromEuler((0.0, 0.0, p.getEulerFromQuaternion(orientation)[2]))
        belt = self._belt(name)
        if belt is not None:
            self._start_ride(part, belt, [x, y, surface_z + self.half[2]], upright)
        else:
            p.resetBasePositionAndOrientation(part.body_id, (x, y, surface_z + self.half[2] + 1e-3), upright,
                                              physicsClientId=self.client)
            p.changeDynamics(part.body_id, -1, mass=self.mass, physicsClientId=self.client)
            self._let_sleep(part.body_id)
        holder, part.holder, part.placed_at, part.surface = part.holder, None, self.now(), name
        who = {} if part.carrier is None else self._who(part.carrier)
        part.carrier = None
        tally[name] = tally.get(name, 0) + 1
        self.events("part_placed", part=part.number, by=holder, surface=name, x=round(x, 4), y=round(y, 4),
                    z=round(surface_z, 4), **who)
        return name

    def _let_sleep(self, body: int) -> None:
        """A part at rest is put to sleep by Bullet: ~3 us instead of ~30 us per physics step."""
        p.changeDynamics(body, -1, activationState=p.ACTIVATION_STATE_ENABLE_SLEEPING, physicsClientId=self.client)

    def _surface_name(self, body: int) -> str:
        below = next((part for part in self.parts if part.body_id == body), None)
        if below is not None:
            return below.surface
        return self.surface_names.get(body, "floor")

    def _surface_below(self, x: float, y: float, z: float) -> tuple[int, float]:
        """The first body below (x, y, z) that is neither the robot, a person nor a carried part."""
        skip = self._bodies | {self.robot.body_id} | {q.body_id for q in self.parts if q.holder is not None}
        top = z
        self.place_riders()  # a part may be put down on a riding one
        for _ in range(8):
            body, _, _, (_, _, hit_z), _ = p.rayTest((x, y, top), (x, y, -1.0), physicsClientId=self.client)[0]
            if body < 0:
                return -1, 0.0
            if body not in skip:
                return body, hit_z
            top = hit_z - 1e-4
        return -1, 0.0

    def _new_body(self, position: tuple[float, float, float]) -> int:
        """A part's body at rest at ``position``: one taken away earlier (:meth:`_remove`), as a
        new one would be, or a new one."""
        if not self._parked:
            return p.createMultiBody(self.mass, self._shape, self._visual, position, useMaximalCoordinates=True,
                                     physicsClientId=self.client)
        body = self._parked.pop()
        p.resetBasePositionAndOrientation(body, position, (0.0, 0.0, 0.0, 1.0), physicsClientId=self.client)
        p.resetBaseVelocity(body, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), physicsClientId=self.client)
        p.changeDynamics(body, -1, mass=self.mass, physicsClientId=self.client)
        # dynamic again, and awake with its sleep timer reset, as a new body is
        p.changeDynamics(body, -1, activationState=p.ACTIVATION_STATE_WAKE_UP, physicsClientId=self.client)
        return body

    def _remove(self, part: Part) -> None:
        """Take a part out of the world. Its body is parked, static and out of everyone's reach,
        for the next part a feeder puts out: PyBullet keeps about 1 KB of every body it removes,
        and collaboration takes away some 400 parts an hour (0.4 MB an hour of a long run)."""
        body = part.body_id
        p.changeDynamics(body, -1, mass=0.0, physicsClientId=self.client)
        p.resetBasePositionAndOrientation(body, (PARKING[0] + body, PARKING[1], PARKING[2]), (0.0, 0.0, 0.0, 1.0),
                                          physicsClientId=self.client)
        self._parked.append(body)
        self.parts.remove(part)

    def _collect(self, sink: Sink) -> None:
        now = self.now()
        for part in self.free_parts_in(sink.area):
            if part.placed_at is not None and now - part.placed_at >= sink.after_s:
                self._remove(part)
                self.counts.collected += 1
                self.events("part_collected", part=part.number)

    def _belt(self, surface: str) -> Conveyor | None:
        return next((c for c in self.conveyors if c.name == surface), None)

    def _start_ride(self, part: Part, conveyor: Conveyor, position: list[float], orientation) -> None:
        """``part`` lies on ``conveyor``'s surface at ``position``: kinematic, it rides from here."""
        dx, dy = conveyor.direction
        along = (position[0] - conveyor.center[0]) * dx + (position[1] - conveyor.center[1]) * dy
        part.riding = Ride(conveyor, position, tuple(orientation), along)
        p.changeDynamics(part.body_id, -1, mass=0.0, physicsClientId=self.client)
        p.resetBasePositionAndOrientation(part.body_id, position, orientation, physicsClientId=self.client)

    def _ride(self, part: Part) -> None:
        """One physics step on the belt (PyBullet is told in :meth:`place_riders`); delivered
        (removed) at the belt's end."""
        ride = part.riding
        conveyor = ride.conveyor
        advance = conveyor.speed * self.dt
        ride.along += advance
        if ride.along >= conveyor.half_length - self.half[0]:
            self._remove(part)
            self.counts.delivered += 1
            self.events("part_delivered", part=part.number, conveyor=conveyor.name)
            return
        ride.position[0] += conveyor.direction[0] * advance
        ride.position[1] += conveyor.direction[1] * advance
        self._riders_moved = True
