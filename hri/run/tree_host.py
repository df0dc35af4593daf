"""A tree executor: one behaviour tree, ticked in simulated time, reaching the world only
through the service network.

Like the thesis's BehaviorTree.CPP executors, which talked ROS 2 to the simulator, a
:class:`TreeHost` knows the broker's address and nothing else of the simulation: it finds
the services its role needs through the broker, subscribes to their state streams, and
hands its tree's nodes the clients (``ctx.services``):

=======  ==================================================================
tree     services
=======  ==================================================================
person   ``actor`` (:class:`~hri.actor.service.ActorClient`: the person's own, by name, in
         a run with several people), ``parts`` (with the person's own hand), ``called``
         (their own flag by default)
robot    ``robot`` (:class:`~hri.robot.service.RobotClient`), ``parts``, ``called`` (every
         person's flag, the first person's by default);
         the ``safety`` stream is written to the blackboard before each tick
         (``human_pose``, ``human_zone``, ``human_name``: of the person in the strictest zone)
=======  ==================================================================

A tree is named like the scenario's trees (:attr:`~hri.scenario.model.Scenario.trees`): each
person's name (``person`` for a scenario's one ``person:``), and ``robot``.

The same class runs in the simulation's process (the default, lockstep) and in a process of
its own (``hri run --split``, :mod:`hri.run.tree_process`). Either way the simulation calls
:meth:`TreeHost.tick` with the simulated time once per tree period; the host handles what
the network delivered since the last tick, ticks the tree (once its services are found and
their streams have answered), and returns the tree's status and the events its nodes
emitted. Nothing here reads the wall clock; the tree's random numbers come from the seed it
is given. With ``record_transitions`` the host also records every status transition of the
tree's nodes during the tick (:class:`~hri.bt.loggers.transitions.TransitionRecorder`, stamped
with the tick's simulated time) and returns them for the run's ``.btlog`` file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from hri.actor import service as actor_service
from hri.actor.service import ActorClient
from hri.bt.blackboard import Blackboard
from hri.bt.context import TreeContext
from hri.bt.loggers.transitions import TransitionRecorder
from hri.bt.loggers.tree_xml import tree_xml
from hri.bt.plugins import default_registry
from hri.bt.plugins import load_plugins
from hri.bt.node_status import status_name
from hri.bt.status import TreeStatusLog
from hri.bt.xml_loader import load_tree
from hri.workcell.called import QUERY as CALLED_QUERY, STREAM as CALLED_STREAM, CalledClient
from hri.base.errors import HriError
from hri.net import BrokerClient, CallTimeout, Client, Future, Node, QueueFull
from hri.net.transport import Endpoint
from hri.workcell.parts_service import QUERY as PARTS_QUERY, PartsClient
from hri.robot import service as robot_service
from hri.robot.service import RobotClient
from hri.run.safety_link import POSE_STREAM, QUERY as SAFETY_QUERY, SafetyClient
from hri.scenario.model import ROBOT, Scenario, tree_kind

CALL_TIMEOUT_S = 1.0  # simulated seconds a request may take before its node fails

_QUERIES = {"actor": actor_service.QUERY, "robot": robot_service.QUERY, "parts": PARTS_QUERY,
            "called": CALLED_QUERY, "safety": SAFETY_QUERY}
_ROLE_SERVICES = {"person": ("actor", "parts", "called"), "robot": ("robot", "parts", "called", "safety")}
_CLIENTS: dict[str, Callable[[Client, "TreeHost"], Any]] = {
    "actor": lambda c, host: ActorClient(c, c.subscribe(actor_service.STREAM)),
    "robot": lambda c, host: RobotClient(c, c.subscribe(robot_service.MOTION_STREAM)),
    # a person's tree acts with their own hand, and answers (AmICalled) for themselves
    "parts": lambda c, host: PartsClient(c, host.person),
    "called": lambda c, host: CalledClient(c, c.subscribe(CALLED_STREAM), host.people, host.person),
    "safety": lambda c, host: SafetyClient(c.subscribe(POSE_STREAM), host.start_pose),
}

Event = tuple[float, str, dict[str, Any]]  # (t, event, fields), as EventLog.emit takes them


@dataclass
class TickResult:
    """What one tick of a tree executor gives the simulation."""

    ticked: bool                # False while the services are still being found
    status: str                 # the tick's status: SUCCESS, FAILURE, RUNNING, SKIPPED; IDLE if not ticked
    events: list[Event] = field(default_factory=list)
    transitions: bytes = b""    # FileLogger2 records of the tick's status transitions, if recorded


class TreeHost:
    """One tree of a scenario (``role``: a person's name or ``robot``) on one network endpoint."""

    def __init__(self, role: str, scenario: Scenario, endpoint: Endpoint, broker_address: int,
                 seed: np.random.SeedSequence, record_transitions: bool = False) -> None:
        if role not in scenario.trees:
            raise HriError(f"unknown tree {role!r} (trees: {', '.join(scenario.trees)})")
        self.role = role
        self.kind = tree_kind(role)
        person = scenario.person_named(role)  # None: the robot's tree
        self._queries = {**_QUERIES, "actor": actor_service.query(role if scenario.several else None)}
        self._now = 0.0
        self._events: list[Event] = []
        self.node = Node(endpoint, clock=self.now, timeout=CALL_TIMEOUT_S, auto=False)
        self._broker = BrokerClient(self.node, broker_address)
        self.start_pose = scenario.person.start
        self.people = tuple(p.name for p in scenario.people)  # whom the tree's nodes may address
        # the person whose tree this is, named to the services with several people; else None
        self.person = role if person is not None and scenario.several else None
        self._discoveries: dict[str, Future] = {}
        self.ready = False
        self.registry = registry = default_registry()
        load_plugins(registry, scenario.plugins, scenario.path.parent, str(scenario.path),
                     scenario.line_of("plugins"))
        self.blackboard = Blackboard()
        for key, value in scenario.blackboard_entries(person).items():
            self.blackboard.set(key, value)
        if role == ROBOT:
            self.blackboard.set("human_pose", self.start_pose)
            self.blackboard.set("human_name", scenario.person.name)
        self.ctx = TreeContext(np.random.default_rng(seed), self.now, {}, self._node_event)
        path = str(scenario.trees[role])
        self.tree = load_tree(path, registry, self.ctx, self.blackboard)
        self.status_log = TreeStatusLog(role, self.tree.root, path)
        self.status_log.start(0.0, self._event)
        self.transitions = TransitionRecorder(self.tree.root) if record_transitions else None

    def tree_xml(self) -> str:
        """The tree as BehaviorTree.CPP's loggers describe it, with the UIDs of the transitions."""
        return tree_xml(self.tree, self.registry)

    def now(self) -> float:
        return self._now

    def _event(self, t: float, event: str, **fields: Any) -> None:
        self._events.append((t, event, fields))

    def _node_event(self, event: str, **fields: Any) -> None:
        self._events.append((self._now, event, {"tree": self.role, **fields}))

    # -- finding the services ----------------------------------------------------------------

    def _connect(self) -> None:
        """Ask the broker for each service (again after a lost request); once all are found,
        build the clients; ready when every subscription has answered."""
        for name in _ROLE_SERVICES[self.kind]:
            future = self._discoveries.get(name)
            if future is None or isinstance(future.error, (CallTimeout, QueueFull)):
                self._discoveries[name] = self._broker.discover(**self._queries[name])
            elif future.failed:
                raise HriError(f"{self.role} tree: {future.error.message}")
        if not self.ctx.services and all(f.done for f in self._discoveries.values()):
            for name, future in self._discoveries.items():
                self.ctx.services[name] = _CLIENTS[name](self.node.client(future.value), self)
        subscriptions = self.node.subscriptions()
        for subscription in subscriptions:
            if subscription.error is not None:
                raise HriError(f"{self.role} tree: {subscription.error.message}")
        self.ready = bool(self.ctx.services) and all(s.established for s in subscriptions)

    # -- ticking -----------------------------------------------------------------------------

    def tick(self, now: float, run_tree: bool = True) -> TickResult:
        """Handle what has arrived, then tick the tree at simulated time ``now`` (once ready;
        ``run_tree=False``: only find the services, as the simulation does while it sets up)."""
        self._now = now
        self.node.poll()
        if not self.ready:
            self._connect()
        if self.ready and run_tree:
            safety: SafetyClient | None = self.ctx.services.get("safety")
            if safety is not None:
                self.blackboard.set("human_pose", safety.person_pose())
                if safety.person_zone() is not None:
                    self.blackboard.set("human_zone", safety.person_zone())
                if safety.person_name() is not None:
                    self.blackboard.set("human_name", safety.person_name())
                if safety.speed_cap() is not None:
                    self.blackboard.set("ssm_speed_cap", safety.speed_cap())
            if self.transitions is not None:
                self.transitions.set_time(now)
            status = status_name(self.tree.tick_once())
            self.status_log.record(now, self._event)
        else:
            status = status_name(self.tree.status)
        events, self._events = self._events, []
        return TickResult(self.ready and run_tree, status, events, self.take_transitions())

    def take_transitions(self) -> bytes:
        """The status transitions recorded since they were last taken (none unless recorded)."""
        return self.transitions.take() if self.transitions is not None else b""

    def close(self) -> None:
        self.node.endpoint.close()
