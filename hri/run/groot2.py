"""A run's trees served live to Groot2 (``hri run --groot2 [PORT]``).

Each tree gets a :class:`~hri.bt.loggers.groot2_publisher.Groot2Publisher`, BehaviorTree.CPP
4.10's protocol: the person's tree on ``PORT`` (server) and ``PORT + 1`` (publisher), the
robot's on ``PORT + 2`` and ``PORT + 3``; ``PORT`` is 1667 unless given, as BehaviorTree.CPP's
``Groot2Publisher``. The statuses come from the transitions each tick records (those of the
run's ``.btlog`` files); the simulation polls the publishers after each tick of the trees,
without blocking, so the run goes on at its pace whether a client is connected or not, and
what a client sends never reaches the trees. A tree in a process of its own (``--split``)
keeps its blackboard there: its publisher answers a BLACKBOARD request with no scopes (JSON
``null``).
"""

from __future__ import annotations

from typing import Any, Mapping

import zmq

from hri.base.errors import HriError
from hri.bt.loggers.groot2_publisher import DEFAULT_PORT, Groot2Publisher, blackboard_scopes, status_layout

PORTS_PER_TREE = 2  # the server on the base port, the publisher on the next
ROLE_ORDER = ("person", "robot")


def tree_ports(base: int = DEFAULT_PORT) -> dict[str, int]:
    """The server port of each role's tree (its publisher is on the next one)."""
    return {role: base + PORTS_PER_TREE * i for i, role in enumerate(ROLE_ORDER)}


def check_base_port(base: int) -> None:
    """An HriError when the four ports from ``base`` are not all valid TCP ports."""
    last = base + PORTS_PER_TREE * len(ROLE_ORDER) - 1
    if not 1 <= base or last > 65535:
        raise HriError(f"--groot2 {base}: the ports {base} to {last} must lie in 1..65535")


class LiveTrees:
    """The Groot2 publishers of a run's trees, by role."""

    def __init__(self, hosts: Mapping[str, Any], base: int = DEFAULT_PORT) -> None:
        check_base_port(base)
        self.publishers: dict[str, Groot2Publisher] = {}
        try:
            for role, port in tree_ports(base).items():
                host = hosts[role]
                # a tree in its own process: the host's tree is a mirror whose blackboard is not the tree's
                local = getattr(host, "blackboard", None) is not None
                scopes = blackboard_scopes(host.tree) if local else None
                self.publishers[role] = Groot2Publisher(host.tree_xml(), status_layout(host.tree.root), port,
                                                        (lambda s=scopes: s) if local else None)
        except zmq.ZMQError as error:
            self.close()
            raise HriError(f"--groot2: cannot listen on port {port} or {port + 1} ({error})") from None

    def apply(self, role: str, records: bytes) -> None:
        """A tick's transition records of ``role``'s tree."""
        self.publishers[role].apply(records)

    def poll(self) -> None:
        """Answer what the clients asked since the last poll, without waiting."""
        for publisher in self.publishers.values():
            publisher.poll()

    def close(self) -> None:
        while self.publishers:
            self.publishers.popitem()[1].close()
