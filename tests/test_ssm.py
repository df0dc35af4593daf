"""The protective separation distance S_p of ISO/TS 15066 5.5.4 (hri/run/ssm.py): against hand
calculations, its inverse (the largest velocity fraction that fits) against the formula, and
the edge where even rest does not fit."""

from __future__ import annotations

import bisect
import itertools
import math
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import given, settings as hypothesis_settings, strategies as st

from hri.run.ssm import (PERSON_SPEED_M_S, SeparationTable, SsmSettings, iso13855_intrusion_distance,
                         largest_fraction, protective_separation, rest_fits, separation_at)


@dataclass(frozen=True)
class Polynomial:
    """A stopping model for the tests: v_r = a f, S_s = b f^k, T_s = c sqrt(f)."""

    a: float
    b: float
    k: float
    c: float

    def speed(self, fraction: float) -> float:
        return self.a * fraction

    def distance(self, fraction: float) -> float:
        return self.b * fraction ** self.k

    def time(self, fraction: float) -> float:
        return self.c * math.sqrt(fraction)


def test_the_defaults_are_the_documented_ones() -> None:
    s = SsmSettings()
    assert s.person_speed_m_s == PERSON_SPEED_M_S == 1.6
    assert s.reaction_time_s == pytest.approx(1.0 / 240.0)
    assert s.constant_m == 0.0


def test_separation_against_a_hand_calculation() -> None:
    s = SsmSettings(person_speed_m_s=1.6, reaction_time_s=0.1, intrusion_distance_m=0.2,
                    person_uncertainty_m=0.05, robot_uncertainty_m=0.01)
    sp = protective_separation(s, robot_speed_m_s=1.0, stopping_distance_m=0.3,
                               stopping_time_s=0.4)
    # S_h = 1.6 * (0.1 + 0.4) = 0.8; S_r = 1.0 * 0.1 = 0.1; S_s = 0.3;
    # C + Z_d + Z_r = 0.2 + 0.05 + 0.01 = 0.26; S_p = 0.8 + 0.1 + 0.3 + 0.26 = 1.46
    assert sp.person_m == pytest.approx(0.8)
    assert sp.reaction_m == pytest.approx(0.1)
    assert sp.stopping_m == pytest.approx(0.3)
    assert sp.constant_m == pytest.approx(0.26)
    assert sp.total_m == pytest.approx(1.46)


def test_separation_with_the_defaults_and_a_measured_person_speed() -> None:
    s = SsmSettings()
    # T_r = 1/240 s. S_h = 1.6 * (1/240 + 0.2) = 0.0066667 + 0.32 = 0.3266667;
    # S_r = 0.5 / 240 = 0.0020833; S_s = 0.05; S_p = 0.37875
    assert protective_separation(s, 0.5, 0.05, 0.2).total_m == pytest.approx(0.37875)
    # the person measured at 0.5 m/s: S_h = 0.5 * (1/240 + 0.2) = 0.1020833; S_p = 0.1541667
    assert protective_separation(s, 0.5, 0.05, 0.2, person_speed_m_s=0.5).total_m == \
        pytest.approx(0.1541667)


def test_largest_fraction_against_a_hand_calculation() -> None:
    s = SsmSettings(person_speed_m_s=1.6, reaction_time_s=0.1, intrusion_distance_m=0.1)
    model = Polynomial(a=2.0, b=0.5, k=2.0, c=0.3)
    # S_p(f) = 1.6 (0.1 + 0.3 sqrt(f)) + 2 f * 0.1 + 0.5 f^2 + 0.1; at f = 0.25:
    # 1.6 (0.1 + 0.15) + 0.05 + 0.03125 + 0.1 = 0.58125
    assert largest_fraction(s, model, 0.58125) == pytest.approx(0.25, abs=1e-6)
    # S_p(1) = 1.6 * 0.4 + 0.2 + 0.5 + 0.1 = 1.44: from there on, full speed (the sums in
    # floating point may exceed 1.44 by a rounding error)
    assert largest_fraction(s, model, 1.44 + 1e-12) == 1.0
    assert largest_fraction(s, model, 1.44 - 1e-6) < 1.0
    assert largest_fraction(s, model, 10.0) == 1.0


def test_rest_does_not_fit_below_the_intrusion_distance_and_uncertainties() -> None:
    s = SsmSettings(reaction_time_s=0.1, intrusion_distance_m=0.2, person_uncertainty_m=0.05,
                    robot_uncertainty_m=0.01)
    model = Polynomial(a=2.0, b=0.5, k=2.0, c=0.3)
    # S_p at rest = 1.6 * 0.1 + 0.26 = 0.42
    for separation in (0.0, 0.25, 0.259, 0.419):
        assert not rest_fits(s, separation)
        assert largest_fraction(s, model, separation) is None
    assert rest_fits(s, 0.42 + 1e-12)
    assert largest_fraction(s, model, 0.42 + 1e-12) == pytest.approx(0.0, abs=1e-6)
    # a person standing still (measured speed 0): rest fits from C + Z on
    assert largest_fraction(s, model, 0.26 + 1e-12, person_speed_m_s=0.0) == pytest.approx(0.0, abs=1e-6)
    assert largest_fraction(s, model, 0.259, person_speed_m_s=0.0) is None


def test_negative_settings_are_rejected() -> None:
    with pytest.raises(ValueError, match="reaction_time_s"):
        SsmSettings(reaction_time_s=-0.1)
    with pytest.raises(ValueError, match="person_speed_m_s"):
        SsmSettings(person_speed_m_s=math.nan)


def test_iso13855_intrusion_distance() -> None:
    assert iso13855_intrusion_distance(0.010) == 0.0          # 8 (10 - 14) mm < 0
    assert iso13855_intrusion_distance(0.030) == pytest.approx(0.128)   # 8 (30 - 14) mm
    assert iso13855_intrusion_distance(0.040) == pytest.approx(0.208)
    assert iso13855_intrusion_distance(0.050) == 0.850


distances = st.floats(0.0, 0.5)


@hypothesis_settings(max_examples=300, deadline=None)
@given(st.floats(0.0, 2.5), st.floats(0.0, 0.2), distances, distances, distances,
       st.floats(0.0, 10.0), st.floats(0.0, 3.0), st.floats(1.0, 3.0), st.floats(0.0, 0.6),
       st.floats(0.0, 4.0))
def test_largest_fraction_is_the_inverse_of_the_formula(v_h: float, t_r: float, c: float,
                                                         z_d: float, z_r: float, a: float,
                                                         b: float, k: float, t_s: float,
                                                         separation: float) -> None:
    s = SsmSettings(v_h, t_r, c, z_d, z_r)
    model = Polynomial(a, b, k, t_s)
    fraction = largest_fraction(s, model, separation)
    if fraction is None:
        assert separation < separation_at(s, model, 0.0).total_m
        assert separation < s.constant_m + v_h * t_r + 1e-12
        return
    assert 0.0 <= fraction <= 1.0
    assert separation_at(s, model, fraction).total_m <= separation
    if fraction < 1.0:
        assert separation_at(s, model, fraction + 2e-9).total_m > separation


@dataclass(frozen=True)
class Table:
    """A tabulated stopping model (the shape of hri.robot.stopping.StoppingModel)."""

    fractions: tuple[float, ...]
    distances_m: tuple[float, ...]
    times_s: tuple[float, ...]
    speed_per_fraction_m_s: float

    def _at(self, fraction: float) -> int:
        return min(bisect.bisect_left(self.fractions, fraction), len(self.fractions) - 1)

    def speed(self, fraction: float) -> float:
        return fraction * self.speed_per_fraction_m_s

    def distance(self, fraction: float) -> float:
        return self.distances_m[self._at(fraction)]

    def time(self, fraction: float) -> float:
        return self.times_s[self._at(fraction)]


def _table(rises: list[float], times: list[float], speed: float) -> Table:
    """A grid of len(rises) + 1 points from 0, with growing S_s and T_s (0 at rest)."""
    count = len(rises)
    return Table(tuple(k / count for k in range(count + 1)),
                 tuple(itertools.accumulate([0.0, *rises])), tuple(itertools.accumulate([0.0, *times])),
                 speed)


steps = st.lists(st.floats(0.0, 0.5), min_size=20, max_size=20)


@hypothesis_settings(max_examples=300, deadline=None)
@given(st.floats(0.0, 2.5), st.floats(0.0, 0.2), distances, steps, steps, st.floats(0.0, 10.0),
       st.floats(0.0, 8.0))
def test_the_table_inverse_agrees_with_bisection(v_h: float, t_r: float, c: float, rises: list[float],
                                                 times: list[float], speed: float,
                                                 separation: float) -> None:
    s = SsmSettings(v_h, t_r, c)
    model = _table(rises, [t / 10 for t in times], speed)
    fast = SeparationTable(s, model).largest(separation, v_h)
    slow = largest_fraction(s, model, separation)
    if slow is None:
        assert fast is None
        return
    assert fast == pytest.approx(slow, abs=1e-8)
    assert separation_at(s, model, fast).total_m <= separation + 1e-12


@dataclass(frozen=True)
class Capped:
    """A tabulated model whose S_s and T_s are capped by a state's (what SSM takes: the smaller
    of the table's and the arm's braking from its state)."""

    table: Table
    distance_m: float
    time_s: float

    def speed(self, fraction: float) -> float:
        return self.table.speed(fraction)

    def distance(self, fraction: float) -> float:
        return min(self.table.distance(fraction), self.distance_m)

    def time(self, fraction: float) -> float:
        return min(self.table.time(fraction), self.time_s)


@hypothesis_settings(max_examples=300, deadline=None)
@given(st.floats(0.0, 2.5), st.floats(0.0, 0.2), distances, steps, steps, st.floats(0.0, 10.0),
       st.floats(0.0, 8.0), st.floats(0.0, 6.0), st.floats(0.0, 1.0))
def test_the_table_inverse_with_the_state_s_stop_agrees_with_bisection(
        v_h: float, t_r: float, c: float, rises: list[float], times: list[float], speed: float,
        separation: float, state_distance: float, state_time: float) -> None:
    s = SsmSettings(v_h, t_r, c)
    model = _table(rises, [t / 10 for t in times], speed)
    capped = Capped(model, state_distance, state_time)
    table = SeparationTable(s, model)
    fast = table.largest(separation, v_h, capped)
    slow = largest_fraction(s, capped, separation)
    for fraction in (0.0, 0.3, 1.0):
        assert table.required(fraction, v_h, capped) == pytest.approx(separation_at(s, capped, fraction).total_m)
    if slow is None:
        assert fast is None
        return
    assert fast == pytest.approx(slow, abs=1e-8)
    assert separation_at(s, capped, fast).total_m <= separation + 1e-12


def test_the_table_inverse_against_a_hand_calculation() -> None:
    s = SsmSettings(person_speed_m_s=1.0, reaction_time_s=0.1, intrusion_distance_m=0.1)
    model = Table((0.0, 0.5, 1.0), (0.0, 0.2, 0.6), (0.0, 0.1, 0.3), 2.0)
    table = SeparationTable(s, model)
    # rest: S_p = 1.0 * 0.1 + 0.1 = 0.2; point 0.5: 1.0 * (0.1 + 0.1) + 0.5 * 2 * 0.1 + 0.2 + 0.1
    # = 0.6; point 1: 1.0 * 0.4 + 0.2 + 0.6 + 0.1 = 1.3
    assert table.largest(0.19, 1.0) is None
    assert table.largest(0.6, 1.0) == pytest.approx(0.5)
    assert table.largest(1.3 + 1e-12, 1.0) == 1.0
    # between 0.5 and 1: S_p(f) = 0.4 + 0.2 f + 0.6 + 0.1 = 1.1 + 0.2 f <= 1.2 gives f = 0.5;
    # 1.25 gives f = 0.75
    assert table.largest(1.25, 1.0) == pytest.approx(0.75)
    # between 0 and 0.5: S_p(f) = 1.0 * 0.2 + 0.2 f + 0.2 + 0.1 = 0.5 + 0.2 f: 0.55 gives 0.25
    assert table.largest(0.55, 1.0) == pytest.approx(0.25)
    # a slower person: v_h = 0.5, rest S_p = 0.15
    assert table.largest(0.16, 0.5) == pytest.approx(0.0)


def test_the_table_s_p_is_the_formula_s_at_the_arm_s_own_model() -> None:
    from hri.robot.stopping import StoppingModel  # the arm's real model: 1001 grid points
    model = StoppingModel.from_limits(np.full(6, 3.0), np.full(6, 10.0), np.full(6, 100.0),
                                      np.array([1.0, 0.9, 0.5, 0.3, 0.2, 0.1]), 1.0 / 240.0)
    s = SsmSettings(intrusion_distance_m=0.05)
    table = SeparationTable(s, model)
    for fraction in (0.0, 1e-4, 0.0015, 0.25, 0.3337, 0.999, 1.0):
        for v_h in (0.0, 0.7, 1.6):
            assert table.required(fraction, v_h) == pytest.approx(
                separation_at(s, model, fraction, v_h).total_m, rel=1e-12)
