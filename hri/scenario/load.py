"""Scenario files: loading, ``--set`` overrides, validation, and the typed view the run uses.

A scenario is a YAML file (see ``scenarios/coexistence.yaml``): the world layout, the safety
zones, named areas and poses for the trees, which trees drive the person and the robot, and
parameters. Every problem is reported as ``FILE:LINE: message`` (:class:`hri.base.errors.HriError`).
"""

from __future__ import annotations

import difflib
import importlib.resources
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from shapely.geometry import MultiPoint, Polygon
from shapely.validation import explain_validity

from hri.base.errors import HriError
from hri.base.geometry import Area, Pose, yaw_quaternion
from hri.base.yaml_values import check_collections, compose, load_value, scalar_value
from hri.base.numbers import is_number

PRESETS = ("coexistence", "cooperation", "collaboration")

# The shape of a scenario: for each key its expected type, or a nested schema.
# "any" marks free-form mappings checked by their own code (furniture, areas, poses).
_SCHEMA: dict[str, Any] = {
    "name": str,
    "description": str,
    "simulation": {"duration_s": float, "physics_rate_hz": float, "tree_rate_hz": float, "person_rate_hz": float},
    "room": {"size": list, "wall_height": float},
    "furniture": "any",
    "robot": {"base": "pose", "reduced_velocity": float, "config": "any"},
    "person": {"start": "pose", "walk_stride_m": float, "clearance_m": float},
    "zones": {"warning": list, "stop": list},
    "areas": "any",
    "poses": "any",
    "trees": {"person": str, "robot": str},
    "blackboard": "any",
    "plugins": list,
    "net": "any",  # checked by hri.net.NetworkQuality when the run starts
    "faults": "any",  # checked by hri.run.faults.parse_faults
    "parts": {"size": list, "mass": float, "color": list, "grasp_distance": float, "person_reach": float,
              "person_put_distance": float, "person_put_spread": float, "feeders": list, "sinks": list, "good_surfaces": list, "bad_surfaces": list, "storage_surfaces": list},
    "safety": {"reaction_time_s": float, "stopping_time_s": float, "rest_speed_m_s": float,
               "speed_tolerance": float},
}
#: keys a section must have (the others of ``_SCHEMA`` are optional)
_REQUIRED_IN = {
    "simulation": ("duration_s", "physics_rate_hz", "tree_rate_hz"),
    "room": ("size",),
    "robot": ("base", "reduced_velocity"),
    "person": ("start", "walk_stride_m"),
    "zones": ("warning", "stop"),
    "trees": ("person", "robot"),
    "safety": ("reaction_time_s", "stopping_time_s", "rest_speed_m_s", "speed_tolerance"),
}
#: optional ``simulation`` keys: the person is animated at this rate while away from the robot
SIMULATION_DEFAULTS = {"person_rate_hz": 20.0}
_REQUIRED = ("name", "simulation", "room", "robot", "person", "zones", "trees", "safety")


def preset_path(name: str) -> Path:
    return Path(str(importlib.resources.files("hri.scenarios") / f"{name}.yaml"))


def resolve_scenario_path(name_or_path: str) -> Path:
    """A preset name (``coexistence``) or a path to a scenario file."""
    if name_or_path in PRESETS or ("/" not in name_or_path and not name_or_path.endswith((".yaml", ".yml"))):
        path = preset_path(name_or_path)
        if not path.is_file():
            close = difflib.get_close_matches(name_or_path, PRESETS, n=1)
            hint = f"did you mean '{close[0]}'? " if close else ""
            raise HriError(f"unknown scenario '{name_or_path}' ({hint}presets: {', '.join(PRESETS)}, "
                           "or a path to a .yaml file)")
        return path
    path = Path(name_or_path)
    if not path.is_file():
        raise HriError(f"{name_or_path}: no such scenario file")
    return path


def _load_with_lines(text: str, file: str) -> tuple[dict, dict[str, int]]:
    """Safe-load YAML and record the line of every mapping key as ``dotted.key -> line``."""
    try:
        return _read_with_lines(text, file)
    except RecursionError:  # nested deeper than the parser, or the builder below, goes
        raise HriError("malformed YAML: nested too deeply", file, 1) from None


def _read_with_lines(text: str, file: str) -> tuple[dict, dict[str, int]]:
    lines: dict[str, int] = {}
    node = compose(text, file)  # aliases within their bound: build() below expands them
    if node is None or not isinstance(node, yaml.MappingNode):
        raise HriError("a scenario must be a YAML mapping", file, 1)
    check_collections(node, file)

    def build(n: yaml.Node, path: str) -> Any:
        if isinstance(n, yaml.MappingNode):
            out = {}
            for key_node, value_node in n.value:
                key = str(key_node.value)
                dotted = f"{path}.{key}" if path else key
                if key in out:  # PyYAML keeps the last silently: the first would be ignored
                    raise HriError(f"duplicate key '{dotted}' (first on line {lines[dotted]})", file,
                                   key_node.start_mark.line + 1)
                lines[dotted] = key_node.start_mark.line + 1
                out[key] = build(value_node, dotted)
            return out
        if isinstance(n, yaml.SequenceNode):
            lines.setdefault(path, n.start_mark.line + 1)
            return [build(v, f"{path}[{i}]") for i, v in enumerate(n.value)]
        return scalar_value(n, file)

    return build(node, ""), lines


@dataclass
class Scenario:
    """A validated scenario: raw values for the parts each module reads, and typed views."""

    path: Path
    data: dict
    lines: dict[str, int] = field(default_factory=dict)
    overrides: list[str] = field(default_factory=list)
    """The dotted keys set by ``--set``: a problem in one is reported as that option."""

    # --- typed views -------------------------------------------------------------
    @property
    def name(self) -> str:
        return self.data["name"]

    def sim(self, key: str) -> float:
        return float(self.data["simulation"].get(key, SIMULATION_DEFAULTS.get(key)))

    @property
    def zones(self) -> dict[str, Area]:
        return {name: Area(pts, name) for name, pts in self.data["zones"].items()}

    @property
    def areas(self) -> dict[str, Area]:
        return {name: Area(pts, name) for name, pts in (self.data.get("areas") or {}).items()}

    @property
    def poses(self) -> dict[str, Pose]:
        return {name: parse_pose(spec) for name, spec in (self.data.get("poses") or {}).items()}

    def tree_path(self, role: str) -> Path:
        return (self.path.parent / self.data["trees"][role]).resolve()

    def blackboard_entries(self) -> dict[str, Any]:
        """What both trees find on their blackboards at start."""
        entries: dict[str, Any] = {}
        for name, area in self.zones.items():
            entries[f"{name}_zone"] = area
        entries.update(self.areas)
        entries.update(self.poses)
        entries["reduced_velocity"] = float(self.data["robot"]["reduced_velocity"])
        entries["walk_stride"] = float(self.data["person"]["walk_stride_m"])
        entries.update(self.data.get("blackboard") or {})
        return entries

    def override_of(self, dotted: str) -> str | None:
        """The ``--set`` key that gave ``dotted`` (or a part of it, or a mapping holding it)."""
        for key in reversed(self.overrides):
            if dotted == key or dotted.startswith((f"{key}.", f"{key}[")) or key.startswith(f"{dotted}."):
                return key
        return None

    def error(self, message: str, file: str, dotted: str, *related: str) -> HriError:
        """``FILE:LINE: message`` at ``dotted``, or ``--set KEY: message`` when ``dotted`` or a
        ``related`` key (the other side of a check, e.g. the zone that must hold it) came from
        ``--set``: the file's line would point at a value that is not the one in use."""
        for key in (dotted, *related):
            option = self.override_of(key) if key else None
            if option:
                for prefix in (f"{option}: ", f"{option} ", f"'{option}' "):  # named once, by the option
                    message = message.removeprefix(prefix)
                return HriError(f"--set {option}: {message}")
        return HriError(message, file, self.line_of(dotted))

    def line_of(self, dotted: str) -> int | None:
        while dotted:
            if dotted in self.lines:
                return self.lines[dotted]
            dotted = dotted.rsplit(".", 1)[0] if "." in dotted else ""
        return None


def parse_pose(spec: Any) -> Pose:
    """``{position: [x, y, z], yaw_deg: a}`` -> Pose."""
    if not isinstance(spec, dict) or "position" not in spec:
        raise ValueError("a pose is {position: [x, y, z], yaw_deg: angle}")
    unknown = set(spec) - {"position", "yaw_deg"}
    if unknown:
        raise ValueError(f"unknown pose key '{sorted(unknown)[0]}'")
    x, y, z = _floats(spec["position"], 3, "position")
    yaw = spec.get("yaw_deg", 0.0)
    if not is_number(yaw):
        raise ValueError(f"yaw_deg must be a number (degrees), got {yaw!r}")
    q = yaw_quaternion(math.radians(float(yaw)))
    return Pose(x, y, z, *q)


def _floats(value: Any, n: int, what: str) -> list[float]:
    if not isinstance(value, list) or len(value) != n or not all(is_number(v) for v in value):
        raise ValueError(f"{what} must be a list of {n} numbers")
    return [float(v) for v in value]


def apply_override(data: dict, assignment: str, lines: dict[str, int] | None = None) -> str:
    """Apply one ``--set dotted.key=value`` (value parsed as YAML) in place; returns the key."""
    if "=" not in assignment:
        raise HriError(f"--set {assignment}: expected KEY=VALUE")
    key, raw = assignment.split("=", 1)
    parts = key.strip().split(".")
    value = load_value(raw, f"--set {key}")
    node = data
    for i, part in enumerate(parts):
        known = isinstance(node, dict) and (part in node or _schema_knows(parts[: i + 1]))
        if not known:
            hint = _key_hint(part, node, parts[:i])
            raise HriError(f"--set {key}: unknown key '{'.'.join(parts[: i + 1])}'{hint}")
        if i == len(parts) - 1:
            node[part] = value
        else:
            node = node.setdefault(part, {})  # an optional section the file leaves out
    return ".".join(parts)


def _key_hint(part: str, node: Any, parents: list[str]) -> str:
    """`` (did you mean 'x'?)`` for an unknown key: the closest of the keys the scenario has
    there and those the schema allows; empty when none is close."""
    names = set(node) if isinstance(node, dict) else set()
    schema: Any = _SCHEMA
    for parent in parents:
        schema = schema.get(parent, {}) if isinstance(schema, dict) else {}
    if isinstance(schema, dict):
        names |= set(schema)
    close = difflib.get_close_matches(part, sorted(str(name) for name in names), n=1)
    return f" (did you mean '{'.'.join([*parents, close[0]])}'?)" if close else ""


def _schema_knows(parts: list[str]) -> bool:
    """The scenario schema has this key (an optional one a file may leave out)."""
    schema: Any = _SCHEMA
    for part in parts:
        if schema == "any":
            return True
        if not isinstance(schema, dict) or part not in schema:
            return False
        schema = schema[part]
    return True


def load_scenario(name_or_path: str, overrides: list[str] | None = None, check_trees: bool = True) -> Scenario:
    """Load, override and validate a scenario; with ``check_trees`` also its tree files
    (:func:`hri.scenario.trees.validate_trees`), so a run fails before the simulation starts."""
    path = resolve_scenario_path(name_or_path)
    shown = name_or_path if not (name_or_path in PRESETS) else str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise HriError(f"cannot read scenario: {err}", shown) from None
    data, lines = _load_with_lines(text, shown)
    keys = [apply_override(data, assignment, lines) for assignment in overrides or []]
    scenario = Scenario(path, data, lines, keys)
    validate(scenario, shown)
    if check_trees:
        from hri.scenario.trees import validate_trees

        validate_trees(scenario, shown)
    return scenario


def validate(scenario: Scenario, file: str) -> None:
    """Raise HriError on the first problem (unknown key, wrong type, bad geometry, missing file)."""
    data = scenario.data

    def fail(message: str, dotted: str, *related: str) -> None:
        raise scenario.error(message, file, dotted, *related)

    for key in _REQUIRED:
        if key not in data:
            fail(f"missing required key '{key}'", "")
    _check_schema(data, _SCHEMA, "", fail)
    for section, keys in _REQUIRED_IN.items():
        for key in keys:
            if key not in data[section]:
                fail(f"missing required key '{section}.{key}'", section)
    for section in ("furniture", "areas", "poses", "blackboard", "net"):  # free-form, but mappings
        if data.get(section) is not None and not isinstance(data[section], dict):
            fail(f"'{section}' must be a mapping, got {data[section]!r}", section)
    _validate_numbers(data, fail)
    room = _validate_room(data, fail)
    for section in ("zones", "areas"):
        for name, points in (data.get(section) or {}).items():
            try:
                _area(points, name)
            except ValueError as err:
                fail(f"{section}.{name}: {err}", f"{section}.{name}")
    for name, spec in (data.get("poses") or {}).items():
        try:
            parse_pose(spec)
        except ValueError as err:
            fail(f"poses.{name}: {err}", f"poses.{name}")
    for key in ("robot.base", "person.start"):
        section, sub = key.split(".")
        try:
            parse_pose(data[section][sub])
        except (ValueError, KeyError) as err:
            fail(f"{key}: {err}", key)
    _validate_robot_config(data["robot"].get("config"), fail)
    _validate_net(data.get("net"), fail)
    _validate_faults(data.get("faults"), fail)
    _validate_parts(data, fail)
    _validate_layout(scenario, room, fail)
    for role in ("person", "robot"):
        if not scenario.tree_path(role).is_file():  # relative to the scenario's folder: say where we looked
            fail(f"trees.{role}: no such file '{data['trees'][role]}' ({scenario.tree_path(role)})", f"trees.{role}")


def _validate_faults(faults: Any, fail) -> None:
    from hri.run.faults import parse_faults

    try:
        parse_faults(faults)
    except HriError as err:
        fail(err.message, err.message.split(":", 1)[0].split("[", 1)[0])


def _validate_numbers(data: dict, fail) -> None:
    """Ranges of the scalar parameters (their types are checked by the schema)."""
    for key in ("duration_s", "physics_rate_hz", "tree_rate_hz", "person_rate_hz"):
        if key in data["simulation"] and float(data["simulation"][key]) <= 0:
            fail(f"simulation.{key} must be positive", f"simulation.{key}")
    if not 0.0 <= float(data["robot"]["reduced_velocity"]) <= 1.0:
        fail("robot.reduced_velocity must be within 0..1", "robot.reduced_velocity")
    if float(data["person"]["walk_stride_m"]) <= 0:  # metres per walk cycle: the walk would never end
        fail("person.walk_stride_m must be positive", "person.walk_stride_m")
    if float(data["person"].get("clearance_m", 0.0)) < 0:  # how far the walks keep from furniture and arm
        fail("person.clearance_m must not be negative", "person.clearance_m")
    for key in ("reaction_time_s", "stopping_time_s", "rest_speed_m_s", "speed_tolerance"):
        if float(data["safety"][key]) < 0:
            fail(f"safety.{key} must not be negative", f"safety.{key}")


def _validate_room(data: dict, fail) -> Area:
    """The room's floor as an area: ``room.size`` is [x, y], both positive."""
    size = data["room"].get("size")
    if not isinstance(size, list) or len(size) != 2 or not all(is_number(v) and v > 0 for v in size):
        fail(f"room.size must be two positive numbers [x, y] in metres, got {size!r}", "room.size")
    if "wall_height" in data["room"] and float(data["room"]["wall_height"]) < 0:
        fail("room.wall_height must not be negative", "room.wall_height")
    x, y = (float(v) for v in size)
    return Area([(0, 0), (x, 0), (x, y), (0, y)], "room")


def _validate_layout(scenario: Scenario, room: Area, fail) -> None:
    """Zones nest (stop inside warning inside the room); areas and poses lie in the room."""
    data = scenario.data
    zones = scenario.zones
    if not _holds(zones["warning"], zones["stop"]):
        fail("zones.stop must lie inside zones.warning", "zones.stop", "zones.warning")
    if not _holds(room, zones["warning"]):
        fail("zones.warning must lie inside the room", "zones.warning", "room.size")
    width, depth = room.points[2]
    where = f"the room (0..{width:g} x 0..{depth:g} m)"
    for name, area in scenario.areas.items():
        if not _holds(room, area):
            fail(f"areas.{name} must lie inside {where}", f"areas.{name}", "room.size")
    places = {f"poses.{name}": pose for name, pose in scenario.poses.items()}
    places.update({"robot.base": parse_pose(data["robot"]["base"]), "person.start": parse_pose(data["person"]["start"])})
    for key, pose in places.items():
        if not room.contains(pose.x, pose.y):
            fail(f"{key} must lie inside {where}, is at ({pose.x:g}, {pose.y:g})", key, "room.size")


def _holds(outer: Area, inner: Area) -> bool:
    return outer.polygon.buffer(1e-9).contains(inner.polygon)


def _area(points: Any, name: str) -> Area:
    """An Area, with messages that say what is wrong with the polygon."""
    corners = _points(points)
    if len(corners) < 3:
        raise ValueError(f"an area needs at least 3 points, got {len(corners)}")
    if MultiPoint(corners).convex_hull.area <= 0.0:  # shapely would call it self-intersecting
        raise ValueError("the area's polygon is empty (its points lie on one line)")
    polygon = Polygon(corners)
    if not polygon.is_valid:
        reason = explain_validity(polygon)
        at = reason[reason.index("[") + 1:-1].split() if "[" in reason else []
        where = f" at ({float(at[0]):g}, {float(at[1]):g})" if len(at) == 2 else ""
        raise ValueError(f"the area's polygon intersects itself{where}: list the corners in order around it")
    return Area(corners, name)


def _validate_robot_config(config: Any, fail) -> None:
    """``robot.config``: the arm's parameters (:class:`hri.robot.arm.RobotConfig`)."""
    from dataclasses import fields

    from hri.robot.arm import RobotConfig, parse_parameter

    if config is None:
        return
    if not isinstance(config, dict):
        fail(f"'robot.config' must be a mapping, got {config!r}", "robot.config")
    known = {f.name for f in fields(RobotConfig)}
    for name, value in config.items():
        key = f"robot.config.{name}"
        if name not in known:
            fail(f"unknown key '{key}' (known: {', '.join(sorted(known))})", key)
        try:
            parse_parameter(name, value)
        except ValueError as err:
            fail(f"{key} {err}", key)


def _validate_net(net: Any, fail) -> None:
    """``net``: the network qualities, checked as the run will (:mod:`hri.net.quality`)."""
    from hri.net.errors import ConfigError
    from hri.net.quality import NetworkQuality

    try:
        NetworkQuality.from_dict(net)
    except ConfigError as err:  # its message starts with the key path: "net.safety.loss: ..."
        fail(err.message, err.message.split(":", 1)[0])


def _validate_parts(data: dict, fail) -> None:
    furniture = data.get("furniture") or {}
    for name, spec in furniture.items():
        kind = spec.get("kind") if isinstance(spec, dict) else None
        if kind not in ("box", "shelf", "conveyor"):
            fail(f"furniture.{name}: unknown kind {kind!r} (box, shelf, conveyor)", f"furniture.{name}")
        if kind == "conveyor" and not is_number(spec.get("speed")):
            fail(f"furniture.{name}: a conveyor needs a numeric 'speed' (m/s)", f"furniture.{name}")
    parts = data.get("parts") or {}
    for i, feeder in enumerate(parts.get("feeders", [])):
        if not isinstance(feeder, dict) or feeder.get("area") not in (data.get("areas") or {}):
            fail(f"parts.feeders[{i}]: 'area' must name one of the scenario's areas", "parts.feeders")
        if not is_number(feeder.get("surface_z")):
            fail(f"parts.feeders[{i}]: 'surface_z' (height the parts lie on) must be a number", "parts.feeders")
    for i, sink in enumerate(parts.get("sinks", [])):
        if not isinstance(sink, dict) or sink.get("area") not in (data.get("areas") or {}):
            fail(f"parts.sinks[{i}]: 'area' must name one of the scenario's areas", "parts.sinks")
        if not is_number(sink.get("after_s")) or sink["after_s"] < 0:
            fail(f"parts.sinks[{i}]: 'after_s' must be a number of seconds >= 0", "parts.sinks")
    for key in ("good_surfaces", "bad_surfaces", "storage_surfaces"):
        for name in parts.get(key, []):
            if name not in furniture:
                fail(f"parts.{key}: '{name}' is not a piece of furniture", f"parts.{key}")


def _points(value: Any) -> list[tuple[float, float]]:
    if not isinstance(value, list) or not all(isinstance(p, list) and len(p) == 2 and all(is_number(c) for c in p) for p in value):
        raise ValueError(f"must be a list of [x, y] points, got {value!r}")
    return [(float(x), float(y)) for x, y in value]


def _check_schema(data: dict, schema: dict, prefix: str, fail) -> None:
    if not isinstance(data, dict):
        fail(f"'{prefix}' must be a mapping", prefix)
    for key, value in data.items():
        dotted = f"{prefix}.{key}" if prefix else key
        if key not in schema:
            close = difflib.get_close_matches(str(key), list(schema), n=1)
            hint = f"did you mean '{close[0]}'?" if close else f"known: {', '.join(schema)}"
            fail(f"unknown key '{dotted}' ({hint})", dotted)
        expected = schema[key]
        if expected == "any":
            continue
        if isinstance(expected, dict):
            _check_schema(value, expected, dotted, fail)
        elif expected == "pose":
            if not isinstance(value, dict):
                fail(f"'{dotted}' must be a pose {{position: [x, y, z], yaw_deg: angle}}", dotted)
        elif expected is float:
            if not is_number(value):
                fail(f"'{dotted}' must be a number, got {value!r}", dotted)
        elif not isinstance(value, expected):
            fail(f"'{dotted}' must be a {expected.__name__}, got {value!r}", dotted)
