"""Checks of a scenario together with its tree files: they load, and what they do fits the scenario.

:func:`validate_trees` runs when a scenario is loaded (``load_scenario(..., check_trees=True)``),
so ``hri run`` and ``hri batch`` stop before PyBullet starts: the robot's targets lie within
the arm's reach, blackboard values read by ports with a range are in it, and the people a
node's ``person`` port names are the scenario's.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from hri.base.errors import HriError, shown_path
from hri.scenario.model import ROBOT, Scenario


def validate_trees(scenario: Scenario, file: str) -> None:
    """The scenario's tree files load (first error raised), and what the trees do with the
    scenario fits it: robot targets within the arm's reach, blackboard values in range."""
    from hri.bt.plugins import default_registry
    from hri.bt.plugins import load_plugins
    from hri.bt.xml_loader import validate_file

    registry = default_registry()
    load_plugins(registry, scenario.plugins, scenario.path.parent, file, scenario.line_of("plugins"))
    for tree in scenario.trees.values():  # each person's, then the robot's
        errors = validate_file(str(tree), registry)
        if errors:
            raise errors[0]
    check_trees_against(scenario, file, registry)


def check_trees_against(scenario: Scenario, file: str, registry) -> None:
    """What only the scenario and its (valid) trees together tell: see :func:`validate_trees`."""
    from hri.bt.xml_loader import select_tree

    documents = {name: select_tree(str(tree)) for name, tree in scenario.trees.items()}
    _check_robot_reach(scenario, file, *documents[ROBOT], registry)
    for main, trees in documents.values():
        _check_blackboard_values(scenario, file, trees, registry)
        _check_people_named(scenario, file, trees, registry)


def _check_robot_reach(scenario: Scenario, file: str, main: str, trees: dict, registry) -> None:
    """Areas and poses the robot's tree moves the tool to lie within the arm's reach.

    The reach (:func:`hri.robot.arm.arm_reach`) is the arm stretched straight from its
    shoulder: a target beyond it can never be reached; one within it may still fail (IK).
    An area or pose counts by its horizontal distance from the base (the first joint's
    vertical axis): the trees lift floor poses to the table with OffsetPose, whose offsets
    are not followed. A literal RobotMove target counts by its distance from the shoulder.
    """
    from hri.robot.arm import arm_reach
    from hri.robot.nodes import arm_targets

    shoulder_height, reach = arm_reach(scenario.robot.model)
    base = scenario.robot.base
    keys, literals = arm_targets(trees, main, registry)
    places = {f"areas.{k}": area.points for k, area in scenario.areas.items() if k in keys}
    places.update({f"poses.{k}": [(pose.x, pose.y)] for k, pose in scenario.poses.items() if k in keys})
    for dotted, points in sorted(places.items()):
        x, y = max(points, key=lambda c: math.hypot(c[0] - base.x, c[1] - base.y))
        distance = math.hypot(x - base.x, y - base.y)
        if distance > reach + 1e-9:
            what = f"its corner ({x:g}, {y:g})" if dotted.startswith("areas.") else "it"
            raise scenario.error(f"{dotted}: the robot's tree moves the tool here, but {what} is {distance:.2f} m "
                                 f"from the robot's base, beyond the arm's reach of {reach:g} m",
                                 file, dotted, "robot.base")
    shoulder = np.array([base.x, base.y, base.z + shoulder_height])
    for element, pose in literals:
        distance = float(np.linalg.norm(np.array(pose.position) - shoulder))
        if distance > reach + 1e-9:
            raise HriError(f"RobotMove: target ({pose.x:g}, {pose.y:g}, {pose.z:g}) is {distance:.2f} m from the "
                           f"arm's shoulder (robot.base in {shown_path(file)}), beyond its reach of {reach:g} m",
                           element.file, element.line)


def _check_blackboard_values(scenario: Scenario, file: str, trees: dict, registry) -> None:
    """A ``blackboard`` value read by a node port with a range (``check_value``) is in it:
    ``failure_chance: 1.5`` would otherwise fail only when the node first ticks."""
    from hri.bt.keys import node_id_of, port_refusal
    from hri.bt.ports import PortError, reference_key

    values = scenario.blackboard
    for element in _elements(trees.values()):
        for attr, text in element.attrib.items():
            try:
                key = reference_key(text, attr)
            except PortError:
                continue
            refused = port_refusal(element, key, values[key], registry) if key in values else None
            if refused:
                raise scenario.error(f"blackboard.{key}: {refused[1]} (read by {node_id_of(element)} port "
                                     f"'{refused[0]}' at {Path(element.file).name}:{element.line})",
                                     file, f"blackboard.{key}")


def _check_people_named(scenario: Scenario, file: str, trees: dict, registry) -> None:
    """A node's ``person`` port (:data:`hri.workcell.nodes.PERSON_PORT`: a call's) names one of
    the scenario's people: its literal, or the scenario's ``blackboard`` value it reads. A
    name the tree makes at run time is checked when the node ticks."""
    from hri.bt.keys import node_id_of
    from hri.bt.ports import PortError, reference_key
    from hri.workcell.called import unknown_person
    from hri.workcell.nodes import PERSON_PORT

    people = [person.name for person in scenario.people]
    for element in _elements(trees.values()):
        node_id = node_id_of(element)
        text = element.attrib.get(PERSON_PORT.name)
        if text is None or node_id not in registry or registry.get(node_id).cls.port(PERSON_PORT.name) != PERSON_PORT:
            continue
        try:
            key = reference_key(text, PERSON_PORT.name)
        except PortError:
            continue  # the tree's own check says so
        if key is None and text not in people:
            raise HriError(f"{node_id}: port 'person': {unknown_person(text, people)} ({shown_path(file)})",
                           element.file, element.line)
        value = scenario.blackboard.get(key) if key is not None else None
        if value is not None and value not in people:
            raise scenario.error(f"blackboard.{key}: {unknown_person(value, people)} (read by {node_id} port "
                                 f"'person' at {Path(element.file).name}:{element.line})", file, f"blackboard.{key}")


def _elements(roots):
    for element in roots:
        yield element
        yield from _elements(element.children)
