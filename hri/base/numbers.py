"""What counts as a number in a file, a message or a statistic: one test for all.

A number is an ``int`` or a ``float``, not a ``bool`` (which Python counts as an int but a
user never means as one), and, unless said otherwise, finite (no NaN, no infinity).
"""

from __future__ import annotations

import math
from typing import Any


def is_number(value: Any, finite: bool = True) -> bool:
    """True for an int or float that is not a bool (and, with ``finite``, neither NaN nor infinite)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return not finite or math.isfinite(value)


#: the longest simulated time a run, a benchmark or a replay's range takes (about 31 years):
#: beyond it the step count of a run no longer fits the arithmetic that counts it
MAX_DURATION_S = 1e9


def duration_problem(value: float) -> str | None:
    """Why ``value`` is no simulated duration (positive, finite, at most ``MAX_DURATION_S``),
    or None."""
    if math.isnan(value):
        return "must be a number of seconds, got nan"
    if not value > 0:
        return f"must be positive, got {value}"
    if not value <= MAX_DURATION_S:
        return f"must be at most {MAX_DURATION_S:g} s of simulated time, got {value:g}"
    return None


#: the longest value a message quotes whole; a longer one is cut (:func:`brief`)
BRIEF_CHARS = 60


def brief(value: Any, limit: int = BRIEF_CHARS) -> str:
    """``repr(value)`` for a message, cut to about ``limit`` characters: a value a user gave
    (a 100,000-digit number, a long string) is named by its start, its end and its length
    instead of being echoed whole into a one-line error."""
    return cut(repr(value), limit)


def cut(text: str, limit: int = BRIEF_CHARS) -> str:
    """``text`` itself when at most ``limit`` characters long, else its start, its end and
    its length: ``'[1111...111' (100003 characters)``."""
    if len(text) <= limit:
        return text
    return f"{text[:limit - 20]}...{text[-10:]} ({len(text)} characters)"


#: the most digits of an integer in a file, a ``--set`` value or a script (Python refuses
#: above 4300 with a message about its own limits; no value of ours needs more than 20)
MAX_INT_DIGITS = 100


def int_digits_problem(text: str) -> str | None:
    """Why the integer written ``text`` (digits, perhaps a sign, ``_`` or a ``0x`` prefix) is
    too long to read, or None."""
    body = text.strip().lstrip("+-")
    digits = sum(c.isalnum() for c in body.removeprefix("0x").removeprefix("0X"))
    if digits > MAX_INT_DIGITS:
        return f"an integer of {digits} digits: at most {MAX_INT_DIGITS} are taken"
    return None


def range_problem(value: Any, low: float, high: float, unit: str = "") -> str | None:
    """Why ``value`` is no finite number within ``low..high`` (``must be within 0..360 deg,
    got 1e+308``), or None. Checked before a value reaches arithmetic that would overflow
    (shapely and numpy print a RuntimeWarning for each overflow) or loop by it."""
    if not is_number(value):
        return f"must be a number, got {brief(value)}"
    if not low <= value <= high:
        return f"must be within {low:g}..{high:g}{unit}, got {brief(value)}"
    return None
