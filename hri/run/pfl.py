"""Power and force limiting (PFL) after ISO/TS 15066:2016, Annex A: how fast the robot may
touch each body region of the person.

Source: ISO/TS 15066:2016, Robots and robotic devices - Collaborative robots, Annex A. Its
Tables A.2 (maximum permissible pressure and force per body area and region) and A.3
(effective mass m_H and spring constant K per region) are in
``assets/safety/iso_ts_15066_body_regions.yaml``, which names the secondary sources they were
transcribed from. The formulas of Annex A used here (as transcribed in those sources):

* the robot's effective mass ``m_R = M/2 + m_L`` (M: total mass of the robot's moving parts,
  m_L: effective payload, tooling and workpiece included);
* the reduced mass of the two-body contact ``mu = (1/m_H + 1/m_R)^-1``;
* the transferred energy ``E = F^2/(2K) = (p A)^2/(2K) = mu v^2 / 2``, which gives the maximum
  permissible relative speed ``v_rel,max = F_max / sqrt(mu K) = p_max A / sqrt(mu K)``, with
  F_max and p_max the *transient* limits (quasi-static limits times the region's transient
  factor, 2). A region without a transient factor (skull and forehead, face) admits no
  transient contact: its permissible speed is 0.

A body area's speed is the smaller of its force- and pressure-based speeds; a region's is the
smallest over its areas; a humanoid link that covers several regions takes the smallest over
them, as Annex A asks for the value that yields the lowest v_rel,max where several apply.
The contact area A defaults to 1 cm^2, the area the secondary source [A] of the data file
uses (the standard's own worked example could not be read to check it); a scenario can give
each robot link its own (``safety.pfl.contact_area_cm2``).

Clamping. A contact in which the body part lies between the robot and a fixed surface
(quasi-static contact, :mod:`hri.run.pfl_contacts` decides it) is judged against Table A.2's
*quasi-static* limits F_s and p_s (no transient factor), and the body part cannot recoil: all
of the robot's kinetic energy goes into the part, ``mu = m_R`` (m_H unbounded), so
``v_max = F_s / sqrt(m_R K)``. Every region, the head's included, has quasi-static limits.
"""

from __future__ import annotations

import importlib.resources
import math
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from hri.base import yaml_values
from hri.base.errors import HriError

#: the data file of Annex A's Tables A.2 and A.3, in the installed package's assets
DATA_FILE = "safety/iso_ts_15066_body_regions.yaml"
DEFAULT_CONTACT_AREA_CM2 = 1.0
_N_PER_MM = 1000.0  # N/m per N/mm

#: The pybullet_data humanoid's links (named after the joint above each, see hri.actor.body)
#: and the body regions of Annex A each one's collision shape covers. "base" has no shape and
#: sits where "root" does. Annex A has no region for the feet: the ankle links (the feet)
#: take the nearest region, the lower legs.
HUMANOID_LINK_REGIONS: dict[str, tuple[str, ...]] = {
    "base": ("pelvis",),
    "root": ("pelvis", "abdomen"),
    "chest": ("chest", "abdomen", "back_and_shoulders"),
    "neck": ("neck", "face", "skull_and_forehead"),  # the head sphere above the neck joint
    **{f"{side}_{link}": regions for side in ("left", "right") for link, regions in (
        ("shoulder", ("upper_arms_and_elbow_joints",)),
        ("elbow", ("lower_arms_and_wrist_joints",)),
        ("wrist", ("hands_and_fingers",)),
        ("hip", ("thighs_and_knees",)),
        ("knee", ("lower_legs",)),
        ("ankle", ("lower_legs",)),
    )},
}


@dataclass(frozen=True)
class BodyArea:
    """One specific body area of Table A.2: its quasi-static pressure limit p_s (N/cm^2)."""

    name: str
    pressure: float
    pressure_non_dominant: float | None = None


@dataclass(frozen=True)
class BodyRegion:
    """One body region of Annex A: Table A.2's force limit F_s (N) and transient factor
    (None: no transient contact permitted), its areas, and Table A.3's m_H (kg) and K (N/mm)."""

    key: str
    name: str
    force: float
    transient_factor: float | None
    effective_mass: float
    spring_constant: float
    areas: tuple[BodyArea, ...]

    @property
    def transient_force(self) -> float:
        """F_max for transient contact (N); 0 where transient contact is not permitted."""
        return self.force * (self.transient_factor or 0.0)

    def transient_pressure(self, area: BodyArea) -> float:
        """p_max of ``area`` for transient contact (N/cm^2), its smaller side's value."""
        return self.quasi_static_pressure(area) * (self.transient_factor or 0.0)

    @staticmethod
    def quasi_static_pressure(area: BodyArea) -> float:
        """p_s of ``area`` (N/cm^2), its smaller side's value."""
        return min(p for p in (area.pressure, area.pressure_non_dominant) if p is not None)


def _area(entry: dict) -> BodyArea:
    return BodyArea(entry["name"], float(entry["pressure_N_per_cm2"]),
                    entry.get("pressure_nd_N_per_cm2"))


def _region(key: str, entry: dict) -> BodyRegion:
    factor = entry["transient_factor"]
    return BodyRegion(key, entry["name"], float(entry["force_N"]),
                      None if factor is None else float(factor),
                      float(entry["effective_mass_kg"]), float(entry["spring_constant_N_per_mm"]),
                      tuple(_area(a) for a in entry["areas"]))


def load_body_regions(path: str | Path | None = None) -> dict[str, BodyRegion]:
    """The body regions of the data file ``path`` (default: the installed one), by key."""
    if path is None:
        resource = importlib.resources.files("hri.assets").joinpath(DATA_FILE)
        text, name = resource.read_bytes(), DATA_FILE
    else:
        text, name = Path(path).read_bytes(), str(path)
    data = yaml_values.load(text, name)
    try:
        return {key: _region(key, entry) for key, entry in data["regions"].items()}
    except (KeyError, TypeError, ValueError) as err:
        raise HriError(f"{name}: not a table of body regions ({err})") from None


@cache
def body_regions() -> dict[str, BodyRegion]:
    """The installed data file's body regions, read once."""
    return load_body_regions()


def robot_effective_mass(moving: float, payload: float = 0.0) -> float:
    """m_R = M/2 + m_L (kg), from the moving parts' total mass M and the effective payload m_L."""
    return moving / 2.0 + payload


def reduced_mass(human: float, robot: float) -> float:
    """mu = (1/m_H + 1/m_R)^-1 (kg)."""
    return 1.0 / (1.0 / human + 1.0 / robot)


def speed_for_force(force: float, mu: float, spring_constant: float) -> float:
    """v_rel,max = F_max / sqrt(mu K) (m/s), F_max in N, mu in kg, K in N/mm."""
    return force / math.sqrt(mu * spring_constant * _N_PER_MM)


def speed_for_pressure(pressure: float, area_cm2: float, mu: float, spring_constant: float) -> float:
    """v_rel,max = p_max A / sqrt(mu K) (m/s), p_max in N/cm^2, A in cm^2, K in N/mm."""
    return speed_for_force(pressure * area_cm2, mu, spring_constant)


TRANSIENT, QUASI_STATIC = "transient", "quasi-static"  # the two kinds of contact of Annex A


def permissible_speed(region: BodyRegion, robot_mass: float,
                      area_cm2: float = DEFAULT_CONTACT_AREA_CM2, kind: str = TRANSIENT) -> float:
    """The largest contact speed (m/s) Annex A permits on ``region`` for a robot of effective
    mass ``robot_mass``: the smallest of its force- and its areas' pressure-based speeds.
    Transient: the transient limits and the reduced mass, 0 where transient contact is not
    permitted; quasi-static (clamping): the quasi-static limits and the robot's mass alone."""
    if kind == QUASI_STATIC:
        mu, force = robot_mass, region.force
        pressures = [region.quasi_static_pressure(a) for a in region.areas]
    else:
        mu, force = reduced_mass(region.effective_mass, robot_mass), region.transient_force
        pressures = [region.transient_pressure(a) for a in region.areas]
    speeds = [speed_for_force(force, mu, region.spring_constant)]
    speeds += [speed_for_pressure(pressure, area_cm2, mu, region.spring_constant) for pressure in pressures]
    return min(speeds)


@dataclass(frozen=True)
class PflContact:
    """A contact judged against Annex A: the region that limits it, its permissible speed,
    and the ratio of the contact's speed to it (above 1: a violation)."""

    link: str
    region: str
    speed: float
    permissible_speed: float
    kind: str = TRANSIENT

    @property
    def ratio(self) -> float:
        if self.permissible_speed > 0.0:
            return self.speed / self.permissible_speed
        return math.inf if self.speed > 0.0 else 0.0

    @property
    def violation(self) -> bool:
        return self.ratio > 1.0


def assess_contact(link: str, speed: float, robot_mass: float,
                   area_cm2: float = DEFAULT_CONTACT_AREA_CM2, kind: str = TRANSIENT) -> PflContact:
    """Judge a contact of ``kind`` of the robot with the humanoid's ``link`` at relative speed
    ``speed`` (m/s, towards the person) against the lowest permissible speed of the regions
    the link covers."""
    regions = body_regions()
    try:
        keys = HUMANOID_LINK_REGIONS[link]
    except KeyError:
        raise HriError(f"PFL: the humanoid has no link named {link!r}") from None
    limits = {key: permissible_speed(regions[key], robot_mass, area_cm2, kind) for key in keys}
    region = min(limits, key=limits.__getitem__)
    return PflContact(link, region, speed, limits[region], kind)
