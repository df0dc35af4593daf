"""The run's Foxglove channels, into an MCAP file (``hri run SCENARIO --mcap [PATH]``) and live
(``--foxglove [PORT]``, :mod:`hri.view.foxglove_live`).

:class:`ChannelPublisher` is an :class:`hri.run.sim.Observer` that reads the run's per-step
state (:mod:`hri.run.state`) and hands it as plain records to the writers of its channels
(:class:`hri.view.channel_writer.ChannelWriter`, Foxglove's own SDK and its well-known
schemas, so that Foxglove shows them with no set-up): the MCAP file's in a child process of its
own (:mod:`hri.view.writer_process`; in the run's process inside a batch's worker or on a
single core), the live server's in the run's process. The same records, the same messages in
both. Every message's log time is the simulated time from the run's start (nanoseconds
from 0):

- ``/scene`` (SceneUpdate): the room and the furniture (in ``world``), the zones as
  translucent floor patches, the robot's links, the people's links as their collision shapes
  and the parts, each in a frame of its own (``robot/LINK``, ``PERSON/LINK``, ``part/N``);
  again whenever a part appears or goes;
- ``/tf`` (FrameTransforms): every one of those frames from ``world``, at ``rate_hz``; the
  robot's computed by the writer from the joint positions (:meth:`hri.run.sim.RunView.robot_frames`:
  the run reads no link frames of the arm, the costliest read of a sample), the same frames
  PyBullet gives within its single-precision link frames (about 3e-7; a quaternion's sign
  may differ where a rotation's diagonal ties);
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

import functools
import math
import os
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

import foxglove

from hri.base.errors import HriError
from hri.base.files import check_new_file, check_writable, close_into_place, hidden_file
from hri.view.channel_writer import ChannelWriter, Scene, Sink, end_each
from hri.view.writer_process import WriterProcess, use_process
from hri.workcell.world import ZONE_COLORS, zone_triangles, zones_by_size

if TYPE_CHECKING:
    from hri.kinematics.link_frames import LinkFrames
    from hri.run.sim import RunView
    from hri.run.state import BodyPoses, Frame, StepState

DEFAULT_RATE_HZ = 30.0
MAX_RATE_HZ = 1000.0
ZONE_LEVELS = {"safe": 0, "warning": 1, "stop": 2}
ZONE_HEIGHT_M = 0.003  # the patches a little above the floor, inner zones above outer ones
OTHER_ZONE_COLOR = (0.3, 0.3, 0.9, 0.4)


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


def frame_names(state: "StepState", bodies: "BodyPoses") -> tuple[str, ...]:
    """Every moving frame of the scene by its name: the robot's links (``robot/tool`` its tool
    frame), each person's ``PERSON/pelvis`` (the root as the safety monitor sees it, heading
    only) and links, the parts; in the order of :func:`frame_values`."""
    names = [f"robot/{link}" for link in bodies.robot]
    names += [f"{person.name}/pelvis" for person in state.people]
    for person, links in bodies.people.items():
        names += [f"{person}/{link}" for link in links]
    names += [f"part/{number}" for number in bodies.parts]
    return tuple(names)


def frame_values(state: "StepState", bodies: "BodyPoses") -> list[float]:
    """The world frames of :func:`frame_names`, seven numbers each (x, y, z, qx, qy, qz, qw)."""
    frames = [*bodies.robot.values(), *((person.root.position, person.root.orientation) for person in state.people)]
    for links in bodies.people.values():
        frames += links.values()
    frames += bodies.parts.values()
    return list(chain.from_iterable(chain.from_iterable(frames)))  # C loops: 30 times a simulated second


def safety_message(state: "StepState") -> dict[str, Any]:
    """``/safety``: the safety state as numbers (an infinite separation: null)."""
    safety = state.safety
    separation = safety.separation_m if math.isfinite(safety.separation_m) else None
    return {"t": state.t, "zone": safety.zone, "zone_level": ZONE_LEVELS.get(safety.zone, -1),
            "velocity_fraction": safety.velocity_fraction, "cap": safety.cap, "speed_fraction": safety.speed_fraction,
            "fastest_point_m_s": safety.fastest_point_m_s, "separation_m": separation,
            "required_m": safety.required_m, "protective_stop": int(safety.stopped)}


def scene_of(run: "RunView") -> Scene:
    """``/scene``'s content: the run's collision shapes, the zones as floor triangles."""
    shapes = run.shapes()
    zones = tuple((name, tuple((x, y, ZONE_HEIGHT_M * (level + 1)) for x, y, _ in zone_triangles(area)),
                   ZONE_COLORS.get(name, OTHER_ZONE_COLOR))
                  for level, (name, area) in enumerate(zones_by_size(run.scenario.zones)))
    return Scene(shapes.fixed, zones, shapes.robot, shapes.people, shapes.part)


class McapFile:
    """A sink of the channels: the MCAP file at ``path``, written under a hidden name beside it
    and moved into place when the run ends (removed again when the start fails)."""

    def __init__(self, path: Path, force: bool = False, in_out_folder: bool = False, option: str = "--mcap") -> None:
        # in_out_folder: the run's own run.mcap, whose folder (--out's staging) is set later;
        # option: the option that names the file, for the one line of a bad one
        self.in_out_folder = in_out_folder
        self.option = option
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


class ChannelPublisher:
    """The reader of the run for the channels' writers (see the module docstring): a sample
    at ``rate_hz`` per simulated second, the events as they come. ``process``: whether the
    MCAP file's writer has a process of its own (None: where it may,
    :func:`hri.view.writer_process.use_process`). A sample that no writer takes (a live
    server that nobody is subscribed to, and no file) reads nothing."""

    def __init__(self, sinks: Sequence[Sink], rate_hz: float = DEFAULT_RATE_HZ, process: bool | None = None) -> None:
        self.sinks = list(sinks)
        self.rate_hz = check_rate(rate_hz)
        self.process = process
        self.samples = 0
        self.writers: list[ChannelWriter | WriterProcess] = []
        self._step = -1  # the step whose events were written, and how many of them
        self._written = 0
        self._parts: tuple[int, ...] | None = None  # the parts of the frames' names
        self._names: tuple[str, ...] = ()
        self._robot: LinkFrames | None = None  # the robot's frames from its joints (None: read)

    # --- the observer -------------------------------------------------------------------
    def start(self, run: RunView) -> None:
        """Start the writers (all ended again if anything here fails), write the scene and
        the first sample."""
        try:
            trees = {name: [{"depth": node.depth, "id": node.node_id, "name": node.name} for node in log.current()]
                     for name, log in run.status_logs.items()}
            own = use_process() if self.process is None else self.process
            files = [sink for sink in self.sinks if own and isinstance(sink, McapFile)]
            self._robot = run.robot_frames()
            if files:
                what = ", ".join(f"{sink.option} {sink.path}" for sink in files)
                self.writers.append(WriterProcess(files, trees, what, self._robot))
            others = [sink for sink in self.sinks if sink not in files]
            if others:
                self.writers.append(ChannelWriter(others, trees, self._robot))
            self._write_scene(run)
            self._take_news(run)
            self._sample(run)
        except BaseException:
            self._end(discard=True)
            raise

    def after_step(self, run: RunView) -> None:
        if run.has_news():  # most steps have no events: nothing to take
            self._take_news(run)
        if run.now() + 1e-9 >= self.samples / self.rate_hz:  # integer count: no drift
            self._sample(run)

    def finish(self, run: RunView) -> None:
        """The events after the last step, then every writer ended (the file moved into
        place, the server stopped), also when one of them fails."""
        if not self.writers:
            return
        try:
            self._take_news(run)
        finally:
            self._end(discard=False)

    def _end(self, discard: bool) -> None:
        writers, self.writers = self.writers, []
        end_each(writers, lambda writer: writer.end(discard))

    # --- what goes in -------------------------------------------------------------------
    def _write_scene(self, run: RunView) -> None:
        t, source = run.now(), functools.cache(lambda: scene_of(run))  # one scene for every writer
        for writer in self.writers:
            writer.scene(source, t)

    def _sample(self, run: RunView) -> None:
        """The frames, the joints and the safety state now, for the writers that take them."""
        self.samples += 1
        writers = [writer for writer in self.writers if writer.wants_samples()]
        if not writers:
            return  # a live server with nobody subscribed: nothing read
        state, bodies = run.state(), run.bodies(robot_too=self._robot is None)
        robot = state.robot
        parts = tuple(bodies.parts)
        if parts != self._parts:  # the names change only with the parts
            self._parts, self._names = parts, frame_names(state, bodies)
        record = (state.t, self._names, frame_values(state, bodies),
                  (robot.joint_names, robot.positions, robot.velocities), safety_message(state), frozenset(parts))
        for writer in writers:
            writer.sample(*record)

    def _take_news(self, run: RunView) -> None:
        """The step's events not yet written."""
        news = run.news()
        if news.step != self._step:
            self._step, self._written = news.step, 0
        new = news.events[self._written:]
        self._written = len(news.events)
        if new:
            for writer in self.writers:
                writer.events(new)
