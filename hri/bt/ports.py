"""Port declarations and conversion of XML attribute strings to typed values.

A node declares its ports as a tuple of :class:`Port`. In the XML a port's attribute is
either a literal, converted by the port's type when the tree is loaded (so mistakes
surface at load time), or a blackboard reference ``{key}`` resolved when the node ticks.
A blackboard value that already has the port's type is passed through; a string is
converted like a literal.

Literal syntax by type (docs/trees.md):

=================  ==============================================================
``float``, ``int``  C++ number syntax (``0.5``, ``-3``, ``1e3``); NaN is rejected
``Unsigned``       an ``int`` of 0 or more (C++ ``unsigned``)
``bool``           ``true``/``false`` (also ``True``, ``TRUE``, ``1``, ``0`` ...)
``str``            as written
``Pose``           ``x;y;z;qx;qy;qz;qw`` or ``x;y;z`` (identity orientation)
``Quaternion``     ``qx;qy;qz;qw`` (the null quaternion ``0;0;0;0`` is allowed)
``Area``           ``x1,y1;x2,y2;x3,y3;...`` (at least three corners)
``Weights``        ``0.95;0.05`` (one non-negative number per entry)
=================  ==============================================================

Output ports name a blackboard key, written ``{key}`` (a bare ``key`` is accepted too,
as in BehaviorTree.CPP). ``{=}`` means "the key named like the port".
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Literal, Mapping, NamedTuple

from py_trees.common import Status

from hri.bt.blackboard import AnyValue, BlackboardError, converted, exact_cast
from hri.bt.node_status import parse_status
from hri.base.errors import HriError
from hri.base.geometry import Area, Pose


class PortError(HriError):
    """A port is missing, unknown, or its value has the wrong type."""


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()
"""The default of a port that must be given in the XML."""


class Quaternion(NamedTuple):
    """An orientation ``(qx, qy, qz, qw)``; ``(0, 0, 0, 0)`` means "none given"."""

    qx: float
    qy: float
    qz: float
    qw: float


class Weights(tuple):
    """A tuple of non-negative floats (WeightedRandom's ``weights``)."""


class Unsigned(int):
    """A whole number of 0 or more (C++ ``unsigned``: milliseconds of Sleep, Delay, Timeout)."""


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


def _floats(text: str, what: str) -> list[float]:
    values = []
    for part in text.split(";"):
        values.append(to_float(part, what))
    return values


_CPP_INT = re.compile(r"-?[0-9]+")
_CPP_FLOAT = re.compile(r"-?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|inf(?:inity)?|nan)", re.IGNORECASE)


def cpp_int(text: str) -> int | None:
    """An integer as C++ ``std::from_chars`` reads the whole of ``text`` (an optional ``-``
    and decimal digits: no ``+``, spaces or ``_``), else None."""
    return int(text) if _CPP_INT.fullmatch(text) else None


def cpp_float(text: str) -> float | None:
    """A number as C++ ``std::from_chars`` reads the whole of ``text`` (``1``, ``-2.5``,
    ``1e3``, ``inf``, ``nan``: no ``+``, spaces, ``_`` or hexadecimal), else None."""
    return float(text) if _CPP_FLOAT.fullmatch(text) else None


def _leading(pattern: re.Pattern, text: str, what: str) -> str:
    match = pattern.match(text)
    if match is None:
        raise ValueError(f"expected {what}, got {text!r}")
    return match.group()


def leading_number(text: str, type_: type) -> int | float:
    """The number at the start of ``text`` as C++ ``std::from_chars`` reads it when the rest
    is ignored (BehaviorTree.CPP's conversion of a blackboard string: ``"2.5"`` is the int 2);
    ValueError when ``text`` does not start with one or it is out of range."""
    if type_ is float:
        return float(_leading(_CPP_FLOAT, text, "a number"))
    number = int(_leading(_CPP_INT, text, "an integer"))
    if not -2**63 <= number < 2**63:
        raise ValueError(f"{text!r} is out of the integer range")
    if type_ is Unsigned and number < 0:
        raise ValueError(f"expected 0 or more, got {text!r}")
    return type_(number)


def to_float(text: str, what: str = "a number") -> float:
    value = cpp_float(text.strip())
    if value is None:
        raise ValueError(f"expected {what}, got {text!r}")
    if math.isnan(value):
        raise ValueError(f"expected {what}, got NaN")
    return value


def to_int(text: str) -> int:
    value = cpp_int(text.strip())
    if value is None:
        raise ValueError(f"expected an integer, got {text!r}")
    return value


_TRUE = {"true", "True", "TRUE", "1"}
_FALSE = {"false", "False", "FALSE", "0"}


def to_bool(text: str) -> bool:
    stripped = text.strip()
    if stripped in _TRUE:
        return True
    if stripped in _FALSE:
        return False
    raise ValueError(f"expected true or false, got {text!r}")


def split_list(text: str) -> list[str]:
    """``text`` split at ``;`` as BehaviorTree.CPP splits a list: ``""`` is no item and a
    trailing ``;`` adds none (``"1;2;"`` is two items, ``"1;;2"`` three)."""
    parts = text.split(";")
    return parts[:-1] if parts and parts[-1] == "" else parts


def to_unsigned(text: str) -> Unsigned:
    value = to_int(text)
    if value < 0:
        raise ValueError(f"expected 0 or more, got {text!r}")
    return Unsigned(value)


def _pass_unsigned(value: Any) -> Unsigned | None:
    if isinstance(value, (bool, int, float)):
        number = exact_cast(value, int)
        return Unsigned(number) if number is not None and number >= 0 else None
    return None


def to_pose(text: str) -> Pose:
    parts = text.split(";")
    if len(parts) not in (3, 7):
        raise ValueError(f"expected a pose 'x;y;z' or 'x;y;z;qx;qy;qz;qw', got {text!r}")
    return Pose(*_floats(text, "a number in a pose"))


def to_quaternion(text: str) -> Quaternion:
    parts = text.split(";")
    if len(parts) != 4:
        raise ValueError(f"expected a quaternion 'qx;qy;qz;qw', got {text!r}")
    return Quaternion(*_floats(text, "a number in a quaternion"))


def to_area(text: str) -> Area:
    points = []
    for corner in text.split(";"):
        xy = corner.split(",")
        if len(xy) != 2:
            raise ValueError(f"expected an area 'x1,y1;x2,y2;x3,y3;...', got {text!r}")
        points.append((to_float(xy[0], "a coordinate"), to_float(xy[1], "a coordinate")))
    try:
        return Area(points)
    except ValueError as err:
        raise ValueError(f"invalid area {text!r}: {err}") from None


def to_weights(text: str) -> Weights:
    weights = _floats(text, "a weight")
    if any(w < 0 or math.isinf(w) for w in weights):
        raise ValueError(f"weights must be finite and non-negative, got {text!r}")
    return Weights(weights)


CONVERTERS: dict[Any, Callable[[str], Any]] = {
    str: lambda text: text,
    Status: parse_status,
    float: to_float,
    int: to_int,
    Unsigned: to_unsigned,
    bool: to_bool,
    Pose: to_pose,
    Quaternion: to_quaternion,
    Area: to_area,
    Weights: to_weights,
    Any: lambda text: text,
    AnyValue: lambda text: text,
}


def _pass_quaternion(value: Any) -> Quaternion | None:
    if isinstance(value, Pose):
        return Quaternion(*value.orientation)
    if isinstance(value, (tuple, list)) and len(value) == 4:
        return Quaternion(*(float(v) for v in value))
    return None


def _pass_weights(value: Any) -> Weights | None:
    if isinstance(value, (tuple, list)):
        return to_weights(";".join(str(float(v)) for v in value)) if value else Weights()
    return None


def _pass_float(value: Any) -> float | None:
    if isinstance(value, (bool, int, float)):
        return exact_cast(value, float)
    return None


_PASS_THROUGH: dict[Any, Callable[[Any], Any]] = {
    float: _pass_float,
    Unsigned: _pass_unsigned,
    Quaternion: _pass_quaternion,
    Weights: _pass_weights,
}


def register_converter(type_: Any, converter: Callable[[str], Any]) -> None:
    """Teach ports a new value type (``converter`` raises ValueError on bad text)."""
    CONVERTERS[type_] = converter


def type_name(type_: Any) -> str:
    return getattr(type_, "__name__", str(type_))


def convert(text: str, type_: Any) -> Any:
    """Convert an XML string to ``type_``; ValueError with a readable message on failure."""
    try:
        converter = CONVERTERS[type_]
    except (KeyError, TypeError):
        raise ValueError(f"no converter for port type {type_name(type_)}") from None
    return converter(text)


def coerce(value: Any, type_: Any) -> Any:
    """A blackboard value as ``type_``: passed through when typed, parsed when a string, a
    number cast when nothing is lost (BehaviorTree.CPP's ``Any::cast``); ValueError otherwise."""
    if type_ is Any or type_ is AnyValue:
        return value
    if type_ is str:
        return value if isinstance(value, str) else cpp_text(value)
    if isinstance(value, str):
        return leading_number(value, type_) if type_ in (int, float, Unsigned) else convert(value, type_)
    special = _PASS_THROUGH.get(type_)
    if special is not None:
        result = special(value)
        if result is not None:
            return result
    elif type_ in (int, bool) and isinstance(value, (bool, int, float)):
        cast = exact_cast(value, type_)
        if cast is not None:
            return cast
    elif isinstance(type_, type) and isinstance(value, type_):
        return value
    raise ValueError(f"expected {type_name(type_)}, got {type(value).__name__} {value!r}")


def cpp_text(value: Any) -> str:
    """A value as BehaviorTree.CPP prints it into a string (``Any::cast<std::string>``): a
    float as C++ ``std::to_string`` (``2.500000``, ``-nan``), an integer or a bool (``1``/``0``)
    in decimal, the text of anything else."""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float):
        if math.isnan(value):
            return "-nan" if math.copysign(1.0, value) < 0 else "nan"
        return "%f" % value
    return str(value)


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
