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
