"""Which arm a scenario's robot is: ``robot.model`` resolved to a URDF file and the links that
bound its chain.

``robot.model`` is a shipped robot's name (:data:`SHIPPED`) or a file, relative to the scenario,
whose kind its name's ending tells (:data:`KINDS`). A kind is a function that gives the URDF the
simulation loads for the file, with any per-joint settings the file carries besides (a
:class:`ModelFile`): a ``.urdf`` is loaded as it is; a ``.yaml`` is a Denavit–Hartenberg table
(:mod:`hri.kinematics.dh`), whose URDF body hri writes into its cache and whose acceleration and
jerk limits it takes. A shipped robot is a file of some kind plus what its file does not carry
(the base and tool links, a home pose, acceleration and jerk limits).

:func:`resolve_model` checks what it can without a physics client: the file exists and parses,
the base and tool links exist, a chain of revolute joints joins them, and every one of those
joints has position and velocity limits. Messages are ``ValueError`` texts the scenario loader
puts at the key's line.
"""

from __future__ import annotations

import difflib
import importlib.resources
import math
import os
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from defusedxml import ElementTree

from hri.base.errors import HriError, shown_path
from hri.kinematics.chain import Chain
from hri.kinematics.dh import DhRobot, read_dh
from hri.kinematics.transforms import PoseLike
from hri.kinematics.urdf import JointSpec, UrdfModel, read_urdf

#: the model a scenario without ``robot.model`` runs
DEFAULT_MODEL = "lbr_iisy"


@dataclass(frozen=True)
class ModelFile:
    """What a kind makes of a model file: the URDF to load, and the per-joint ``robot.config``
    settings (``home``, ``max_acceleration``, ``max_jerk``; a tuple with one value per joint
    each) the file gives, which a shipped robot's and then the scenario's replace."""

    urdf: Path
    settings: dict[str, tuple[float, ...]] = field(default_factory=dict)
    identifier: str | None = None  # the arm's type on the network (a DH table's name), else the URDF's
    dh: DhRobot | None = None  # the Denavit–Hartenberg table it was built from, as read


def _urdf_file(path: Path) -> ModelFile:
    """A URDF is loaded as it is; it carries no acceleration, jerk or home pose."""
    return ModelFile(path)


def _dh_file(path: Path) -> ModelFile:
    """A Denavit–Hartenberg table (:mod:`hri.kinematics.dh`): the URDF body built from it, in
    the cache (:func:`generated_urdf`), and the table's acceleration and jerk limits. A mistake
    in the table is an HriError at its line."""
    robot = read_dh(path)
    return ModelFile(generated_urdf(path.stem, robot.urdf_text()),
                     {"max_acceleration": tuple(float(v) for v in robot.acceleration_limits),
                      "max_jerk": tuple(float(v) for v in robot.jerk_limits)}, robot.name, robot)


def generated_urdf(stem: str, text: str) -> Path:
    """The file holding the URDF ``text`` that hri generated (from a DH table): in
    ``$XDG_CACHE_HOME/hri/robots`` (else ``~/.cache/hri/robots``), named by the text's SHA-256,
    so the same table gives the same file, runs at once share it, and it is written (whole, or
    not at all) only when missing. ValueError when the folder cannot be written."""
    import hashlib

    from hri.base.files import write_atomic

    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "hri" / "robots"
    path = cache / f"{stem}-{hashlib.sha256(text.encode()).hexdigest()[:16]}.urdf"
    try:
        if not path.is_file():
            cache.mkdir(parents=True, exist_ok=True)
            write_atomic(path, text)
    except OSError as err:
        raise ValueError(f"cannot write the arm's generated URDF to {shown_path(cache)}: "
                         f"{err.strerror or err} (set XDG_CACHE_HOME to a folder you can write)") from None
    return path


#: file kind (how the file's name ends; the longest that fits counts) -> the function making a
#: :class:`ModelFile` of such a file (ValueError with a message, or HriError at the file's line)
KINDS: dict[str, Callable[[Path], ModelFile]] = {".urdf": _urdf_file, ".yaml": _dh_file, ".yml": _dh_file}


@dataclass(frozen=True)
class Shipped:
    """A robot hri ships: where its file is, its base and tool links, and the per-joint
    settings (``robot.config`` keys: ``home``, ``max_acceleration``, ``max_jerk``) that its file
    does not give, each a tuple with one value per joint."""

    locate: Callable[[], Path]
    base_link: str
    tool_link: str
    settings: dict[str, tuple[float, ...]] = field(default_factory=dict)
    identifier: str | None = None  # its type on the network, where its file does not say it


def _asset(name: str) -> Callable[[], Path]:
    """A file of ``assets/robot`` as the installed package holds it."""
    return lambda: Path(str(importlib.resources.files("hri.assets") / "robot" / name))


def _pybullet_data(name: str) -> Callable[[], Path]:
    """A file of the data PyBullet installs with itself (``pybullet_data``)."""
    def locate() -> Path:
        import pybullet_data

        return Path(pybullet_data.getDataPath()) / name
    return locate


#: the LBR iisy's settings (rad, rad/s^2, rad/s^3): elbow up, tool pointing down over the table
#: in front of the robot
LBR_IISY_SETTINGS = {
    "home": (0.0, 0.2, 2.0, 0.0, math.pi - 2.2, 0.0),
    "max_acceleration": (8.0, 8.0, 10.0, 15.0, 15.0, 20.0),
    "max_jerk": (80.0, 80.0, 100.0, 150.0, 150.0, 200.0),
}

#: the Franka Panda of pybullet_data (franka_panda/panda.urdf: position and velocity limits,
#: link masses). Acceleration and jerk after the controller limits Franka Emika publishes for
#: the arm ("Robot and interface specifications", joint space: q_ddot_max 15, 7.5, 10, 12.5, 15,
#: 20, 20 rad/s^2; q_dddot_max 7500, 3750, 5000, 6250, 7500, 10000, 10000 rad/s^3): the
#: accelerations as published, the jerks at a fiftieth, as the LBR iisy's are held low. At a
#: tenth, the light wrist (panda_joint7) overshoots its commanded speed by 5 % where a
#: motion at the reduced velocity reverses it, which the safety monitor counts. Home: the tool
#: pointing down in front of the base, elbow up.
PANDA_SETTINGS = {
    "home": (0.0, -0.3, 0.0, -2.2, 0.0, 2.0, math.pi / 4),
    "max_acceleration": (15.0, 7.5, 10.0, 12.5, 15.0, 20.0, 20.0),
    "max_jerk": (150.0, 75.0, 100.0, 125.0, 150.0, 200.0, 200.0),
}

#: the UR-5's home (rad): elbow up, the tool pointing down 0.13 m over the table in front of the
#: base; from there the IK finds elbow-up solutions over the table (from an upright arm it
#: finds the elbow down, through the table)
UR5_SETTINGS = {"home": (0.0, -0.6, -1.6, -2.5, -1.57, 0.0)}

#: name -> a robot hri ships (``robot.model: NAME``): the one registry of them. A shipped DH
#: table (the UR-5) is an entry whose file is of that kind in :data:`KINDS`
SHIPPED: dict[str, Shipped] = {
    "lbr_iisy": Shipped(_asset("lbr_iisy.urdf"), "base_link", "tool0", LBR_IISY_SETTINGS, "lbr-iisy"),
    "panda": Shipped(_pybullet_data("franka_panda/panda.urdf"), "panda_link0", "panda_grasptarget", PANDA_SETTINGS,
                     "panda"),
    "ur5": Shipped(_asset("ur5.yaml"), "base_link", "tool0", UR5_SETTINGS),
}


def shipped_dh_path(name: str) -> Path:
    """The Denavit–Hartenberg file of the shipped robot ``name`` (``ur5``), from the installed
    package; HriError when no shipped robot of that name is a DH table."""
    shipped = SHIPPED.get(name)
    if shipped is None or not _is_dh(shipped.locate()):
        tables = [key for key, entry in SHIPPED.items() if _is_dh(entry.locate())]
        raise HriError(f"no shipped DH robot named {name!r} (shipped: {', '.join(sorted(tables))})")
    return shipped.locate()


def shipped_dh(name: str) -> DhRobot:
    """The shipped robot ``name`` as its DH table reads (see :func:`shipped_dh_path`)."""
    return read_dh(shipped_dh_path(name))


def _is_dh(path: Path) -> bool:
    return KINDS.get(model_kind(path) or "") is _dh_file

#: the ``robot.config`` keys with one value per joint, which a model that is not shipped must set
PER_JOINT = ("home", "max_acceleration", "max_jerk")
#: a scenario's joint position limits lie within -MAX_ANGLE_RAD..MAX_ANGLE_RAD (two turns either way)
MAX_ANGLE_RAD = 4 * math.pi
#: a scenario's joint velocity limits are at most this (rad/s)
MAX_SPEED_RAD_S = 100.0


@dataclass(frozen=True)
class ArmModel:
    """A resolved ``robot.model``: the URDF to load, the links its chain runs between, the
    names of the chain's revolute joints, and the per-joint settings the model brings."""

    name: str  # as the scenario gives it
    urdf: Path
    base_link: str
    tool_link: str
    joints: tuple[str, ...]
    root: str  # the URDF's root link, which PyBullet mounts at robot.base: the chain starts there
    #: per joint (lower rad, upper rad, velocity rad/s): the URDF's, or the scenario's robot.limits
    limits: tuple[tuple[float, float, float], ...]
    settings: dict[str, tuple[float, ...]] = field(default_factory=dict, compare=False)
    #: the arm's type on the network: the robot service's identifiers are ``IDENTIFIER-1``,
    #: ``IDENTIFIER``, ``industrial-robot``, ``robot``
    identifier: str = ""
    dh: DhRobot | None = field(default=None, compare=False)  # the DH table it was built from, as read
    #: the user's file ``robot.model`` names (a URDF or a DH table), resolved; None for a shipped
    #: robot. A run folder keeps a copy of it (:mod:`hri.run.run_dir`)
    file: Path | None = field(default=None, compare=False)

    @property
    def joint_count(self) -> int:
        return len(self.joints)

    def chain(self, base_pose: PoseLike | None = None) -> Chain:
        """The kinematic chain from the root link to the tool link, with :attr:`limits`."""
        model = read_urdf(self.urdf)
        limits = dict(zip(self.joints, self.limits))
        joints = [replace(joint, lower=limits[joint.name][0], upper=limits[joint.name][1],
                          velocity=limits[joint.name][2]) if joint.name in limits else joint
                  for joint in model.path(self.root, self.tool_link)]
        return Chain(joints, self.root, self.tool_link, base_pose, name=model.name)


def model_kind(path: Path) -> str | None:
    """The kind (a key of :data:`KINDS`) of the file ``path``, None when none fits."""
    name = path.name.lower()
    fits = [kind for kind in KINDS if name.endswith(kind)]
    return max(fits, key=len) if fits else None  # ".dh.yaml" before ".yaml"


def resolve_model(spec: Any = DEFAULT_MODEL, folder: Path | None = None, base_link: str | None = None,
                  tool_link: str | None = None, limits: dict[str, Any] | None = None) -> ArmModel:
    """``robot.model`` ``spec`` (a shipped name, or a file relative to ``folder``) with the
    scenario's links (None: the shipped robot's, or for a file its root and its only leaf) and
    its ``robot.limits`` (``position``: ``[lower, upper]`` per joint, ``velocity``: one per
    joint or one for all; each replaces the model's). ValueError with a message that starts
    with what is wrong."""
    if not isinstance(spec, str) or not spec:
        raise ValueError(f"must be a shipped robot ({', '.join(SHIPPED)}) or a file, got {spec!r}")
    shipped, file = SHIPPED.get(spec), None
    if shipped is not None:
        made = _made(shipped.locate())
        urdf, settings = made.urdf, {**made.settings, **shipped.settings}
        base_link, tool_link = base_link or shipped.base_link, tool_link or shipped.tool_link
    else:
        file = _model_file(spec, folder)
        made = _made(file)
        urdf, settings = made.urdf, made.settings
    model = _read(urdf)
    identifier = (shipped and shipped.identifier) or made.identifier or model.name
    joints = _chain(model, urdf, base_link, tool_link)
    base = base_link or model.root
    _check_mounted(model, urdf, base)
    tool = tool_link or (joints[-1].child if joints else base)
    revolute = [joint for joint in joints if joint.kind == "revolute"]
    if not revolute:
        raise ValueError(f"{urdf.name}: no revolute joint from {base!r} to {tool!r}")
    joint_limits = _joint_limits(revolute, urdf, limits or {})
    for key, values in settings.items():  # a kind's or a shipped robot's: one value per joint
        if len(values) != len(revolute):
            raise ValueError(f"{urdf.name}: {key} has {len(values)} values for {len(revolute)} joints")
    return ArmModel(spec, urdf, base, tool, tuple(joint.name for joint in revolute), model.root, joint_limits,
                    dict(settings), identifier, made.dh, file)


def _joint_limits(joints: list[JointSpec], urdf: Path, limits: dict[str, Any]) -> tuple[tuple[float, float, float], ...]:
    """Per revolute joint (lower, upper, velocity): the scenario's where it gives them, else the
    URDF's; each joint must end up with all three."""
    n = len(joints)
    position = _position_limits(limits["position"], n) if "position" in limits else None
    velocity = _velocity_limits(limits["velocity"], n) if "velocity" in limits else None
    out = []
    for i, joint in enumerate(joints):
        lower, upper = position[i] if position is not None else (joint.lower, joint.upper)
        speed = velocity[i] if velocity is not None else joint.velocity
        if not _limited(replace(joint, lower=lower, upper=upper, velocity=speed)):
            raise ValueError(f"{urdf.name}: joint {joint.name!r} has no position and velocity limits "
                             "(<limit lower upper velocity>, or the scenario's robot.limits)")
        out.append((lower, upper, speed))
    return tuple(out)


def _position_limits(value: Any, n: int) -> list[tuple[float, float]]:
    if (not isinstance(value, list) or len(value) != n
            or not all(isinstance(pair, list) and len(pair) == 2 and all(_finite(v) for v in pair) for pair in value)):
        raise ValueError(f"robot.limits.position: must be {n} pairs [lower, upper] in rad, one per joint, got {value!r}")
    for lower, upper in value:
        if not -MAX_ANGLE_RAD <= lower < upper <= MAX_ANGLE_RAD:
            raise ValueError(f"robot.limits.position: [{lower:g}, {upper:g}] must be lower < upper within "
                             f"-{MAX_ANGLE_RAD:.4g}..{MAX_ANGLE_RAD:.4g} rad")
    return [(float(lower), float(upper)) for lower, upper in value]


def _velocity_limits(value: Any, n: int) -> list[float]:
    values = [value] * n if _finite(value) else value
    if not isinstance(values, list) or len(values) != n or not all(_finite(v) for v in values):
        raise ValueError(f"robot.limits.velocity: must be a number or {n} numbers (rad/s), got {value!r}")
    if not all(0.0 < v <= MAX_SPEED_RAD_S for v in values):
        raise ValueError(f"robot.limits.velocity: each must be above 0 and at most {MAX_SPEED_RAD_S:g} rad/s, "
                         f"got {value!r}")
    return [float(v) for v in values]


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _check_mounted(model: UrdfModel, urdf: Path, base: str) -> None:
    """The base link is the root or fixed to it: PyBullet mounts the root at ``robot.base``."""
    moving = [joint.name for joint in model.path(model.root, base) if joint.kind != "fixed"]
    if moving:
        raise ValueError(f"robot.base_link: {base!r} moves with joint {moving[0]!r} of {urdf.name}; the base "
                         f"link must be the root link {model.root!r} or fixed to it")


def _model_file(spec: str, folder: Path | None) -> Path:
    path = Path(spec) if folder is None else folder / spec
    if model_kind(path) is None:
        close = difflib.get_close_matches(spec, list(SHIPPED), n=1)
        hint = f"did you mean '{close[0]}'? " if close else ""
        raise ValueError(f"unknown robot {spec!r} ({hint}shipped: {', '.join(SHIPPED)}; or a file "
                         f"ending in {', '.join(KINDS)}, relative to the scenario)")
    if not path.is_file():
        raise ValueError(f"no such file {spec!r} ({shown_path(path.resolve())})")
    return path.resolve()


def _made(path: Path) -> ModelFile:
    kind = model_kind(path)
    if kind is None:
        raise ValueError(f"{path.name}: not a robot model ({', '.join(KINDS)})")
    return KINDS[kind](path)


def _read(urdf: Path) -> UrdfModel:
    try:
        return read_urdf(urdf)
    except OSError as err:
        raise ValueError(f"cannot read {urdf.name}: {err.strerror or err}") from None
    except Exception as err:  # the XML parser's and the URDF reader's errors
        raise ValueError(f"{urdf.name}: not a URDF robot ({err})") from None


def _chain(model: UrdfModel, urdf: Path, base_link: str | None, tool_link: str | None) -> list[JointSpec]:
    """The joints from the base link to the tool link, revolute or fixed."""
    for key, link in (("base_link", base_link), ("tool_link", tool_link)):
        if link is not None and link not in model.links:
            close = difflib.get_close_matches(link, list(model.links), n=1)
            hint = f"did you mean '{close[0]}'?" if close else f"links: {', '.join(model.links)}"
            raise ValueError(f"robot.{key}: {urdf.name} has no link {link!r} ({hint})")
    try:
        joints = model.path(base_link, tool_link)
    except ValueError as err:
        raise ValueError(f"robot.tool_link: {str(err).removeprefix(model.name + ': ')} in {urdf.name}") from None
    for joint in joints:
        if joint.kind not in ("revolute", "fixed"):
            raise ValueError(f"{urdf.name}: joint {joint.name!r} is {joint.kind}: the arm's chain takes "
                             "revolute and fixed joints")
    return joints


def moving_mass(urdf: str | Path) -> float:
    """M: the total mass (kg) of the links that move, those below at least one joint that is
    not fixed (their ``<inertial><mass>``)."""
    model = read_urdf(urdf)
    masses = _link_masses(urdf)
    moving = [link for link in model.links
              if any(j.kind != "fixed" for j in model.path(model.root, link))]
    return sum(masses.get(link, 0.0) for link in moving)


def _link_masses(urdf: str | Path) -> dict[str, float]:
    root = ElementTree.fromstring(Path(urdf).read_bytes().rstrip(b"\0\r\n\t "))
    masses = {}
    for link in root.findall("link"):
        mass = link.find("inertial/mass")
        if mass is not None:
            masses[link.get("name")] = float(mass.get("value"))
    return masses


def _limited(joint: JointSpec) -> bool:
    return (math.isfinite(joint.lower) and math.isfinite(joint.upper) and joint.lower < joint.upper
            and math.isfinite(joint.velocity) and joint.velocity > 0.0)
