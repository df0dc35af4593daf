"""The typed scenario: one frozen value per section, built once when the file is loaded.

:func:`hri.scenario.load.load_scenario` checks a scenario file and builds a :class:`Scenario`
from it; the run, the views and the tools read these values and never the YAML document,
which stays in :attr:`Scenario.document` for messages that point at its lines and for the
copy a run directory keeps.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hri.actor.animation import MAX_WALKING_SPEED_M_S  # noqa: F401 (the scenario's too)
from hri.actor.route import CLEARANCE_M
from hri.base.errors import HriError
from hri.base.geometry import Area, Pose
from hri.scenario.document import Document
from hri.scenario.faults import Fault
from hri.workcell.layout import Furniture, PartsSettings, Room

if TYPE_CHECKING:
    from hri.net.quality import NetworkQuality
    from hri.robot.arm import RobotConfig
    from hri.robot.scene import ToolShape
    from hri.kinematics.arm_model import ArmModel

ROLES = ("person", "robot")  # the kinds of tree: a person's, the robot's
#: the service network's channels in a run, one per service (docs/network.md), which ``net``
#: may name besides ``default``
NET_CHANNELS = ("broker", "actor", "robot", "parts", "called", "safety")


#: the largest coordinate or length of a scenario, in metres (a workcell is a few metres across;
#: far beyond, the geometry's arithmetic overflows or loses every centimetre)
MAX_LENGTH_M = 1000.0
#: the highest rate (physics, trees, person), in Hz: a step of 0.1 ms, 24 times the presets' 240 Hz
MAX_RATE_HZ = 10_000.0
#: the lowest physics rate, in Hz: a step of a second already lets the arm's motor control and
#: the contacts jump (the trees and the person may tick slower, down to any positive rate)
MIN_PHYSICS_RATE_HZ = 1.0
#: an angle in degrees (a yaw) lies within -MAX_ANGLE_DEG..MAX_ANGLE_DEG, one turn either way
MAX_ANGLE_DEG = 360.0
#: the largest mass (kg) of a scenario: the robot's moving parts, its payload
MAX_MASS_KG = 1000.0
#: the most shelf sections, and the most parts a feeder keeps: each one is bodies in the
#: physics (the presets have 3 sections and keep 4 parts)
MAX_COUNT = 100


@dataclass(frozen=True)
class SimulationSettings:
    """``simulation``: the default duration and the rates, in simulated time."""

    duration_s: float
    physics_rate_hz: float
    tree_rate_hz: float
    person_rate_hz: float = 20.0  # the person is animated at this rate while away from the robot

    @property
    def tree_every(self) -> int:
        """Physics steps from one tick of the trees to the next."""
        return max(1, round(self.physics_rate_hz / self.tree_rate_hz))

    @property
    def tree_period_s(self) -> float:
        """Simulated seconds from one tick of the trees to the next (a whole number of steps)."""
        return self.tree_every / self.physics_rate_hz


@dataclass(frozen=True)
class RobotSetup:
    """``robot``: where it is mounted, its velocity fraction in the warning zone, its settings
(their per-joint values one per joint of ``model``), which arm it is, and the masses power and
force limiting takes: M, the arm's moving parts (by default its URDF links' below a moving
joint), and the payload m_L (by default one part where the scenario feeds parts: what the
robot carries at most; a carried part is massless in the physics)."""

    base: Pose
    reduced_velocity: float
    config: RobotConfig
    model: ArmModel
    moving_mass_kg: float
    payload_kg: float
    tool: "ToolShape | None" = None  # robot.tool; None: the default gripper, unless the arm has its own


#: the name of the one person of a scenario with ``person:`` (its tree, ``.btlog``, Groot2 port)
PERSON = "person"
#: the robot's tree's name, which no person may take
ROBOT = "robot"
#: a person's name: a letter, then letters, digits or ``_`` (it names files, queues and services)
PERSON_NAME_PATTERN = r"[A-Za-z][A-Za-z0-9_]{0,31}"
#: the closest two people may start, pelvis to pelvis, in metres: two shoulder widths' halves
#: (ISO 7250's 95th-percentile biacromial breadth is about 0.45 m) and a hand's width
MIN_PERSON_GAP_M = 0.5
#: ISO 13855's walking speed of a person approaching a machine (K = 1600 mm/s), in m/s
ISO_13855_WALKING_SPEED_M_S = 1.6
#: a person's ``height_m`` lies within these (m): adults from below ISO 7250's and DIN 33402's 1st
#: percentile of stature (about 1.50 m) to above their 99th (about 1.95 m)
HEIGHT_RANGE_M = (1.4, 2.1)
#: the most persons in a scenario: each is a body, an actor and a tree (Groot2 takes two ports each)
MAX_PEOPLE = 16


def tree_kind(name: str) -> str:
    """The kind of the tree named ``name`` (:data:`ROLES`): the robot's, or a person's."""
    return ROLES[1] if name == ROBOT else ROLES[0]


@dataclass(frozen=True)
class PersonSetup:
    """A person (``person:``, or one entry of ``people:``): their name, where they start,
    metres per walk cycle, how far walks keep from things, how fast they walk (None: the walk
    clip's pace at their stride), how tall they are (None: the humanoid's own height)."""

    start: Pose
    walk_stride_m: float
    clearance_m: float = CLEARANCE_M
    name: str = PERSON
    walking_speed_mps: float | None = None
    height_m: float | None = None  # None: the humanoid's own (hri.actor.body.BODY_HEIGHT_M)


#: zones (the trees' zones), ssm (speed and separation monitoring), pfl (power and force
#: limiting: the speed limited near the person), ssm+pfl (SSM, within S_p at PFL's speed)
SAFETY_MODES = ("zones", "ssm", "pfl", "ssm+pfl")
PFL_MODES = ("pfl", "ssm+pfl")  # the modes in which hri.run.pfl_control limits the speed
MEASURED = "measured"  # safety.ssm.person_speed_m_s: the person's measured speed instead of a constant


@dataclass(frozen=True)
class SsmOptions:
    """``safety.ssm``: the terms of the protective separation distance a scenario sets; None
    keeps the standard's default (:class:`hri.run.ssm.SsmSettings`). ``person_speed_m_s`` is a
    number or ``MEASURED``."""

    person_speed_m_s: float | str | None = None
    reaction_time_s: float | None = None
    intrusion_distance_m: float | None = None
    person_uncertainty_m: float | None = None
    robot_uncertainty_m: float | None = None


@dataclass(frozen=True)
class SensorMount:
    """``safety.sensor.mount`` and its field: where the sensor is (x, y, z in the world, m),
    which way it looks (``yaw``, rad), its horizontal field of view (degrees, centred on
    ``yaw``) and its range (m). What it sees: :mod:`hri.run.sensor_view`."""

    x: float
    y: float
    z: float
    yaw: float
    field_of_view_deg: float = 360.0
    range_m: float = math.inf


@dataclass(frozen=True)
class SensorOptions:
    """``safety.sensor``: the safety sensor the SSM controller and the zones act on
    (:mod:`hri.run.sensor`): its update rate (Hz), its latency (s) from a measurement to the
    report reaching the controller, its range noise (m, standard deviation; every report lies
    within ``SENSOR_NOISE_BOUND`` of them) and the probability that an update is lost.
    ``preset`` names the device of :file:`hri/scenario/sensors.yaml` it started from.
    ``mount``: where it is and its field; None: it sees everyone, everywhere."""

    rate_hz: float
    latency_s: float = 0.0
    range_noise_m: float = 0.0
    dropout_probability: float = 0.0
    preset: str | None = None
    mount: SensorMount | None = None


#: a sensor's range error lies within this many standard deviations (its noise is drawn from a
#: normal distribution truncated there): Z_d by default, the tolerance a data sheet states
SENSOR_NOISE_BOUND = 3.0


#: a touch at up to this relative speed (above every permissible speed of ISO/TS 15066 Annex A
#: for our robot) leaves a physics step with the shapes within the default contact distance
PFL_CONTACT_SPEED_M_S = 2.4
#: safety.pfl.contact_distance_m by default at the presets' 240 Hz (pfl_contact_distance)
PFL_CONTACT_DISTANCE_M = 0.01
#: the largest contact distance: the separation below which the safety monitor measures on
#: every physics step (hri.run.monitor.CONTACT_M), so every step of a contact is seen
PFL_CONTACT_DISTANCE_MAX_M = 0.05


def pfl_contact_distance(physics_rate_hz: float) -> float:
    """safety.pfl.contact_distance_m by default: what ``PFL_CONTACT_SPEED_M_S`` covers in one
    physics step, so no touch passes between two steps unseen (0.01 m at 240 Hz), at most
    ``PFL_CONTACT_DISTANCE_MAX_M`` (below 48 Hz a faster touch may pass between steps)."""
    return min(PFL_CONTACT_SPEED_M_S / physics_rate_hz, PFL_CONTACT_DISTANCE_MAX_M)


#: safety.pfl.contact_area_cm2 by default (hri.run.pfl.DEFAULT_CONTACT_AREA_CM2)
PFL_CONTACT_AREA_CM2 = 1.0


@dataclass(frozen=True)
class PflOptions:
    """``safety.pfl``: power and force limiting (:mod:`hri.run.pfl_contacts`): the person's and
    the robot's shapes closer than ``contact_distance_m`` are in contact; ``contact_areas``:
    the contact area (cm^2) of the robot's links named, ``contact_area_cm2`` of the others."""

    contact_distance_m: float = PFL_CONTACT_DISTANCE_M
    contact_area_cm2: float = PFL_CONTACT_AREA_CM2
    contact_areas: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True)
class SafetySettings:
    """``safety``: what the safety monitor allows (:class:`hri.run.monitor.SafetyLimits`), and
    the run's safety function: ``zones`` (speed by the person's zone, set by the trees) or
    ``ssm`` (speed and separation monitoring below the trees, :mod:`hri.run.ssm_control`);
    in both, contacts are judged by power and force limiting (``pfl``)."""

    reaction_time_s: float
    stopping_time_s: float
    rest_speed_m_s: float
    speed_tolerance: float
    mode: str = "zones"
    ssm: SsmOptions = SsmOptions()
    pfl: PflOptions = PflOptions()
    sensor: SensorOptions | None = None  # None: the ideal sensor (PyBullet's exact distances)
    #: ``stop_table``: a manufacturer's stopping table (:mod:`hri.robot.stop_table`) SSM takes
    #: S_s and T_s from, instead of the arm's braking from its state
    stop_table: Any = None


@dataclass(frozen=True)
class Scenario:
    """A checked scenario, section by section (see docs/scenarios.md for each key)."""

    path: Path
    name: str
    simulation: SimulationSettings
    room: Room
    furniture: dict[str, Furniture]
    robot: RobotSetup
    people: tuple[PersonSetup, ...]  # ``person:`` gives one, named ``person``
    zones: dict[str, Area]
    areas: dict[str, Area]
    poses: dict[str, Pose]
    trees: dict[str, Path]  # by tree name (each person's name, then ``robot``), resolved against the scenario's folder
    safety: SafetySettings
    net: NetworkQuality
    parts: PartsSettings
    faults: tuple[Fault, ...]
    blackboard: dict[str, Any]
    plugins: tuple[str, ...]  # module names or .py paths, each checked when loaded (hri.bt.plugins)
    document: Document

    @property
    def person(self) -> PersonSetup:
        """The first person (the one of a scenario with ``person:``)."""
        return self.people[0]

    @property
    def several(self) -> bool:
        """More than one person: their services, queues and statistics carry their names."""
        return len(self.people) > 1

    def person_named(self, name: str) -> PersonSetup | None:
        return next((person for person in self.people if person.name == name), None)

    def blackboard_entries(self, person: PersonSetup | None = None) -> dict[str, Any]:
        """What the trees find on their blackboards at start (``person``'s walk stride on a
        person's tree, the first person's on the robot's)."""
        entries: dict[str, Any] = {}
        for name, area in self.zones.items():
            entries[f"{name}_zone"] = area
        entries.update(self.areas)
        entries.update(self.poses)
        entries["reduced_velocity"] = self.robot.reduced_velocity
        entries["safety_mode"] = self.safety.mode
        entries["walk_stride"] = (person or self.person).walk_stride_m
        entries.update(self.blackboard)
        return entries

    def with_faults(self, specs: list[Any]) -> "Scenario":
        """This scenario with the faults ``specs`` added: ``KIND@SECONDS`` as ``hri run --fault``
        gives them, or ``{kind, at_s, tree}`` as a scenario's ``faults`` list holds them."""
        added = tuple(Fault.parse(spec, f"--fault {spec}") for spec in specs)
        for fault, spec in zip(added, specs):
            fault.check_names(list(self.trees), [person.name for person in self.people], f"--fault {spec}")
        return replace(self, faults=self.faults + added, document=self.document.with_faults(specs))

    def line_of(self, dotted: str) -> int | None:
        """The line of the key ``dotted`` (or of the nearest key holding it) in the file."""
        return self.document.line_of(dotted)

    def error(self, message: str, file: str, dotted: str, *related: str) -> HriError:
        """See :meth:`hri.scenario.document.Document.error`."""
        return self.document.error(message, file, dotted, *related)
