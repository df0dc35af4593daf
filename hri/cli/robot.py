"""``hri robot stops``: the scenario's arm's stopping distances and times per ISO 10218-1,
Annex B, measured in the simulation (:mod:`hri.robot.annex_b`), as a table or as JSON in the
layout a scenario's ``safety.stop_table`` takes (:mod:`hri.robot.stop_table`)."""

from __future__ import annotations

import json

from hri.base.errors import HriError
from hri.robot.stop_table import CATEGORIES, StopTable

#: what each stop category is here (docs/safety.md)
CATEGORY_NAMES = {"category_0": "stop category 0 (power off, the drives brake at their torque limit)",
                  "category_1": "stop category 1 (halt() along the path, then power off)"}


def rating(scenario) -> float:  # scenario: hri.scenario.model.Scenario
    """The arm's rated payload (kg): its model's, else the scenario's ``robot.payload_kg``."""
    from hri.robot.stop_table import rated_payload

    rated = rated_payload(scenario.robot.model)
    if rated is None:
        if scenario.robot.payload_kg <= 0.0:
            raise HriError(f"robot.model: the arm {scenario.robot.model.name} has no rated payload; "
                           "give it as robot.payload_kg")
        rated = scenario.robot.payload_kg
    return rated


def measure(scenario) -> StopTable:
    """The Annex B table of the scenario's arm, measured."""
    from hri.robot.annex_b import measure_stop_table

    robot = scenario.robot
    return measure_stop_table(robot.base, robot.config, robot.model, 1.0 / scenario.simulation.physics_rate_hz,
                              rating(scenario))


def format_table(table: StopTable) -> str:
    """The table as text: per category, joint and payload, the angle and time at each speed."""
    lines = [f"{table.robot}: stopping distance (joint angle) and time per ISO 10218-1 Annex B, "
             f"simulated; rated payload {table.rated_payload_kg:g} kg"]
    speeds = "".join(f"{f'{round(s * 100)} % speed':>18}" for s in table.speeds)
    width = max(len("joint"), *(len(joint) for joint in table.joints)) + 2
    for category in CATEGORIES:
        lines += ["", CATEGORY_NAMES[category], f"{'joint':<{width}}{'payload':>9}{speeds}"]
        for j, joint in enumerate(table.joints):
            for i, payload in enumerate(table.payloads_kg):
                cells = "".join(f"{f'{table.distance_deg[category][j, i, k]:.2f}° {table.time_s[category][j, i, k]:.3f} s':>18}"
                                for k in range(len(table.speeds)))
                lines.append(f"{joint:<{width}}{f'{payload:g} kg':>9}{cells}")
    return "\n".join(lines)


def stops_command(scenario_name: str, sets: list[str], as_json: bool) -> str:
    """What ``hri robot stops`` prints."""
    from hri.scenario.load import load_scenario

    table = measure(load_scenario(scenario_name, sets))
    return json.dumps(table.as_dict(), indent=2) if as_json else format_table(table)
