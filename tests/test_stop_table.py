"""The ISO 10218-1 Annex B stop table: ``hri robot stops`` measures it for the scenario's arm
(robot/annex_b.py), a scenario's ``safety.stop_table`` takes the same layout, and SSM's S_s and
T_s interpolate it (robot/stop_table.py)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from hri.cli.main import main
from hri.cli.robot import measure
from hri.robot.stop_table import CATEGORIES, StopTable, TableStopping, interpolate, read_stop_table
from hri.run.sim import Simulation
from hri.scenario.load import load_scenario

LBR_JOINTS = ("A1", "A2", "A3", "A4", "A5", "A6")


@pytest.fixture(scope="module")
def measured() -> StopTable:
    return measure(load_scenario("coexistence"))


def test_the_command_prints_the_annex_b_layout(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["robot", "stops", "--json"]) == 0
    table = json.loads(capsys.readouterr().out)
    assert table["robot"] == "lbr_iisy" and table["rated_payload_kg"] == 3.0
    assert table["speeds"] == [0.33, 0.66, 1.0] and table["payloads_kg"] == [0.99, 1.98, 3.0]
    assert [joint["joint"] for joint in table["joints"]] == ["A1", "A2", "A3"]
    for joint in table["joints"]:
        for category in CATEGORIES:
            for key in ("distance_deg", "time_s"):
                grid = np.array(joint[category][key])
                assert grid.shape == (3, 3) and (grid > 0.0).all()
                assert (np.diff(grid, axis=1) >= 0.0).all()  # farther and longer from more speed
    read_stop_table(table, LBR_JOINTS, 3.0)  # what it prints, a scenario takes


def test_category_1_is_the_arm_s_own_braking_and_category_0_is_shorter(measured: StopTable) -> None:
    """Category 1 of joint A1 at full speed is the jerk-limited braking of that joint alone
    (from v at zero acceleration: v^2 / (2 a) + v a / (2 j) while the acceleration ramps, a
    profile that reaches a: here v = 2.094 rad/s, a = 8 rad/s^2, j = 80 rad/s^3), the motors'
    lag within 1 %; the drives braking at their torque limit stop sooner."""
    v, a, j = 2.094395, 8.0, 80.0
    expected = math.degrees(v * v / (2.0 * a) + v * a / (2.0 * j))
    assert measured.distance_deg["category_1"][0, :, 2] == pytest.approx(expected, rel=0.01)
    assert (measured.distance_deg["category_0"] < measured.distance_deg["category_1"]).all()
    # a heavier payload at the tool takes the torque-limited drives longer to stop (A3 moves it most)
    assert (np.diff(measured.distance_deg["category_0"][2], axis=0) > 0.0).all()


def _table(distance_rows: list[list[float]], time_rows: list[list[float]]) -> dict:
    entry = {"distance_deg": distance_rows, "time_s": time_rows}
    return {"rated_payload_kg": 3.0, "speeds": [0.33, 0.66, 1.0], "payloads_kg": [1.0, 2.0, 3.0],
            "joints": [{"joint": name, "category_0": entry, "category_1": entry} for name in ("A1", "A2", "A3")]}


def test_interpolation_is_linear_in_speed_and_payload_from_rest() -> None:
    table = read_stop_table(_table([[3.0, 9.0, 20.0], [4.0, 10.0, 22.0], [5.0, 12.0, 24.0]],
                                   [[0.2, 0.3, 0.4], [0.2, 0.3, 0.4], [0.3, 0.4, 0.5]]), LBR_JOINTS, None)
    angle, time = interpolate(table, "category_1", 1.5, 0.83)
    # payload 1.5: halfway between the first two rows; speed 0.83: between 0.66 and 1.0
    low, high = (9.0 + 10.0) / 2, (20.0 + 22.0) / 2
    share = (0.83 - 0.66) / (1.0 - 0.66)
    assert angle == pytest.approx([low + share * (high - low)] * 3)
    assert time == pytest.approx([0.3 + share * 0.1] * 3)
    angle, _ = interpolate(table, "category_1", 3.0, 0.165)  # below the first speed: from 0 at rest
    assert angle == pytest.approx([2.5] * 3)
    angle, _ = interpolate(table, "category_1", 0.2, 1.0)  # below the first payload: the first row
    assert angle == pytest.approx([20.0] * 3)


def test_interpolation_takes_the_conservative_side_where_the_table_falls() -> None:
    """A heavier payload or more speed with a shorter stop (a measurement's scatter) counts as
    the lighter or slower one's."""
    table = read_stop_table(_table([[3.0, 9.0, 20.0], [2.0, 10.0, 18.0], [5.0, 8.0, 24.0]],
                                   [[0.2, 0.3, 0.4]] * 3), LBR_JOINTS, None)
    angle, _ = interpolate(table, "category_1", 2.0, 1.0)
    assert angle == pytest.approx([20.0] * 3)  # not 18
    angle, _ = interpolate(table, "category_1", 3.0, 0.66)
    assert angle == pytest.approx([10.0] * 3)  # not 8 (the payload above), nor below 9 (the speed below)


def test_ssm_takes_s_s_and_t_s_from_the_scenario_s_table(measured: StopTable) -> None:
    """S_s = sum_j reach_j x angle_j of the three main joints (category 1, the run's payload),
    T_s the longest; no state bound."""
    text = json.dumps(measured.as_dict())
    scenario = load_scenario("coexistence", ["safety.mode=ssm", f"safety.stop_table={text}", "robot.payload_kg=1.5"])
    assert isinstance(scenario.safety.stop_table, StopTable)
    with Simulation(scenario, seed=1) as sim:
        terms = sim.ssm.terms
        assert isinstance(terms.stopping, TableStopping) and terms.state is None
        reach = sim.robot.joint_reach[:3]  # the tool's and a carried part's points included
        angle, time = interpolate(scenario.safety.stop_table, "category_1", 1.5, 0.5)
        assert terms.stopping.distance(0.5) == pytest.approx(float(np.dot(reach, np.radians(angle))))
        assert terms.stopping.time(0.5) == pytest.approx(float(time.max()))
        sim.run(2.0)
        assert sim.stats.as_dict()["safety_violations"] == 0
