"""The run's Foxglove channels as messages: :class:`ChannelWriter` builds them from plain
records (a :class:`Scene`, the samples' frames, joints and safety numbers, the events) and logs
them with Foxglove's own SDK (``foxglove-sdk``: its well-known schemas, so that Foxglove shows
them with no set-up) on one :class:`foxglove.Context` whose sinks are an MCAP file
(:class:`hri.view.mcap_file.McapFile`), a live server (:class:`hri.view.foxglove_live.LiveServer`)
or both. It knows nothing of the simulation: :class:`hri.view.mcap_file.ChannelPublisher` reads
the run and feeds it, in the run's process or through :mod:`hri.view.writer_process`.

Every message's log time is the simulated time from the run's start (nanoseconds from 0). A
message that no sink takes (a live server nobody is subscribed to) is not built.
"""

from __future__ import annotations

import json
from array import array
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Mapping, Protocol, Sequence, TypeVar

import foxglove
from foxglove.channels import FrameTransformsChannel, JointStatesChannel, LogChannel, SceneUpdateChannel
from foxglove.messages import (Color, CubePrimitive, CylinderPrimitive, FrameTransform, FrameTransforms, JointState,
                               JointStates, Log, LogLevel, Point3, Pose as FoxPose, Quaternion, SceneEntity,
                               SceneEntityDeletion, SceneEntityDeletionType, SceneUpdate, SpherePrimitive, Timestamp,
                               TriangleListPrimitive, Vector3)

from hri.bt.status import IDLE

if TYPE_CHECKING:
    from hri.base.geometry import Pose
    from hri.kinematics.link_frames import LinkFrames
    from hri.run.state import Shape

T = TypeVar("T")
WORLD = "world"
TOPICS = ("/scene", "/tf", "/robot/joint_states", "/safety", "/events")  # and /trees/TREE for each tree
#: events that are more than information, by their level in Foxglove's log
EVENT_LEVELS = {"safety_violation": LogLevel.Error, "run_error": LogLevel.Error, "pfl_violation": LogLevel.Error,
                "protective_stop_requested": LogLevel.Warning, "ssm_stop": LogLevel.Warning,
                "sensor_stop": LogLevel.Warning, "sensor_dropout": LogLevel.Warning,
                "random_failure": LogLevel.Warning, "fault_injected": LogLevel.Warning,
                "service_call_failed": LogLevel.Warning}
FIXED_COLOR = (0.62, 0.6, 0.56, 1.0)
ROBOT_COLOR = (1.0, 0.55, 0.1, 1.0)
PERSON_COLOR = (0.25, 0.45, 0.85, 1.0)
PART_COLOR = (0.2, 0.7, 0.3, 1.0)

SAFETY_SCHEMA = {
    "type": "object",
    "properties": {
        "t": {"type": "number", "description": "simulated time (s)"},
        "zone": {"type": "string"},
        "zone_level": {"type": "integer", "description": "0 safe, 1 warning, 2 stop"},
        "velocity_fraction": {"type": "number"},
        "cap": {"type": "number"},
        "speed_fraction": {"type": "number"},
        "fastest_point_m_s": {"type": "number"},
        "separation_m": {"type": ["number", "null"]},
        "required_m": {"type": ["number", "null"], "description": "S_p (SSM/PFL modes)"},
        "protective_stop": {"type": "integer", "description": "1 while the robot is held in a protective stop"},
    },
}
TREE_SCHEMA = {
    "type": "object",
    "properties": {
        "t": {"type": "number"},
        "nodes": {"type": "array", "items": {"type": "object", "properties": {
            "depth": {"type": "integer"}, "id": {"type": "string"}, "name": {"type": "string"},
            "status": {"type": "string"}}}},
    },
}


@dataclass(frozen=True)
class Scene:
    """What ``/scene`` draws, as plain data: the fixed bodies' shapes (in ``world``), each
    zone's floor triangles and colour (outer zones first), the robot's and each person's
    shapes by link, and a part's shape."""

    fixed: tuple[Shape, ...]
    zones: tuple[tuple[str, tuple[tuple[float, float, float], ...], tuple[float, ...]], ...]
    robot: Mapping[str, tuple[Shape, ...]]
    people: Mapping[str, Mapping[str, tuple[Shape, ...]]]
    part: tuple[Shape, ...]


class Sink(Protocol):
    """Where the channels go (:class:`hri.view.mcap_file.McapFile`,
    :class:`hri.view.foxglove_live.LiveServer`): ``open`` adds the sink to the context before
    any message (``scene_wanted``: to call when the scene should be sent again), ``close`` ends
    it with the run, however the run ends, ``discard`` when the start failed."""

    def open(self, context: foxglove.Context, scene_wanted: Callable[[], None]) -> None: ...

    def close(self) -> None: ...

    def discard(self) -> None: ...


def end_each(items: Sequence[T], end: Callable[[T], None]) -> None:
    """``end`` every one of ``items`` (sinks, writers): one that fails does not leave the others
    open (its error stands)."""
    if not items:
        return
    try:
        end(items[0])
    finally:
        end_each(items[1:], end)


def _json_schema(name: str, schema: dict[str, Any]) -> foxglove.Schema:
    return foxglove.Schema(name=name, encoding="jsonschema", data=json.dumps(schema).encode())


def ns(t: float) -> int:
    """A simulated time (s) as a log time (ns)."""
    return int(round(t * 1e9))


def _stamp(t: float) -> Timestamp:
    nanoseconds = ns(t)
    return Timestamp(sec=nanoseconds // 1_000_000_000, nsec=nanoseconds % 1_000_000_000)


def _fox_pose(pose: Pose) -> FoxPose:
    return FoxPose(position=Vector3(x=pose.x, y=pose.y, z=pose.z),
                   orientation=Quaternion(x=pose.qx, y=pose.qy, z=pose.qz, w=pose.qw))


def _color(rgba: tuple[float, ...]) -> Color:
    return Color(r=rgba[0], g=rgba[1], b=rgba[2], a=rgba[3])


def _entity(entity_id: str, frame: str, shapes: tuple[Shape, ...], rgba: tuple[float, ...], t: float) -> SceneEntity:
    """The shapes of one frame as a scene entity that follows the frame."""
    cubes, spheres, cylinders = [], [], []
    for shape in shapes:
        pose, size, color = _fox_pose(shape.pose), Vector3(x=shape.size[0], y=shape.size[1], z=shape.size[2]), _color(rgba)
        if shape.kind == "box":
            cubes.append(CubePrimitive(pose=pose, size=size, color=color))
        elif shape.kind == "sphere":
            spheres.append(SpherePrimitive(pose=pose, size=size, color=color))
        else:
            cylinders.append(CylinderPrimitive(pose=pose, size=size, bottom_scale=1.0, top_scale=1.0, color=color))
    return SceneEntity(timestamp=_stamp(t), frame_id=frame, id=entity_id, frame_locked=True, cubes=cubes,
                       spheres=spheres, cylinders=cylinders)


def _transforms(names: Sequence[str], values: Sequence[float], stamp: Timestamp) -> list[FrameTransform]:
    """``/tf``'s transforms from ``world`` of the frames ``names``, seven ``values`` each
    (position, quaternion)."""
    return [FrameTransform(timestamp=stamp, parent_frame_id=WORLD, child_frame_id=name,
                           translation=Vector3(x=values[k], y=values[k + 1], z=values[k + 2]),
                           rotation=Quaternion(x=values[k + 3], y=values[k + 4], z=values[k + 5], w=values[k + 6]))
            for name, k in zip(names, range(0, len(values), 7))]


def event_log(event: Mapping[str, Any]) -> Log:
    """``/events``: an event as Foxglove's Log, its events.jsonl line the message."""
    t = float(event["t"])
    return Log(timestamp=_stamp(t), level=EVENT_LEVELS.get(event["event"], LogLevel.Info),
               message=json.dumps(event, sort_keys=False), name=str(event["event"]))


class ChannelWriter:
    """The run's channels on one context with ``sinks`` (all ended again if the start fails);
    ``trees``: each tree's nodes in pre-order (``depth``, ``id``, ``name``), whose statuses its
    ``tree_status`` events change; ``robot``: the robot's frames from its joint positions
    (``robot/NAME`` on ``/tf``, before a sample's own frames), or None where a sample carries
    them."""

    def __init__(self, sinks: Sequence[Sink], trees: Mapping[str, Sequence[Mapping[str, Any]]],
                 robot: LinkFrames | None = None) -> None:
        self._robot = robot
        self._robot_names = () if robot is None else tuple(f"robot/{name}" for name in robot.names)
        self._opened: list[Sink] = []
        self._scene_wanted = False  # set from a live server's thread when a client subscribes to /scene
        self._scene_source: Callable[[], Scene] | None = None
        self._parts: frozenset[int] = frozenset()
        try:
            self.context = context = foxglove.Context()
            for sink in sinks:
                self._opened.append(sink)
                sink.open(context, self.scene_wanted)
            self._scene = SceneUpdateChannel("/scene", context=context)
            self._tf = FrameTransformsChannel("/tf", context=context)
            self._joints = JointStatesChannel("/robot/joint_states", context=context)
            self._safety = foxglove.Channel("/safety", message_encoding="json",
                                            schema=_json_schema("hri.Safety", SAFETY_SCHEMA), context=context)
            self._events = LogChannel("/events", context=context)
            tree_schema = _json_schema("hri.TreeStatus", TREE_SCHEMA)
            self._trees = {name: foxglove.Channel(f"/trees/{name}", message_encoding="json", schema=tree_schema,
                                                  context=context) for name in trees}
        except BaseException:
            self.end(discard=True)
            raise
        self._nodes = {name: [{"depth": node["depth"], "id": node["id"], "name": node["name"], "status": IDLE}
                              for node in nodes] for name, nodes in trees.items()}

    def scene_wanted(self) -> None:
        """A client subscribed to /scene: send the scene again with the next sample (a client
        that connects during the run gets it too)."""
        self._scene_wanted = True

    def subscribed(self, topic: str) -> bool:
        """Whether a sink takes the messages of ``topic`` (one of :data:`TOPICS`)."""
        channels = {"/scene": self._scene, "/tf": self._tf, "/robot/joint_states": self._joints,
                    "/safety": self._safety, "/events": self._events}
        return channels[topic].has_sinks()

    def wants_samples(self) -> bool:
        """Whether a sample would go anywhere (a live server with nobody subscribed: no)."""
        return any(channel.has_sinks() for channel in (self._scene, self._tf, self._joints, self._safety))

    def end(self, discard: bool) -> None:
        """Close every sink (the file moved into place, the server stopped), or with
        ``discard`` remove what they wrote."""
        opened, self._opened = self._opened, []
        end_each(opened, lambda sink: sink.discard() if discard else sink.close())

    # --- what goes in -------------------------------------------------------------------
    def scene(self, source: Callable[[], Scene], t: float) -> None:
        """The fixed bodies and the zones in the world frame, the moving ones in their own;
        ``source`` gives the :class:`Scene` (made once however often asked; asked only when a
        sink takes it, kept to send again when a client asks)."""
        self._scene_source = source
        self._parts = frozenset()  # drawn again with the next sample
        if not self._scene.has_sinks():
            return
        scene = source()
        entities = [_entity("fixed", WORLD, scene.fixed, FIXED_COLOR, t)]
        for name, triangles, rgba in scene.zones:
            points = [Point3(x=x, y=y, z=z) for x, y, z in triangles]
            entities.append(SceneEntity(timestamp=_stamp(t), frame_id=WORLD, id=f"zone/{name}",
                                        triangles=[TriangleListPrimitive(points=points, color=_color(rgba))]))
        entities += [_entity(f"robot/{link}", f"robot/{link}", link_shapes, ROBOT_COLOR, t)
                     for link, link_shapes in scene.robot.items() if link_shapes]
        for person, links in scene.people.items():
            entities += [_entity(f"{person}/{link}", f"{person}/{link}", link_shapes, PERSON_COLOR, t)
                         for link, link_shapes in links.items() if link_shapes]
        self._scene.log(SceneUpdate(entities=entities), log_time=ns(t))

    def sample(self, t: float, names: Sequence[str], values: Sequence[float],
               joints: tuple[Sequence[str], Sequence[float], Sequence[float]], safety: Mapping[str, Any],
               parts: frozenset[int]) -> None:
        """One sample: every moving frame's name and its world frame (seven ``values`` each:
        position, quaternion; the robot's left out where the writer has ``robot``), the robot's
        joints (names, positions, velocities), the safety numbers; the parts there now (one
        that appeared gets its entity, one that went is deleted)."""
        if self._scene_wanted and self._scene_source is not None:
            self._scene_wanted = False
            self.scene(self._scene_source, t)
        log_time, stamp = ns(t), _stamp(t)
        self._update_parts(parts, t)
        if self._tf.has_sinks():
            if self._robot is not None:  # single precision, as PyBullet gives link frames: the file compresses as well
                names, values = (*self._robot_names, *names), [*array("f", self._robot.values(joints[1])), *values]
            self._tf.log(FrameTransforms(transforms=_transforms(names, values, stamp)), log_time=log_time)
        if self._joints.has_sinks():
            self._joints.log(JointStates(timestamp=stamp, joints=[
                JointState(name=name, position=q, velocity=v) for name, q, v in zip(*joints)]), log_time=log_time)
        if self._safety.has_sinks():
            self._safety.log(safety, log_time=log_time)

    def _update_parts(self, parts: frozenset[int], t: float) -> None:
        if parts == self._parts or not self._scene.has_sinks() or self._scene_source is None:
            return
        shape = self._scene_source().part
        added = [_entity(f"part/{n}", f"part/{n}", shape, PART_COLOR, t) for n in sorted(parts - self._parts)]
        gone = [SceneEntityDeletion(timestamp=_stamp(t), type=SceneEntityDeletionType.MatchingId, id=f"part/{n}")
                for n in sorted(self._parts - parts)]
        self._parts = parts
        self._scene.log(SceneUpdate(deletions=gone, entities=added), log_time=ns(t))

    def events(self, events: Sequence[Mapping[str, Any]]) -> None:
        """Events of the run in their order; a tree's statuses after each ``tree_status``."""
        for event in events:
            t = float(event["t"])
            if self._events.has_sinks():
                self._events.log(event_log(event), log_time=ns(t))
            if event["event"] == "tree_status" and event["tree"] in self._trees:
                self._log_tree(event["tree"], event["changes"], t)

    def _log_tree(self, name: str, changes: Mapping[str, str], t: float) -> None:
        """Every node of ``name`` with its status after the tick at ``t`` (as ``hri render
        --run`` replays the ``tree_status`` events: :func:`hri.bt.status.statuses_at`)."""
        nodes = self._nodes[name]
        for index, status in changes.items():
            nodes[int(index)]["status"] = status
        if self._trees[name].has_sinks():
            self._trees[name].log({"t": t, "nodes": nodes}, log_time=ns(t))

