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
