"""Scenario files: loading, ``--set`` overrides, validation, and the typed view the run uses.

A scenario is a YAML file (see ``scenarios/coexistence.yaml``): the world layout, the safety
zones, named areas and poses for the trees, which trees drive the person and the robot, and
parameters. Every problem is reported as ``FILE:LINE: message`` (:class:`hri.errors.HriError`).
"""

from __future__ import annotations

import importlib.resources
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from hri.errors import HriError
from hri.geometry import Area, Pose, yaw_quaternion

PRESETS = ("coexistence", "cooperation", "collaboration")

# The shape of a scenario: for each key its expected type, or a nested schema.
# "any" marks free-form mappings checked by their own code (furniture, areas, poses).
_SCHEMA: dict[str, Any] = {
    "name": str,
    "description": str,
    "simulation": {"duration_s": float, "physics_rate_hz": float, "tree_rate_hz": float},
    "room": {"size": list, "wall_height": float},
    "furniture": "any",
    "robot": {"base": "pose", "reduced_velocity": float, "config": "any"},
    "person": {"start": "pose", "walk_stride_m": float},
    "zones": {"warning": list, "stop": list},
    "areas": "any",
    "poses": "any",
    "trees": {"person": str, "robot": str},
    "blackboard": "any",
    "plugins": list,
    "net": "any",  # checked by hri.net.NetworkQuality when the run starts
    "parts": {"size": list, "mass": float, "color": list, "grasp_distance": float, "person_reach": float,
              "person_put_distance": float, "person_put_spread": float, "feeders": list, "sinks": list, "good_surfaces": list, "bad_surfaces": list, "storage_surfaces": list},
    "safety": {"reaction_time_s": float, "stopping_time_s": float, "rest_speed_m_s": float,
               "speed_tolerance": float},
}
_REQUIRED = ("name", "simulation", "room", "robot", "person", "zones", "trees", "safety")


def preset_path(name: str) -> Path:
    return Path(str(importlib.resources.files("hri.scenarios") / f"{name}.yaml"))


def resolve_scenario_path(name_or_path: str) -> Path:
    """A preset name (``coexistence``) or a path to a scenario file."""
    if name_or_path in PRESETS or ("/" not in name_or_path and not name_or_path.endswith((".yaml", ".yml"))):
        path = preset_path(name_or_path)
        if not path.is_file():
            raise HriError(f"unknown scenario '{name_or_path}' (presets: {', '.join(PRESETS)}, or a path to a .yaml file)")
        return path
    path = Path(name_or_path)
    if not path.is_file():
        raise HriError(f"{name_or_path}: no such scenario file")
    return path


def _load_with_lines(text: str, file: str) -> tuple[dict, dict[str, int]]:
    """Safe-load YAML and record the line of every mapping key as ``dotted.key -> line``."""
    lines: dict[str, int] = {}
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        problem = getattr(err, "problem", None) or str(err)
        raise HriError(f"malformed YAML: {problem}", file, mark.line + 1 if mark else None) from None
    if node is None or not isinstance(node, yaml.MappingNode):
        raise HriError("a scenario must be a YAML mapping", file, 1)

    constructor = yaml.constructor.SafeConstructor()

    def build(n: yaml.Node, path: str) -> Any:
        if isinstance(n, yaml.MappingNode):
            out = {}
            for key_node, value_node in n.value:
                key = str(key_node.value)
                dotted = f"{path}.{key}" if path else key
                lines[dotted] = key_node.start_mark.line + 1
                out[key] = build(value_node, dotted)
            return out
        if isinstance(n, yaml.SequenceNode):
            lines.setdefault(path, n.start_mark.line + 1)
            return [build(v, f"{path}[{i}]") for i, v in enumerate(n.value)]
        return constructor.construct_object(n, deep=True)

    return build(node, ""), lines


@dataclass
class Scenario:
    """A validated scenario: raw values for the parts each module reads, and typed views."""

    path: Path
    data: dict
    lines: dict[str, int] = field(default_factory=dict)

    # --- typed views -------------------------------------------------------------
    @property
    def name(self) -> str:
        return self.data["name"]

    def sim(self, key: str) -> float:
        return float(self.data["simulation"][key])

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
    q = yaw_quaternion(math.radians(float(spec.get("yaw_deg", 0.0))))
    return Pose(x, y, z, *q)


def _floats(value: Any, n: int, what: str) -> list[float]:
    if not isinstance(value, list) or len(value) != n or not all(_is_number(v) for v in value):
        raise ValueError(f"{what} must be a list of {n} numbers")
    return [float(v) for v in value]


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def apply_override(data: dict, assignment: str, lines: dict[str, int] | None = None) -> None:
    """Apply one ``--set dotted.key=value`` (value parsed as YAML) in place."""
    if "=" not in assignment:
        raise HriError(f"--set {assignment}: expected KEY=VALUE")
    key, raw = assignment.split("=", 1)
    parts = key.strip().split(".")
    try:
        value = yaml.safe_load(raw)
    except yaml.YAMLError:
        raise HriError(f"--set {key}: cannot parse value '{raw}'") from None
    node = data
    for i, part in enumerate(parts[:-1]):
        if not isinstance(node, dict) or part not in node:
            raise HriError(f"--set {key}: unknown key '{'.'.join(parts[: i + 1])}'")
        node = node[part]
    if not isinstance(node, dict) or parts[-1] not in node:
        raise HriError(f"--set {key}: unknown key '{key}'")
    node[parts[-1]] = value


def load_scenario(name_or_path: str, overrides: list[str] | None = None) -> Scenario:
    path = resolve_scenario_path(name_or_path)
    shown = name_or_path if not (name_or_path in PRESETS) else str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise HriError(f"cannot read scenario: {err}", shown) from None
    data, lines = _load_with_lines(text, shown)
    for assignment in overrides or []:
        apply_override(data, assignment, lines)
    scenario = Scenario(path, data, lines)
    validate(scenario, shown)
    return scenario


def validate(scenario: Scenario, file: str) -> None:
    """Raise HriError on the first problem (unknown key, wrong type, bad geometry, missing file)."""
    data = scenario.data

    def fail(message: str, dotted: str) -> None:
        raise HriError(message, file, scenario.line_of(dotted))

    for key in _REQUIRED:
        if key not in data:
            fail(f"missing required key '{key}'", "")
    _check_schema(data, _SCHEMA, "", fail)
    for key in ("duration_s", "physics_rate_hz", "tree_rate_hz"):
        if float(data["simulation"][key]) <= 0:
            fail(f"simulation.{key} must be positive", f"simulation.{key}")
    if not 0.0 <= float(data["robot"]["reduced_velocity"]) <= 1.0:
        fail("robot.reduced_velocity must be within 0..1", "robot.reduced_velocity")
    for key in ("reaction_time_s", "stopping_time_s", "rest_speed_m_s", "speed_tolerance"):
        if float(data["safety"][key]) < 0:
            fail(f"safety.{key} must not be negative", f"safety.{key}")
    for section in ("zones", "areas"):
        for name, points in (data.get(section) or {}).items():
            try:
                Area(_points(points), name)
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
    _validate_parts(data, fail)
    zones = scenario.zones
    room = Area([(0, 0), (data["room"]["size"][0], 0), tuple(data["room"]["size"]), (0, data["room"]["size"][1])])
    if not zones["warning"].polygon.buffer(1e-9).contains(zones["stop"].polygon):
        fail("zones.stop must lie inside zones.warning", "zones.stop")
    if not room.polygon.buffer(1e-9).contains(zones["warning"].polygon):
        fail("zones.warning must lie inside the room", "zones.warning")
    for role in ("person", "robot"):
        if not scenario.tree_path(role).is_file():
            fail(f"trees.{role}: no such file '{data['trees'][role]}'", f"trees.{role}")


def _validate_parts(data: dict, fail) -> None:
    furniture = data.get("furniture") or {}
    for name, spec in furniture.items():
        kind = spec.get("kind") if isinstance(spec, dict) else None
        if kind not in ("box", "shelf", "conveyor"):
            fail(f"furniture.{name}: unknown kind {kind!r} (box, shelf, conveyor)", f"furniture.{name}")
        if kind == "conveyor" and not _is_number(spec.get("speed")):
            fail(f"furniture.{name}: a conveyor needs a numeric 'speed' (m/s)", f"furniture.{name}")
    parts = data.get("parts") or {}
    for i, feeder in enumerate(parts.get("feeders", [])):
        if not isinstance(feeder, dict) or feeder.get("area") not in (data.get("areas") or {}):
            fail(f"parts.feeders[{i}]: 'area' must name one of the scenario's areas", "parts.feeders")
        if not _is_number(feeder.get("surface_z")):
            fail(f"parts.feeders[{i}]: 'surface_z' (height the parts lie on) must be a number", "parts.feeders")
    for i, sink in enumerate(parts.get("sinks", [])):
        if not isinstance(sink, dict) or sink.get("area") not in (data.get("areas") or {}):
            fail(f"parts.sinks[{i}]: 'area' must name one of the scenario's areas", "parts.sinks")
        if not _is_number(sink.get("after_s")) or sink["after_s"] < 0:
            fail(f"parts.sinks[{i}]: 'after_s' must be a number of seconds >= 0", "parts.sinks")
    for key in ("good_surfaces", "bad_surfaces", "storage_surfaces"):
        for name in parts.get(key, []):
            if name not in furniture:
                fail(f"parts.{key}: '{name}' is not a piece of furniture", f"parts.{key}")


def _points(value: Any) -> list[tuple[float, float]]:
    if not isinstance(value, list) or not all(isinstance(p, list) and len(p) == 2 and all(_is_number(c) for c in p) for p in value):
        raise ValueError("must be a list of [x, y] points")
    return [(float(x), float(y)) for x, y in value]


def _check_schema(data: dict, schema: dict, prefix: str, fail) -> None:
    if not isinstance(data, dict):
        fail(f"'{prefix}' must be a mapping", prefix)
    for key, value in data.items():
        dotted = f"{prefix}.{key}" if prefix else key
        if key not in schema:
            fail(f"unknown key '{dotted}'", dotted)
        expected = schema[key]
        if expected == "any":
            continue
        if isinstance(expected, dict):
            _check_schema(value, expected, dotted, fail)
        elif expected == "pose":
            if not isinstance(value, dict):
                fail(f"'{dotted}' must be a pose {{position: [x, y, z], yaw_deg: angle}}", dotted)
        elif expected is float:
            if not _is_number(value):
                fail(f"'{dotted}' must be a number, got {value!r}", dotted)
        elif not isinstance(value, expected):
            fail(f"'{dotted}' must be a {expected.__name__}, got {value!r}", dotted)
