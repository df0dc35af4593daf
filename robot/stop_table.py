"""A stopping table in the form of ISO 10218-1, Annex B: the stopping distance (joint angle) and
time of each of the robot's three main joints, for stop category 0 and 1, at 33, 66 and 100 %
of the joint's speed and 33, 66 and 100 % of the rated payload; and S_s, T_s interpolated from it.

The layout (what ``hri robot stops --json`` prints, and what a scenario's ``safety.stop_table``
takes, so that a manufacturer's table can be pasted)::

    robot: lbr_iisy                 # informative
    rated_payload_kg: 3.0
    speeds: [0.33, 0.66, 1.0]       # fractions of each joint's top speed, rising, the last 1
    payloads_kg: [0.99, 1.98, 3.0]  # rising, none above the rating
    joints:                         # the three main joints, base first, by the arm's joint names
      - joint: A1
        category_0: {distance_deg: [[...], [...], [...]], time_s: [[...], [...], [...]]}
        category_1: {distance_deg: [[...], [...], [...]], time_s: [[...], [...], [...]]}

``distance_deg[i][k]`` and ``time_s[i][k]`` are at payload ``i`` and speed ``k``.

:func:`read_stop_table` checks a table (one ``(message, key)`` per problem, the key dotted below
the table's own). :class:`TableStopping` is S_s and T_s of SSM from it: category 1 (SSM's
protective stop brakes along the path, as a category 1 stop does), at the run's payload, each
main joint's angle interpolated linearly in speed (from 0 at rest) and in payload, as
practitioners read such tables, on the conservative side: a table that falls somewhere with
more speed or payload is first raised to its running maximum, and a payload below the table's
first takes that first one. S_s is ``sum_j joint_reach_j * angle_j`` (no point of the arm moves
farther while those joints turn by those angles; the wrist's joints are not in the table), T_s
the largest of the joints' times.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from hri.base.numbers import brief, is_number

#: ISO 10218-1 Annex B's speeds and payloads, as fractions (of each joint's top speed, of the
#: rated payload), and its joints: the three main joints
SPEEDS = (0.33, 0.66, 1.0)
PAYLOAD_SHARES = (0.33, 0.66, 1.0)
MAIN_JOINTS = 3
CATEGORIES = ("category_0", "category_1")
#: rated payloads (kg) of the shipped arms whose model file does not carry one (a DH table's
#: ``payload_kg`` does): the LBR iisy 3 R760 and the Franka Panda carry 3 kg
RATED_PAYLOAD_KG = {"lbr_iisy": 3.0, "panda": 3.0}
#: the SSM grid of velocity fractions the table is tabulated on (as the stopping model's)
GRID_STEP = 0.001


class StopTableError(ValueError):
    """A problem of a stop table: ``key`` is dotted below the table ("speeds", "joints[1]...")."""

    def __init__(self, message: str, key: str):
        super().__init__(message)
        self.key = key


@dataclass(frozen=True)
class StopTable:
    """A checked stop table (see the module doc)."""

    rated_payload_kg: float
    speeds: tuple[float, ...]
    payloads_kg: tuple[float, ...]
    joints: tuple[str, ...]
    #: per category: (joints, payloads, speeds) arrays of degrees and seconds
    distance_deg: dict[str, np.ndarray]
    time_s: dict[str, np.ndarray]
    robot: str = ""

    def as_dict(self) -> dict[str, Any]:
        """The layout of the module doc (numbers rounded to what a measurement resolves)."""
        return {"robot": self.robot, "rated_payload_kg": self.rated_payload_kg,
                "speeds": list(self.speeds), "payloads_kg": list(self.payloads_kg),
                "joints": [{"joint": name, **{category: {
                    "distance_deg": np.round(self.distance_deg[category][j], 2).tolist(),
                    "time_s": np.round(self.time_s[category][j], 3).tolist()} for category in CATEGORIES}}
                    for j, name in enumerate(self.joints)]}


def rated_payload(model: Any) -> float | None:
    """The rated payload (kg) of an arm (a :class:`~hri.kinematics.arm_model.ArmModel`): its
    DH table's, a shipped arm's, else None."""
    if model.dh is not None and getattr(model.dh, "payload_kg", 0.0) > 0.0:
        return float(model.dh.payload_kg)
    return RATED_PAYLOAD_KG.get(model.name)


def _numbers(value: Any, key: str, count: int | None = None) -> list[float]:
    if not isinstance(value, list) or not all(is_number(v) and math.isfinite(v) for v in value):
        raise StopTableError(f"must be a list of numbers, got {brief(value)}", key)
    if count is not None and len(value) != count:
        raise StopTableError(f"needs {count} values, got {len(value)}", key)
    return [float(v) for v in value]


def _rising(values: list[float], key: str, what: str) -> None:
    if any(b <= a for a, b in zip(values, values[1:])):
        raise StopTableError(f"{what} must rise, got {brief(values)}", key)


def read_stop_table(data: Any, joint_names: tuple[str, ...], rating_kg: float | None) -> StopTable:
    """The table ``data`` (the layout of the module doc) for an arm whose joints are
    ``joint_names`` and whose rated payload is ``rating_kg`` (None: the table's own rating
    counts); StopTableError at the first problem."""
    if not isinstance(data, dict):
        raise StopTableError(f"must be a mapping (the layout hri robot stops --json prints), got {brief(data)}", "")
    known = ("robot", "rated_payload_kg", "speeds", "payloads_kg", "joints")
    for key in data:
        if key not in known:
            raise StopTableError(f"unknown key {key!r} (known: {', '.join(known)})", str(key))
    for key in known[1:]:
        if key not in data:
            raise StopTableError(f"{key} is missing", "")
    rated = data["rated_payload_kg"]
    if not is_number(rated) or not 0.0 < rated <= 1000.0:
        raise StopTableError(f"must be a mass above 0 and at most 1000 kg, got {brief(rated)}", "rated_payload_kg")
    if rating_kg is not None and rated > rating_kg * (1.0 + 1e-9):
        raise StopTableError(f"{rated:g} kg is above the robot's rated payload, {rating_kg:g} kg", "rated_payload_kg")
    speeds = _numbers(data["speeds"], "speeds")
    _rising(speeds, "speeds", "the speeds")
    if not speeds or speeds[0] <= 0.0 or speeds[-1] != 1.0:
        raise StopTableError(f"the speeds are fractions of the top speed above 0, the last 1.0, got {brief(speeds)}",
                             "speeds")
    payloads = _numbers(data["payloads_kg"], "payloads_kg")
    _rising(payloads, "payloads_kg", "the payloads")
    if not payloads or payloads[0] < 0.0:
        raise StopTableError(f"the payloads must not be negative, got {brief(payloads)}", "payloads_kg")
    if payloads[-1] > rated * (1.0 + 1e-9):
        raise StopTableError(f"payload {payloads[-1]:g} kg is above the rated payload, {rated:g} kg", "payloads_kg")
    joints = data["joints"]
    main = joint_names[:MAIN_JOINTS]
    if not isinstance(joints, list) or not all(isinstance(j, dict) for j in joints):
        raise StopTableError(f"must be a list of the main joints' entries, got {brief(joints)}", "joints")
    given = [j.get("joint") for j in joints]
    for name in main:
        if name not in given:
            raise StopTableError(f"joint {name!r} is missing (the table covers the three main joints, "
                                 f"{', '.join(main)})", "joints")
    for i, name in enumerate(given):
        if name not in main:
            raise StopTableError(f"{brief(name)} is not one of the three main joints ({', '.join(main)})",
                                 f"joints[{i}].joint")
    distance: dict[str, list[np.ndarray]] = {c: [] for c in CATEGORIES}
    time: dict[str, list[np.ndarray]] = {c: [] for c in CATEGORIES}
    for name in main:
        i = given.index(name)
        entry = joints[i]
        for key in entry:
            if key not in ("joint", *CATEGORIES):
                raise StopTableError(f"unknown key {key!r} (known: joint, {', '.join(CATEGORIES)})", f"joints[{i}].{key}")
        for category in CATEGORIES:
            where = f"joints[{i}].{category}"
            if not isinstance(entry.get(category), dict):
                raise StopTableError(f"{category} is missing or not a mapping", f"joints[{i}]")
            for key, into in (("distance_deg", distance), ("time_s", time)):
                rows = entry[category].get(key)
                if not isinstance(rows, list) or len(rows) != len(payloads):
                    raise StopTableError(f"needs one row per payload ({len(payloads)}), got {brief(rows)}",
                                         f"{where}.{key}" if key in entry[category] else where)
                grid = np.array([_numbers(row, f"{where}.{key}", len(speeds)) for row in rows])
                if (grid < 0.0).any():
                    raise StopTableError(f"must not be negative, got {grid.min():g}", f"{where}.{key}")
                into[category].append(grid)
    return StopTable(float(rated), tuple(speeds), tuple(payloads), main,
                     {c: np.array(v) for c, v in distance.items()}, {c: np.array(v) for c, v in time.items()},
                     str(data.get("robot", "")))


def _envelope(grid: np.ndarray) -> np.ndarray:
    """(joints, payloads, speeds) raised to its running maximum along payload and speed."""
    return np.maximum.accumulate(np.maximum.accumulate(grid, axis=1), axis=2)


def interpolate(table: StopTable, category: str, payload_kg: float,
                fraction: float) -> tuple[np.ndarray, np.ndarray]:
    """Per main joint, the stopping angle (deg) and time (s) at ``payload_kg`` and speed
    ``fraction`` (module doc)."""
    out = []
    for grid in (table.distance_deg[category], table.time_s[category]):
        raised = _envelope(grid)
        at_payload = np.array([[np.interp(payload_kg, table.payloads_kg, raised[j, :, k])
                                for k in range(len(table.speeds))] for j in range(len(raised))])
        speeds = (0.0, *table.speeds)
        out.append(np.array([np.interp(fraction, speeds, (0.0, *row)) for row in at_payload]))
    return out[0], out[1]


@dataclass(frozen=True)
class TableStopping:
    """S_s and T_s of SSM from a stop table, tabulated over the velocity fraction like
    :class:`hri.robot.stopping.StoppingModel` (at a fraction between grid points, the next
    point's values: the table's interpolation rises with the fraction)."""

    fractions: tuple[float, ...]
    distances_m: tuple[float, ...]
    times_s: tuple[float, ...]
    speed_per_fraction_m_s: float

    @classmethod
    def from_table(cls, table: StopTable, payload_kg: float, joint_reach: np.ndarray,
                   speed_per_fraction_m_s: float) -> "TableStopping":
        count = int(round(1.0 / GRID_STEP))
        fractions = [k / count for k in range(count + 1)]
        reach = np.asarray(joint_reach, dtype=float)[:MAIN_JOINTS]
        distances, times = [], []
        for f in fractions:
            angle, time = interpolate(table, "category_1", payload_kg, f)
            distances.append(float(np.dot(reach, np.radians(angle))))
            times.append(float(time.max()))
        return cls(tuple(fractions), tuple(distances), tuple(times), speed_per_fraction_m_s)

    def distance(self, fraction: float) -> float:
        return self.distances_m[self._at_or_above(fraction)]

    def time(self, fraction: float) -> float:
        return self.times_s[self._at_or_above(fraction)]

    def speed(self, fraction: float) -> float:
        return fraction * self.speed_per_fraction_m_s

    def _at_or_above(self, fraction: float) -> int:
        import bisect

        return min(bisect.bisect_left(self.fractions, fraction), len(self.fractions) - 1)
