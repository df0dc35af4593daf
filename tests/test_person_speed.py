"""The person's speed in SSM (ISO 13855 via ISO/TS 15066 5.5.4): v_h is 2.0 m/s where the
separation is below 0.5 m and 1.6 m/s beyond, unless the scenario gives a speed; and the
fastest walk hri takes (a scenario's walking speed, a tree's stride)."""

from __future__ import annotations

import pytest

from hri.actor.animation import MAX_WALKING_SPEED_M_S, ClipLibrary
from hri.actor.nodes import ActorMovement
from hri.robot.stopping import StoppingModel
from hri.run.ssm_control import SsmTerms, ssm_settings
from hri.scenario.model import SsmOptions

DT = 1.0 / 240.0
STOPPING = StoppingModel((0.0, 0.5, 1.0), (0.0, 0.1, 0.3), (0.0, 0.2, 0.4), 2.0)


def test_v_h_is_iso_13855s_close_in_and_far():
    terms = SsmTerms(ssm_settings(SsmOptions(), DT), STOPPING)
    assert terms.person_m_s(0.499) == 2.0
    assert terms.person_m_s(0.5) == terms.person_m_s() == 1.6
    # S_p close in takes the faster person: at rest v_h T_r, and with the robot moving v_h (T_r + T_s)
    assert terms.required_m(0.5, terms.person_m_s(0.3)) == pytest.approx(2.0 * (DT + 0.2) + 0.5 * 2.0 * DT + 0.1)
    assert terms.required_m(0.5) == pytest.approx(1.6 * (DT + 0.2) + 0.5 * 2.0 * DT + 0.1)
    assert terms.largest(0.45, terms.person_m_s(0.45)) < terms.largest(0.45, 1.6)


def test_a_scenarios_person_speed_holds_close_in_too():
    terms = SsmTerms(ssm_settings(SsmOptions(person_speed_m_s=1.2), DT), STOPPING)
    assert terms.person_m_s(0.1) == terms.person_m_s(3.0) == 1.2


def test_full_speed_s_p_takes_the_close_in_speed_when_it_is_that_short():
    short = StoppingModel((0.0, 1.0), (0.0, 0.01), (0.0, 0.05), 0.5)
    terms = SsmTerms(ssm_settings(SsmOptions(), DT), short)
    assert terms.full_m() == pytest.approx(2.0 * (DT + 0.05) + 0.5 * DT + 0.01)


def test_a_stride_faster_than_a_person_walks_is_refused():
    cycle = ClipLibrary.default().walk.duration
    assert ActorMovement.check_value("animation_distance", MAX_WALKING_SPEED_M_S * cycle) is None
    assert "faster than a person walks" in ActorMovement.check_value("animation_distance", 2.1 * cycle)
