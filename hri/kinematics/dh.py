"""A robot arm from a Denavit-Hartenberg table: its kinematic chain and a PyBullet body that agree.

A DH file (YAML; ``assets/robot/ur5.yaml`` is the shipped UR-5, which
:func:`hri.kinematics.arm_model.shipped_dh` reads) lists per revolute joint the
standard (distal) DH parameters ``d``, ``a`` (m), ``alpha`` and the ``theta`` offset (rad; a
number or ``pi``-text such as ``-pi/2``), its limits (``position: [lower, upper]`` rad,
``velocity`` rad/s, ``acceleration`` rad/s^2, ``jerk`` rad/s^3; optional ``effort`` N m), the
mass of the link it moves (kg, optionally its ``center_of_mass`` in the DH frame of the
joint) and that link's ``geometry`` (``shape: capsule`` or ``box``, ``radius`` m); and for the
arm its ``base`` (``mass``, ``radius``, ``height``), ``payload_kg``, ``base_link`` and
``tool_link`` names, and optionally the kinematics service it offers on the network
(``service: {name, identifiers, update_rate_hz}``).

Joint ``i`` turns link ``i`` about the z axis of DH frame ``i-1`` by ``theta_i = q_i +
offset_i``; frame ``i`` is frame ``i-1`` times ``Rz(theta_i) Tz(d_i) Tx(a_i) Rx(alpha_i)``, and
the tool link is DH frame ``n``. :meth:`DhRobot.joints` puts this into URDF's form (a joint
turns *after* its fixed origin): joint ``i``'s origin is the fixed part of row ``i-1``,
``Tz(d) Tx(a) Rx(alpha)``, times ``Rz(offset_i)``, and a fixed joint carries row ``n``'s
fixed part to the tool link. The :class:`~hri.kinematics.chain.Chain` and the URDF text
(:meth:`DhRobot.urdf_text`) are both made from those joints; :func:`dh_forward` is the table's
own product of DH matrices, the independent reference the tests hold both against.

Link ``i``'s geometry follows the table: a segment ``d_i`` along z, then ``a_i`` along x (a
capsule or a square box of the given radius each); a link whose segments are both zero is a
sphere (box: a cube). Its inertia is that of solid cylinders of the segments sharing the
link's mass, about its centre of mass (an estimate: UR publishes masses and centres of mass,
not inertia tensors of every link).

Every problem in a file is one :class:`~hri.base.errors.HriError` ``FILE:LINE: message``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from xml.sax.saxutils import quoteattr

import numpy as np
import yaml

from hri.base.errors import HriError
from hri.base.files import write_atomic
from hri.base.untrusted import read_own
from hri.base.yaml_values import check_collections, compose, scalar_value
from hri.kinematics.chain import Chain
from hri.kinematics.transforms import PoseLike, matrix_rpy, transform
from hri.kinematics.urdf import JointSpec

#: a DH file is read whole; this is far above any table written by hand
MAX_FILE_BYTES = 1_000_000
#: how ``hri validate`` tells a DH file: a top-level ``joints`` key (scenarios, trees and clips have none)
DH_KEY = re.compile(rb"^joints[ \t]*:", re.MULTILINE)
SHAPES = ("capsule", "box")
_LIMITS = ("position", "velocity", "acceleration", "jerk")
_COLUMNS = ("d", "a", "alpha", "theta")
_JOINT_KEYS = {"name", *_COLUMNS, "limits", "mass", "center_of_mass", "geometry"}
_TOP_KEYS = {"name", "base_link", "tool_link", "payload_kg", "base", "joints", "service"}
_PI_TEXT = re.compile(r"^\s*([+-]?)\s*(\d+(?:\.\d*)?)?\s*\*?\s*pi\s*(?:/\s*(\d+(?:\.\d*)?))?\s*$")
_SPHERE_SEGMENT = 1e-9  # m: a link shorter than this in both segments is drawn as a sphere


@dataclass(frozen=True)
class DhJoint:
    """One row of the table with its limits, link mass and link geometry (SI units, rad)."""

    name: str
    d: float
    a: float
    alpha: float
    offset: float
    lower: float
    upper: float
    velocity: float
    acceleration: float
    jerk: float
    effort: float
    mass: float
    center_of_mass: tuple[float, float, float] | None  # in DH frame i; None: the geometry's centre
    shape: str
    radius: float

    def fixed_part(self) -> np.ndarray:
        """``Tz(d) Tx(a) Rx(alpha)``: DH frame ``i`` in link ``i``'s frame (after ``Rz(theta)``)."""
        c, s = math.cos(self.alpha), math.sin(self.alpha)
        return np.array([[1.0, 0.0, 0.0, self.a], [0.0, c, -s, 0.0], [0.0, s, c, self.d], [0.0, 0.0, 0.0, 1.0]])


@dataclass(frozen=True)
class DhService:
    """The kinematics service the robot offers on the network (seed ``000``'s identifiers)."""

    name: str
    identifiers: tuple[str, ...]
    update_rate_hz: float  # set-points a second the robot takes (INTERPOLATE's sample rate)


@dataclass(frozen=True)
class DhRobot:
    """An arm read from a DH file (see the module docstring)."""

    name: str
    path: Path
    base_link: str
    tool_link: str
    payload_kg: float
    base_mass: float
    base_radius: float
    base_height: float
    table: tuple[DhJoint, ...]
    service: DhService | None

    # -- the joints in URDF's form: one source for the chain and the body ------------------

    def link_names(self) -> tuple[str, ...]:
        """The links base to tool: ``base_link``, one per joint (``link_<joint>``), ``tool_link``."""
        return (self.base_link, *(f"link_{j.name}" for j in self.table), self.tool_link)

    def joints(self) -> list[JointSpec]:
        """The revolute joints and the tool's fixed joint (see the module docstring)."""
        links = self.link_names()
        fixed = np.eye(4)
        specs = []
        for i, j in enumerate(self.table):
            origin = fixed @ transform(_rz(j.offset))
            specs.append(JointSpec(j.name, "revolute", links[i], links[i + 1], origin, np.array([0.0, 0.0, 1.0]),
                                   j.lower, j.upper, j.velocity, j.effort))
            fixed = j.fixed_part()
        specs.append(JointSpec(f"{links[-2]}-{self.tool_link}", "fixed", links[-2], self.tool_link, fixed,
                               np.array([1.0, 0.0, 0.0])))
        return specs

    def chain(self, base_pose: PoseLike | None = None) -> Chain:
        """The kinematic chain ``base_link`` -> ``tool_link``, the base at ``base_pose`` in the world."""
        return Chain(self.joints(), self.base_link, self.tool_link, base_pose, name=self.name)

    # -- limits and masses the arm and the safety functions take -------------------------

    @property
    def velocity_limits(self) -> np.ndarray:
        return np.array([j.velocity for j in self.table])

    @property
    def acceleration_limits(self) -> np.ndarray:
        return np.array([j.acceleration for j in self.table])

    @property
    def jerk_limits(self) -> np.ndarray:
        return np.array([j.jerk for j in self.table])

    @property
    def link_masses(self) -> np.ndarray:
        """The moving links' masses (kg), base to tool; the base's own is :attr:`base_mass`."""
        return np.array([j.mass for j in self.table])

    # -- the PyBullet body ---------------------------------------------------------------

    def urdf_text(self) -> str:
        """The arm as URDF text: the joints of :meth:`joints`, the links' geometry and inertia."""
        specs = self.joints()
        lines = ['<?xml version="1.0"?>', f"<!-- generated by hri.kinematics.dh from {self.path.name} -->",
                 f"<robot name={quoteattr(self.name)}>"]
        base_segments = [(np.zeros(3), np.array([0.0, 0.0, self.base_height]))]
        # The base and the first link's rise stand on the mounting plane and the base: drawn
        # flat there, so no rounded end reaches into the table the arm is mounted on.
        lines += _link_xml(self.base_link, self.base_mass, None, base_segments, "capsule", self.base_radius, True)
        for k, (j, spec) in enumerate(zip(self.table, specs)):
            com = None if j.center_of_mass is None else (j.fixed_part() @ np.array([*j.center_of_mass, 1.0]))[:3]
            segments = _segments(j, self.base_height if k == 0 else 0.0)
            lines += _link_xml(spec.child, j.mass, com, segments, j.shape, j.radius, k == 0)
        lines += [f"  <link name={quoteattr(self.tool_link)}>", *_inertial_xml(0.001, np.zeros(3),
                  np.eye(3) * 1e-7), "  </link>"]
        for spec in specs:
            lines += _joint_xml(spec)
        lines.append("</robot>")
        return "\n".join(lines) + "\n"

    def write_urdf(self, folder: Path) -> Path:
        """Write :meth:`urdf_text` to ``folder``/``<file stem>.urdf`` (whole or not at all) and
        return its path: what ``pybullet.loadURDF`` and :meth:`Chain.from_urdf` read."""
        path = Path(folder) / f"{self.path.stem}.urdf"
        write_atomic(path, self.urdf_text())
        return path


def _rz(angle: float) -> np.ndarray:
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def dh_matrix(d: float, a: float, alpha: float, theta: float) -> np.ndarray:
    """The standard DH transform ``Rz(theta) Tz(d) Tx(a) Rx(alpha)``, written out."""
    ct, st, ca, sa = math.cos(theta), math.sin(theta), math.cos(alpha), math.sin(alpha)
    return np.array([[ct, -st * ca, st * sa, a * ct],
                     [st, ct * ca, -ct * sa, a * st],
                     [0.0, sa, ca, d],
                     [0.0, 0.0, 0.0, 1.0]])


def dh_forward(robot: DhRobot, q: Any, base_pose: np.ndarray | None = None) -> np.ndarray:
    """The tool frame (4x4) as the table's product ``prod_i dh_matrix(d_i, a_i, alpha_i, q_i + offset_i)``."""
    out = np.eye(4) if base_pose is None else np.array(base_pose, dtype=float)
    for j, angle in zip(robot.table, q, strict=True):
        out = out @ dh_matrix(j.d, j.a, j.alpha, float(angle) + j.offset)
    return out


# -- geometry and inertia ------------------------------------------------------------------

def _segments(j: DhJoint, floor: float = 0.0) -> list[tuple[np.ndarray, np.ndarray]]:
    """Link ``i``'s segments in its frame: ``d`` along z (from ``floor``, where the link stands
    on the base), then ``a`` along x."""
    knee = np.array([0.0, 0.0, j.d])
    start = np.array([0.0, 0.0, min(floor, j.d)]) if j.d >= 0.0 else np.zeros(3)
    return [(start, knee), (knee, knee + np.array([j.a, 0.0, 0.0]))]


def _segment_rpy(start: np.ndarray, end: np.ndarray) -> tuple[float, float, float]:
    """The rpy turning z onto the segment's direction (segments lie along z or x)."""
    direction = end - start
    return (0.0, 0.0, 0.0) if abs(direction[2]) >= abs(direction[0]) else (0.0, math.pi / 2, 0.0)


def _cylinder_inertia(mass: float, radius: float, length: float) -> np.ndarray:
    """A solid cylinder's inertia about its centre, axis along z."""
    across = mass * (3.0 * radius * radius + length * length) / 12.0
    return np.diag([across, across, 0.5 * mass * radius * radius])


def _inertia(mass: float, com: np.ndarray, segments: list[tuple[np.ndarray, np.ndarray, float]],
             radius: float) -> np.ndarray:
    """The link's inertia about ``com``: its segments as solid cylinders sharing ``mass`` by length."""
    total = sum(length for *_, length in segments)
    if total <= _SPHERE_SEGMENT:
        return np.eye(3) * 0.4 * mass * radius * radius
    out = np.zeros((3, 3))
    for start, end, length in segments:
        m = mass * length / total
        local = _cylinder_inertia(m, radius, length)
        if _segment_rpy(start, end) != (0.0, 0.0, 0.0):
            local = local[[2, 1, 0]][:, [2, 1, 0]]  # the axis along x
        r = 0.5 * (start + end) - com
        out += local + m * (float(r @ r) * np.eye(3) - np.outer(r, r))
    return out


def _fmt(value: float) -> str:
    return repr(float(value))  # every bit: the body must be the chain


def _vec(values: Any) -> str:
    return " ".join(_fmt(v) for v in values)


def _inertial_xml(mass: float, com: np.ndarray, inertia: np.ndarray) -> list[str]:
    i = inertia
    return ["    <inertial>", f'      <origin xyz="{_vec(com)}" rpy="0 0 0"/>', f'      <mass value="{_fmt(mass)}"/>',
            f'      <inertia ixx="{_fmt(i[0, 0])}" ixy="{_fmt(i[0, 1])}" ixz="{_fmt(i[0, 2])}" '
            f'iyy="{_fmt(i[1, 1])}" iyz="{_fmt(i[1, 2])}" izz="{_fmt(i[2, 2])}"/>', "    </inertial>"]


def _shape_xml(shape: str, radius: float, length: float, flat: bool = False) -> str:
    """A segment's geometry along z; ``flat``: ending at the segment's ends (a cylinder, a box
    of the segment's length), as where a link stands on the base and must not reach below it."""
    if flat:
        side = 2.0 * radius
        return (f'<cylinder radius="{_fmt(radius)}" length="{_fmt(length)}"/>' if shape == "capsule"
                else f'<box size="{_fmt(side)} {_fmt(side)} {_fmt(length)}"/>')
    if shape == "capsule":
        return f'<capsule radius="{_fmt(radius)}" length="{_fmt(length)}"/>'
    side = 2.0 * radius
    return f'<box size="{_fmt(side)} {_fmt(side)} {_fmt(length + side)}"/>'  # reaching as far as the capsule


def _link_xml(name: str, mass: float, com: np.ndarray | None, segments: list[tuple[np.ndarray, np.ndarray]],
              shape: str, radius: float, flat_first: bool = False) -> list[str]:
    measured = [(s, e, float(np.linalg.norm(e - s))) for s, e in segments]
    kept = [seg for seg in measured if seg[2] > _SPHERE_SEGMENT]
    if com is None:
        total = sum(length for *_, length in kept)
        com = (sum(0.5 * (s + e) * length for s, e, length in kept) / total) if kept else np.zeros(3)
    lines = [f"  <link name={quoteattr(name)}>", *_inertial_xml(mass, com, _inertia(mass, com, kept, radius))]
    pieces = [(0.5 * (s + e), _segment_rpy(s, e), _shape_xml(shape, radius, length, flat_first and k == 0))
              for k, (s, e, length) in enumerate(kept)]
    if not pieces:
        ball = f'<sphere radius="{_fmt(radius)}"/>' if shape == "capsule" else _shape_xml("box", radius, 0.0)
        pieces = [(np.zeros(3), (0.0, 0.0, 0.0), ball)]
    for centre, rpy, geometry in pieces:
        for element in ("visual", "collision"):
            lines += [f"    <{element}>", f'      <origin xyz="{_vec(centre)}" rpy="{_vec(rpy)}"/>',
                      f"      <geometry>{geometry}</geometry>", f"    </{element}>"]
    lines.append("  </link>")
    return lines


def _joint_xml(spec: JointSpec) -> list[str]:
    lines = [f"  <joint name={quoteattr(spec.name)} type={quoteattr(spec.kind)}>",
             f"    <parent link={quoteattr(spec.parent)}/>", f"    <child link={quoteattr(spec.child)}/>",
             f'    <origin xyz="{_vec(spec.origin[:3, 3])}" rpy="{_vec(matrix_rpy(spec.origin[:3, :3]))}"/>']
    if spec.kind == "revolute":
        lines += [f'    <axis xyz="{_vec(spec.axis)}"/>',
                  f'    <limit lower="{_fmt(spec.lower)}" upper="{_fmt(spec.upper)}" '
                  f'velocity="{_fmt(spec.velocity)}" effort="{_fmt(spec.effort)}"/>']
    lines.append("  </joint>")
    return lines


# -- reading a DH file -----------------------------------------------------------------------

class _Reader:
    """The values of one DH file with the line of every node, and one-line errors at them."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.file = str(path)

    def fail(self, node: yaml.Node, message: str) -> HriError:
        return HriError(message, self.file, node.start_mark.line + 1)

    def mapping(self, node: yaml.Node, where: str, keys: set[str]) -> dict[str, tuple[yaml.Node, yaml.Node]]:
        if not isinstance(node, yaml.MappingNode):
            raise self.fail(node, f"{where} must be a mapping")
        out: dict[str, tuple[yaml.Node, yaml.Node]] = {}
        for key_node, value_node in node.value:
            key = str(key_node.value)
            if key not in keys:
                raise self.fail(key_node, f"{where}: unknown key {key!r} (known: {', '.join(sorted(keys))})")
            if key in out:
                raise self.fail(key_node, f"{where}: duplicate key {key!r}")
            out[key] = (key_node, value_node)
        return out

    def required(self, node: yaml.Node, items: dict, key: str, where: str) -> yaml.Node:
        if key not in items:
            raise self.fail(node, f"{where}: missing {key!r}")
        return items[key][1]

    def number(self, node: yaml.Node, where: str, *, least: float | None = None, positive: bool = False,
               angle: bool = False) -> float:
        value = scalar_value(node, self.file) if isinstance(node, yaml.ScalarNode) else None
        if angle and isinstance(value, str):
            value = _pi_text(value)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.fail(node, f"{where} must be a number{' or pi-text such as -pi/2' if angle else ''}, "
                                  f"got {node.value if isinstance(node, yaml.ScalarNode) else 'a collection'!r}")
        value = float(value)
        if not math.isfinite(value):
            raise self.fail(node, f"{where} must be a finite number, got {value}")
        if positive and value <= 0.0:
            raise self.fail(node, f"{where} must be positive, got {value:g}")
        if least is not None and value < least:
            raise self.fail(node, f"{where} must not be negative, got {value:g}")
        return value

    def text(self, node: yaml.Node, where: str) -> str:
        value = scalar_value(node, self.file) if isinstance(node, yaml.ScalarNode) else None
        if not isinstance(value, str) or not value.strip() or value != value.strip():
            raise self.fail(node, f"{where} must be a name (text without surrounding spaces)")
        return value

    def numbers(self, node: yaml.Node, where: str, count: int, **checks: Any) -> list[float]:
        if not isinstance(node, yaml.SequenceNode) or len(node.value) != count:
            raise self.fail(node, f"{where} must be a list of {count} numbers")
        return [self.number(v, f"{where}[{i}]", **checks) for i, v in enumerate(node.value)]


def _pi_text(text: str) -> float | str:
    """``pi``, ``-pi/2``, ``2*pi``, ``0.5pi`` as a number; other text as it is."""
    match = _PI_TEXT.match(text)
    if not match:
        return text
    sign, factor, divisor = match.groups()
    value = (float(factor) if factor else 1.0) * math.pi / (float(divisor) if divisor else 1.0)
    return -value if sign == "-" else value


def _read_joint(r: _Reader, node: yaml.Node, index: int) -> DhJoint:
    where = f"joints[{index}]"
    items = r.mapping(node, where, _JOINT_KEYS)
    name = r.text(r.required(node, items, "name", where), f"{where}.name")
    where = f"joint {name!r}"
    for column in _COLUMNS:
        if column not in items:
            raise r.fail(node, f"{where}: missing the column {column!r} (every joint has {', '.join(_COLUMNS)})")
    # d and a are signed offsets along z and x (UR's a_2 and a_3 are negative), not lengths
    d = r.number(r.required(node, items, "d", where), f"{where}: d")
    a = r.number(r.required(node, items, "a", where), f"{where}: a")
    alpha = r.number(r.required(node, items, "alpha", where), f"{where}: alpha", angle=True)
    offset = r.number(r.required(node, items, "theta", where), f"{where}: theta", angle=True)
    limits_node = items.get("limits", (None, None))[1]
    if limits_node is None:
        raise r.fail(node, f"{where}: no limits (position, velocity, acceleration, jerk are required)")
    limits = r.mapping(limits_node, f"{where}: limits", {*_LIMITS, "effort"})
    for key in _LIMITS:
        r.required(limits_node, limits, key, f"{where}: limits")
    lower, upper = r.numbers(limits["position"][1], f"{where}: limits.position", 2, angle=True)
    if not lower < upper:
        raise r.fail(limits["position"][1], f"{where}: limits.position must be [lower, upper] with lower < upper")
    velocity, acceleration, jerk = (r.number(limits[k][1], f"{where}: limits.{k}", positive=True, angle=True)
                                    for k in ("velocity", "acceleration", "jerk"))
    effort = r.number(limits["effort"][1], f"{where}: limits.effort", positive=True) if "effort" in limits else math.inf
    mass = r.number(r.required(node, items, "mass", where), f"{where}: mass", positive=True)
    com = (tuple(r.numbers(items["center_of_mass"][1], f"{where}: center_of_mass", 3))
           if "center_of_mass" in items else None)
    shape, radius = _read_geometry(r, r.required(node, items, "geometry", where), f"{where}: geometry")
    return DhJoint(name, d, a, alpha, offset, lower, upper, velocity, acceleration, jerk, effort, mass,
                   com, shape, radius)  # type: ignore[arg-type]


def _read_geometry(r: _Reader, node: yaml.Node, where: str) -> tuple[str, float]:
    items = r.mapping(node, where, {"shape", "radius"})
    shape = r.text(items["shape"][1], f"{where}.shape") if "shape" in items else "capsule"
    if shape not in SHAPES:
        raise r.fail(items["shape"][1], f"{where}.shape must be one of {', '.join(SHAPES)}, got {shape!r}")
    return shape, r.number(r.required(node, items, "radius", where), f"{where}.radius", positive=True)


def _read_service(r: _Reader, node: yaml.Node) -> DhService:
    items = r.mapping(node, "service", {"name", "identifiers", "update_rate_hz"})
    name = r.text(r.required(node, items, "name", "service"), "service.name")
    ids_node = r.required(node, items, "identifiers", "service")
    if not isinstance(ids_node, yaml.SequenceNode) or not ids_node.value:
        raise r.fail(ids_node, "service.identifiers must be a list of names, specific to general")
    identifiers = tuple(r.text(v, f"service.identifiers[{i}]") for i, v in enumerate(ids_node.value))
    rate = r.number(r.required(node, items, "update_rate_hz", "service"), "service.update_rate_hz", positive=True)
    return DhService(name, identifiers, rate)


def _root(r: _Reader) -> yaml.Node:
    """The file's YAML node graph: read within :data:`MAX_FILE_BYTES`, no aliases, no tags."""
    try:
        data, problem = read_own(r.path, MAX_FILE_BYTES)
    except OSError as err:
        raise HriError(f"cannot read: {err.strerror or err}", r.file) from None
    if problem is not None:
        raise HriError(problem, r.file)
    root = compose(data, r.file, aliases=False)
    if root is None:
        raise HriError("a DH file must be a YAML mapping", r.file, 1)
    check_collections(root, r.file)
    return root


def _read_table(r: _Reader, node: yaml.Node) -> tuple[DhJoint, ...]:
    if not isinstance(node, yaml.SequenceNode) or not node.value:
        raise r.fail(node, "joints must be a list of at least one joint")
    table = tuple(_read_joint(r, n, i) for i, n in enumerate(node.value))
    names = [j.name for j in table]
    for i, name in enumerate(names):
        if name in names[:i]:
            raise r.fail(node.value[i], f"joint {name!r}: a second joint with this name")
    return table


def _read_base(r: _Reader, node: yaml.Node) -> tuple[float, float, float]:
    """The base's mass, radius and height."""
    base = r.mapping(node, "base", {"mass", "radius", "height"})
    mass, radius = (r.number(r.required(node, base, k, "base"), f"base.{k}", positive=True) for k in ("mass", "radius"))
    return mass, radius, r.number(r.required(node, base, "height", "base"), "base.height", least=0.0)


def read_dh(path: str | Path) -> DhRobot:
    """The arm of the DH file ``path``; HriError ``FILE:LINE: message`` for any mistake in it."""
    r = _Reader(Path(path))
    root = _root(r)
    top = r.mapping(root, "a DH file", _TOP_KEYS)
    table = _read_table(r, r.required(root, top, "joints", "a DH file"))
    base = _read_base(r, r.required(root, top, "base", "a DH file"))
    base_link, tool_link, name = (r.text(r.required(root, top, k, "a DH file"), k)
                                  for k in ("base_link", "tool_link", "name"))
    reserved = {f"link_{j.name}" for j in table}
    for key, link in (("base_link", base_link), ("tool_link", tool_link)):
        if link in reserved or base_link == tool_link:
            raise r.fail(top[key][1], f"{key} {link!r} is also another link's name")
    payload = r.number(r.required(root, top, "payload_kg", "a DH file"), "payload_kg", least=0.0)
    service = _read_service(r, top["service"][1]) if "service" in top else None
    return DhRobot(name, r.path, base_link, tool_link, payload, *base, table, service)
