"""The simulation loop: one scenario, one seed, lockstep in simulated time.

:class:`Simulation` builds the world in its own PyBullet client, starts each person (actor
plugin and actor server over two POSIX message queues of their own, a safety monitor of their
own: :class:`PersonRun`), the robot, the service network with the simulation's services
(:mod:`hri.run.services`), and the tree executors, each person's and the robot's
(:mod:`hri.run.tree_host`), which reach the world only through that network: in this process,
or with ``split`` each in a process of its own (:mod:`hri.run.tree_process`), with the same
results for the same seed. Then it steps everything at the fixed physics rate (see
``docs/architecture.md`` for the order within a step). Nothing here reads the wall clock
except to report how fast the run went and, with ``realtime``, to pace it. With
``groot2_port`` the trees are served live to Groot2 (:mod:`hri.run.groot2`), polled after each
tick of the trees; a breakpoint Groot2 sets holds the step it is reached in, and with it the
whole simulation, until Groot2 lets it go.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any, Callable, Mapping, Protocol, Sequence

import numpy as np
import pybullet as p
from shapely.geometry import LineString, Point, box

from hri.actor.animation import ClipLibrary
from hri.actor.body import BODY_HEIGHT_M
from hri.actor.plugin import ActorPlugin
from hri.actor.queues import ActorLink
from hri.actor.route import WalkingArea
from hri.actor.server import ActorServer
from hri.actor.yielding import Neighbour, Yielding
from hri.bt.loggers.file_logger import SUFFIX as BTLOG_SUFFIX, BtLogFile
from hri.bt.status import TreeStatusLog
from hri.workcell.called import CalledFlags
from hri.base.errors import HriError
from hri.base.files import keep_traceback
from hri.run.faults import FaultInjector, FaultTargets
from hri.bt.loggers.groot2_publisher import Access
from hri.run.groot2 import LiveTrees
from hri.scenario.faults import check_split
from hri.base.geometry import Pose
from hri.run.monitor import ZONE_ORDER, PeopleWatch, SafetyLimits, SafetyMonitor, strictest, zone_of
from hri.run.pfl import robot_effective_mass
from hri.run.pfl_contacts import PflSetup
from hri.run.pfl_control import PflController
from hri.run.robot_shapes import RobotShapes
from hri.base.mqueue import RunQueues, cleanup_stale
from hri.workcell.parts import PartManager, PersonHand
from hri.robot.arm import RobotArm
from hri.kinematics.link_frames import LinkFrames
from hri.net import Network
from hri.scenario.model import MEASURED, PFL_MODES, ROBOT, PersonSetup, Scenario
from hri.run.services import SimulationServices
from hri.run.sensor import ApproachFilter, SafetySensor
from hri.run.sensor_view import SensorView
from hri.run.ssm_control import FullSpeedWindow, SsmController, SsmTerms
from hri.run.state import (NO_CHANGES, BodyNames, BodyPoses, StepNews, StepState, WorldShapes, capture_bodies,
                           capture_shapes, capture_step, robot_link_frames, status_lines, trajectory_row,
                           tree_changes)
from hri.run.stats import EventLog, PersonStats, RunStats, TrajectoryLog
from hri.run.tree_host import TickResult, TreeHost
from hri.run.tree_process import RemoteTreeHost, queue_plan
from hri.workcell.world import build_static_scene, build_world, draw_zones


#: the safety sensor's random stream: the run's seed sequence's child with this key, which no
#: other part takes (they take the first 4 + people children)
SENSOR_STREAM = 1_000_000
TRAJECTORY_PERIOD_S = 0.1  # trajectory.csv: one row per 0.1 simulated seconds
SETUP_ROUNDS = 3  # zero-time exchanges at set-up: discovery, subscriptions, their answers
STEP, PREVIEW = "step", "preview"  # what the person's plugin does in a physics step (Simulation._person_due)


class RunView:
    """A run as its observers see it: what they may read of a :class:`Simulation`, nothing
    they could change. :meth:`state` and :meth:`bodies` give the step's state
    (:mod:`hri.run.state`), made when first asked in a step; ``client`` is the PyBullet
    client, for rendering the workcell."""

    __slots__ = ("_sim", "_state", "_state_key", "_bodies", "_bodies_at", "_names", "_shapes", "_robot_frames")

    def __init__(self, sim: "Simulation") -> None:
        self._sim = sim
        self._state: StepState | None = None
        self._state_key = (-1, -1)
        self._bodies: BodyPoses | None = None
        self._bodies_at = -1
        self._names: BodyNames | None = None
        self._shapes: WorldShapes | None = None
        self._robot_frames: LinkFrames | None | bool = False  # False: not calibrated yet

    def state(self) -> StepState:
        """The state after the current step (made again when events came since it was made)."""
        sim = self._sim
        key = (sim.step_count, len(sim.events))
        if self._state is None or key != self._state_key:
            events = tuple(sim.events.recent)
            self._state = capture_step(sim, events, tree_changes(events))
            self._state_key = key
        return self._state

    def has_news(self) -> bool:
        """Whether the current step has events (most have none): :meth:`news` is worth asking."""
        return bool(self._sim.events.recent)

    def news(self) -> StepNews:
        """The current step's events and tree changes alone (costs nothing: every step)."""
        sim = self._sim
        if not sim.events.recent:  # most steps
            return StepNews(sim.step_count, (), NO_CHANGES)
        events = tuple(sim.events.recent)
        return StepNews(sim.step_count, events, tree_changes(events))

    def shapes(self) -> WorldShapes:
        """The collision shapes of the world's bodies (read once, at the first asking)."""
        if self._shapes is None:
            self._shapes = capture_shapes(self._sim, self._body_names())
        return self._shapes

    def _body_names(self) -> BodyNames:
        if self._names is None:
            self._names = BodyNames(self._sim)
        return self._names

    def place_riders(self) -> None:
        """Put the parts riding a belt where they are now into PyBullet, for an observer that
        draws PyBullet's world (:meth:`bodies` reads them from the parts' own state); a step
        moves them only there."""
        self._sim.parts.place_riders()

    def bodies(self, robot_too: bool = True) -> BodyPoses:
        """Every robot link's, person link's and part's world pose after the current step;
        without ``robot_too`` the robot's may be left out (a reader that computes them from the
        joints with :meth:`robot_frames`)."""
        sim = self._sim
        if self._bodies is None or self._bodies_at != sim.step_count or robot_too and not self._bodies.robot:
            self._bodies = capture_bodies(sim, self._body_names(), robot_too)
            self._bodies_at = sim.step_count
        return self._bodies

    def robot_frames(self) -> LinkFrames | None:
        """The robot's frames of :meth:`bodies` as functions of its joint positions (calibrated
        at the first asking; None where they must be read: :func:`robot_link_frames`)."""
        if self._robot_frames is False:
            self._robot_frames = robot_link_frames(self._sim, self._body_names())
        return self._robot_frames

    @property
    def client(self) -> int:
        return self._sim.client

    @property
    def scenario(self) -> Scenario:
        return self._sim.scenario

    @property
    def dt(self) -> float:
        return self._sim.dt

    @property
    def step_count(self) -> int:
        return self._sim.step_count

    def now(self) -> float:
        return self._sim.now()

    def status_lines(self) -> list[str]:
        """The step's state in a few words, for overlays (:func:`hri.run.state.status_lines`)."""
        return status_lines(self.state())

    @property
    def status_logs(self) -> Mapping[str, TreeStatusLog]:
        """Each tree's node statuses as they change (``person``, ``robot``)."""
        return MappingProxyType(self._sim.status_logs)


class Observer(Protocol):
    """Watches a run without changing it (recording, live views): called by :class:`Simulation`
    with the run's :class:`RunView`.

    ``start`` once after set-up, ``after_step`` after every physics step, ``finish`` once
    when the simulation closes, also when the run failed or was interrupted (after the run's
    files are written, before PyBullet disconnects).
    """

    def start(self, run: RunView) -> None: ...

    def after_step(self, run: RunView) -> None: ...

    def finish(self, run: RunView) -> None: ...


class Window(Observer, Protocol):
    """An observer that is PyBullet's own window (``--gui``): the run's PyBullet client is
    opened through it, and the run ends early when it is closed."""

    def connect(self) -> int:
        """Open the window: the PyBullet client of the run."""

    def lost(self) -> bool:
        """True once the window has been closed."""


#: the half-width of the square a walking person keeps clear around another's pelvis, so that
#: two people route around each other (a person is about 0.45 m across the shoulders)
PERSON_FOOTPRINT_M = 0.3


def run_queue_plan(split: bool, scenario: Scenario | None = None) -> dict[str, tuple[int, int]]:
    """The message queues a run creates (suffix: (max_messages, message_size)): each person's
    actor's two, and with ``split`` two per tree process (one person without ``scenario``)."""
    names = [None] if scenario is None or not scenario.several else [person.name for person in scenario.people]
    trees = ("person", ROBOT) if scenario is None else tuple(scenario.trees)
    plan: dict[str, tuple[int, int]] = {}
    for name in names:
        plan.update(ActorLink.plan(person=name))
    return {**plan, **(queue_plan(trees) if split else {})}


@dataclass
class PersonRun:
    """One person in a run: their actor (plugin and server over their own queues), their safety
    monitor and where their figures go (the run's own statistics when they are the only one)."""

    setup: PersonSetup
    link: ActorLink
    plugin: ActorPlugin
    server: ActorServer
    figures: RunStats | PersonStats
    monitor: SafetyMonitor | None = None

    @property
    def name(self) -> str:
        return self.setup.name


class Simulation:
    """One run. Use as a context manager so the queues and the PyBullet client are released."""

    def __init__(self, scenario: Scenario, seed: int = 0, window: Window | None = None, realtime: bool = False,
                 observers: Sequence["Observer"] = (), split: bool = False, strict: bool = False,
                 out_dir: Path | None = None, groot2_port: int | None = None, groot2_access: Access = Access(),
                 say: Callable[[str], None] | None = None):
        self.scenario = scenario
        self.say = say  # where the run tells its user what it serves (the Groot2 ports); None: nowhere
        self.groot2_port = groot2_port  # serve the trees live to Groot2 from this base port
        self.groot2_access = groot2_access  # where they listen, who may send hooks
        self.out_dir = out_dir  # events and trajectory rows go there as the run goes
        self.strict = strict
        self.seed = int(seed)
        self.window = window
        self.realtime = realtime
        self.split = split
        rates = scenario.simulation
        self.dt = 1.0 / rates.physics_rate_hz
        self.tree_every = rates.tree_every
        self.person_every = max(1, round(rates.physics_rate_hz / rates.person_rate_hz))
        self.step_count = 0
        self.trajectory_every = max(1, round(rates.physics_rate_hz * TRAJECTORY_PERIOD_S))
        self.trajectory = TrajectoryLog(self._trajectory_people())
        self.people: list[PersonRun] = []
        self.several = scenario.several  # read every step
        self.events = EventLog()
        self.btlogs: dict[str, BtLogFile] = {}  # with out_dir: each tree's status transitions (ROLE.btlog)
        self.live: LiveTrees | None = None  # with groot2_port: the trees' Groot2 publishers
        self.stats = RunStats(scenario.name, self.seed)
        self.client: int | None = None
        self.queues: RunQueues | None = None
        self.observers: list[Observer] = list(observers)
        self._started: list[Observer] = []  # finished in close(), however the run ends
        self.view = RunView(self)
        self.trees: dict[str, TreeHost | RemoteTreeHost] = {}
        self._faults = list(scenario.faults)
        check_split(self._faults, split)
        self.faults: FaultInjector | None = None
        # safety.mode ssm: speed and separation monitoring; pfl, ssm+pfl: power and force limiting
        self.ssm: SsmController | PflController | None = None
        self.ssm_window: FullSpeedWindow | None = None  # SSM with the ideal sensor: full speed held (FullSpeedWindow)
        self.sensor: SafetySensor | None = None  # safety.sensor: what SSM and the zones act on
        self.sensor_view: SensorView | None = None  # a mounted sensor's line of sight
        self.approach: ApproachFilter | None = None  # measured v_h without a sensor: the ideal sensor's

    # --- set-up ---------------------------------------------------------------------
    def __enter__(self) -> "Simulation":
        try:
            self._setup()
        except p.error as err:
            self.close()
            if self._window_lost():
                raise HriError("--gui: the window was closed while the run was being set up") from None
            raise HriError(f"PyBullet: {err}") from None
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def now(self) -> float:
        return self.step_count * self.dt

    def _setup(self) -> None:
        scenario = self.scenario
        cleanup_stale()
        if self.out_dir is not None:  # a long run's memory stays flat: its logs go to disk
            self.out_dir.mkdir(parents=True, exist_ok=True)
            self.events.spill_to(self.out_dir / "events.jsonl")
        if self.window is not None:
            self.client = self.window.connect()
            self.observers.insert(0, self.window)
        else:
            self.client = p.connect(p.DIRECT)
        p.setTimeStep(self.dt, physicsClientId=self.client)
        p.setGravity(0, 0, -9.81, physicsClientId=self.client)
        furniture = build_world(self.client, scenario.room, scenario.furniture)
        zones = scenario.zones
        draw_zones(self.client, zones)

        # the first five as they always were; a second person's tree takes the sixth, ...
        seeds = np.random.SeedSequence(self.seed).spawn(4 + len(scenario.people))
        person_seed, robot_seed, planner_seed, parts_seed, net_seed = seeds[:5]
        person_seeds = [person_seed, *seeds[5:]]
        self.queues = RunQueues().__enter__()
        # all the run's queues at once, or (the user's queue budget short) none: then their
        # stand-ins carry the same messages (hri.base.queue_standins)
        self.queues.reserve(run_queue_plan(self.split, scenario))
        self.people = [self._start_person(i, person) for i, person in enumerate(scenario.people)]
        first = self.people[0]
        self.actor_link, self.plugin, self.server = first.link, first.plugin, first.server
        robot_config = replace(scenario.robot.config, seed=int(planner_seed.generate_state(1)[0]))
        self.robot = RobotArm(self.client, scenario.robot.base,
                              lambda c: build_static_scene(c, scenario.room, scenario.furniture), robot_config,
                              scenario.robot.model)
        # its columns end with the arm's joints: made once the arm is
        self.trajectory = TrajectoryLog(self._trajectory_people(), tuple(self.robot.model.names))
        if self.out_dir is not None:
            self.trajectory.spill_to(self.out_dir / "trajectory.csv")
        self.called = CalledFlags([person.name for person in self.people], self.events.emit, self.now)
        self.parts = PartManager(self.client, scenario.parts, scenario.areas, furniture,
                                 scenario.furniture, np.random.default_rng(parts_seed), self._world_events)
        self.parts.connect(self.robot, {person.name: PersonHand(person.plugin.body_id,
                                                                lambda plugin=person.plugin: plugin.pose,
                                                                person.plugin.hand_pose)
                                        for person in self.people}, self.now)
        if self._whole_robot():  # the tool and a carried part count in every distance
            self.robot.add_tool(scenario.robot.tool, self.parts.reach_beyond_tool())
        self.network = Network(scenario.net, seed=int(net_seed.generate_state(1)[0]))
        self.services = SimulationServices(
            self.network, [(person.server, person.name if scenario.several else None) for person in self.people],
            self.robot, self.parts, self.called)
        for person, tree_seed in zip(self.people, person_seeds):
            self.trees[person.name] = self._start_tree(person.name, tree_seed)
        self.trees[ROBOT] = self._start_tree(ROBOT, robot_seed)
        self.status_logs = {role: host.status_log for role, host in self.trees.items()}
        if self.out_dir is not None:
            self.btlogs = {role: BtLogFile(self.out_dir / f"{role}{BTLOG_SUFFIX}", host.tree_xml())
                           for role, host in self.trees.items()}
        if self.groot2_port is not None:
            self.live = LiveTrees(self.trees, self.groot2_port, self.now, self._flush_transitions, self.groot2_access)
            for line in self.live.describe():
                if self.say is not None:
                    self.say(line)

        safety = scenario.safety
        limits = SafetyLimits(scenario.robot.reduced_velocity, safety.reaction_time_s, safety.stopping_time_s,
                              safety.rest_speed_m_s, safety.speed_tolerance)
        if safety.sensor is not None:  # its own stream: the other parts' draws stay as they were
            rng = np.random.default_rng(np.random.SeedSequence(self.seed, spawn_key=(SENSOR_STREAM,)))
            self.sensor = SafetySensor(safety.sensor, self.dt, rng, (scenario.robot.base.x, scenario.robot.base.y))
            if safety.sensor.mount is not None:
                self.sensor_view = SensorView(self.client, safety.sensor.mount)
        terms, truth = self._ssm_terms()
        pfl = self._pfl_setup()
        for person in self.people:
            person.monitor = SafetyMonitor(self.client, zones, self.robot, person.plugin.body_id, limits,
                                           self.stats, self.events, self.dt, strict=self.strict,
                                           person_speed=person.plugin.speed_bound, ssm=truth, pfl=pfl,
                                           person=None if person.figures is self.stats else person.figures,
                                           name=person.name if scenario.several else None,
                                           shapes=self._robot_shapes(), ssm_invariant=safety.mode not in PFL_MODES,
                                           contact_by_pfl=safety.mode in PFL_MODES)
            person.monitor.pfl.fixed = {body: name for name, body in furniture.items()}  # clamping against them
            if terms is not None or self.sensor is not None:
                person.monitor.pose_person = lambda plugin=person.plugin: plugin.preview(self.now() - self.dt, self.dt)
        self.monitor = first.monitor
        self.people_watch = None if not scenario.several else PeopleWatch(
            self.client, {person.name: person.plugin.body_id for person in self.people}, self.stats, self.events,
            self.strict)
        if safety.mode in PFL_MODES:
            self.ssm = PflController(safety.mode, self.robot, terms, [person.monitor for person in self.people],
                                     self.dt, self.events.emit, self.sensor)
        elif terms is not None:
            self.ssm = SsmController(self.robot, terms, self.dt, self.events.emit, self.sensor)
            if self.sensor is None:  # the ideal sensor: stops decided on a fresh measurement
                self.ssm.refresh = self._fresh_separation
                if not scenario.several and terms.person_speed is None:
                    watch = self.monitor.ssm_watch
                    self.ssm_window = self.ssm.window = watch.window = FullSpeedWindow(self.monitor.closing_speed)
        if self._faults:
            targets = FaultTargets(self.plugin, self.actor_link, self.client, self.trees,
                                   {person.name: (person.plugin, person.link) for person in self.people})
            self.faults = FaultInjector(self._faults, targets, self.events.emit)
        self.events.emit(0.0, "run_started", scenario=scenario.name, seed=self.seed)
        for _ in range(SETUP_ROUNDS):  # discovery and subscriptions, before the first tick
            for host in self.trees.values():
                self._take_events(host.tick(0.0, run_tree=False))
            self.network.advance(0.0)
        for observer in self.observers:
            observer.start(self.view)
            self._started.append(observer)

    def _trajectory_people(self) -> tuple[str, ...]:
        """The people with columns of their own in trajectory.csv: all of several, else none."""
        return tuple(person.name for person in self.scenario.people) if self.scenario.several else ()

    def _ssm_terms(self) -> tuple[SsmTerms | None, SsmTerms | None]:
        """S_p's terms in SSM and PFL modes (the arm's stopping model is built here, once), the
        controller's and the monitor's (:meth:`SsmTerms.for_run`), else None twice. A measured
        v_h is the people's speed towards the robot as the sensor sees them, or without one as
        the ideal sensor does (their pelvis at the person rate, :attr:`approach`); of
        several people the fastest one's (S_p then holds against each)."""
        safety = self.scenario.safety
        if safety.mode == "zones":
            return None, None
        table = None if safety.stop_table is None else (safety.stop_table, self.scenario.robot.payload_kg)
        if self.sensor is not None:
            return SsmTerms.for_run(safety.ssm, self.robot, self.dt, self.sensor.approach_m_s, self.sensor, table)
        if safety.ssm.person_speed_m_s == MEASURED:
            self.approach = ApproachFilter((self.scenario.robot.base.x, self.scenario.robot.base.y))
        return SsmTerms.for_run(safety.ssm, self.robot, self.dt,
                                self.approach.speed if self.approach is not None else float, None, table)

    def _start_person(self, index: int, person: PersonSetup) -> PersonRun:
        """A person's actor on queues of their own, walking around the furniture, the arm and,
        with several people, the others (where they stand when a walk starts, and giving way
        to them on the way), at their walking speed, as tall as they are."""
        scenario = self.scenario
        several = scenario.several
        link = ActorLink(self.queues, person=person.name if several else None)
        walking_area = WalkingArea(box(0.0, 0.0, *scenario.room.size),
                                   [piece.footprint for piece in scenario.furniture.values()],
                                   lambda: [box(*b) for b in self.robot.floor_footprints()], person.clearance_m,
                                   (lambda: self._others_footprints(index)) if several else None)
        figures = PersonStats() if several else self.stats
        yielding = Yielding(person.name, index, lambda: self._neighbours(index), self._yield_event) if several else None
        plugin = ActorPlugin(self.client, ClipLibrary.default(), person.start, link.plugin_endpoint(),
                             walk_speed=person.walking_speed_mps, walking_area=walking_area, yielding=yielding,
                             body_scale=1.0 if person.height_m is None else person.height_m / BODY_HEIGHT_M)
        if several:
            self.stats.people = {**(self.stats.people or {}), person.name: figures}
        return PersonRun(person, link, plugin, ActorServer(link.server_endpoint()), figures)

    def _neighbours(self, index: int) -> list[Neighbour]:
        """The other people as person ``index``'s walk sees them (:mod:`hri.actor.yielding`)."""
        return [person.plugin.neighbour(person.name, i) for i, person in enumerate(self.people) if i != index]

    def _yield_event(self, t: float, event: str, fields: dict) -> None:
        """A person gave way (``person_yield``) or gave a walk up (``person_yield_gave_up``)."""
        self.events.emit(t, event, **fields)

    def _others_footprints(self, index: int) -> list:
        """What a walk of person ``index`` goes around when it starts: each other person where
        they stand and, while they walk, the rest of their walk, ``PERSON_FOOTPRINT_M`` either
        side (the one who starts later gives way; on the way, :mod:`hri.actor.yielding`)."""
        shapes = []
        for i, person in enumerate(self.people):
            if i != index:
                ahead = person.plugin.walk_ahead()
                line = Point(ahead[0]) if len(ahead) == 1 else LineString(ahead)
                shapes.append(line.buffer(PERSON_FOOTPRINT_M, cap_style="square"))
        return shapes

    def _whole_robot(self) -> bool:
        """Whether the safety functions see the robot whole, its tool and carried part with its
        arm: outside zones mode (zones runs keep the figures they had, docs/safety.md)."""
        return self.scenario.safety.mode != "zones"

    def _robot_shapes(self) -> RobotShapes:
        """The robot as a person's safety monitor measures it (:mod:`hri.run.robot_shapes`)."""
        return RobotShapes(self.client, self.robot, self._whole_robot(), self.parts.robot_part_body,
                           self.parts.follow_robot)

    def _pfl_setup(self) -> PflSetup:
        """Power and force limiting's figures, in every safety mode: the robot's effective mass
        from its moving parts' mass and its payload (:class:`hri.scenario.model.RobotSetup`)."""
        robot, safety = self.scenario.robot, self.scenario.safety
        return PflSetup(robot_effective_mass(robot.moving_mass_kg, robot.payload_kg + self.robot.tool_mass_kg),
                        safety.pfl.contact_distance_m, safety.rest_speed_m_s, safety.pfl.contact_area_cm2,
                        safety.pfl.contact_areas)

    def _start_tree(self, role: str, seed: np.random.SeedSequence) -> "TreeHost | RemoteTreeHost":
        broker = self.services.broker_address
        # the status transitions, for the run's .btlog files, Groot2 and a view of the trees
        record = (self.out_dir is not None or self.groot2_port is not None
                  or any(getattr(observer, "shows_ticks", False) for observer in self.observers))
        if self.split:
            return RemoteTreeHost(role, self.scenario, self.network, broker, seed, self.queues, record)
        return TreeHost(role, self.scenario, self.network.endpoint(f"{role}-tree"), broker, seed, record)

    def _take_events(self, result: TickResult) -> None:
        """A tree executor's events into the log; the people's actions and the robot's random
        failures are counted as they pass (the log may be on disk by the end)."""
        for t, event, fields in result.events:
            self.events.emit(t, event, **fields)
            self.stats.count_failure(event, fields)
            if event == "person_action_finished":
                self.stats.person_actions += 1
                self.stats.person_actions_failed += fields.get("result") != "succeeded"
                if self.stats.people is not None and fields.get("tree") in self.stats.people:
                    self.stats.people[fields["tree"]].count_action(fields)
            elif event == "random_failure" and fields.get("tree") == "robot":
                self.stats.robot_failures += 1

    def _zone_of(self, person: PersonRun, pose: Pose) -> str:
        """The person's zone as the monitor has it, or (before the first step) at ``pose``."""
        return person.monitor.zone or zone_of(self.scenario.zones, pose.x, pose.y)

    def _nearness(self, index: int, published: Pose) -> float:
        """How near person ``index`` is, as the robot's tree may know it: the newest separation,
        or with a safety sensor the distance of the pelvis it reports (``published``) from the
        robot's base (the sensor gives no one's separation but the smallest)."""
        if self.sensor is None:
            return self.people[index].monitor.last_separation
        base = self.scenario.robot.base
        return math.hypot(published.x - base.x, published.y - base.y)

    def _published(self, index: int, pose: Pose) -> tuple[Pose, str]:
        """Person ``index``'s pose and zone as the robot's tree is told them: the truth, as the
        monitor has it, or with a safety sensor the pelvis where the newest report puts it (the
        last one while an update is lost: the controller has stopped the robot meanwhile)."""
        if self.sensor is None:
            return pose, self._zone_of(self.people[index], pose)
        report = self.sensor.current or self.sensor.last
        if report is None:  # before the first report: the robot is held in a protective stop
            return pose, self._zone_of(self.people[index], pose)
        place = report.places[index]
        if place is None:  # not seen: where the sensor saw them last, else where they started
            start = self.scenario.people[index].start
            place = self.sensor.last_places.get(index, (start.x, start.y))
        x, y = place
        return replace(pose, x=x, y=y), zone_of(self.scenario.zones, x, y)

    def _hold_for_sensor(self, t: float, reported: float | None) -> None:
        """Zones mode with a safety sensor: a protective stop below the trees while its update
        is lost (cap 0, as the SSM controller makes one), ``sensor_stop`` and ``sensor_resume``."""
        cap = 0.0 if reported is None else 1.0
        if cap != self.robot.safety_cap:
            self.robot.set_safety_cap(cap)
            self.events.emit(t, "sensor_stop" if cap == 0.0 else "sensor_resume")

    def _sensed_before_step(self, t: float) -> float | None:
        """With a safety sensor, at the start of a step: the reports that have arrived (a lost
        one logged as ``sensor_dropout``; in zones mode :meth:`_hold_for_sensor`); the
        separation the SSM controller acts on, None when lost (and without a sensor)."""
        if self.sensor is None:
            return None
        lost = self.sensor.deliver(self.step_count)
        if lost is not None:
            self.events.emit(t, "sensor_dropout", measured_t=round(lost, 6))
        report = self.sensor.current
        reported = None if report is None else report.separation_m
        if self.ssm is None:
            self._hold_for_sensor(t, reported)
        return reported

    def _full_speed_held(self, t: float) -> bool:
        """Whether the SSM controller's decision at ``t`` is full speed without looking
        (:class:`~hri.run.ssm_control.FullSpeedWindow`): then neither the separation nor the
        joints are read for it."""
        return self.ssm_window is not None and self.ssm_window.holds(t, self.robot)

    def _controller_separation(self, t: float, reported: float | None) -> float | None:
        """The one person's separation the SSM controller acts on: the sensor's report, or the
        ideal sensor's, the monitor's bound at the step's end."""
        return self.monitor.separation_bound(t + self.dt) if self.sensor is None else reported

    def _fresh_separation(self, t: float) -> float | None:
        """The SSM controller's refresh (the ideal sensor): each person's separation measured now
        where the last measurement is older (the body as this step's animation posed it, else
        posed for the query), and the smallest bound at the step's end; None where every bound
        is of a measurement now already."""
        stale = [person for person in self.people if person.monitor.measured_t != person.monitor.now]
        if not stale:
            return None
        for person in stale:
            person.monitor.measure_posed()
        return min(person.monitor.separation_bound(t + self.dt) for person in self.people)

    def _sense_after_step(self) -> None:
        """After a physics step: the sensor's measurement when one is due (:meth:`_sense`), or
        for a measured v_h without a sensor the people's pelvis on their own steps."""
        if self.sensor is not None:
            if self.sensor.due(self.step_count):
                self._sense()
        elif self.approach is not None and self.step_count % self.person_every == 0:
            self.approach.add(self.now(), tuple(self._xy_of(person, False) for person in self.people))

    def _sense(self) -> None:
        """After a physics step on which the sensor measures: each person's true separation (a
        fresh query, the body posed) and pelvis position, into the sensor, and with a mounted
        sensor whether it sees them (:mod:`hri.run.sensor_view`)."""
        separations, places = [], []
        for person in self.people:
            monitor = person.monitor
            if monitor.measured_t != self.now():
                monitor.measure_posed()
            separations.append(monitor.last_separation)
            places.append(self._xy_of(person, monitor.posed))
        seen = None if self.sensor_view is None else [self.sensor_view.sees(person.plugin.body_id)
                                                      for person in self.people]
        self.sensor.measure(self.step_count, separations, places, seen, self.robot.joint_positions())

    def _world_events(self, event: str, **fields: Any) -> None:
        self.events.emit(self.now(), event, **fields)

    def close(self) -> None:
        while self._started:
            self._started.pop(0).finish(self.view)
        self.events.discard()  # hidden files of logs that were not written (a failed set-up)
        self.trajectory.discard()
        for btlog in self.btlogs.values():
            btlog.discard()
        if self.live is not None:
            self.live.close()
            self.live = None
        while self.trees:
            self.trees.popitem()[1].close()
        if getattr(self, "robot", None) is not None:  # its planning client: ~28 MB a run otherwise
            self.robot.close()
        if self.client is not None and self.client >= 0 and not self._window_lost():
            try:
                p.disconnect(physicsClientId=self.client)
            except p.error:
                pass
            self.client = None
        if self.queues is not None:
            self.queues.__exit__(None, None, None)
            self.queues = None

    # --- running --------------------------------------------------------------------
    def _tick_trees(self) -> None:
        """Publish the state streams, deliver them, tick the person's tree, then the robot's,
        and deliver their requests: all at this step's simulated time. The person's pose is
        where the safety monitor sees the pelvis now, with its zone: not the last posing, which
        is up to a person's step old, or newer where the monitor happened to pose the body for
        a query (then what the robot saw would depend on when the monitor asks)."""
        now = self.now()
        cap = None if self.ssm is None else self.robot.safety_cap
        if not self.several:
            person, zone = self._published(0, self.plugin.pose_at(now))
            self.services.publish(person, zone, cap)
        else:  # the person in the strictest zone, of them the nearest
            poses, zones = zip(*(self._published(i, person.plugin.pose_at(now)) for i, person in enumerate(self.people)))
            chosen = min(range(len(self.people)), key=lambda i: (-ZONE_ORDER.index(zones[i]), self._nearness(i, poses[i])))
            self.services.publish(poses[chosen], zones[chosen], cap, self.people[chosen].name)
        self.network.advance(now)
        for role, host in self.trees.items():
            result = host.tick(now)
            self._take_events(result)
            self._take_transitions(role, result.transitions)
            if result.ticked:
                self.status_logs[role].ticked(now)
            if role == ROBOT and result.ticked and result.status == "SUCCESS":
                self.stats.robot_cycles += 1
                self.events.emit(now, "robot_cycle_done", cycle=self.stats.robot_cycles)
        self.network.advance(now)
        if self.live is not None:
            self.live.poll()

    def _take_transitions(self, role: str, records: bytes) -> None:
        """Status transitions of ``role``'s tree into its ``.btlog`` file, to Groot2 and to the
        tree's status log (what a tick did, for a view of the trees)."""
        if records:
            self.status_logs[role].observe(records)
            if self.btlogs:
                self.btlogs[role].append(records)
            if self.live is not None:
                self.live.apply(role, records)

    def _flush_transitions(self, role: str) -> None:
        """Before a breakpoint waits inside ``role``'s tick: the transitions of the tick so far."""
        self._take_transitions(role, self.trees[role].take_transitions())

    def step(self) -> None:
        t = self.now()
        self.events.begin_step()
        if self.faults is not None:
            self.faults.step(t)
        reported = self._sensed_before_step(t)  # before the trees see it
        if self.step_count % self.tree_every == 0:
            self._tick_trees()
        else:
            self.network.advance(t)  # what a channel's latency delivers between ticks
        if not self.several:
            animation = self._animate(self.people[0], t)
            posed = bool(animation)
            if self.ssm is not None and not self._full_speed_held(t):  # below the trees, before the arm moves
                self.ssm.step(t, self._controller_separation(t, reported), self.monitor.joint_fraction)
            self._step_world()
            x, y = self._person_xy(posed)
            self.monitor.step(self.now(), x, y, posed, self._query_ahead_s(animation))
            self._record_trajectory()
        else:
            animations = [self._animate(person, t) for person in self.people]
            if self.ssm is not None:  # the smallest bound of any person's separation
                separation = (min(person.monitor.separation_bound(t + self.dt) for person in self.people)
                              if self.sensor is None else reported)
                self.ssm.step(t, separation, self.monitor.joint_fraction)
            self._step_world()
            self._monitor_people(animations)
            self._record_trajectory()
        self._sense_after_step()
        if self.observers:
            for observer in self.observers:
                observer.after_step(self.view)

    def _animate(self, person: PersonRun, t: float) -> str:
        """The person's part of a physics step (:meth:`_person_due`); what it was."""
        animation = self._person_due(person)
        if animation == STEP:
            person.plugin.step(t, self.dt)
            person.server.poll(t)
        elif animation == PREVIEW:
            person.plugin.preview(t, self.dt)
        if animation:  # posed at the step's end: a query before the world step must not pose it back
            person.monitor.posed = True
        return animation

    def _step_world(self) -> None:
        """The arm, the parts and the physics: one step."""
        self.robot.step(self.dt)
        self.parts.step()
        p.stepSimulation(physicsClientId=self.client)
        self.step_count += 1

    def _monitor_people(self, animations: list[str]) -> None:
        """Several people after a step: each one's zone, the robot's figures by the strictest
        zone of any (kept by the first person's monitor), then each one's checks."""
        now = self.now()
        places = [self._xy_of(person, bool(animation)) for person, animation in zip(self.people, animations)]
        for person, animation, (x, y) in zip(self.people, animations, places):
            person.monitor.begin_step(now, x, y, bool(animation))
        self.monitor.account_robot(now, strictest(person.monitor.zone for person in self.people))
        for person, animation, (x, y) in zip(self.people, animations, places):
            person.monitor.finish_step(now, x, y, bool(animation), self._query_ahead_s(animation))
        if all(animation == STEP for animation in animations):  # every body posed where it is now
            self.people_watch.check(now, {person.name: place for person, place in zip(self.people, places)})

    def _xy_of(self, person: PersonRun, posed: bool) -> tuple[float, float]:
        """The person's pelvis ``(x, y)`` after this step (see :meth:`_person_xy`)."""
        if posed:
            pose = person.plugin.pose
            return pose.x, pose.y
        return person.plugin.pelvis_xy_at(self.now())

    def _query_ahead_s(self, animation: str) -> float:
        """After the person's own step, the monitor takes a separation query due before the next
        one at once: the body is posed now, and a preview for the query would cost more."""
        return (self.person_every - 1) * self.dt if animation == STEP else 0.0

    def _person_xy(self, posed: bool) -> tuple[float, float]:
        """The pelvis ``(x, y)`` after this step: as posed, or where a posing would put it."""
        if posed:
            pose = self.plugin.pose
            return pose.x, pose.y
        return self.plugin.pelvis_xy_at(self.now())

    def _person_due(self, person: PersonRun) -> str:
        """``STEP``: the person acts and is animated, at ``simulation.person_rate_hz``;
        ``PREVIEW``: the body is only posed where it is, for the safety monitor's separation
        query after this step (near the robot, every step), which must not change what the
        person does; ``""``: neither, and the monitor takes the pelvis where a posing
        would put it (``ActorPlugin.pose_at``). The same with a view: a view never changes a run.
        In SSM mode the monitor also poses the body after a step for a query of its own
        (``SafetyMonitor.pose_person``): the person's body has no collisions, so when it is
        posed never changes the physics."""
        if self.step_count % self.person_every == 0:
            return STEP
        return PREVIEW if person.monitor.separation_due((self.step_count + 1) * self.dt) else ""

    def _record_trajectory(self) -> None:
        """A trajectory.csv row every ``TRAJECTORY_PERIOD_S`` (called after each physics step),
        from the step's state; the monitor samples the robot's fastest point for the statistics
        at these rows, as it always has."""
        if self.step_count % self.trajectory_every == 0:
            self.monitor.robot_speeds()
            self.trajectory.append(trajectory_row(self.view.state(), self.several))

    def run(self, duration_s: float) -> dict[str, Any]:
        """Run for ``duration_s`` simulated seconds; return the statistics object.

        With a ``window``, closing the window ends the run early; its statistics are marked
        ``complete: false``. A run ended by an error (:class:`HriError`) is marked so too, with
        the error's line (``error``).
        """
        steps = int(math.floor(duration_s / self.dt + 1e-9))
        wall_start = time.perf_counter()
        try:
            for _ in range(steps):
                if self._window_closed():
                    break
                self.step()
                if self.realtime:  # the wall time paused at breakpoints is not caught up
                    ahead = self.now() - (time.perf_counter() - wall_start - self._paused_s())
                    if ahead > 0:
                        time.sleep(ahead)
        except p.error as err:
            if not self._window_closed():
                lost = HriError(f"the PyBullet client was lost: {err}")
                self._ended_by(lost)
                raise lost from None
        except HriError as err:
            self._ended_by(err)
            raise
        except BaseException:
            self.stats.complete = False
            raise
        finally:  # the wall time held at Groot2 breakpoints is not the simulation's
            self._finish_stats(time.perf_counter() - wall_start - self._paused_s())
        return self.stats.as_dict()

    def _ended_by(self, err: HriError) -> None:
        """The run ends with ``err``: its line (files named by absolute path: the run's files
        are read from anywhere) goes into the statistics (``error``) and the event log
        (``run_error``)."""
        self.stats.complete = False
        self.stats.error = err.text(absolute=True)
        self.events.emit(self.now(), "run_error", error=self.stats.error)

    def _paused_s(self) -> float:
        """Wall seconds the run has been held at Groot2 breakpoints."""
        return self.live.paused_s if self.live is not None else 0.0

    def _window_closed(self) -> bool:
        if self.window is not None and (self.window.lost() or not p.isConnected(physicsClientId=self.client)):
            self.stats.complete = False
            return True
        return False

    def _window_lost(self) -> bool:
        return self.window is not None and self.window.lost()

    def _finish_stats(self, wall_time_s: float) -> None:
        self.stats.sim_time_s = self.now()
        self.stats.wall_time_s = wall_time_s
        if self.ssm is not None:
            self.stats.ssm_stops = self.ssm.stops
        if self.sensor is not None:
            self.events.emit(self.now(), "sensor_figures", updates=self.sensor.updates, dropouts=self.sensor.dropouts)
        self.stats.human_calls = self.called.calls
        self.stats.human_response_times = list(self.called.response_times)
        self.stats.recoveries = len(self.called.response_times)
        if self.stats.people is not None:  # each one's calls and answers
            for name, flag in self.called.flags.items():
                self.stats.people[name].count_calls(flag.calls, flag.response_times)
        node = self.services.node
        self.stats.messages_dropped = (sum(person.plugin.endpoint.dropped + person.server.endpoint.dropped
                                           for person in self.people)
                                       + node.endpoint.counts["dropped"] + node.counts["misdelivered"]
                                       + node.counts["unexpected_replies"]
                                       + sum(getattr(host, "dropped", 0) for host in self.trees.values()))
        self.stats.count_parts(self.parts.counts, self.scenario.parts)
        for person in self.people:
            if person.plugin.yielding is not None:
                person.figures.yields = person.plugin.yielding.counts.as_dict()
            if person.monitor.pfl is not None:  # a contact still going on at the end
                person.monitor.pfl.finish(self.now())
            closest = person.monitor.closest_approach()
            if closest is not None:
                when = closest.pop("t")
                self.events.emit(self.now(), "closest_approach", at_t=round(when, 6), **closest)
        self.stats.combine_people()
        self.events.emit(self.now(), "run_finished", complete=self.stats.complete)


def run_scenario(scenario: Scenario, duration_s: float, seed: int = 0, window: Window | None = None,
                 realtime: bool = False, out_dir: Path | None = None,
                 observers: Sequence[Observer] = (), split: bool = False, strict: bool = False,
                 groot2_port: int | None = None, groot2_access: Access = Access(),
                 say: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Build, run, write ``stats.json``, ``events.jsonl``, ``trajectory.csv`` and the trees'
    ``.btlog`` files (with ``out_dir``), and clean up;
    ``split``: the trees in processes of their own; ``strict``: the first safety violation
    ends the run (:class:`hri.base.errors.SafetyViolation`); ``groot2_port``: serve the trees
    live to Groot2 from that base port (:mod:`hri.run.groot2`), listening and taking hooks as
    ``groot2_access`` says, each tree's ports told to ``say`` as they open."""
    from hri.run.stats import write_run

    try:
        with Simulation(scenario, seed, window=window, realtime=realtime, observers=observers, split=split,
                        strict=strict, out_dir=out_dir, groot2_port=groot2_port,
                        groot2_access=groot2_access, say=say) as sim:
            try:
                stats = sim.run(duration_s)
            except HriError as err:
                err.stats = sim.stats.as_dict()  # what the run has, for the command to print
                raise
            finally:  # also a run that failed leaves what it has, marked "complete": false
                if out_dir is not None:
                    write_run(out_dir, sim.stats.as_dict(), sim.events, sim.trajectory, sim.btlogs)
    except HriError as err:  # a node's exception (ticking, or built in the run): the one line
        if out_dir is not None:  # names the node, the traceback waits in the run's folder
            keep_traceback(err, out_dir)
        raise
    return stats
