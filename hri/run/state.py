"""The per-step state of a run as its outputs read it: one typed, read-only snapshot.

Every output of a run (``trajectory.csv``, the video's and the live window's overlay, the MCAP
file) reads a run through these frozen dataclasses, not through the simulation's own objects.
:class:`hri.run.sim.RunView` makes them only when asked, at most once per physics step (and
again only when events came after it was made), so a run nobody watches pays nothing:

- :class:`StepState` (``RunView.state()``): the simulated time, the robot's joints and
  motion, each person's pelvis (root) pose, zone and separation, the safety state
  (:class:`SafetyState`), the events of the step and the node statuses of each tree that
  changed in it;
- :class:`StepNews` (``RunView.news()``): only the step's events and tree changes, which cost
  nothing to give (an output that logs every event asks this every step);
- :class:`BodyPoses` (``RunView.bodies()``): the world frame of every robot link and of its
  tool, every link of each person's body, and every part: costlier (one PyBullet query per
  body), so asked apart; ``RunView.robot_frames()`` gives the robot's as functions of its
  joints (:func:`robot_link_frames`), for a reader that need not read them each time;
- :class:`WorldShapes` (``RunView.shapes()``, once a run): the collision shapes of the room,
  the furniture, the robot's links, the people's links and a part, in their frames.

The people's root pose is where the safety monitor sees the pelvis after the step (the body
as posed, or where a posing would put it: the person is posed at the person rate); their link
poses are those of the body as last posed, at most one person step old.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Callable, Mapping

import numpy as np
import pybullet as p

from hri.base.geometry import Pose
from hri.kinematics.batched_chain import BatchedChain
from hri.kinematics.chain import Chain
from hri.kinematics.link_frames import LinkFrames
from hri.kinematics.transforms import pose_matrix
from hri.run.monitor import strictest, zone_of
from hri.base.bodies import link_names

#: :class:`hri.run.sim.Simulation` and its ``PersonRun``, which this module reads; not imported:
#: the simulation imports this module
Simulation = PersonRun = Any


@dataclass(frozen=True)
class RobotState:
    """The arm after a step: joint positions (rad) and velocities (rad/s) in
    :attr:`joint_names` order, the motion status, the velocity fraction the trees set and the
    cap the safety function put on it (its link and tool frames: :class:`BodyPoses`)."""

    joint_names: tuple[str, ...]
    positions: tuple[float, ...]
    velocities: tuple[float, ...]
    status: str
    velocity_fraction: float
    cap: float


@dataclass(frozen=True)
class PersonState:
    """One person after a step: the pelvis (root) pose, heading yaw-only, as the safety monitor
    sees it; their zone (before the first step: the zone at the root pose) and newest
    separation from the robot (m)."""

    name: str
    root: Pose
    zone: str
    separation_m: float


@dataclass(frozen=True)
class SafetyState:
    """The safety function after a step: the strictest zone of any person, the velocity fraction
    the trees set and the cap on it (1 without SSM/PFL), the measured joint speed fraction and
    fastest point speed (m/s), the smallest separation (m), S_p (m) at the measured speed (None
    in zones mode) and whether the robot is held in a protective stop (cap 0, an SSM stop, or a
    person in the stop zone)."""

    zone: str
    velocity_fraction: float
    cap: float
    speed_fraction: float
    fastest_point_m_s: float
    separation_m: float
    required_m: float | None
    stopped: bool


@dataclass(frozen=True)
class StepState:
    """One physics step of a run (step 0: the state after set-up): see the module docstring.
    ``events`` are those of the step (at step 0 those of set-up; at the end, also the closing
    ones); ``trees`` maps each tree whose node statuses changed in a tick of the step to those
    changes: a node's index in pre-order to its status after the tick (the step's
    ``tree_status`` events, which ``hri render --run`` replays: :func:`tree_changes`)."""

    t: float
    step: int
    robot: RobotState
    people: tuple[PersonState, ...]
    safety: SafetyState
    events: tuple[Mapping[str, Any], ...]
    trees: Mapping[str, Mapping[int, str]]


@dataclass(frozen=True)
class StepNews:
    """What happened in a step: its events and its trees' changes (as in :class:`StepState`)."""

    step: int
    events: tuple[Mapping[str, Any], ...]
    trees: Mapping[str, Mapping[int, str]]


@dataclass(frozen=True)
class Shape:
    """A collision shape in its frame: ``kind`` ``box`` (``size`` the edges), ``sphere``
    (``size`` the diameter thrice) or ``cylinder`` (``size``: diameter, diameter, height; the
    axis along z), centred at ``pose``."""

    kind: str
    size: tuple[float, float, float]
    pose: Pose


@dataclass(frozen=True)
class WorldShapes:
    """The collision shapes of a run's world: the fixed bodies' (room, furniture) in the world
    frame; the robot's by link name and the people's by name and link name (the frames of
    :class:`BodyPoses`); the shape of every part, in the part's frame."""

    fixed: tuple[Shape, ...]
    robot: Mapping[str, tuple[Shape, ...]]
    people: Mapping[str, Mapping[str, tuple[Shape, ...]]]
    part: tuple[Shape, ...]


#: a world frame as PyBullet gives it: ``((x, y, z), (qx, qy, qz, qw))`` (plain tuples, not
#: :class:`Pose`: a sample of every link makes dozens, 30 times a simulated second)
Frame = tuple[tuple[float, float, float], tuple[float, float, float, float]]


@dataclass(frozen=True)
class BodyPoses:
    """World frames after a step: the robot's links by name (``tool`` the tool frame, and
    ``tool_body`` the tool's own body where it has one), each person's links by name
    (``base`` the pelvis), each part's by number."""

    robot: Mapping[str, Frame]
    people: Mapping[str, Mapping[str, Frame]]
    parts: Mapping[int, Frame]


NO_CHANGES: Mapping[str, Mapping[int, str]] = MappingProxyType({})  # the trees of a step with none


def tree_changes(events: tuple[Mapping[str, Any], ...]) -> Mapping[str, Mapping[int, str]]:
    """The node statuses the ``tree_status`` events among ``events`` changed, by tree (a tree
    ticked twice in a step, as none is: the later status of a node)."""
    changes: dict[str, dict[int, str]] = {}
    for event in events:
        if event["event"] == "tree_status":
            tree = changes.setdefault(event["tree"], {})
            tree.update((int(index), status) for index, status in event["changes"].items())
    return MappingProxyType(changes) if changes else NO_CHANGES


def _pose(position: Any, orientation: Any) -> Pose:
    """A pose from PyBullet's position and quaternion (tuples of floats)."""
    return Pose(*position, *orientation)


def person_root(person: PersonRun, t: float, several: bool) -> Pose:
    """The pelvis at ``t``: as posed, or where a posing would put it. Alone, as posed by the
    step itself; one of several, also as a separation query posed it after the step (how
    trajectory.csv has always had them: the two differ in the last digits)."""
    posed = person.monitor.posed if several else person.monitor.posed_in_step
    return person.plugin.pose if posed else person.plugin.pose_at(t)


def _person(sim: Simulation, person: PersonRun, t: float) -> PersonState:
    root = person_root(person, t, sim.several)
    zone = person.monitor.zone or zone_of(sim.scenario.zones, root.x, root.y)
    return PersonState(person.name, root, zone, float(person.monitor.last_separation))


def _robot(sim: Simulation) -> RobotState:
    robot = sim.robot
    states = p.getJointStates(robot.body_id, list(robot.model.indices), physicsClientId=sim.client)
    return RobotState(tuple(robot.model.names), tuple(float(s[0]) for s in states),
                      tuple(float(s[1]) for s in states), robot.status.value,
                      float(robot.velocity_fraction), float(robot.safety_cap))


def _required_m(sim: Simulation, fraction: float) -> float | None:
    """S_p at the robot's measured speed fraction, by the SSM/PFL terms (None in zones mode)."""
    terms = getattr(sim.ssm, "terms", None)
    return None if terms is None else float(terms.required_m(fraction))


def _stopped(sim: Simulation, zone: str) -> bool:
    return sim.robot.safety_cap == 0.0 or bool(getattr(sim.ssm, "stopped", False)) or zone == "stop"


def capture_step(sim: Simulation, events: tuple[Mapping[str, Any], ...],
                 trees: Mapping[str, Mapping[int, str]]) -> StepState:
    """The :class:`StepState` of ``sim`` now. Reads only: the robot's speeds are the monitor's
    once-a-step measurement (:meth:`~hri.run.monitor.SafetyMonitor.measured_speeds`, which
    leaves the statistics alone), taken before anything asks PyBullet for link frames (a
    forward kinematics update changes the link velocities PyBullet reports in the last digits)."""
    t = sim.now()
    fraction, fastest = sim.monitor.measured_speeds()  # before the tool's pose: a kinematics update
    people = tuple(_person(sim, person, t) for person in sim.people)
    zone = strictest(person.zone for person in people)
    robot = _robot(sim)
    safety = SafetyState(zone, robot.velocity_fraction, robot.cap, float(fraction), float(fastest),
                         min(person.separation_m for person in people), _required_m(sim, fraction),
                         _stopped(sim, zone))
    return StepState(t, sim.step_count, robot, people, safety, events, trees)


def status_lines(state: StepState) -> list[str]:
    """The state in a few words, for overlays: simulated time, each person's zone, the robot's
    motion and velocity fraction."""
    return [f"t = {state.t:.1f} s", *(f"{person.name}: {person.zone} zone" for person in state.people),
            f"robot: {state.robot.status}, velocity {state.robot.velocity_fraction:.0%}"]


def trajectory_row(state: StepState, several: bool) -> tuple:
    """A ``trajectory.csv`` row (:class:`hri.run.stats.TrajectoryLog`): the first person's
    pelvis, the strictest zone, the robot's speeds, the smallest separation; with several
    people each one's pelvis, zone and separation; then the robot's joint positions."""
    first, safety = state.people[0], state.safety
    row = [round(state.t, 6), first.root.x, first.root.y, first.root.yaw, safety.zone, safety.velocity_fraction,
           safety.speed_fraction, safety.fastest_point_m_s, safety.separation_m]
    if several:
        for person in state.people:
            row += [person.root.x, person.root.y, person.root.yaw, person.zone, person.separation_m]
    return (*row, *state.robot.positions)


def _links(client: int, body: int, names: Mapping[int, str], kinematics: bool = True) -> Mapping[str, Frame]:
    """``body``'s link frames by name; ``kinematics``: PyBullet's forward kinematics first (a
    body that is posed, a person's, has its frames from the posing itself: asking for them
    again cost a third of a sample in a run)."""
    frames = {names[-1]: p.getBasePositionAndOrientation(body, physicsClientId=client)}
    links = [link for link in names if link >= 0]
    if links:
        for link, state in zip(links, p.getLinkStates(body, links, computeForwardKinematics=int(kinematics),
                                                      physicsClientId=client)):
            frames[names[link]] = (state[4], state[5])
    return MappingProxyType(frames)


class BodyNames:
    """The link names of the robot's and the people's bodies, read once per run, and each
    person's link frames as last read, with the posing they were read after (a body is posed at
    the person rate: a sample between two posings reads nothing)."""

    def __init__(self, sim: Simulation) -> None:
        self.robot = link_names(sim.client, sim.robot.body_id)
        self.people = {person.name: link_names(sim.client, person.plugin.body_id) for person in sim.people}
        self.read: dict[str, tuple[int, Mapping[str, Frame]]] = {}

    def person_links(self, client: int, person: PersonRun) -> Mapping[str, Frame]:
        """``person``'s link frames now (read again only after a posing)."""
        posings, last = self.read.get(person.name, (-1, None))
        if posings != person.plugin.posings:
            last = _links(client, person.plugin.body_id, self.people[person.name], kinematics=False)
            self.read[person.name] = (person.plugin.posings, last)
        return last


def capture_bodies(sim: Simulation, names: BodyNames, robot_too: bool = True) -> BodyPoses:
    """The :class:`BodyPoses` of ``sim`` now (a part riding a belt where the parts' own state
    has it: PyBullet is told only before a query or a picture); without ``robot_too`` the
    robot's frames are left out (a reader that has them from :func:`robot_link_frames`)."""
    client = sim.client
    robot: dict[str, Frame] = {}
    if robot_too:
        robot.update(_links(client, sim.robot.body_id, names.robot))
        robot["tool"] = sim.robot.tool_frame()
        tool_body = getattr(sim.robot, "tool_body", None)
        if tool_body is not None:
            robot["tool_body"] = p.getBasePositionAndOrientation(tool_body, physicsClientId=client)
    people = {person.name: names.person_links(client, person) for person in sim.people}
    parts = {part.number: (tuple(part.riding.position), part.riding.orientation) if part.riding is not None
             else p.getBasePositionAndOrientation(part.body_id, physicsClientId=client) for part in sim.parts.parts}
    return BodyPoses(MappingProxyType(robot), MappingProxyType(people), MappingProxyType(parts))


def _rigid_frames(sim: Simulation, names: BodyNames, chain: Chain, batched: BatchedChain) -> list[int] | None:
    """Per robot link of ``names`` (base first), the revolute frame of ``batched`` it is rigid
    with (-1: the base); None where a link moves with a joint outside the chain."""
    body, client = sim.robot.body_id, sim.client
    rigid_of = {chain.link_names[0]: -1, **{link: frame for link, (frame, _offset) in
                                             zip(chain.link_names[1:], batched.fixed_after)}}

    def up(link: int, to: Callable[[int], bool]) -> int | None:
        """From ``link`` up through fixed joints to the first link ``to`` takes (None: a
        joint that moves is in the way)."""
        while not to(link):
            info = p.getJointInfo(body, link, physicsClientId=client)
            if info[2] != p.JOINT_FIXED:
                return None
            link = info[16]
        return link

    base = {name: index for index, name in names.robot.items()}.get(chain.link_names[0], -1)
    if up(base, lambda link: link == -1) is None:
        return None  # the chain's base moves against the body's base
    found = [up(link, lambda link: link == -1 or names.robot[link] in rigid_of) for link in names.robot]
    rigid = [None if link is None else rigid_of.get(names.robot[link], -1) for link in found]
    return None if None in rigid else rigid  # type: ignore[return-value]


def robot_link_frames(sim: Simulation, names: BodyNames) -> LinkFrames | None:
    """The robot's frames of :func:`capture_bodies` (its links by name, ``tool``, ``tool_body``)
    as functions of its joint positions, calibrated on the frames PyBullet gives now; None
    where a link moves with a joint outside the arm's chain (a hand's fingers) or the chain
    has other joints than revolute and fixed ones: then they are read."""
    robot, client = sim.robot, sim.client
    chain = robot.arm_model.chain()
    try:
        batched = BatchedChain(chain.joints, np.eye(4))
    except ValueError:
        return None
    rigid = _rigid_frames(sim, names, chain, batched)
    if rigid is None:
        return None
    frames = _links(client, robot.body_id, names.robot)
    world = [pose_matrix(frames[name]) for name in names.robot.values()]
    tool = names.robot[robot.model.tool_link]
    tool_world = world[list(names.robot).index(robot.model.tool_link)]
    q = robot.joint_positions()
    batched.place(q, *batched.fixed_after[chain.link_names.index(tool) - 1], tool_world)
    tools = ["tool"] + (["tool_body"] if getattr(robot, "tool_body", None) is not None else [])
    tool_rigid = rigid[list(names.robot).index(robot.model.tool_link)]
    return LinkFrames.calibrated(batched, q, [*names.robot.values(), *tools], rigid + [tool_rigid] * len(tools),
                                 world + [tool_world] * len(tools))


def _shapes_of(client: int, body: int, link: int, frame: tuple | None = None) -> tuple[Shape, ...]:
    """``body``'s ``link``'s collision shapes in the link's frame (with ``frame``, the body's
    base at that world pose: in the world). A capsule is a cylinder with a sphere at each end;
    meshes and planes are left out (no run's body has them as collision shapes)."""
    shapes = []
    # a link's shapes are given in its inertial frame; the link's frame (getLinkState's
    # worldLinkFrame, BodyPoses') has that frame at its local inertial pose. A base's shapes and
    # pose (getBasePositionAndOrientation) are both in its inertial frame already.
    inertial = p.getDynamicsInfo(body, link, physicsClientId=client)[3:5] if link >= 0 else None
    for record in p.getCollisionShapeData(body, link, physicsClientId=client):
        kind, dims, position, orientation = record[2], record[3], record[5], record[6]
        if inertial is not None:
            position, orientation = p.multiplyTransforms(inertial[0], inertial[1], position, orientation)
        if frame is not None:
            position, orientation = p.multiplyTransforms(frame[0], frame[1], position, orientation)
        centre = _pose(position, orientation)
        if kind == p.GEOM_BOX:
            shapes.append(Shape("box", (float(dims[0]), float(dims[1]), float(dims[2])), centre))
        elif kind == p.GEOM_SPHERE:
            shapes.append(Shape("sphere", (2.0 * dims[0],) * 3, centre))
        elif kind in (p.GEOM_CYLINDER, p.GEOM_CAPSULE):
            height, diameter = float(dims[0]), 2.0 * float(dims[1])
            shapes.append(Shape("cylinder", (diameter, diameter, height), centre))
            if kind == p.GEOM_CAPSULE:
                for end in (-height / 2.0, height / 2.0):
                    tip, _ = p.multiplyTransforms(position, orientation, (0.0, 0.0, end), (0.0, 0.0, 0.0, 1.0))
                    shapes.append(Shape("sphere", (diameter,) * 3, _pose(tip, orientation)))
    return tuple(shapes)


def _body_shapes(client: int, body: int, names: Mapping[int, str]) -> Mapping[str, tuple[Shape, ...]]:
    return MappingProxyType({name: _shapes_of(client, body, link) for link, name in names.items()})


def capture_shapes(sim: Simulation, names: BodyNames) -> WorldShapes:
    """The :class:`WorldShapes` of ``sim``: every body that is not the robot, its tool, a person
    or a part is fixed (the room, the furniture; the zones' patches have no collision shape)."""
    client = sim.client
    moving = {sim.robot.body_id, getattr(sim.robot, "tool_body", None),
              *(person.plugin.body_id for person in sim.people), *(part.body_id for part in sim.parts.parts)}
    fixed: list[Shape] = []
    for index in range(p.getNumBodies(physicsClientId=client)):
        body = p.getBodyUniqueId(index, physicsClientId=client)
        if body not in moving:
            base = p.getBasePositionAndOrientation(body, physicsClientId=client)
            fixed += _shapes_of(client, body, -1, base)
    robot = dict(_body_shapes(client, sim.robot.body_id, names.robot))
    tool_body = getattr(sim.robot, "tool_body", None)
    if tool_body is not None:
        robot["tool_body"] = _shapes_of(client, tool_body, -1)
    people = {person.name: _body_shapes(client, person.plugin.body_id, names.people[person.name])
              for person in sim.people}
    part = Shape("box", tuple(2.0 * float(h) for h in sim.parts.half), Pose())
    return WorldShapes(tuple(fixed), MappingProxyType(robot), MappingProxyType(people), (part,))
