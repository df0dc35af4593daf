"""BehaviorTree.CPP's ``Any`` as scripts see it, on plain Python values.

A script value is what a blackboard entry holds: an ``int`` (C++ int64, or uint64 from
2**63 up), a ``float`` (double), a ``str``, a ``bool`` (which ``Any`` stores as an int64,
so it is the integer 0 or 1 to every operator), :data:`EMPTY` (an entry nothing has set,
or the result of ``1 .. 2``), or any other object (a pose, an area), which no operator
takes. The functions here are ``Any``'s conversions with the checks BehaviorTree.CPP makes
(``convert_impl.hpp``): an integer becomes a double only when exactly representable, a
double an integer only when integral and in range; an integer is a bool only when 0 or 1,
a double only when not negative.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from hri.bt.blackboard import EMPTY
from hri.bt.scripting.errors import ScriptError
from hri.bt.value_types import cpp_text

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
LARGEST_EXACT_INTEGER = 2**53 - 1
"""The largest integer ``Any`` converts to a double: C++ checks ``|n| <= 2**53 - 1``."""

_FROM_CHARS_DOUBLE = re.compile(
    r"-?(?:(?P<digits>[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|(?P<inf>inf(?:inity)?)|nan(?:\([0-9A-Za-z_]*\))?)",
    re.IGNORECASE)


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float))


def parse_double(text: str) -> float | None:
    """The double C++ ``std::from_chars`` reads at the start of ``text`` (it may stop early:
    ``'3abc'`` is 3; no leading space or ``+``), or None when there is none or it is out of
    range (``1e999``, and ``1e-400``, which rounds to zero)."""
    match = _FROM_CHARS_DOUBLE.match(text)
    if match is None:
        return None
    number = match.group(0)
    value = float(number.split("(")[0])
    if math.isinf(value) and match.group("inf") is None:
        return None
    if value == 0.0 and match.group("digits") and match.group("digits").strip("0."):
        return None
    return value


def to_double(value: Any) -> float:
    """``Any::cast<double>``."""
    if isinstance(value, float):
        return float(value)
    if isinstance(value, int):
        if -LARGEST_EXACT_INTEGER <= value <= LARGEST_EXACT_INTEGER:
            return float(value)
        raise ScriptError(f"the integer {value} is too large to be converted to a double exactly")
    if isinstance(value, str):
        number = parse_double(value)
        if number is None:
            raise ScriptError(f"cannot convert the string {value!r} to a number")
        return number
    raise _no_conversion(value, "double")


def to_int64(value: bool | int | float) -> int:
    """``Any::cast<int64_t>`` of a number."""
    if isinstance(value, int):
        if value > INT64_MAX:
            raise ScriptError(f"{value} is larger than the largest int64")
        return int(value)
    if not INT64_MIN <= value < 2.0**63 or value != math.floor(value):
        raise ScriptError(f"{format_value(value)} is not an integer in the int64 range")
    return int(value)


def to_uint64(value: bool | int | float) -> int:
    """``Any::cast<uint64_t>`` of a number."""
    if value < 0:
        raise ScriptError(f"{format_value(value)} is negative and can't be converted to unsigned")
    if isinstance(value, float) and (not value < 2.0**64 or value != math.floor(value)):
        raise ScriptError(f"{format_value(value)} is not an integer in the uint64 range")
    return int(value)


def to_bool(value: Any) -> bool:
    """``Any::cast<bool>``: a double is true when nonzero, but not negative (C++ treats bool
    as unsigned: -1.0 is an error); an integer must be 0 or 1."""
    if isinstance(value, float):
        if value < 0.0:
            raise ScriptError(f"the negative number {format_value(value)} cannot be used as a boolean")
        return value != 0.0
    if isinstance(value, int):
        if value in (0, 1):
            return bool(value)
        raise ScriptError(f"the integer {value} cannot be used as a boolean (only 0 and 1 can)")
    raise _no_conversion(value, "bool")


def string_to_double(text: str, enums: Mapping[str, int]) -> float:
    """A string compared with (or assigned to) a number: ``true``, ``false``, an enum's
    name, else the number it starts with (BehaviorTree.CPP's ``StringToDouble``)."""
    if text == "true":
        return 1.0
    if text == "false":
        return 0.0
    if text in enums:
        return float(enums[text])
    return to_double(text)


def format_value(value: Any) -> str:
    """``value`` as ``Any::cast<std::string>`` prints it: a double as ``std::to_string``
    (``2.500000``, ``-nan``), an integer or a bool (``1``/``0``) in decimal, a string as it
    is; ScriptError for anything else, which has no text in BehaviorTree.CPP."""
    if isinstance(value, (str, int, float)):
        return cpp_text(value)
    raise _no_conversion(value, "string")


def copy_into(value: Any, current: Any) -> Any:
    """``value`` converted to the type ``current`` has, as ``Any::copyInto`` stores it into an
    entry that holds ``current``: an entry keeps its type once it has a value."""
    if current is EMPTY:
        return value
    if isinstance(current, str):
        if isinstance(value, str):
            return value
    elif is_number(current) and is_number(value):
        if isinstance(current, float):
            return to_double(value)
        if current > INT64_MAX:
            return to_uint64(value)
        integer = to_int64(value)
        # Any stores a bool as an int64 and keeps it so: 2 assigned to a bool entry stays 2.
        return bool(integer) if isinstance(current, bool) and integer in (0, 1) else integer
    elif type(value) is type(current):
        return value
    raise ScriptError("the types differ")


def describe(value: Any) -> str:
    """A value for an error message: ``the integer 2``, ``the string 'a'``, ``a Pose``."""
    if value is EMPTY:
        return "no value"
    if isinstance(value, str):
        return f"the string {value!r}"
    if isinstance(value, bool):
        return f"the bool {'true' if value else 'false'}"
    if isinstance(value, int):
        return f"the integer {value}"
    if isinstance(value, float):
        return f"the number {format_value(value)}"
    return f"a {type(value).__name__}"


def _no_conversion(value: Any, target: str) -> ScriptError:
    if value is EMPTY:
        return ScriptError(f"cannot convert an empty value (an entry nothing has set) to a {target}")
    return ScriptError(f"{describe(value)} cannot be converted to a {target}")
