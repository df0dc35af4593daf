"""The run's Foxglove channels, into an MCAP file (``hri run SCENARIO --mcap [PATH]``) and live
(``--foxglove [PORT]``, :mod:`hri.view.foxglove_live`).

:class:`ChannelPublisher` is an :class:`hri.run.sim.Observer` that reads the run's per-step
state (:mod:`hri.run.state`) and logs it with Foxglove's own SDK (``foxglove-sdk``: its
well-known schemas, so that Foxglove shows it with no set-up) on channels of one context, whose
sinks are the MCAP file (:class:`McapFile`) and the live server: one writer, the same messages
in both. Every message's log time is the simulated time from the run's start (nanoseconds
from 0):

- ``/scene`` (SceneUpdate): the room and the furniture (in ``world``), the zones as
  translucent floor patches, the robot's links, the people's links as their collision shapes
  and the parts, each in a frame of its own (``robot/LINK``, ``PERSON/LINK``, ``part/N``);
  again whenever a part appears or goes;
- ``/tf`` (FrameTransforms): every one of those frames from ``world``, at ``rate_hz``;
- ``/robot/joint_states`` (JointStates) and ``/safety`` (JSON: plottable numbers), at ``rate_hz``;
- ``/trees/TREE`` (JSON): every node's status, in pre-order, after each tick that changed one
  (its ``tree_status`` event: what ``hri render --run`` draws);
- ``/events`` (Log): every event of ``events.jsonl``, its JSON line as the message.

The file is written to a hidden file beside the target and renamed into place in ``finish``
(also after a failed or interrupted run); an existing file is replaced only with ``force``.
Reading the state only, a run with ``--mcap`` or ``--foxglove`` has the same results as one
without.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, Protocol, Sequence

import foxglove
from foxglove.channels import FrameTransformsChannel, JointStatesChannel, LogChannel, SceneUpdateChannel
from foxglove.messages import (Color, CubePrimitive, CylinderPrimitive, FrameTransform, FrameTransforms, JointState,
                               JointStates, Log, LogLevel, Point3, Pose as FoxPose, Quaternion, SceneEntity,
                               SceneEntityDeletion, SceneEntityDeletionType, SceneUpdate, SpherePrimitive, Timestamp,
                               TriangleListPrimitive, Vector3)

from hri.base.errors import HriError
from hri.base.files import check_new_file, check_writable, close_into_place, hidden_file
from hri.base.geometry import Pose
from hri.bt.status import IDLE
from hri.workcell.world import ZONE_COLORS, zone_triangles, zones_by_size

if TYPE_CHECKING:
    from hri.run.sim import RunView
    from hri.run.state import BodyPoses, Frame, Shape, StepState

DEFAULT_RATE_HZ = 30.0
MAX_RATE_HZ = 1000.0
WORLD = "world"
TOPICS = ("/scene", "/tf", "/robot/joint_states", "/safety", "/events")  # and /trees/TREE for each tree
ZONE_LEVELS = {"safe": 0, "warning": 1, "stop": 2}
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
ZONE_HEIGHT_M = 0.003  # the patches a little above the floor, inner zones above outer ones

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


def check_rate(rate_hz: float) -> float:
    """``--mcap-rate``: a positive number of samples per simulated second, at most MAX_RATE_HZ."""
    if not (math.isfinite(rate_hz) and 0.0 < rate_hz <= MAX_RATE_HZ):
        raise HriError(f"--mcap-rate: {rate_hz:g} is not a rate in (0, {MAX_RATE_HZ:g}] Hz")
    return float(rate_hz)


def check_path(path: Path, force: bool, option: str = "--mcap") -> Path:
    """``--mcap PATH`` (or ``option``): a file that may be written (not a folder; an existing
    file only with ``force``), in a folder that exists and may be written."""
    check_new_file(path, force, option)
    if not path.parent.is_dir():
        raise HriError(f"{option} {path}: no folder {path.parent}")
    check_writable(path.parent, option, path)
    return path


def _json_schema(name: str, schema: dict[str, Any]) -> foxglove.Schema:
    return foxglove.Schema(name=name, encoding="jsonschema", data=json.dumps(schema).encode())


def _ns(t: float) -> int:
    return int(round(t * 1e9))


def _stamp(t: float) -> Timestamp:
    ns = _ns(t)
    return Timestamp(sec=ns // 1_000_000_000, nsec=ns % 1_000_000_000)


def _fox_pose(pose: Pose) -> FoxPose:
    return FoxPose(position=Vector3(x=pose.x, y=pose.y, z=pose.z),
                   orientation=Quaternion(x=pose.qx, y=pose.qy, z=pose.qz, w=pose.qw))


def _color(rgba: tuple[float, ...]) -> Color:
    return Color(r=rgba[0], g=rgba[1], b=rgba[2], a=rgba[3])


def _entity(entity_id: str, frame: str, shapes: tuple["Shape", ...], rgba: tuple[float, ...], t: float) -> SceneEntity:
    """The shapes of one frame as a scene entity that follows the frame."""
    cubes, spheres, cylinders = [], [], []
    for shape in shapes:
        size = Vector3(x=shape.size[0], y=shape.size[1], z=shape.size[2])
        pose, color = _fox_pose(shape.pose), _color(rgba)
        if shape.kind == "box":
            cubes.append(CubePrimitive(pose=pose, size=size, color=color))
        elif shape.kind == "sphere":
            spheres.append(SpherePrimitive(pose=pose, size=size, color=color))
        else:
            cylinders.append(CylinderPrimitive(pose=pose, size=size, bottom_scale=1.0, top_scale=1.0, color=color))
    return SceneEntity(timestamp=_stamp(t), frame_id=frame, id=entity_id, frame_locked=True, cubes=cubes,
                       spheres=spheres, cylinders=cylinders)


def frames(state: "StepState", bodies: "BodyPoses") -> dict[str, "Frame"]:
    """Every moving frame of the scene by its name, with its world frame: the robot's links
    (``robot/tool`` its tool frame), each person's links and their ``PERSON/pelvis`` (the root
    as the safety monitor sees it, heading only), the parts."""
    named = {f"robot/{link}": frame for link, frame in bodies.robot.items()}
    named.update({f"{person.name}/pelvis": (person.root.position, person.root.orientation) for person in state.people})
    for person, links in bodies.people.items():
        named.update({f"{person}/{link}": frame for link, frame in links.items()})
    named.update({f"part/{number}": frame for number, frame in bodies.parts.items()})
    return named


def _transforms(named: Mapping[str, "Frame"], stamp: Timestamp) -> list[FrameTransform]:
    """``/tf``'s transforms of the frames ``named`` from ``world``."""
    return [FrameTransform(timestamp=stamp, parent_frame_id=WORLD, child_frame_id=name,
                           translation=Vector3(x=x, y=y, z=z), rotation=Quaternion(x=qx, y=qy, z=qz, w=qw))
            for name, ((x, y, z), (qx, qy, qz, qw)) in named.items()]


def safety_message(state: "StepState") -> dict[str, Any]:
    """``/safety``: the safety state as numbers (an infinite separation: null)."""
    safety = state.safety
    separation = safety.separation_m if math.isfinite(safety.separation_m) else None
    return {"t": state.t, "zone": safety.zone, "zone_level": ZONE_LEVELS.get(safety.zone, -1),
            "velocity_fraction": safety.velocity_fraction, "cap": safety.cap, "speed_fraction": safety.speed_fraction,
            "fastest_point_m_s": safety.fastest_point_m_s, "separation_m": separation,
            "required_m": safety.required_m, "protective_stop": int(safety.stopped)}


def event_log(event: Mapping[str, Any]) -> Log:
    """``/events``: an event as Foxglove's Log, its events.jsonl line the message."""
    t = float(event["t"])
    return Log(timestamp=_stamp(t), level=EVENT_LEVELS.get(event["event"], LogLevel.Info),
               message=json.dumps(event, sort_keys=False), name=str(event["event"]))


class McapFile:
    """A sink of the channels: the MCAP file at ``path``, written under a hidden name beside it
    and moved into place when the run ends (removed again when the start fails)."""

    def __init__(self, path: Path, force: bool = False, in_out_folder: bool = False, option: str = "--mcap") -> None:
        # in_out_folder: the run's own run.mcap, whose folder (--out's staging) is set later;
        # option: the option that names the file, for the one line of a bad one
        self.in_out_folder = in_out_folder
        self.path = Path(path) if in_out_folder else check_path(Path(path), force, option)
        self._tmp: Path | None = None
        self._writer: Any = None

    def open(self, context: foxglove.Context, scene_wanted: Callable[[], None]) -> None:
        fd, tmp = hidden_file(self.path)
        os.close(fd)
        self._tmp = Path(tmp)
        self._writer = foxglove.open_mcap(self._tmp, allow_overwrite=True, context=context)

    def close(self) -> None:
        """Close the file and move it into place (the hidden file removed if that fails)."""
        writer, tmp = self._writer, self._tmp
        self._writer = self._tmp = None
        if writer is not None and tmp is not None:
            close_into_place(writer.close, tmp, self.path)

    def discard(self) -> None:
        """The start failed: no half file is left."""
        writer, tmp = self._writer, self._tmp
        self._writer = self._tmp = None
        try:
            if writer is not None:
                writer.close()
        finally:
            if tmp is not None:
                tmp.unlink(missing_ok=True)


class Sink(Protocol):
    """Where the channels go (:class:`McapFile`, :class:`hri.view.foxglove_live.LiveServer`):
    ``open`` adds the sink to the run's context before any message (``scene_wanted``: to call
    when the scene should be sent again), ``close`` ends it with the run, however the run ends,
    ``discard`` when the start failed."""

    def open(self, context: foxglove.Context, scene_wanted: Callable[[], None]) -> None: ...

    def close(self) -> None: ...

    def discard(self) -> None: ...


def _end_all(sinks: Sequence[Sink], discard: bool) -> None:
    """End every sink: one that fails does not leave the others open (its error stands)."""
    if not sinks:
        return
    try:
        sinks[0].discard() if discard else sinks[0].close()
    finally:
        _end_all(sinks[1:], discard)


class ChannelPublisher:
    """The one writer of the run's channels (see the module docstring), to every sink of one
    :class:`foxglove.Context`: an MCAP file, a live server, or both with the same messages.
    A message that no sink takes (a live server that nobody is subscribed to) is not built."""

    def __init__(self, sinks: Sequence[Sink], rate_hz: float = DEFAULT_RATE_HZ) -> None:
        self.sinks = list(sinks)
        self.rate_hz = check_rate(rate_hz)
        self.samples = 0
        self._opened: list[Sink] = []
        self._context: foxglove.Context | None = None
        self._trees: dict[str, foxglove.Channel] = {}
        self._nodes: dict[str, list[dict[str, Any]]] = {}  # each tree's nodes in pre-order, their statuses
        self._parts: set[int] = set()
        self._step = -1  # the step whose events were written, and how many of them
        self._written = 0
        self._scene_wanted = False  # set from the live server's thread when a client subscribes to /scene

    def scene_wanted(self) -> None:
        """A client subscribed to /scene: send the scene again after the next step (a client
        that connects during the run gets it too)."""
        self._scene_wanted = True

    # --- the observer -------------------------------------------------------------------
    def start(self, run: RunView) -> None:
        """Open the sinks (all discarded again if anything here fails), write the scene and
        the first sample."""
        try:
            self._context = context = foxglove.Context()
            for sink in self.sinks:
                self._opened.append(sink)
                sink.open(context, self.scene_wanted)
            self._open(run)
        except BaseException:
            self._close_sinks(discard=True)
            raise

    def _open(self, run: RunView) -> None:
        context = self._context
        self._scene = SceneUpdateChannel("/scene", context=context)
        self._tf = FrameTransformsChannel("/tf", context=context)
        self._joints = JointStatesChannel("/robot/joint_states", context=context)
        self._safety = foxglove.Channel("/safety", message_encoding="json",
                                        schema=_json_schema("hri.Safety", SAFETY_SCHEMA), context=context)
        self._events = LogChannel("/events", context=context)
        tree_schema = _json_schema("hri.TreeStatus", TREE_SCHEMA)
        self._trees = {name: foxglove.Channel(f"/trees/{name}", message_encoding="json", schema=tree_schema,
                                              context=context) for name in run.status_logs}
        self._nodes = {name: [{"depth": node.depth, "id": node.node_id, "name": node.name, "status": IDLE}
                              for node in log.current()] for name, log in run.status_logs.items()}
        self._write_scene(run)
        self._take_news(run)
        self._sample(run)

    def after_step(self, run: RunView) -> None:
        if run.has_news():  # most steps have no events: nothing to take
            self._take_news(run)
        if self._scene_wanted:
            self._scene_wanted = False
            self._parts = set()  # drawn again with the next sample
            self._write_scene(run)
        if run.now() + 1e-9 >= self.samples / self.rate_hz:  # integer count: no drift
            self._sample(run)

    def finish(self, run: RunView) -> None:
        """The events after the last step, then every sink closed (the file moved into place,
        the server stopped), also when one of them fails."""
        if not self._opened:
            return
        try:
            self._take_news(run)
        finally:
            self._close_sinks(discard=False)

    def _close_sinks(self, discard: bool) -> None:
        opened, self._opened = self._opened, []
        self._context = None
        _end_all(opened, discard)

    # --- what goes in -------------------------------------------------------------------
    def _write_scene(self, run: RunView) -> None:
        """The fixed bodies and the zones in the world frame, the moving ones in their own."""
        if not self._scene.has_sinks():
            return
        shapes, t = run.shapes(), run.now()
        entities = [_entity("fixed", WORLD, shapes.fixed, FIXED_COLOR, t)]
        for level, (name, area) in enumerate(zones_by_size(run.scenario.zones)):
            points = [Point3(x=x, y=y, z=ZONE_HEIGHT_M * (level + 1)) for x, y, _ in zone_triangles(area)]
            color = _color(ZONE_COLORS.get(name, (0.3, 0.3, 0.9, 0.4)))
            entities.append(SceneEntity(timestamp=_stamp(t), frame_id=WORLD, id=f"zone/{name}",
                                        triangles=[TriangleListPrimitive(points=points, color=color)]))
        entities += [_entity(f"robot/{link}", f"robot/{link}", link_shapes, ROBOT_COLOR, t)
                     for link, link_shapes in shapes.robot.items() if link_shapes]
        for person, links in shapes.people.items():
            entities += [_entity(f"{person}/{link}", f"{person}/{link}", link_shapes, PERSON_COLOR, t)
                         for link, link_shapes in links.items() if link_shapes]
        self._scene.log(SceneUpdate(entities=entities), log_time=_ns(t))

    def _update_parts(self, run: RunView, parts: set[int]) -> None:
        """A part that appeared gets its entity, one that went is deleted."""
        if parts == self._parts or not self._scene.has_sinks():
            return
        t, shape = run.now(), run.shapes().part
        added = [_entity(f"part/{n}", f"part/{n}", shape, PART_COLOR, t) for n in sorted(parts - self._parts)]
        gone = [SceneEntityDeletion(timestamp=_stamp(t), type=SceneEntityDeletionType.MatchingId, id=f"part/{n}")
                for n in sorted(self._parts - parts)]
        self._parts = parts
        self._scene.log(SceneUpdate(deletions=gone, entities=added), log_time=_ns(t))

    def _sample(self, run: RunView) -> None:
        """The frames, the joints and the safety state now (each only for a channel with a sink)."""
        self.samples += 1
        if not any(channel.has_sinks() for channel in (self._scene, self._tf, self._joints, self._safety)):
            return  # a live server with nobody subscribed: nothing built
        state, bodies = run.state(), run.bodies()
        ns = _ns(state.t)
        self._update_parts(run, set(bodies.parts))
        stamp = _stamp(state.t)
        if self._tf.has_sinks():
            self._tf.log(FrameTransforms(transforms=_transforms(frames(state, bodies), stamp)), log_time=ns)
        robot = state.robot
        if self._joints.has_sinks():
            self._joints.log(JointStates(timestamp=stamp, joints=[
                JointState(name=name, position=q, velocity=v)
                for name, q, v in zip(robot.joint_names, robot.positions, robot.velocities)]), log_time=ns)
        if self._safety.has_sinks():
            self._safety.log(safety_message(state), log_time=ns)

    def _take_news(self, run: RunView) -> None:
        """The step's events not yet written; a tree's statuses after each tick that changed one."""
        news = run.news()
        if news.step != self._step:
            self._step, self._written = news.step, 0
        for event in news.events[self._written:]:
            t = float(event["t"])
            if self._events.has_sinks():
                self._events.log(event_log(event), log_time=_ns(t))
            if event["event"] == "tree_status" and event["tree"] in self._trees:
                self._log_tree(event["tree"], event["changes"], t)
        self._written = len(news.events)

    def _log_tree(self, name: str, changes: Mapping[str, str], t: float) -> None:
        """Every node of ``name`` with its status after the tick at ``t`` (as ``hri render
        --run`` replays the ``tree_status`` events: :func:`hri.bt.status.statuses_at`)."""
        nodes = self._nodes[name]
        for index, status in changes.items():
            nodes[int(index)]["status"] = status
        if self._trees[name].has_sinks():
            self._trees[name].log({"t": t, "nodes": nodes}, log_time=_ns(t))
