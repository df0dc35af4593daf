"""Base classes of every node the XML loader builds: ports on top of py_trees behaviours.

* :class:`BTNode` — a leaf (action or condition): override ``update()`` (and
  ``on_halted()`` for clean-up when a RUNNING node is interrupted).
* :class:`ServiceCallNode` — a leaf that asks a service on the network and waits for the
  answer: override ``request()`` and ``result(value)``.
* :class:`BTControl` — a composite with children (``MIN_CHILDREN``/``MAX_CHILDREN``).
* :class:`BTDecorator` — exactly one child.

All take ``(name, ports, ctx, blackboard)`` (controls and decorators also their children),
where ``ports`` holds the raw XML attribute strings. Literal inputs are converted in the
constructor, so a wrong literal is a load-time :class:`~hri.bt.ports.PortError`; blackboard
references ``{key}`` are resolved by :meth:`PortsMixin.get_input` at tick time.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, ClassVar, Iterator, Mapping, Sequence

import py_trees
from py_trees.common import Status

from hri.bt.blackboard import Blackboard
from hri.bt.context import TreeContext
from hri.bt.ports import Port, PortError, coerce, convert, reference_key, type_name

if TYPE_CHECKING:
    from hri.net import Future

_IGNORED_ATTRIBUTES = frozenset({"_description"})
_BARE_KEY = re.compile(r"^@?[A-Za-z_][\w.]*$")


class PortsMixin:
    """Typed ports for a py_trees behaviour (see the module docstring)."""

    PORTS: ClassVar[tuple[Port, ...]] = ()
    location: tuple[str, int] | None = None
    """``(file, line)`` of the XML element, set by the loader (for run-time errors)."""

    name: str

    @classmethod
    def port(cls, name: str) -> Port | None:
        for port in cls.PORTS:
            if port.name == name:
                return port
        return None

    @classmethod
    def parse_ports(cls, ports: Mapping[str, str]) -> tuple[dict[str, tuple[str, Any]], list[str]]:
        """Parse raw attributes: ``({port: ("ref"|"lit", key|value)}, [error messages])``."""
        parsed: dict[str, tuple[str, Any]] = {}
        errors: list[str] = []
        for attr, text in ports.items():
            if attr in _IGNORED_ATTRIBUTES:
                continue
            port = cls.port(attr)
            if port is None:
                known = ", ".join(p.name for p in cls.PORTS) or "none"
                if attr.startswith("_"):
                    errors.append(f"attribute {attr!r} (BehaviorTree.CPP scripting) is not supported")
                else:
                    errors.append(f"unknown port {attr!r} (ports: {known})")
                continue
            try:
                key = reference_key(text, attr)
            except PortError as err:
                errors.append(err.message)
                continue
            if port.direction != "in":
                stripped = text.strip()
                if key is None and not _BARE_KEY.match(stripped):
                    errors.append(f"output port {attr!r} needs a blackboard key like {{key}}, got {text!r}")
                    continue
                parsed[attr] = ("ref", key if key is not None else stripped)
            elif key is not None:
                parsed[attr] = ("ref", key)
            else:
                try:
                    parsed[attr] = ("lit", convert(text, port.type))
                except ValueError as err:
                    errors.append(f"port {attr!r} ({type_name(port.type)}): {err}")
        for port in cls.PORTS:
            if port.required and port.name not in ports:
                errors.append(f"missing required port {port.name!r}")
        return parsed, errors

    def _init_ports(self, ports: Mapping[str, str], ctx: TreeContext, blackboard: Blackboard) -> None:
        self.raw_ports = dict(ports)
        self.ctx = ctx
        self.blackboard = blackboard
        self._ports, errors = self.parse_ports(ports)
        if errors:
            raise PortError("; ".join(errors))

    def _error(self, message: str) -> PortError:
        file, line = self.location if self.location else (None, None)
        return PortError(f"{type(self).__name__} {self.name!r}: {message}", file, line)

    def has_input(self, name: str) -> bool:
        """True when the port was given in the XML (or has a non-None default)."""
        port = self.port(name)
        return name in self._ports or (port is not None and port.default is not None and not port.required)

    def literal_input(self, name: str) -> Any:
        """The load-time value of a literal port (or its default); None for a reference."""
        kind, value = self._ports.get(name, ("lit", self._declared(name).default))
        return value if kind == "lit" else None

    def _declared(self, name: str) -> Port:
        port = self.port(name)
        if port is None:
            raise KeyError(f"{type(self).__name__} has no port {name!r}")
        return port

    def get_input(self, name: str) -> Any:
        """The typed value of input port ``name``; PortError for a missing/ill-typed entry."""
        port = self._declared(name)
        if name not in self._ports:
            return port.default
        kind, value = self._ports[name]
        if kind == "lit":
            return value
        try:
            raw = self.blackboard.get(value)
        except KeyError as err:
            raise self._error(f"input port {name!r}: {err.args[0]}") from None
        try:
            return coerce(raw, port.type)
        except ValueError as err:
            raise self._error(f"input port {name!r} from {{{value}}}: {err}") from None

    def set_output(self, name: str, value: Any) -> None:
        """Write ``value`` to the blackboard key of output port ``name`` (no-op if unconnected)."""
        port = self._declared(name)
        if port.direction == "in":
            raise KeyError(f"{type(self).__name__}: port {name!r} is an input port")
        if name in self._ports:
            self.blackboard.set(self._ports[name][1], value)


def _update(node: py_trees.behaviour.Behaviour) -> None:
    """The end of a tick: ``update()``'s status (anything but a Status is INVALID, as in
    py_trees), and the node stopped with it when it is not RUNNING."""
    status = node.update()
    if not isinstance(status, Status):
        node.logger.error(f"A behaviour returned an invalid status, setting to INVALID [{status}][{node.name}]")
        status = Status.INVALID
    if status != Status.RUNNING:
        node.stop(status)
    node.status = status


# Leaves and decorators tick and stop as py_trees' Behaviour and Decorator do, less the debug
# lines those format (class names, statuses) on every tick and stop whether or not debug
# logging is on, and less the list(Status) built per tick: over a third of a tree's tick.


class BTNode(PortsMixin, py_trees.behaviour.Behaviour):
    """A leaf node (action or condition)."""

    def __init__(self, name: str, ports: Mapping[str, str], ctx: TreeContext, blackboard: Blackboard):
        py_trees.behaviour.Behaviour.__init__(self, name)
        self._init_ports(ports, ctx, blackboard)

    def tick(self) -> Iterator[py_trees.behaviour.Behaviour]:
        if self.status != Status.RUNNING:
            self.initialise()
        _update(self)
        yield self

    def stop(self, new_status: Status) -> None:
        self.terminate(new_status)
        self.status = new_status
        self.iterator = self.tick()

    def terminate(self, new_status: Status) -> None:
        if new_status == Status.INVALID and self.status == Status.RUNNING:
            self.on_halted()

    def on_halted(self) -> None:
        """Called when the node is interrupted while RUNNING (BehaviorTree.CPP ``halt()``)."""


class ServiceCallNode(BTNode):
    """A leaf that asks a service and waits for its answer, as BehaviorTree.CPP's service nodes do.

    The request goes out on the first tick (:meth:`request`), the node is RUNNING until the
    answer arrives, then :meth:`result` turns it into SUCCESS or FAILURE. A request that
    failed (lost, not answered in time, refused, a full queue) is FAILURE and a
    ``service_call_failed`` event; a halted node gives up its request (a late answer is dropped).
    """

    _future: "Future | None" = None

    def request(self) -> "Future":
        raise NotImplementedError

    def result(self, value: Any) -> Status:
        raise NotImplementedError

    def initialise(self) -> None:
        self._future = None

    def update(self) -> Status:
        if self._future is None:
            self._future = self.request()
        if self._future.pending:
            return Status.RUNNING
        if self._future.failed:
            self.ctx.events("service_call_failed", node=self.name, error=self._future.error.message)
            return Status.FAILURE
        return self.result(self._future.value)

    def on_halted(self) -> None:
        if self._future is not None:
            self._future.cancel()


class ChildrenMixin:
    """How many children a control or decorator accepts."""

    MIN_CHILDREN: ClassVar[int] = 1
    MAX_CHILDREN: ClassVar[int | None] = None

    @classmethod
    def children_count_error(cls, count: int) -> str | None:
        """A message when ``count`` children are not allowed, else None."""
        low, high = cls.MIN_CHILDREN, cls.MAX_CHILDREN
        if count >= low and (high is None or count <= high):
            return None
        if high is None:
            return f"needs at least {low} child{'ren' if low != 1 else ''}, has {count}"
        if low == high:
            return f"needs exactly {low} child{'ren' if low != 1 else ''}, has {count}"
        return f"needs {low} to {high} children, has {count}"


class BTControl(PortsMixin, ChildrenMixin, py_trees.composites.Composite):
    """A control node (composite); ``tick()`` implements its semantics."""

    def __init__(
        self,
        name: str,
        ports: Mapping[str, str],
        ctx: TreeContext,
        blackboard: Blackboard,
        children: Sequence[py_trees.behaviour.Behaviour],
    ):
        py_trees.composites.Composite.__init__(self, name, list(children))
        self._init_ports(ports, ctx, blackboard)
        self.check_children_count(len(self.children))

    def check_children_count(self, count: int) -> None:
        message = self.children_count_error(count)
        if message:
            raise PortError(message)


class BTDecorator(PortsMixin, ChildrenMixin, py_trees.decorators.Decorator):
    """A decorator: exactly one child; ``update()`` maps the child's status."""

    MAX_CHILDREN: ClassVar[int | None] = 1

    def __init__(
        self,
        name: str,
        ports: Mapping[str, str],
        ctx: TreeContext,
        blackboard: Blackboard,
        children: Sequence[py_trees.behaviour.Behaviour],
    ):
        message = self.children_count_error(len(children))
        if message:
            raise PortError(message)
        py_trees.decorators.Decorator.__init__(self, name, children[0])
        self._init_ports(ports, ctx, blackboard)

    def tick(self) -> Iterator[py_trees.behaviour.Behaviour]:
        if self.status != Status.RUNNING:
            self.initialise()
        yield from self.decorated.tick()
        _update(self)
        yield self

    def stop(self, new_status: Status) -> None:
        self.terminate(new_status)
        if new_status == Status.INVALID:  # halted: halt the child
            self.decorated.stop(new_status)
        if self.decorated.status == Status.RUNNING:  # finished while the child runs: halt it
            self.decorated.stop(Status.INVALID)
        self.status = new_status
