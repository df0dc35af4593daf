"""A scenario's ``furniture`` and ``parts`` sections, checked and read into the workcell's
typed layout (:mod:`hri.workcell.layout`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NoReturn

from hri.base.numbers import brief, is_number, range_problem
from hri.scenario.model import MAX_ANGLE_DEG, MAX_COUNT, MAX_LENGTH_M
from hri.workcell.layout import KINDS, FeederSpec, Furniture, PartsSettings, SinkSpec

_SCALARS = ("mass", "grasp_distance", "person_reach", "person_put_distance", "person_put_spread")
_MAX_SPEED_M_S = 10.0  # a conveyor's belt
#: reports a problem at a dotted key (and the keys on the other side of the check); never returns
Fail = Callable[..., NoReturn]


def check_workcell(data: dict, fail: Fail) -> None:
    """Furniture kinds, a conveyor's speed; feeders and sinks in the scenario's areas; the
    surfaces that count parts name pieces of furniture."""
    furniture = data.get("furniture") or {}
    for name, spec in furniture.items():
        kind = spec.get("kind") if isinstance(spec, dict) else None
        if kind not in KINDS:
            fail(f"furniture.{name}: unknown kind {brief(kind)} (box, shelf, conveyor)", f"furniture.{name}")
        if kind == "conveyor" and not is_number(spec.get("speed")):
            fail(f"furniture.{name}: a conveyor needs a numeric 'speed' (m/s)", f"furniture.{name}")
    parts = data.get("parts") or {}
    for i, feeder in enumerate(parts.get("feeders", [])):
        if not isinstance(feeder, dict) or not _names_one_of(feeder.get("area"), data.get("areas")):
            fail(f"parts.feeders[{i}]: 'area' must name one of the scenario's areas", "parts.feeders")
        if not is_number(feeder.get("surface_z")):
            fail(f"parts.feeders[{i}]: 'surface_z' (height the parts lie on) must be a number", "parts.feeders")
    for i, sink in enumerate(parts.get("sinks", [])):
        if not isinstance(sink, dict) or not _names_one_of(sink.get("area"), data.get("areas")):
            fail(f"parts.sinks[{i}]: 'area' must name one of the scenario's areas", "parts.sinks")
        if not is_number(sink.get("after_s")) or sink["after_s"] < 0:
            fail(f"parts.sinks[{i}]: 'after_s' must be a number of seconds >= 0", "parts.sinks")
    for key in ("good_surfaces", "bad_surfaces", "storage_surfaces"):
        for name in parts.get(key, []):
            if not _names_one_of(name, furniture):
                fail(f"parts.{key}: '{name}' is not a piece of furniture", f"parts.{key}")


def _names_one_of(name: object, named: dict | None) -> bool:
    """Whether ``name`` is a key of ``named`` (a list or a mapping written as a name is not)."""
    return isinstance(name, (str, int, float, bool)) and name in (named or {})


def read_furniture(data: dict, fail: Fail) -> dict[str, Furniture]:
    """Every piece of ``furniture`` (its kind checked by :func:`check_workcell`)."""
    pieces = {}
    for name, spec in (data.get("furniture") or {}).items():
        where = f"furniture.{name}"
        try:
            pieces[name] = _piece(str(name), spec)
        except ValueError as err:
            fail(f"{where}: {err}", where)
    return pieces


def _piece(name: str, spec: dict) -> Furniture:
    """A piece of furniture; ValueError naming the key that is wrong."""
    shelf = {"sections": _whole(spec.get("sections"), "sections", least=1),
             "boards": _lengths(spec.get("boards"), "boards")} if spec["kind"] == "shelf" else {}
    color = _numbers(spec["color"], "color", 4) if "color" in spec else Furniture.color
    size = _lengths(spec.get("size"), "size", 3)
    if min(size) <= 0:
        raise ValueError(f"size must be three positive lengths, got {brief(spec.get('size'))}")
    return Furniture(name, spec["kind"], _lengths(spec.get("center"), "center", 2), size,
                     yaw_deg=_number(spec.get("yaw_deg", 0.0), "yaw_deg", MAX_ANGLE_DEG, " degrees"),
                     base_z=_number(spec.get("base_z", 0.0), "base_z"),
                     color=color, speed=_number(spec.get("speed", 0.0), "speed", _MAX_SPEED_M_S, " m/s"), **shelf)


def read_parts(data: dict, fail: Fail) -> PartsSettings:
    """``parts`` (its feeders, sinks and surfaces checked by :func:`check_workcell`); the
    defaults of :class:`PartsSettings` for what it leaves out."""
    parts = data.get("parts") or {}
    values: dict[str, Any] = {key: float(parts[key]) for key in _SCALARS if key in parts}  # numbers: the schema
    for key in _SCALARS:
        if key in values and (problem := range_problem(values[key], 0.0, MAX_LENGTH_M)) is not None:
            fail(f"parts.{key} {problem}", f"parts.{key}")  # lengths, and a mass (kg) of the same bound
    for key, count in (("size", 3), ("color", 4)):
        if key in parts:
            try:
                values[key] = (_lengths if key == "size" else _numbers)(parts[key], key, count)
            except ValueError as err:
                fail(f"parts.{err}", f"parts.{key}")
    feeders = []
    for i, feeder in enumerate(parts.get("feeders", [])):
        try:
            feeders.append(FeederSpec(feeder["area"], _number(feeder["surface_z"], "surface_z"),
                                      _whole(feeder.get("keep", 1), "keep", least=0),
                                      _number(feeder.get("min_spacing", 0.1), "min_spacing", least=0.0)))
        except ValueError as err:
            fail(f"parts.feeders[{i}]: {err}", "parts.feeders")
    sinks = tuple(SinkSpec(sink["area"], float(sink["after_s"])) for sink in parts.get("sinks", []))
    surfaces = {key: tuple(parts.get(key, [])) for key in ("good_surfaces", "bad_surfaces", "storage_surfaces")}
    return PartsSettings(**values, feeders=tuple(feeders), sinks=sinks, **surfaces)


def _number(value: Any, what: str, most: float = MAX_LENGTH_M, unit: str = " m", least: float | None = None) -> float:
    """A number within ``least..most`` (``-most..most`` by default: a coordinate in metres)."""
    if (problem := range_problem(value, -most if least is None else least, most, unit)) is not None:
        raise ValueError(f"{what} {problem}")
    return float(value)


def _numbers(value: Any, what: str, count: int | None = None) -> tuple[float, ...]:
    if not isinstance(value, list) or not all(is_number(v) for v in value) or count not in (None, len(value)):
        raise ValueError(f"{what} must be a list of {f'{count} ' if count else ''}numbers, got {brief(value)}")
    return tuple(float(v) for v in value)


def _lengths(value: Any, what: str, count: int | None = None) -> tuple[float, ...]:
    """:func:`_numbers`, each a coordinate or length within ``MAX_LENGTH_M``."""
    numbers = _numbers(value, what, count)
    for v in numbers:
        if (problem := range_problem(v, -MAX_LENGTH_M, MAX_LENGTH_M, " m")) is not None:
            raise ValueError(f"{what}: each {problem}")
    return numbers


def _whole(value: Any, what: str, least: int) -> int:
    """A count: a whole number within ``least..MAX_COUNT`` (each one is bodies in the physics)."""
    if not is_number(value) or not least <= value <= MAX_COUNT or value != int(value):
        raise ValueError(f"{what} must be a whole number within {least}..{MAX_COUNT}, got {brief(value)}")
    return int(value)
