"""Reading the joints of a URDF file: the tree of links and the path between two of them.

Only what kinematics needs is read: per joint its type, parent and child link, origin
(xyz, rpy), axis and limits. Besides URDF's revolute, continuous, prismatic and fixed
joints, PyBullet's ``spherical`` joints (used by ``pybullet_data``'s humanoid) are read.
``scale`` multiplies every length, like PyBullet's ``globalScaling``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from defusedxml import DefusedXmlException, ElementTree

from hri.kinematics.transforms import rpy_matrix, transform

#: degrees of freedom in the configuration vector (nq) and in velocities (nv) per joint type
JOINT_NQ = {"revolute": 1, "continuous": 1, "prismatic": 1, "fixed": 0, "spherical": 4}
JOINT_NV = {"revolute": 1, "continuous": 1, "prismatic": 1, "fixed": 0, "spherical": 3}


@dataclass(frozen=True)
class JointSpec:
    """One URDF joint: the child link's frame is ``parent @ origin @ motion(q)``."""

    name: str
    kind: str                 # revolute, continuous, prismatic, fixed or spherical
    parent: str
    child: str
    origin: np.ndarray        # 4x4, parent link frame -> joint frame
    axis: np.ndarray          # unit vector in the joint frame (revolute/prismatic)
    lower: float = -math.inf  # rad or m; infinite when the joint has no limit
    upper: float = math.inf
    velocity: float = math.inf
    effort: float = math.inf

    @property
    def nq(self) -> int:
        return JOINT_NQ[self.kind]

    @property
    def nv(self) -> int:
        return JOINT_NV[self.kind]


def _floats(text: str | None, default: tuple[float, ...]) -> tuple[float, ...]:
    if text is None:
        return default
    return tuple(float(v) for v in text.split())


def _parse_joint(element, scale: float) -> JointSpec:
    name = element.get("name")
    kind = element.get("type")
    if kind not in JOINT_NQ:
        raise ValueError(f"joint {name!r}: type {kind!r} is not supported "
                         f"(supported: {', '.join(JOINT_NQ)})")
    origin = element.find("origin")
    xyz = _floats(origin.get("xyz") if origin is not None else None, (0.0, 0.0, 0.0))
    rpy = _floats(origin.get("rpy") if origin is not None else None, (0.0, 0.0, 0.0))
    axis_element = element.find("axis")
    axis = np.array(_floats(axis_element.get("xyz") if axis_element is not None else None,
                            (1.0, 0.0, 0.0)))
    norm = float(np.linalg.norm(axis))
    if kind in ("revolute", "continuous", "prismatic"):
        if norm == 0.0:
            raise ValueError(f"joint {name!r}: zero axis")
        axis = axis / norm
    lower, upper, velocity, effort = _limits(element.find("limit"), kind, scale)
    return JointSpec(name, kind, element.find("parent").get("link"),
                     element.find("child").get("link"),
                     transform(rpy_matrix(*rpy), np.array(xyz) * scale), axis,
                     lower, upper, velocity, effort)


def _limits(limit, kind: str, scale: float) -> tuple[float, float, float, float]:
    """(lower, upper, velocity, effort); like PyBullet, lower > upper means no position limit."""
    if limit is None or kind not in ("revolute", "prismatic"):
        velocity = float(limit.get("velocity", math.inf)) if limit is not None else math.inf
        return -math.inf, math.inf, velocity, math.inf
    lower = float(limit.get("lower", 0.0))
    upper = float(limit.get("upper", 0.0))
    if kind == "prismatic":
        lower, upper = lower * scale, upper * scale
    if lower > upper:
        lower, upper = -math.inf, math.inf
    return lower, upper, float(limit.get("velocity", math.inf)), float(limit.get("effort", math.inf))


@dataclass(frozen=True)
class UrdfModel:
    """The joints of a URDF file, keyed by their child link."""

    name: str
    root: str
    links: tuple[str, ...]
    joints_by_child: dict[str, JointSpec]

    def path(self, base_link: str | None = None, tip_link: str | None = None) -> list[JointSpec]:
        """The joints from ``base_link`` (default: the root) down to ``tip_link``.

        Without ``tip_link`` the model must be a single chain (its one leaf is the tip).
        """
        base = base_link or self.root
        tip = tip_link or self._single_leaf()
        for link in (base, tip):
            if link not in self.links:
                raise ValueError(f"{self.name}: no link named {link!r}")
        joints: list[JointSpec] = []
        link = tip
        while link != base:
            joint = self.joints_by_child.get(link)
            if joint is None:
                raise ValueError(f"{self.name}: link {tip!r} is not below {base!r}")
            joints.append(joint)
            link = joint.parent
        return joints[::-1]

    def _single_leaf(self) -> str:
        parents = {j.parent for j in self.joints_by_child.values()}
        leaves = [link for link in self.links if link not in parents]
        if len(leaves) != 1:
            raise ValueError(f"{self.name}: the tree has {len(leaves)} leaves "
                             f"({', '.join(leaves)}); name the tip link")
        return leaves[0]


def read_urdf(path: str | Path, scale: float = 1.0) -> UrdfModel:
    """Parse the links and joints of the URDF file ``path``."""
    # pybullet_data's humanoid.urdf ends in a NUL byte, which PyBullet's parser ignores
    root = ElementTree.fromstring(Path(path).read_bytes().rstrip(b"\0\r\n\t "))
    links = tuple(link.get("name") for link in root.findall("link"))
    joints = {}
    for element in root.findall("joint"):
        joint = _parse_joint(element, scale)
        joints[joint.child] = joint
    roots = [link for link in links if link not in joints]
    if len(roots) != 1:
        raise ValueError(f"{path}: expected one root link, found {roots}")
    return UrdfModel(root.get("name", str(path)), roots[0], links, joints)


def named_files(data: bytes) -> list[str]:
    """The files the URDF text ``data`` names besides itself, as written (the ``filename`` of a
    ``<mesh>``, a ``<texture>``): what PyBullet reads with it. ValueError when it is no XML."""
    try:
        root = ElementTree.fromstring(data.rstrip(b"\0\r\n\t "))
    except (ElementTree.ParseError, DefusedXmlException) as err:
        raise ValueError(f"not a URDF robot ({err})") from None
    return [element.get("filename") for element in root.iter() if element.get("filename") is not None]
