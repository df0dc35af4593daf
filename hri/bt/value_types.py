"""The value types of ports and blackboard entries, and how a text or a value becomes one.

A port's literal in the XML is converted by :func:`convert` (by the port's type) when the tree
loads; a blackboard value is converted by :func:`coerce` when a port reads it, as
BehaviorTree.CPP's ``convertFromString`` and ``Any::cast`` do. Literal syntax by type
(docs/trees.md):

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
"""

from __future__ import annotations

import math
import re
from typing import Any, Callable, NamedTuple

from py_trees.common import Status

from hri.bt.node_status import parse_status
from hri.base.geometry import Area, Pose
from hri.base.numbers import brief, int_digits_problem


class AnyValue:
    """BehaviorTree.CPP's ``BT::Any`` as an entry's type: the entry of a port declared to take
    any value (``WasEntryUpdated``'s ``entry``), or one that SetBlackboard wrote over an entry
    without a type. It takes any value, but a text written to it cannot be parsed
    (BehaviorTree.CPP throws), unlike an entry without a type."""


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
    return _int(text) if _CPP_INT.fullmatch(text) else None


def _int(digits: str) -> int:
    """``int(digits)``; ValueError in our words past ``MAX_INT_DIGITS`` digits."""
    if (problem := int_digits_problem(digits)) is not None:
        raise ValueError(problem)
    return int(digits)


def cpp_float(text: str) -> float | None:
    """A number as C++ ``std::from_chars`` reads the whole of ``text`` (``1``, ``-2.5``,
    ``1e3``, ``inf``, ``nan``: no ``+``, spaces, ``_`` or hexadecimal), else None."""
    return float(text) if _CPP_FLOAT.fullmatch(text) else None


def _leading(pattern: re.Pattern, text: str, what: str) -> str:
    match = pattern.match(text)
    if match is None:
        raise ValueError(f"expected {what}, got {brief(text)}")
    return match.group()


def leading_number(text: str, type_: type) -> int | float:
    """The number at the start of ``text`` as C++ ``std::from_chars`` reads it when the rest
    is ignored (BehaviorTree.CPP's conversion of a blackboard string: ``"2.5"`` is the int 2);
    ValueError when ``text`` does not start with one or it is out of range."""
    if type_ is float:
        return float(_leading(_CPP_FLOAT, text, "a number"))
    number = _int(_leading(_CPP_INT, text, "an integer"))
    if not -2**63 <= number < 2**63:
        raise ValueError(f"{brief(text)} is out of the integer range")
    if type_ is Unsigned and number < 0:
        raise ValueError(f"expected 0 or more, got {brief(text)}")
    return type_(number)


def to_float(text: str, what: str = "a number") -> float:
    value = cpp_float(text.strip())
    if value is None:
        raise ValueError(f"expected {what}, got {brief(text)}")
    if math.isnan(value):
        raise ValueError(f"expected {what}, got NaN")
    return value


def to_int(text: str) -> int:
    value = cpp_int(text.strip())
    if value is None:
        raise ValueError(f"expected an integer, got {brief(text)}")
    return value


_TRUE = {"true", "True", "TRUE", "1"}
_FALSE = {"false", "False", "FALSE", "0"}


def to_bool(text: str) -> bool:
    stripped = text.strip()
    if stripped in _TRUE:
        return True
    if stripped in _FALSE:
        return False
    raise ValueError(f"expected true or false, got {brief(text)}")


def split_list(text: str) -> list[str]:
    """``text`` split at ``;`` as BehaviorTree.CPP splits a list: ``""`` is no item and a
    trailing ``;`` adds none (``"1;2;"`` is two items, ``"1;;2"`` three)."""
    parts = text.split(";")
    return parts[:-1] if parts and parts[-1] == "" else parts


def to_unsigned(text: str) -> Unsigned:
    value = to_int(text)
    if value < 0:
        raise ValueError(f"expected 0 or more, got {brief(text)}")
    return Unsigned(value)


def _pass_unsigned(value: Any) -> Unsigned | None:
    if isinstance(value, (bool, int, float)):
        number = exact_cast(value, int)
        return Unsigned(number) if number is not None and number >= 0 else None
    return None


def to_pose(text: str) -> Pose:
    parts = text.split(";")
    if len(parts) not in (3, 7):
        raise ValueError(f"expected a pose 'x;y;z' or 'x;y;z;qx;qy;qz;qw', got {brief(text)}")
    return Pose(*_floats(text, "a number in a pose"))


def to_quaternion(text: str) -> Quaternion:
    parts = text.split(";")
    if len(parts) != 4:
        raise ValueError(f"expected a quaternion 'qx;qy;qz;qw', got {brief(text)}")
    return Quaternion(*_floats(text, "a number in a quaternion"))


def to_area(text: str) -> Area:
    points = []
    for corner in text.split(";"):
        xy = corner.split(",")
        if len(xy) != 2:
            raise ValueError(f"expected an area 'x1,y1;x2,y2;x3,y3;...', got {brief(text)}")
        points.append((to_float(xy[0], "a coordinate"), to_float(xy[1], "a coordinate")))
    try:
        return Area(points)
    except ValueError as err:
        raise ValueError(f"invalid area {brief(text)}: {err}") from None


def to_weights(text: str) -> Weights:
    weights = _floats(text, "a weight")
    if any(w < 0 or math.isinf(w) for w in weights):
        raise ValueError(f"weights must be finite and non-negative, got {brief(text)}")
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
    raise ValueError(f"expected {type_name(type_)}, got {type(value).__name__} {brief(value)}")


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


def exact_cast(value: bool | int | float, type_: type) -> bool | int | float | None:
    """``value`` as ``type_`` (bool, int or float) when the cast loses nothing, else None."""
    if type_ is float:
        result = float(value)
        return result if isinstance(value, float) or int(result) == value else None
    if isinstance(value, float) and (not math.isfinite(value) or value != int(value)):
        return None
    number = int(value)
    if type_ is bool:
        return bool(number) if number in (0, 1) else None
    return number if -2**63 <= number < 2**63 else None
