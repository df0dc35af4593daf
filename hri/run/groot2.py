"""A run's trees served live to Groot2 (``hri run --groot2 [PORT]``), and its breakpoints.

Each tree gets a :class:`~hri.bt.loggers.groot2_publisher.Groot2Publisher`, BehaviorTree.CPP
4.10's protocol: the person's tree on ``PORT`` (server) and ``PORT + 1`` (publisher), the
robot's on ``PORT + 2`` and ``PORT + 3``; ``PORT`` is 1667 unless given, as BehaviorTree.CPP's
``Groot2Publisher``. They listen on 127.0.0.1, so only this machine reaches them, unless
``--groot2-host ADDR`` names another address of this machine (0.0.0.0: every interface); the
requests that change the run (hooks, breakpoints) are taken from this machine only, unless
``--groot2-allow-remote-hooks`` (:class:`~hri.bt.loggers.groot2_publisher.Access`). The statuses come from the transitions each tick records (those of the
run's ``.btlog`` files); the simulation polls the publishers after each tick of the trees,
without blocking, so the run goes on at its pace whether a client is connected or not, and
what a client sends reaches the trees only as hooks.

**Breakpoints pause the whole simulation.** A tree ticked in the simulation's process runs
its hooks in the tick (:mod:`~hri.bt.loggers.groot2_hooks`). A breakpoint reached there waits
in :meth:`LiveTrees.pause`, inside the tick and so inside the simulation's step: physics, the
person's animation, the robot, the other tree, the network and simulated time all wait with
it. Before waiting, the tick's transitions so far are handed on as after a tick (``flush``:
to the ``.btlog`` file and the publisher), so Groot2 sees the tree as it stands at the
breakpoint; while waiting, both trees' publishers answer every request (STATUS, BLACKBOARD,
GET_HOOKS, ...), polled every 10 ms. The pause ends when Groot2 unlocks the breakpoint,
removes or disables the hook, or, its requests having stopped for the publisher's heartbeat
delay (5 s), the hooks are disabled (BehaviorTree.CPP's rule for a client that went away).
The wall time spent paused is :attr:`LiveTrees.paused_s` (a ``--realtime`` run does not rush
to catch it up). A tree in a process of its own (``--split``) keeps its nodes and its
blackboard there: its publisher refuses hooks, with one line on stderr, and answers a
BLACKBOARD request with no scopes (JSON ``null``).
"""

from __future__ import annotations

import ipaddress
import sys
import time
from typing import Any, Callable, Mapping, Sequence, TypeVar

import zmq

from hri.base.errors import HriError
from hri.bt.loggers.groot2_publisher import (DEFAULT_PORT, PAUSE_POLL_S, Access, Groot2Publisher,
                                             blackboard_scopes, status_layout)
from hri.bt.loggers.tree_xml import nodes_by_uid

PORTS_PER_TREE = 2  # the server on the base port, the publisher on the next
ROLE_ORDER = ("person", "robot")


def tree_ports(base: int = DEFAULT_PORT, roles: Sequence[str] = ROLE_ORDER) -> dict[str, int]:
    """The server port of each tree (its publisher is on the next one): ``roles`` are the
    run's trees in order, each person's (by name), then the robot's."""
    return {role: base + PORTS_PER_TREE * i for i, role in enumerate(roles)}


def check_base_port(base: int, trees: int = len(ROLE_ORDER)) -> None:
    """An HriError when the ports of ``trees`` trees from ``base`` are not all valid TCP ports."""
    last = base + PORTS_PER_TREE * trees - 1
    if not 1 <= base or last > 65535:
        raise HriError(f"--groot2 {base}: the ports {base} to {last} must lie in 1..65535")


def check_host(host: str) -> None:
    """An HriError naming ``--groot2-host`` when ``host`` is not an IP address."""
    try:
        ipaddress.ip_address(host)
    except ValueError:
        raise HriError(f"--groot2-host {host}: not an IP address (127.0.0.1, the default, serves this "
                       "machine only; 0.0.0.0 serves every IPv4 interface, :: every interface)") from None


Served = TypeVar("Served")


def serve_trees(base: int, serve: Callable[[str, int], Served], close: Callable[[Served], None],
                host: str = Access.host, roles: Sequence[str] = ROLE_ORDER) -> dict[str, Served]:
    """``serve(role, port)`` for each tree on its server port (:func:`tree_ports`) at ``host``,
    by role: an HriError naming the ports when one cannot listen, with what was served closed."""
    check_base_port(base, len(roles))
    check_host(host)
    served: dict[str, Served] = {}
    try:
        for role, port in tree_ports(base, roles).items():
            served[role] = serve(role, port)
    except zmq.ZMQError as error:
        for done in served.values():
            close(done)
        raise HriError(f"--groot2: cannot listen on port {port} or {port + 1} ({error})") from None
    return served


def served_line(role: str, publisher: Groot2Publisher) -> str:
    """Where ``role``'s tree listens for Groot2, one line: ``hri run --groot2`` and ``hri
    replay`` tell it in the same form (the address only when it is not this machine's loopback)."""
    host = publisher.access.host
    return (f"{role}: Groot2 on port {publisher.port} (publisher {publisher.port + 1})"
            + ("" if host == Access.host else f" at {host}"))


def split_refusal(role: str) -> Callable[[], str]:
    """The reason a tree in its own process refuses hooks, told once on stderr too."""
    message = (f"--groot2: breakpoints and hooks need the {role}'s tree in hri's process; "
               f"with --split it runs in its own: hook refused")
    told: list[bool] = []

    def refuse() -> str:
        if not told:
            print(f"hri: {message}", file=sys.stderr)
            told.append(True)
        return message

    return refuse


class LiveTrees:
    """The Groot2 publishers of a run's trees, by role. ``clock``: the simulated time (for
    recordings); ``flush(role)``: hand on the transitions ``role``'s tree recorded so far in the
    tick going on (before a breakpoint waits); ``access``: where they listen, who sends hooks."""

    def __init__(self, hosts: Mapping[str, Any], base: int = DEFAULT_PORT,
                 clock: Callable[[], float] = lambda: 0.0, flush: Callable[[str], None] = lambda role: None,
                 access: Access = Access()) -> None:
        self.paused_s = 0.0  # wall seconds spent at breakpoints
        self._flush = flush
        self._access = access
        self.publishers: dict[str, Groot2Publisher] = serve_trees(
            base, lambda role, port: self._publisher(role, hosts[role], port, clock), Groot2Publisher.close,
            access.host, tuple(hosts))
        self._poller = zmq.Poller()
        for publisher in self.publishers.values():
            self._poller.register(publisher.server, zmq.POLLIN)

    def _publisher(self, role: str, host: Any, port: int, clock: Callable[[], float]) -> Groot2Publisher:
        # a tree in its own process: the host's tree is a mirror whose blackboard and nodes are not the tree's
        if getattr(host, "blackboard", None) is None:
            return Groot2Publisher(host.tree_xml(), status_layout(host.tree.root), port,
                                   refuse_hooks=split_refusal(role), clock=clock, access=self._access)
        scopes = blackboard_scopes(host.tree)
        return Groot2Publisher(host.tree_xml(), status_layout(host.tree.root), port, lambda: scopes,
                               nodes=nodes_by_uid(host.tree.root), clock=clock,
                               pause=lambda until: self.pause(role, until), access=self._access)

    def describe(self) -> list[str]:
        """One line per tree saying where it is served (:func:`served_line`)."""
        return [served_line(role, publisher) for role, publisher in self.publishers.items()]

    def apply(self, role: str, records: bytes) -> None:
        """A tick's transition records of ``role``'s tree."""
        self.publishers[role].apply(records)

    def poll(self) -> None:
        """Answer what the clients asked since the last poll, without waiting: one look at
        both servers (after every tick: what a run pays with nobody connected)."""
        try:
            ready = dict(self._poller.poll(0))
        except zmq.ZMQError:
            ready = {}
        for publisher in self.publishers.values():
            if publisher.server in ready:
                publisher.poll()
            else:
                publisher.check_heartbeat()

    def pause(self, role: str, until: Callable[[], bool]) -> None:
        """Hold the run (the caller is inside ``role``'s tick) until ``until()``: hand on the
        tick's transitions so far, then answer every publisher's requests meanwhile."""
        self._flush(role)
        start = time.monotonic()
        try:
            while not until():
                self._serve(PAUSE_POLL_S)
        finally:
            self.paused_s += time.monotonic() - start

    def _serve(self, timeout_s: float) -> None:
        """Wait up to ``timeout_s`` for a request to any publisher, then answer all that came."""
        try:
            self._poller.poll(round(timeout_s * 1000))
        except zmq.ZMQError:
            time.sleep(timeout_s)  # a socket closed under the poller: the publishers' polls say nothing
        self.poll()

    def close(self) -> None:
        while self.publishers:
            self.publishers.popitem()[1].close()
