"""Scenario files: loading, ``--set`` overrides, and the checks that build the typed scenario.

A scenario is a YAML file (see ``scenarios/coexistence.yaml``): the world layout, the safety
zones, named areas and poses for the trees, which trees drive the person and the robot, and
parameters. :func:`load_scenario` reads it and builds a :class:`~hri.scenario.model.Scenario`
once, checking every value on the way; every problem is reported as ``FILE:LINE: message``
(:class:`hri.base.errors.HriError`).
"""

from __future__ import annotations

import difflib
import importlib.resources
import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import yaml
from shapely.geometry import MultiPoint, Point, Polygon
from shapely.validation import explain_validity

from hri.base.untrusted import read_own
from hri.base.errors import HriError, shown_path
from hri.base.files import wrong_kind
from hri.base.geometry import Area, Pose, yaw_quaternion
from hri.base.yaml_values import check_collections, compose, load_value, scalar_value
from hri.base.numbers import brief, duration_problem, is_number, range_problem
from hri.actor.route import CLEARANCE_M
from hri.scenario.document import Document
from hri.scenario.faults import Fault, parse_faults
from hri.scenario.model import (HEIGHT_RANGE_M, ISO_13855_WALKING_SPEED_M_S, MAX_ANGLE_DEG, MAX_LENGTH_M, MAX_MASS_KG, MAX_PEOPLE, MAX_RATE_HZ,
                                MAX_WALKING_SPEED_M_S, MEASURED,
                                MIN_PERSON_GAP_M, MIN_PHYSICS_RATE_HZ, NET_CHANNELS, PERSON, PERSON_NAME_PATTERN,
                                PFL_CONTACT_AREA_CM2, PFL_CONTACT_DISTANCE_MAX_M, ROBOT, SAFETY_MODES, PersonSetup, PflOptions, RobotSetup, SafetySettings, Scenario, SimulationSettings,
                                SsmOptions, SensorMount, SensorOptions, pfl_contact_distance)
from hri.scenario.workcell import Fail, check_workcell, read_furniture, read_parts
from hri.workcell.layout import Furniture, PartsSettings, Room

if TYPE_CHECKING:
    from hri.net.quality import NetworkQuality
    from hri.robot.stop_table import StopTable
    from hri.robot.arm import RobotConfig
    from hri.robot.scene import ToolShape
    from hri.kinematics.arm_model import ArmModel

PRESETS = ("coexistence", "cooperation", "collaboration")

# The shape of a scenario: for each key its expected type, or a nested schema.
# "any" marks free-form mappings checked by their own code (furniture, areas, poses).
_SCHEMA: dict[str, Any] = {
    "name": str,
    "description": str,
    "simulation": {"duration_s": float, "physics_rate_hz": float, "tree_rate_hz": float, "person_rate_hz": float},
    "room": {"size": list, "wall_height": float},
    "furniture": "any",
    "robot": {"base": "pose", "reduced_velocity": float, "config": "any", "model": str, "base_link": str,
              "tool_link": str, "moving_mass_kg": float, "payload_kg": float,
              "tool": {"radius_m": float, "length_m": float, "mass_kg": float},
              "limits": {"position": list, "velocity": "any"}},
    "person": {"start": "pose", "walk_stride_m": float, "clearance_m": float, "walking_speed_mps": float,
               "height_m": float},
    "people": "any",  # a list of persons (_PERSON_KEYS), checked by _read_people
    "zones": {"warning": list, "stop": list},
    "areas": "any",
    "poses": "any",
    "trees": {"person": str, "robot": str},
    "blackboard": "any",
    "plugins": list,
    "net": "any",  # checked by hri.net.NetworkQuality
    "faults": "any",  # checked by hri.scenario.faults.parse_faults
    "parts": {"size": list, "mass": float, "color": list, "grasp_distance": float, "person_reach": float,
              "person_put_distance": float, "person_put_spread": float, "feeders": list, "sinks": list, "good_surfaces": list, "bad_surfaces": list, "storage_surfaces": list},
    "safety": {"reaction_time_s": float, "stopping_time_s": float, "rest_speed_m_s": float,
               "speed_tolerance": float, "mode": str,
               "ssm": {"person_speed_m_s": "any", "reaction_time_s": float, "intrusion_distance_m": float,
                       "person_uncertainty_m": float, "robot_uncertainty_m": float},
               "pfl": {"contact_distance_m": float, "contact_area_cm2": "any"},
               "stop_table": "any",
               "sensor": {"preset": str, "rate_hz": float, "latency_s": float, "range_noise_m": float,
                          "dropout_probability": float, "mount": "pose", "field_of_view_deg": float,
                          "range_m": float}},
}
#: sections that may be ``null``, meaning none (``--set safety.sensor=null``: the ideal sensor,
#: where a scenario names one)
_NULL_IS_NONE = frozenset({"safety.sensor"})
#: keys a section must have (the others of ``_SCHEMA`` are optional)
_REQUIRED_IN = {
    "simulation": ("duration_s", "physics_rate_hz", "tree_rate_hz"),
    "room": ("size",),
    "robot": ("base", "reduced_velocity"),
    "person": ("start", "walk_stride_m"),
    "zones": ("warning", "stop"),
    "trees": ("robot",),
    "safety": ("reaction_time_s", "stopping_time_s", "rest_speed_m_s", "speed_tolerance"),
}
_REQUIRED = ("name", "simulation", "room", "robot", "zones", "trees", "safety")  # and person or people
#: the keys of an entry of ``people`` (a type as in _SCHEMA) and those it must have
_PERSON_KEYS: dict[str, Any] = {"name": str, "tree": str, "start": "pose", "walk_stride_m": float,
                                "clearance_m": float, "walking_speed_mps": float, "height_m": float}
_PERSON_REQUIRED = ("name", "tree", "start", "walk_stride_m")


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
        raise HriError(f"{name_or_path}: {wrong_kind(path) or 'no such scenario file'}")
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
        raise ValueError(f"yaw_deg must be a number (degrees), got {brief(yaw)}")
    if (problem := range_problem(yaw, -MAX_ANGLE_DEG, MAX_ANGLE_DEG, " degrees")) is not None:
        raise ValueError(f"yaw_deg {problem}")
    q = yaw_quaternion(math.radians(float(yaw)))
    return Pose(x, y, z, *q)


def _floats(value: Any, n: int, what: str) -> list[float]:
    if not isinstance(value, list) or len(value) != n or not all(is_number(v) for v in value):
        raise ValueError(f"{what} must be a list of {n} numbers")
    for v in value:
        if (problem := range_problem(v, -MAX_LENGTH_M, MAX_LENGTH_M, " m")) is not None:
            raise ValueError(f"{what}: each coordinate {problem}")
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
    """Load, override, check and build a scenario; with ``check_trees`` also check its tree files
    (:func:`hri.scenario.trees.validate_trees`), so a run fails before the simulation starts."""
    path = resolve_scenario_path(name_or_path)
    shown = name_or_path if not (name_or_path in PRESETS) else str(path)
    scenario = build_scenario(read_document(path, shown, overrides), shown)
    if check_trees:
        from hri.scenario.trees import validate_trees

        validate_trees(scenario, shown)
    return scenario


def read_document(path: Path, shown: str, overrides: list[str] | None = None) -> Document:
    """The scenario file ``path`` as a document, ``overrides`` applied, not yet checked or
    built (:func:`build_scenario`); ``shown`` names the file in messages."""
    data, lines = _load_with_lines(_read_scenario(path, shown), shown)
    keys = [apply_override(data, assignment, lines) for assignment in overrides or []]
    return Document(path, data, lines, keys)


MAX_SCENARIO_BYTES = 1024 * 1024
"""Scenario files larger than this (the presets have 4 KB) are refused before they are parsed."""


def _read_scenario(path: Path, shown: str) -> str:
    """The text of the scenario file, refused unread past :data:`MAX_SCENARIO_BYTES`."""
    try:
        data, problem = read_own(path, MAX_SCENARIO_BYTES)
        if problem is not None:
            raise HriError(problem, shown)
        return data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise HriError(f"cannot read scenario: {err}", shown) from None


def scenario_from_json(spec: dict[str, Any]) -> Scenario:
    """The scenario of :meth:`Document.to_json` built again (in a tree's own process)."""
    document = Document(Path(spec["path"]), spec["data"], spec["lines"], spec["overrides"])
    return build_scenario(document, str(document.path))


def build_scenario(document: Document, file: str) -> Scenario:
    """The typed scenario of ``document``; HriError on the first problem (unknown key, wrong
    type, bad geometry, missing file), at its line in ``file``."""
    data = document.data

    def fail(message: str, dotted: str, *related: str) -> NoReturn:
        raise document.error(message, file, dotted, *related)

    _check_shape(data, fail)
    room = _read_room(data["room"], fail)
    zones, areas = ({name: _read_area(section, name, points, fail) for name, points in (data.get(section) or {}).items()}
                    for section in ("zones", "areas"))
    poses = {name: _read_pose(f"poses.{name}", spec, fail) for name, spec in (data.get("poses") or {}).items()}
    base = _read_pose("robot.base", data["robot"]["base"], fail)
    people = _read_people(data, fail)
    arm = _read_robot_model(data["robot"], document.path.parent, fail)
    robot_config = _read_robot_config(data["robot"].get("config"), arm, fail)
    net = _read_net(data.get("net"), fail)
    faults = _read_faults(data.get("faults"), fail)
    check_workcell(data, fail)
    _validate_layout(room, zones, areas, {**{f"poses.{k}": v for k, v in poses.items()},
                                          "robot.base": base, **_start_keys(data, people)}, fail)
    furniture = read_furniture(data, fail)
    _check_starts(data, people, furniture, fail)
    trees = _read_trees(document, people, fail)
    for i, fault in enumerate(faults):
        try:
            fault.check_names(list(trees), [person.name for person in people], f"faults[{i}]")
        except HriError as err:
            fail(err.message, f"faults[{i}].{'person' if fault.person is not None else 'tree'}")
    parts = read_parts(data, fail)
    simulation, robot, safety = data["simulation"], data["robot"], data["safety"]
    return Scenario(
        path=document.path, name=data["name"],
        simulation=SimulationSettings(**{key: float(value) for key, value in simulation.items()}),
        room=room, furniture=furniture,
        robot=RobotSetup(base, float(robot["reduced_velocity"]), robot_config, arm,
                         *_read_robot_masses(robot, arm, parts, fail), _read_tool(robot.get("tool"), fail)),
        people=people,
        zones=zones, areas=areas, poses=poses, trees=trees,
        safety=_read_safety(safety, float(simulation["physics_rate_hz"]), fail, arm,
                            _read_stop_table(safety, arm, robot.get("payload_kg"), fail), room),
        net=net, parts=parts, faults=tuple(faults), blackboard=dict(data.get("blackboard") or {}),
        plugins=tuple(data.get("plugins") or ()), document=document)


def _check_shape(data: dict, fail: Fail) -> None:
    """The required keys, the known keys and their types, the free-form sections as mappings,
    the numbers in range."""
    _check_schema(data, _SCHEMA, "", fail)  # first: a misspelt section is named where it is
    for key in _REQUIRED:
        if key not in data:
            fail(f"missing required key '{key}'", "")
    if ("person" in data) == ("people" in data):
        fail("a scenario has either 'person' (one person) or 'people' (a list of persons)"
             if "person" in data else "missing required key 'person' (or 'people', a list of persons)",
             "people" if "people" in data else "")
    for section, keys in _REQUIRED_IN.items():
        for key in keys:
            if section in data and key not in data[section]:
                fail(f"missing required key '{section}.{key}'", section)
    for section in ("furniture", "areas", "poses", "blackboard", "net"):  # free-form, but mappings
        if data.get(section) is not None and not isinstance(data[section], dict):
            fail(f"'{section}' must be a mapping, got {brief(data[section])}", section)
    _validate_numbers(data, fail)


def _read_trees(document: Document, people: tuple[PersonSetup, ...], fail: Fail) -> dict[str, Path]:
    """Each tree's file by the tree's name (each person's, then ``robot``), relative to the
    scenario's folder; it must exist. One ``person`` names its tree in ``trees.person``, each
    of ``people`` in its ``tree``."""
    data = document.data
    named = data["trees"]
    keys = {ROBOT: f"trees.{ROBOT}"}
    if "person" in data:
        if PERSON not in named:
            fail(f"missing required key 'trees.{PERSON}'", "trees")
        keys = {PERSON: f"trees.{PERSON}", **keys}
    else:
        if PERSON in named:
            fail(f"trees.{PERSON}: with 'people' each person names their tree ('people[N].tree')", f"trees.{PERSON}")
        keys = {person.name: f"people[{i}].tree" for i, person in enumerate(people)} | keys
    texts = {name: _dotted_value(data, key) for name, key in keys.items()}
    trees = {name: (document.path.parent / texts[name]).resolve() for name in keys}
    for name, key in keys.items():
        if not trees[name].is_file():  # say where we looked
            fail(f"{key}: no such file '{texts[name]}' ({shown_path(trees[name])})", key)
    return trees


def _dotted_value(data: dict, dotted: str) -> Any:
    """The value at ``section.key`` or ``people[N].key``."""
    if dotted.startswith("people["):
        index, key = dotted[len("people["):].split("].")
        return data["people"][int(index)][key]
    section, key = dotted.split(".")
    return data[section][key]


def _read_people(data: dict, fail: Fail) -> tuple[PersonSetup, ...]:
    """``person`` (one, named ``person``) or ``people``: a non-empty list of persons with names
    of their own (each a :data:`PERSON_NAME_PATTERN`, none ``robot``)."""
    if "person" in data:
        person = data["person"]
        return (PersonSetup(_read_pose("person.start", person["start"], fail), float(person["walk_stride_m"]),
                            float(person.get("clearance_m", CLEARANCE_M)),
                            walking_speed_mps=_walking_speed(person, "person", fail),
                            height_m=_height(person, "person", fail)),)
    people = data["people"]
    if not isinstance(people, list):
        fail(f"'people' must be a list of persons ({{name, tree, start, walk_stride_m}}), got {brief(people)}", "people")
    if not people:
        fail("'people' is empty: a scenario needs at least one person", "people")
    if len(people) > MAX_PEOPLE:
        fail(f"'people' has {len(people)} persons, at most {MAX_PEOPLE}", "people")
    seen: dict[str, int] = {}
    read = []
    for i, spec in enumerate(people):
        where = f"people[{i}]"
        if not isinstance(spec, dict):
            fail(f"'{where}' must be a mapping {{name, tree, start, walk_stride_m}}, got {brief(spec)}", where)
        _check_schema(spec, _PERSON_KEYS, where, fail)
        for key in _PERSON_REQUIRED:
            if key not in spec:
                fail(f"missing required key '{where}.{key}'", where)
        name = spec["name"]
        if not re.fullmatch(PERSON_NAME_PATTERN, name) or name == ROBOT:
            fail(f"{where}.name: {brief(name)} is no person's name (a letter, then up to 31 letters, digits "
                 f"or '_'; not '{ROBOT}', the robot's tree)", f"{where}.name")
        if name in seen:
            fail(f"{where}.name: two persons are named '{name}' (the first is people[{seen[name]}])", f"{where}.name")
        seen[name] = i
        for key in ("walk_stride_m", "clearance_m"):
            if key in spec:
                _check_person_length(float(spec[key]), f"{where}.{key}", key == "walk_stride_m", fail)
        read.append(PersonSetup(_read_pose(f"{where}.start", spec["start"], fail), float(spec["walk_stride_m"]),
                                float(spec.get("clearance_m", CLEARANCE_M)), name, _walking_speed(spec, where, fail),
                                _height(spec, where, fail)))
    return tuple(read)


def _height(spec: dict, where: str, fail: Fail) -> float | None:
    """A person's ``height_m``: within :data:`HEIGHT_RANGE_M`; None when not given."""
    if "height_m" not in spec:
        return None
    key, height = f"{where}.height_m", float(spec["height_m"])
    low, high = HEIGHT_RANGE_M
    if not low <= height <= high:
        fail(f"{key} must be within {low:g}..{high:g} m (an adult's stature), got {height:g}", key)
    return height


def _walking_speed(spec: dict, where: str, fail: Fail) -> float | None:
    """A person's ``walking_speed_mps``: positive, at most :data:`MAX_WALKING_SPEED_M_S`; None
    when not given (the walk clip's pace at the person's stride)."""
    if "walking_speed_mps" not in spec:
        return None
    key, speed = f"{where}.walking_speed_mps", float(spec["walking_speed_mps"])
    if not 0.0 < speed <= MAX_WALKING_SPEED_M_S:
        fail(f"{key} must be above 0 and at most {MAX_WALKING_SPEED_M_S:g} m/s (faster, people run; ISO 13855's "
             f"walking speed is {ISO_13855_WALKING_SPEED_M_S:g} m/s), got {speed:g}", key)
    return speed


def _check_person_length(value: float, key: str, positive: bool, fail: Fail) -> None:
    """A person's walk stride (positive) or clearance (not negative), at most MAX_LENGTH_M."""
    if positive and value <= 0:  # metres per walk cycle: the walk would never end
        fail(f"{key} must be positive", key)
    if value < 0:  # how far the walks keep from furniture and arm
        fail(f"{key} must not be negative", key)
    if value > MAX_LENGTH_M:
        fail(f"{key} must be at most {MAX_LENGTH_M:g} m, got {value:g}", key)


def _start_keys(data: dict, people: tuple[PersonSetup, ...]) -> dict[str, Pose]:
    """Each person's start pose by its key (``person.start``, ``people[N].start``)."""
    if "person" in data:
        return {"person.start": people[0].start}
    return {f"people[{i}].start": person.start for i, person in enumerate(people)}


def _check_starts(data: dict, people: tuple[PersonSetup, ...], furniture: dict[str, Furniture], fail: Fail) -> None:
    """Of several people, none starts inside a piece of furniture or within
    :data:`MIN_PERSON_GAP_M` of another (one ``person`` is checked as before: the presets')."""
    if "person" in data:
        return
    for i, person in enumerate(people):
        key = f"people[{i}].start"
        spot = Point(person.start.x, person.start.y)
        for name, piece in furniture.items():
            if piece.footprint.contains(spot):
                fail(f"{key}: ({person.start.x:g}, {person.start.y:g}) lies inside furniture.{name}", key,
                     f"furniture.{name}")
        for j, other in enumerate(people[:i]):
            gap = math.hypot(person.start.x - other.start.x, person.start.y - other.start.y)
            if gap < MIN_PERSON_GAP_M:
                fail(f"{key}: {gap:.3g} m from people[{j}] ('{other.name}'), inside them (persons start at "
                     f"least {MIN_PERSON_GAP_M:g} m apart)", key, f"people[{j}].start")


def _read_pose(key: str, spec: Any, fail: Fail) -> Pose:
    try:
        return parse_pose(spec)
    except ValueError as err:
        fail(f"{key}: {err}", key)


def _read_area(section: str, name: str, points: Any, fail: Fail) -> Area:
    try:
        return _area(points, name)
    except ValueError as err:
        fail(f"{section}.{name}: {err}", f"{section}.{name}")


def _read_faults(faults: Any, fail: Fail) -> list[Fault]:
    try:
        return parse_faults(faults)
    except HriError as err:
        fail(err.message, err.message.split(":", 1)[0].split("[", 1)[0])


def _validate_numbers(data: dict, fail: Fail) -> None:
    """Ranges of the scalar parameters (their types are checked by the schema)."""
    for key in ("duration_s", "physics_rate_hz", "tree_rate_hz", "person_rate_hz"):
        if key in data["simulation"] and float(data["simulation"][key]) <= 0:
            fail(f"simulation.{key} must be positive", f"simulation.{key}")
        if key.endswith("_hz") and key in data["simulation"] and float(data["simulation"][key]) > MAX_RATE_HZ:
            fail(f"simulation.{key} must be at most {MAX_RATE_HZ:g} Hz, got {brief(data['simulation'][key])}",
                 f"simulation.{key}")
    if float(data["simulation"]["physics_rate_hz"]) < MIN_PHYSICS_RATE_HZ:  # a step of seconds: no physics
        fail(f"simulation.physics_rate_hz must be at least {MIN_PHYSICS_RATE_HZ:g} Hz, "
             f"got {brief(data['simulation']['physics_rate_hz'])}", "simulation.physics_rate_hz")
    if (problem := duration_problem(float(data["simulation"]["duration_s"]))) is not None:
        fail(f"simulation.duration_s {problem}", "simulation.duration_s")
    if not 0.0 <= float(data["robot"]["reduced_velocity"]) <= 1.0:
        fail("robot.reduced_velocity must be within 0..1", "robot.reduced_velocity")
    if "person" in data:
        person = data["person"]
        if float(person["walk_stride_m"]) <= 0:  # metres per walk cycle: the walk would never end
            fail("person.walk_stride_m must be positive", "person.walk_stride_m")
        if float(person.get("clearance_m", 0.0)) < 0:  # how far the walks keep from furniture and arm
            fail("person.clearance_m must not be negative", "person.clearance_m")
        for key in ("walk_stride_m", "clearance_m"):
            if float(person.get(key, 0.0)) > MAX_LENGTH_M:
                fail(f"person.{key} must be at most {MAX_LENGTH_M:g} m, got {brief(person[key])}", f"person.{key}")
    for key in ("reaction_time_s", "stopping_time_s", "rest_speed_m_s", "speed_tolerance"):
        if float(data["safety"][key]) < 0:
            fail(f"safety.{key} must not be negative", f"safety.{key}")


_SAFETY_NUMBERS = ("reaction_time_s", "stopping_time_s", "rest_speed_m_s", "speed_tolerance")


def _read_stop_table(safety: dict, arm: ArmModel, payload_kg: Any, fail: Fail) -> StopTable | None:
    """``safety.stop_table``: a manufacturer's stopping table in the layout ``hri robot stops
    --json`` prints (:mod:`hri.robot.stop_table`), for the arm's joints and rating; the
    scenario's ``robot.payload_kg`` must lie within its payloads."""
    from hri.robot.stop_table import StopTableError, rated_payload, read_stop_table

    if "stop_table" not in safety:
        return None
    try:
        table = read_stop_table(safety["stop_table"], arm.joints, rated_payload(arm))
    except StopTableError as err:
        key = f"safety.stop_table.{err.key}" if err.key else "safety.stop_table"
        fail(f"{key}: {err}" if err.key else f"safety.stop_table: {err}", key)
    if is_number(payload_kg) and payload_kg > table.payloads_kg[-1]:
        fail(f"robot.payload_kg {payload_kg:g} kg is above the largest payload of safety.stop_table, "
             f"{table.payloads_kg[-1]:g} kg", "robot.payload_kg", "safety.stop_table.payloads_kg")
    return table


def _read_safety(safety: dict, physics_rate_hz: float, fail: Fail, arm: ArmModel,
                 stop_table: StopTable | None = None, room: Room | None = None) -> SafetySettings:
    """``safety``: the monitor's limits, the mode and the SSM terms (their types are checked by
    the schema, their ranges here). The SSM controller acts once a physics step, so the
    reaction time it may assume is at least one step."""
    mode = safety.get("mode", "zones")
    if mode not in SAFETY_MODES:
        fail(f"safety.mode must be one of {', '.join(SAFETY_MODES)}, got {brief(mode)}", "safety.mode")
    ssm = dict(safety.get("ssm") or {})
    for key, value in ssm.items():
        if key == "person_speed_m_s" and value == MEASURED:
            continue
        if not is_number(value):  # the schema checked the others' types
            fail(f"safety.ssm.{key} must be a number of m/s or '{MEASURED}', got {brief(value)}", f"safety.ssm.{key}")
        if value < 0:
            fail(f"safety.ssm.{key} must not be negative", f"safety.ssm.{key}")
        ssm[key] = float(value)
    step_s = 1.0 / physics_rate_hz
    if ssm.get("reaction_time_s", step_s) < step_s * (1.0 - 1e-9):  # rounding in a written 1/240
        fail(f"safety.ssm.reaction_time_s must be at least one physics step, {step_s:.6g} s (1/physics_rate_hz): "
             f"the SSM controller acts once a step, got {ssm['reaction_time_s']:g}", "safety.ssm.reaction_time_s")
    return SafetySettings(*(float(safety[key]) for key in _SAFETY_NUMBERS), mode=mode, ssm=SsmOptions(**ssm),
                          pfl=_read_pfl(safety.get("pfl") or {}, physics_rate_hz, fail, arm),
                          sensor=None if safety.get("sensor") is None else _read_sensor(safety["sensor"], physics_rate_hz,
                                                                                      fail, room),
                          stop_table=stop_table)


#: the longest sensor latency taken (s): a safety sensor reports within a fraction of a second
MAX_SENSOR_LATENCY_S = 10.0
#: the largest range noise taken (m, standard deviation)
MAX_SENSOR_NOISE_M = 1.0


def sensor_presets() -> dict[str, dict]:
    """The named safety sensors of ``sensors.yaml`` (beside this module), each with its source."""
    text = (importlib.resources.files("hri.scenario") / "sensors.yaml").read_text()
    return yaml.safe_load(text)


def _read_sensor(spec: dict, physics_rate_hz: float, fail: Fail, room: Room | None = None) -> SensorOptions:
    """``safety.sensor`` (its types are checked by the schema): a preset's figures, each of
    which the section's own keys replace, or the figures alone (``rate_hz`` then required);
    and optionally its ``mount`` (within ``room``) with its field."""
    figures: dict[str, Any] = {}
    preset = spec.get("preset")
    if preset is not None:
        presets = sensor_presets()
        if preset not in presets:
            close = difflib.get_close_matches(preset, list(presets), n=1)
            hint = f"did you mean '{close[0]}'?" if close else f"known: {', '.join(presets)}"
            fail(f"safety.sensor.preset: unknown sensor '{preset}' ({hint})", "safety.sensor.preset")
        figures = {key: presets[preset][key] for key in _SENSOR_FIGURES if key in presets[preset]}
    figures.update((key, spec[key]) for key in _SENSOR_FIGURES if key in spec)
    if "rate_hz" not in figures:
        fail("safety.sensor needs a preset or a rate_hz", "safety.sensor")
    rate, latency = float(figures["rate_hz"]), float(figures.get("latency_s", 0.0))
    noise, dropout = float(figures.get("range_noise_m", 0.0)), float(figures.get("dropout_probability", 0.0))
    if not 0.0 < rate <= physics_rate_hz:
        fail(f"safety.sensor.rate_hz must be above 0 and at most the physics rate, {physics_rate_hz:g} Hz, "
             f"got {rate:g}", "safety.sensor.rate_hz")
    if not 0.0 <= latency <= MAX_SENSOR_LATENCY_S:
        fail(f"safety.sensor.latency_s must be within 0..{MAX_SENSOR_LATENCY_S:g} s, got {latency:g}",
             "safety.sensor.latency_s")
    if not 0.0 <= noise <= MAX_SENSOR_NOISE_M:
        fail(f"safety.sensor.range_noise_m must be within 0..{MAX_SENSOR_NOISE_M:g} m (a standard deviation), "
             f"got {noise:g}", "safety.sensor.range_noise_m")
    if not 0.0 <= dropout < 1.0:
        fail(f"safety.sensor.dropout_probability must be at least 0 and below 1 (a sensor that never reports "
             f"stops the robot for good), got {dropout:g}", "safety.sensor.dropout_probability")
    return SensorOptions(rate, latency, noise, dropout, preset, _read_mount(spec, figures, room, fail))


_SENSOR_FIGURES = ("rate_hz", "latency_s", "range_noise_m", "dropout_probability", "field_of_view_deg", "range_m")


def _read_mount(spec: dict, figures: dict, room: Room | None, fail: Fail) -> SensorMount | None:
    """``safety.sensor.mount`` with ``field_of_view_deg`` (0..360, default 360) and ``range_m``
    (positive, default unlimited), a preset's or the section's: None without a mount (a field
    without one is refused: it would be about nothing)."""
    fov, reach = figures.get("field_of_view_deg"), figures.get("range_m")
    if "mount" not in spec:
        for key in ("field_of_view_deg", "range_m"):
            if key in spec:
                fail(f"safety.sensor.{key} needs a safety.sensor.mount (where the sensor is)", f"safety.sensor.{key}")
        return None
    pose = _read_pose("safety.sensor.mount", spec["mount"], fail)
    if room is not None and not (0.0 <= pose.x <= room.size[0] and 0.0 <= pose.y <= room.size[1] and pose.z >= 0.0):
        fail(f"safety.sensor.mount must be inside the room (0..{room.size[0]:g}, 0..{room.size[1]:g}, z >= 0), "
             f"got ({pose.x:g}, {pose.y:g}, {pose.z:g})", "safety.sensor.mount")
    fov = 360.0 if fov is None else float(fov)
    if not 0.0 < fov <= 360.0:
        fail(f"safety.sensor.field_of_view_deg must be above 0 and at most 360, got {fov:g}", "safety.sensor.field_of_view_deg")
    reach = math.inf if reach is None else float(reach)
    if not reach > 0.0:
        fail(f"safety.sensor.range_m must be positive, got {reach:g}", "safety.sensor.range_m")
    return SensorMount(pose.x, pose.y, pose.z, pose.yaw, fov, reach)


def _read_pfl(pfl: dict, physics_rate_hz: float, fail: Fail, arm: ArmModel) -> PflOptions:
    """``safety.pfl`` (its types are checked by the schema): a contact distance the safety
    monitor measures on every step, by default one step's travel at a fast touch; the contact
    area, one for every robot link or per link of the robot's model."""
    distance = float(pfl.get("contact_distance_m", pfl_contact_distance(physics_rate_hz)))
    if not 0.0 < distance <= PFL_CONTACT_DISTANCE_MAX_M:
        fail(f"safety.pfl.contact_distance_m must be above 0 and at most {PFL_CONTACT_DISTANCE_MAX_M} m (below "
             f"that the safety monitor measures the separation every step), got {distance:g}",
             "safety.pfl.contact_distance_m")
    return PflOptions(distance, *_read_contact_areas(pfl.get("contact_area_cm2", PFL_CONTACT_AREA_CM2), arm, fail))


def _read_contact_areas(given: Any, arm: ArmModel, fail: Fail) -> tuple[float, tuple[tuple[str, float], ...]]:
    """``safety.pfl.contact_area_cm2``: a positive number (every robot link), or the robot's
    links by name with theirs (the others keep the default)."""
    key = "safety.pfl.contact_area_cm2"
    if not isinstance(given, dict):
        return _contact_area(given, key, fail), ()
    from hri.kinematics.urdf import read_urdf

    links = read_urdf(arm.urdf).links
    for link in given:
        if link not in links:
            near = difflib.get_close_matches(str(link), links, 1)
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            fail(f"{key}: {arm.urdf.name} has no link {brief(link)}{hint}; its links: {', '.join(links)}", f"{key}.{link}")
    return PFL_CONTACT_AREA_CM2, tuple((str(link), _contact_area(value, f"{key}.{link}", fail))
                                       for link, value in given.items())


def _contact_area(value: Any, key: str, fail: Fail) -> float:
    """A contact area: a positive number of cm^2, at most a square metre."""
    if not is_number(value) or not 0.0 < float(value) <= 1e4:
        fail(f"{key} must be a contact area above 0 and at most 10000 cm^2 (one for every robot link, or "
             f"the robot's links by name with theirs), got {brief(value)}", key)
    return float(value)


def _read_room(room: dict, fail: Fail) -> Room:
    """``room``: its ``size`` is [x, y], both positive."""
    size = room.get("size")
    if not isinstance(size, list) or len(size) != 2 or not all(is_number(v) and v > 0 for v in size):
        fail(f"room.size must be two positive numbers [x, y] in metres, got {brief(size)}", "room.size")
    if max(size) > MAX_LENGTH_M:
        fail(f"room.size must be at most {MAX_LENGTH_M:g} m each way, got {brief(size)}", "room.size")
    if "wall_height" in room and float(room["wall_height"]) < 0:
        fail("room.wall_height must not be negative", "room.wall_height")
    if "wall_height" in room and float(room["wall_height"]) > MAX_LENGTH_M:
        fail(f"room.wall_height must be at most {MAX_LENGTH_M:g} m, got {brief(room['wall_height'])}", "room.wall_height")
    x, y = (float(v) for v in size)
    return Room((x, y), float(room["wall_height"])) if "wall_height" in room else Room((x, y))


def _validate_layout(room: Room, zones: dict[str, Area], areas: dict[str, Area], places: dict[str, Pose],
                     fail: Fail) -> None:
    """Zones nest (stop inside warning inside the room); areas and ``places`` (poses by their
    keys) lie in the room."""
    width, depth = room.size
    floor = Area([(0, 0), (width, 0), (width, depth), (0, depth)], "room")
    if not _holds(zones["warning"], zones["stop"]):
        fail("zones.stop must lie inside zones.warning", "zones.stop", "zones.warning")
    if not _holds(floor, zones["warning"]):
        fail("zones.warning must lie inside the room", "zones.warning", "room.size")
    where = f"the room (0..{width:g} x 0..{depth:g} m)"
    for name, area in areas.items():
        if not _holds(floor, area):
            fail(f"areas.{name} must lie inside {where}", f"areas.{name}", "room.size")
    for key, pose in places.items():
        if not floor.contains(pose.x, pose.y):
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


def _read_robot_model(robot: dict, folder: Path, fail: Fail) -> ArmModel:
    """``robot.model``, ``robot.base_link``, ``robot.tool_link``: which arm, and the links its
    chain runs between (:func:`hri.kinematics.arm_model.resolve_model`)."""
    from hri.kinematics.arm_model import DEFAULT_MODEL, resolve_model

    try:
        return resolve_model(robot.get("model", DEFAULT_MODEL), folder, robot.get("base_link"),
                             robot.get("tool_link"), robot.get("limits"))
    except ValueError as err:
        message = str(err)
        keys = ("robot.base_link", "robot.tool_link", "robot.limits.position", "robot.limits.velocity")
        key = next((k for k in keys if message.startswith(k + ":")), None)
        if key is None:
            fail(f"robot.model: {message}", "robot.model" if "model" in robot else "robot")
        fail(message, key if key.split(".")[1] in robot else "robot.model")


def _read_robot_masses(robot: dict, arm: ArmModel, parts: PartsSettings, fail: Fail) -> tuple[float, float]:
    """``robot.moving_mass_kg`` (default: the URDF's) and ``robot.payload_kg`` (default: one part
    where the scenario feeds parts), for power and force limiting's effective mass."""
    from hri.kinematics.arm_model import moving_mass

    for key in ("moving_mass_kg", "payload_kg"):
        if key in robot and (problem := range_problem(robot[key], 0.0, MAX_MASS_KG, " kg")) is not None:
            fail(f"robot.{key} {problem}", f"robot.{key}")
    moving = float(robot["moving_mass_kg"]) if "moving_mass_kg" in robot else moving_mass(arm.urdf)
    if moving <= 0.0:
        fail(f"robot.moving_mass_kg: the links of {arm.urdf.name} that move have no mass (<inertial><mass>); "
             "power and force limiting needs it: set robot.moving_mass_kg", "robot.model")
    payload = float(robot["payload_kg"]) if "payload_kg" in robot else (parts.mass if parts.feeders else 0.0)
    return moving, payload


def _read_tool(tool: dict | None, fail: Fail) -> ToolShape | None:
    """``robot.tool``: the tool's shape for the safety functions (:class:`hri.robot.scene.ToolShape`),
    its keys defaulting to the default gripper's; None without the section."""
    from dataclasses import fields, replace

    from hri.robot.scene import DEFAULT_TOOL

    if tool is None:
        return None
    limits = {"radius_m": (1e-3, 0.5, " m"), "length_m": (1e-3, 1.0, " m"), "mass_kg": (0.0, MAX_MASS_KG, " kg")}
    for field in fields(DEFAULT_TOOL):
        key = field.name
        if key in tool and (problem := range_problem(tool[key], *limits[key])) is not None:
            fail(f"robot.tool.{key} {problem}", f"robot.tool.{key}")
    return replace(DEFAULT_TOOL, **{key: float(value) for key, value in tool.items()})


def _read_robot_config(config: Any, arm: ArmModel, fail: Fail) -> RobotConfig:
    """``robot.config``: the arm's parameters (:class:`hri.robot.arm.RobotConfig`); the
    per-joint ones default to the shipped arm's, and a model that is not shipped must set them
    (its file gives position and velocity limits, not these)."""
    from dataclasses import fields

    from hri.robot.arm import PER_JOINT, RobotConfig, parse_parameter

    if config is not None and not isinstance(config, dict):
        fail(f"'robot.config' must be a mapping, got {brief(config)}", "robot.config")
    config = config or {}
    known = {f.name for f in fields(RobotConfig)}
    values: dict[str, Any] = dict(arm.settings)
    missing = [name for name in PER_JOINT if name not in values and name not in config]
    if missing:
        fail(f"robot.config.{missing[0]}: the robot model {arm.name} gives no {missing[0]}; set robot.config's "
             f"{', '.join(missing)} (one value, or {arm.joint_count}: one per joint)", "robot.model")
    for name, value in config.items():
        key = f"robot.config.{name}"
        if name not in known:
            fail(f"unknown key '{key}' (known: {', '.join(sorted(known))})", key)
        try:
            values[name] = parse_parameter(name, value, arm.joint_count)
        except ValueError as err:
            fail(f"{key} {err}", key)
    _check_home(values["home"], arm, fail)
    return RobotConfig(**values)


def _check_home(home: tuple[float, ...], arm: ArmModel, fail: Fail) -> None:
    """The home pose lies within the arm's joint limits (the model's or robot.limits)."""
    for name, q, (lower, upper, _) in zip(arm.joints, home, arm.limits):
        if not lower <= q <= upper:
            fail(f"robot.config.home: {q:g} rad for joint {name!r} is outside its limits "
                 f"{lower:g}..{upper:g} ({arm.urdf.name})", "robot.config.home")


def _read_net(net: Any, fail: Fail) -> NetworkQuality:
    """``net``: the network qualities (:mod:`hri.net.quality`)."""
    from hri.net.errors import ConfigError
    from hri.net.quality import NetworkQuality

    if isinstance(net, dict):  # the network takes any channel; a run has these
        known = ("default", *NET_CHANNELS)
        for name in net:
            if name not in known:
                _fail_unknown("channel", f"net.{name}", name, known, fail, listing="the channels")
    try:
        return NetworkQuality.from_dict(net)
    except ConfigError as err:  # its message starts with the key path: "net.safety.loss: ..."
        fail(err.message, err.message.split(":", 1)[0])


def _points(value: Any) -> list[tuple[float, float]]:
    if not isinstance(value, list) or not all(isinstance(p, list) and len(p) == 2 and all(is_number(c) for c in p) for p in value):
        raise ValueError(f"must be a list of [x, y] points, got {brief(value, 200)}")
    for point in value:  # before shapely, whose arithmetic overflows (with warnings) far beyond a room
        for c in point:
            if (problem := range_problem(c, -MAX_LENGTH_M, MAX_LENGTH_M, " m")) is not None:
                raise ValueError(f"each coordinate {problem}")
    return [(float(x), float(y)) for x, y in value]


def _fail_unknown(what: str, dotted: str, key: Any, known: Sequence[str], fail: Fail,
                  listing: str = "known") -> None:
    """``unknown WHAT 'DOTTED' (did you mean ...?)`` at ``dotted``'s line, or the ``known``
    names when none is close."""
    close = difflib.get_close_matches(str(key), list(known), n=1)
    hint = f"did you mean '{close[0]}'?" if close else f"{listing}: {', '.join(known)}"
    fail(f"unknown {what} '{dotted}' ({hint})", dotted)


def _check_schema(data: dict, schema: dict, prefix: str, fail: Fail) -> None:
    if not isinstance(data, dict):
        fail(f"'{prefix}' must be a mapping", prefix)
    for key, value in data.items():
        dotted = f"{prefix}.{key}" if prefix else key
        if key not in schema:
            _fail_unknown("key", dotted, key, list(schema), fail)
        expected = schema[key]
        if expected == "any":
            continue
        if isinstance(expected, dict):
            if value is None and dotted in _NULL_IS_NONE:
                continue
            _check_schema(value, expected, dotted, fail)
        elif expected == "pose":
            if not isinstance(value, dict):
                fail(f"'{dotted}' must be a pose {{position: [x, y, z], yaw_deg: angle}}", dotted)
        elif expected is float:
            if not is_number(value):
                fail(f"'{dotted}' must be a number, got {brief(value)}", dotted)
        elif not isinstance(value, expected):
            fail(f"'{dotted}' must be a {expected.__name__}, got {brief(value)}", dotted)
