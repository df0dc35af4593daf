"""Port declarations and conversion of XML attribute strings to typed values.

A node declares its ports as a tuple of :class:`Port`. In the XML a port's attribute is
either a literal, converted by the port's type when the tree is loaded (so mistakes
surface at load time), or a blackboard reference ``{key}`` resolved when the node ticks.
A blackboard value that already has the port's type is passed through; a string is
converted like a literal.

Literal syntax by type (docs/trees.md):

=================  ==============================================================
``float``, ``int``  Python number syntax (``0.5``, ``3``); NaN is rejected
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
from typing import Any, Callable, Literal, NamedTuple

from hri.errors import HriError
from hri.geometry import Area, Pose


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


Direction = Literal["in", "out", "inout"]


@dataclass(frozen=True)
class Port:
    """A node's port: name, direction, value type, default and description.

    ``default`` is a typed value (or ``None``); :data:`REQUIRED` means the XML must give it.
    """

    name: str
    direction: Direction
    type: Any = str
    default: Any = REQUIRED
    description: str = ""

    @property
    def required(self) -> bool:
        return self.default is REQUIRED


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


def to_float(text: str, what: str = "a number") -> float:
    try:
        value = float(text.strip())
    except ValueError:
        raise ValueError(f"expected {what}, got {text!r}") from None
    if math.isnan(value):
        raise ValueError(f"expected {what}, got NaN")
    return value


def to_int(text: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        raise ValueError(f"expected an integer, got {text!r}") from None


_TRUE = {"true", "True", "TRUE", "1"}
_FALSE = {"false", "False", "FALSE", "0"}


def to_bool(text: str) -> bool:
    stripped = text.strip()
    if stripped in _TRUE:
        return True
    if stripped in _FALSE:
        return False
    raise ValueError(f"expected true or false, got {text!r}")


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
    float: to_float,
    int: to_int,
    bool: to_bool,
    Pose: to_pose,
    Quaternion: to_quaternion,
    Area: to_area,
    Weights: to_weights,
    Any: lambda text: text,
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
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return None


_PASS_THROUGH: dict[Any, Callable[[Any], Any]] = {
    float: _pass_float,
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
    """A blackboard value as ``type_``: passed through when typed, converted when a string."""
    if type_ is Any:
        return value
    if isinstance(value, str) and type_ is not str:
        return convert(value, type_)
    special = _PASS_THROUGH.get(type_)
    if special is not None:
        result = special(value)
        if result is not None:
            return result
    elif isinstance(type_, type) and isinstance(value, type_):
        return value
    if type_ is str:
        return str(value)
    raise ValueError(f"expected {type_name(type_)}, got {type(value).__name__} {value!r}")
