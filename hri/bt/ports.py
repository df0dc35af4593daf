"""Port declarations, and the ports of a node: parsed from its XML attributes, read and written.

A node declares its ports as a tuple of :class:`Port`. In the XML a port's attribute is
either a literal, converted by the port's type when the tree is loaded (so mistakes
surface at load time; the types and their syntax: :mod:`hri.bt.value_types`), or a
blackboard reference ``{key}`` resolved when the node ticks. A blackboard value that
already has the port's type is passed through; a string is converted like a literal.

Output ports name a blackboard key, written ``{key}`` (a bare ``key`` is accepted too,
as in BehaviorTree.CPP). ``{=}`` means "the key named like the port".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, Mapping

from hri.bt.blackboard import BlackboardError, converted
from hri.bt.value_types import coerce, convert, type_name
from hri.base.errors import HriError


class PortError(HriError):
    """A port is missing, unknown, or its value has the wrong type."""


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()
"""The default of a port that must be given in the XML."""


Direction = Literal["in", "out", "inout"]


@dataclass(frozen=True)
class Port:
    """A node's port: name, direction, value type, default, description and range.

    ``default`` is a typed value (or ``None``); :data:`REQUIRED` means the XML must give it.
    A number's range is ``low``..``high`` (either may be None), or above ``above`` (a bound
    not included: ``above=0.0`` is "positive"); :meth:`range_problem` checks a value.
    """

    name: str
    direction: Direction
    type: Any = str
    default: Any = REQUIRED
    description: str = ""
    low: float | None = None
    high: float | None = None
    above: float | None = None

    @property
    def required(self) -> bool:
        return self.default is REQUIRED

    def range_problem(self, value: Any) -> str | None:
        """``port 'NAME': must be ..., got VALUE`` when ``value`` is out of the port's range;
        None when it is in it, or not a number (the type decides that)."""
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None
        if self.above is not None and not value > self.above:
            limit = "positive" if self.above == 0 else f"above {self.above:g}"
        elif (self.low is not None and not value >= self.low) or (self.high is not None and not value <= self.high):
            limit = (f"within {self.low:g}..{self.high:g}" if self.low is not None and self.high is not None
                     else f"{self.low:g} or more" if self.low is not None else f"{self.high:g} or less")
        else:
            return None
        return f"port {self.name!r}: must be {limit}, got {value}"


def input_port(name: str, type: Any = str, default: Any = REQUIRED, description: str = "") -> Port:
    return Port(name, "in", type, default, description)


def output_port(name: str, type: Any = str, default: Any = REQUIRED, description: str = "") -> Port:
    return Port(name, "out", type, default, description)


_REFERENCE = re.compile(r"^\{\s*([^{}\s]*)\s*\}$")


def reference_key(text: str, port_name: str) -> str | None:
    """The key of a blackboard reference ``{key}`` (``{=}`` is the port's name), else None."""
    match = _REFERENCE.match(text.strip())
    if not match:
        return None
    key = match.group(1)
    if key == "=":
        return port_name
    if not key:
        raise PortError(f"port {port_name!r}: empty blackboard reference '{{}}'")
    return key


_BARE_KEY = re.compile(r"^@?[A-Za-z_][\w.]*$")


def is_port_attribute(attr: str) -> bool:
    """True for an attribute that names a port; False for ``name``, ``ID`` and the attributes
    that start with ``_`` (conditions, ``_autoremap``, Groot2's editor attributes), which
    BehaviorTree.CPP does not take as ports either."""
    return not attr.startswith("_") and attr not in ("name", "ID")


class PortsMixin:
    """Typed ports of a node: declared in ``PORTS``, parsed from the XML, read and written.

    An input port's literal is converted by the port's type when the tree loads (a wrong
    literal is a load-time :class:`PortError`); a ``{key}`` is read from the blackboard at
    tick time. Output ports are optional; a value written to one is checked against the
    port's type, then against the entry's.
    """

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
            if not is_port_attribute(attr):
                continue
            port = cls.port(attr)
            if port is None:
                known = ", ".join(p.name for p in cls.PORTS) or "none"
                errors.append(f"unknown port {attr!r} (ports: {known})")
                continue
            try:
                parsed[attr] = _parse_port(port, text)
            except (PortError, ValueError) as err:
                errors.append(getattr(err, "message", None) or f"port {attr!r} ({type_name(port.type)}): {err}")
                continue
            kind, value = parsed[attr]
            problem = cls.check_value(attr, value) if kind == "lit" else None
            if problem:
                errors.append(problem)
        for port in cls.PORTS:
            if port.required and port.direction == "in" and port.name not in ports:
                errors.append(f"missing required port {port.name!r}")
        return parsed, errors

    @classmethod
    def check_value(cls, port: str, value: Any) -> str | None:
        """The problem of a value of ``port`` (out of the port's declared range), else None.

        Checked for a literal when the tree loads and for a scenario's blackboard value read by
        the port when the scenario is validated; a value read from the blackboard when the
        node ticks is checked against the range alone. A node with a check the range cannot
        say (a clip's name) extends it."""
        declared = cls.port(port)
        return declared.range_problem(value) if declared is not None else None

    def _init_ports(self, ports: Mapping[str, str], ctx: Any, blackboard: Any) -> None:
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

    def input_key(self, name: str) -> str | None:
        """The blackboard key of port ``name`` when it is a ``{key}`` reference, else None."""
        kind, value = self._ports.get(name, ("lit", None))
        return value if kind == "ref" else None

    def _declared(self, name: str) -> Port:
        port = self.port(name)
        if port is None:
            raise KeyError(f"{type(self).__name__} has no port {name!r}")
        return port

    def get_input(self, name: str) -> Any:
        """The typed value of input port ``name``; PortError for a missing/ill-typed entry."""
        port = self._declared(name)
        if name not in self._ports:
            return None if port.default is REQUIRED else port.default
        kind, value = self._ports[name]
        if kind == "lit":
            return value
        try:
            raw = self.blackboard.get(value)
        except KeyError as err:
            raise self._error(f"input port {name!r}: {err.args[0]}") from None
        try:
            typed = coerce(raw, port.type)
        except ValueError as err:
            raise self._error(f"input port {name!r} from {{{value}}}: {err}") from None
        problem = port.range_problem(typed)
        if problem:
            raise self._error(f"{problem} (from {{{value}}})")
        return typed

    def required_input(self, name: str) -> Any:
        """:meth:`get_input`, or a PortError ``missing port`` when the port was not given
        (BehaviorTree.CPP's nodes throw when they tick without it)."""
        value = self.get_input(name)
        if value is None:
            raise self._error(f"missing port {name!r}")
        return value

    def set_output(self, name: str, value: Any) -> None:
        """Write ``value`` to the blackboard key of output port ``name`` (nothing when the port
        is not connected); PortError when the port's or the entry's type refuses it."""
        port = self._declared(name)
        if port.direction == "in":
            raise KeyError(f"{type(self).__name__}: port {name!r} is an input port")
        if name not in self._ports:
            return
        key = self._ports[name][1]
        try:
            self.blackboard.set(key, value if port.type is Any else converted(value, port.type, key))
        except BlackboardError as err:
            raise self._error(f"output port {name!r}: {err}") from None


def _parse_port(port: Port, text: str) -> tuple[str, Any]:
    key = reference_key(text, port.name)
    if port.direction == "in":
        return ("ref", key) if key is not None else ("lit", convert(text, port.type))
    if key is not None:
        return "ref", key
    if port.direction == "inout":
        return "lit", convert(text, port.type)
    stripped = text.strip()
    if stripped == "=":
        return "ref", port.name
    if not _BARE_KEY.match(stripped):
        raise PortError(f"output port {port.name!r} needs a blackboard key like {{key}}, got {text!r}")
    return "ref", stripped
