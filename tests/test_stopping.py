"""The arm's stopping distance S_s and time T_s (robot/stopping.py): the model from the
jerk-limited braking profile against the arm's measured braking from several speeds (never
below), and its interpolation against the profile between grid points.

The arm is the robot tests' (tests/test_robot.py: the coexistence table, 240 Hz physics).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from hri.robot.arm import HOME, MotionStatus
from hri.robot.stopping import StoppingModel, commanded_braking, measure_braking
from test_robot import DT, Sim

#: a move that turns every joint: halted on its way, at speed or still accelerating
GOAL = np.array(HOME) + np.array([1.2, -0.3, -0.5, 1.0, 0.6, 1.5])


@pytest.fixture(scope="module")
def sim() -> Iterator[Sim]:
    s = Sim()
    yield s
    s.close()


def limits(sim: Sim) -> tuple[np.ndarray, ...]:
    arm = sim.arm
    return (arm.model.max_velocity, np.array(arm.config.max_acceleration),
            np.array(arm.config.max_jerk), arm.scene.joint_reach)


@pytest.mark.parametrize("fraction", [1.0, 0.5, 0.25, 0.1])
def test_the_model_is_never_below_the_measured_braking(sim: Sim, fraction: float) -> None:
    model = StoppingModel.for_arm(sim.arm, DT)
    for halt_after in (0.05, 0.1, 0.2, 0.35):
        sim.arm.set_velocity_fraction(1.0)
        sim.arm.move_to_joints(HOME)
        sim.run_while_moving()
        assert sim.arm.status == MotionStatus.SUCCEEDED
        braking = measure_braking(sim.arm, DT, fraction, GOAL, halt_after)
        print(f"\nf={fraction} halted after {halt_after} s at {braking.speed_m_s:.3f} m/s: "
              f"{braking.distance_m:.4f} m in {braking.time_s:.3f} s; model "
              f"{model.distance(fraction):.4f} m in {model.time(fraction):.3f} s")
        assert braking.distance_m > 0.0
        assert braking.distance_m <= model.distance(fraction)
        assert braking.time_s <= model.time(fraction)
        assert braking.speed_m_s <= model.speed(fraction)


def test_the_interpolated_model_covers_the_profile_between_grid_points(sim: Sim) -> None:
    model = StoppingModel.for_arm(sim.arm, DT)
    assert model.distance(0.0) == model.time(0.0) == 0.0
    assert all(np.diff(model.distances_m) >= 0.0) and all(np.diff(model.times_s) >= 0.0)
    for low, high in zip(model.fractions, model.fractions[1:]):
        middle = 0.5 * (low + high)
        distance, time = commanded_braking(middle, *limits(sim), DT)
        assert distance <= model.distance(middle)
        assert time <= model.time(middle)
