"""Power and force limiting after ISO/TS 15066 Annex A (hri.run.pfl): the data file's tables,
the robot's effective mass from its URDF, and permissible contact speeds checked by hand."""

from __future__ import annotations

import math

import pytest

from hri.actor.animation import URDF_PATH, data_path
from hri.kinematics.urdf import read_urdf
from hri.kinematics.arm_model import moving_mass
from hri.robot.arm import default_model
from hri.run import pfl

# link1..link6 and tool0 of assets/robot/lbr_iisy.urdf; base_link is fixed to the table
LBR_MOVING_MASS = 8 + 9 + 5 + 2.5 + 2 + 0.5 + 0.001


def test_the_data_file_holds_the_twelve_regions_and_29_areas_of_annex_a_all_positive():
    regions = pfl.body_regions()
    assert len(regions) == 12
    # Table A.2 numbers a hand area's dominant and non-dominant sides as two of its 29 areas
    sides = [2 if a.pressure_non_dominant is not None else 1 for r in regions.values() for a in r.areas]
    assert sum(sides) == 29
    for region in regions.values():
        assert region.force > 0 and region.effective_mass > 0 and region.spring_constant > 0
        assert region.transient_factor in (None, 2.0)
        for area in region.areas:
            assert area.pressure > 0
            assert area.pressure_non_dominant is None or area.pressure_non_dominant > 0
    assert [k for k, r in regions.items() if r.transient_factor is None] == ["skull_and_forehead", "face"]


def test_the_data_file_values_are_those_of_tables_a2_and_a3():
    chest = pfl.body_regions()["chest"]
    assert (chest.force, chest.effective_mass, chest.spring_constant) == (140, 40, 25)
    assert {a.name: a.pressure for a in chest.areas} == {"Sternum": 120, "Pectoral muscle": 170}


def test_the_robot_moving_mass_is_the_sum_of_the_links_below_a_moving_joint():
    assert moving_mass(default_model().urdf) == pytest.approx(LBR_MOVING_MASS)
    assert pfl.robot_effective_mass(27.0, payload=2.0) == pytest.approx(15.5)


def test_reduced_mass():
    assert pfl.reduced_mass(2.0, 2.0) == pytest.approx(1.0)
    assert pfl.reduced_mass(40.0, 13.5) == pytest.approx(1 / (1 / 40 + 1 / 13.5))


def test_a_contact_on_the_forearm_against_a_hand_calculation():
    """Robot: the LBR iisy without payload, m_R = 27.001/2 = 13.5005 kg.
    Lower arms and wrist joints: m_H = 2 kg, K = 40 N/mm = 40 000 N/m, F_s = 160 N, transient
    F_max = 2 x 160 = 320 N; the smallest area pressure is 180 N/cm^2 (forearm muscle, arm
    nerve), transient 360 N/cm^2, on 1 cm^2: 360 N.
      mu = 1 / (1/2 + 1/13.5005) = 1 / 0.574071 = 1.741944 kg
      sqrt(mu K) = sqrt(1.741944 x 40 000) = sqrt(69 677.8) = 263.966 N s/m
      v_F = 320 / 263.966 = 1.2123 m/s;  v_p = 360 / 263.966 = 1.3638 m/s;  v_max = 1.2123 m/s
    A contact at 1.5 m/s: ratio 1.5 / 1.2123 = 1.2374, a violation; at 1.0 m/s: 0.8249."""
    m_r = pfl.robot_effective_mass(moving_mass(default_model().urdf))
    fast = pfl.assess_contact("right_elbow", 1.5, m_r)
    assert fast.region == "lower_arms_and_wrist_joints"
    assert fast.permissible_speed == pytest.approx(1.2123, abs=1e-4)
    assert fast.ratio == pytest.approx(1.2374, abs=1e-4)
    assert fast.violation
    slow = pfl.assess_contact("left_elbow", 1.0, m_r)
    assert slow.ratio == pytest.approx(0.8249, abs=1e-4) and not slow.violation


def test_a_chest_contact_is_limited_by_the_sternum_pressure():
    """Chest: m_H = 40 kg, K = 25 N/mm; m_R = 13.5005 kg.
      mu = 1 / (1/40 + 1/13.5005) = 1 / 0.099071 = 10.0938 kg;  sqrt(mu K) = sqrt(252 344) = 502.34
      force: 2 x 140 = 280 N -> 0.5574 m/s;  sternum: 2 x 120 N/cm^2 x 1 cm^2 = 240 N -> 0.4778 m/s
    Of chest, abdomen and back, the chest link's lowest is the abdomen's:
      abdomen: K = 10 N/mm, mu the same; sqrt(mu K) = sqrt(100 938) = 317.71
      force 2 x 110 = 220 N -> 0.6925 m/s; abdominal muscle 2 x 140 = 280 N -> 0.8813 m/s."""
    m_r = LBR_MOVING_MASS / 2
    chest = pfl.body_regions()["chest"]
    assert pfl.permissible_speed(chest, m_r) == pytest.approx(0.4778, abs=1e-4)
    contact = pfl.assess_contact("chest", 0.3, m_r)
    assert contact.region == "chest" and contact.permissible_speed == pytest.approx(0.4778, abs=1e-4)


def test_no_transient_contact_is_permitted_on_the_head():
    contact = pfl.assess_contact("neck", 0.01, 13.5)
    assert contact.region in ("skull_and_forehead", "face")
    assert contact.permissible_speed == 0.0 and contact.ratio == math.inf and contact.violation


def test_a_larger_contact_area_permits_more_speed_until_the_force_limits():
    chest, m_r = pfl.body_regions()["chest"], 13.5
    assert pfl.permissible_speed(chest, m_r, area_cm2=2.0) > pfl.permissible_speed(chest, m_r)
    mu = pfl.reduced_mass(40, m_r)
    assert pfl.permissible_speed(chest, m_r, area_cm2=100.0) == pytest.approx(
        pfl.speed_for_force(280, mu, 25))


def test_every_humanoid_link_is_mapped_to_regions_of_the_data_file():
    links = set(read_urdf(data_path(URDF_PATH)).links)
    assert set(pfl.HUMANOID_LINK_REGIONS) == links
    regions = pfl.body_regions()
    for link, keys in pfl.HUMANOID_LINK_REGIONS.items():
        assert keys and all(k in regions for k in keys), link


def test_an_unknown_link_is_a_one_line_error():
    with pytest.raises(pfl.HriError, match="no link named 'tail'"):
        pfl.assess_contact("tail", 1.0, 13.5)
