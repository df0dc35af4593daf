"""Poses and areas: the data types the trees and the simulation share (thesis "Datentypen").

A :class:`Pose` is a position and a unit quaternion ``(x, y, z, w)`` in the world frame.
An :class:`Area` is a polygon on the floor; it tests points and samples them uniformly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import shapely
from shapely.geometry import Polygon

NULL_QUATERNION = (0.0, 0.0, 0.0, 0.0)


@dataclass(frozen=True)
class Pose:
    """Position (metres) and orientation quaternion ``(qx, qy, qz, qw)``.

    The null quaternion ``(0, 0, 0, 0)`` is allowed and means "no orientation given"
    (ActorMovement: end facing the walking direction).
    """

    x: float = 0.0
    y: float = 0.0
    z: float = 0.0
    qx: float = 0.0
    qy: float = 0.0
    qz: float = 0.0
    qw: float = 1.0

    @property
    def position(self) -> tuple[float, float, float]:
        return (self.x, self.y, self.z)

    @property
    def orientation(self) -> tuple[float, float, float, float]:
        return (self.qx, self.qy, self.qz, self.qw)

    @property
    def has_null_orientation(self) -> bool:
        return self.qx == 0.0 and self.qy == 0.0 and self.qz == 0.0 and self.qw == 0.0

    @property
    def yaw(self) -> float:
        """Heading about the world z axis (radians)."""
        return quaternion_yaw(self.orientation)

    @staticmethod
    def from_xy_yaw(x: float, y: float, yaw: float, z: float = 0.0) -> "Pose":
        return Pose(x, y, z, *yaw_quaternion(yaw))

    def with_position(self, x: float, y: float, z: float) -> "Pose":
        return Pose(x, y, z, self.qx, self.qy, self.qz, self.qw)

    def __str__(self) -> str:
        """The port syntax ``x;y;z;qx;qy;qz;qw`` (see docs/trees.md)."""
        return ";".join(_fmt(v) for v in (*self.position, *self.orientation))


def _fmt(value: float) -> str:
    return repr(float(value))


def yaw_quaternion(yaw: float) -> tuple[float, float, float, float]:
    return (0.0, 0.0, math.sin(yaw / 2.0), math.cos(yaw / 2.0))


def quaternion_yaw(q: tuple[float, float, float, float]) -> float:
    qx, qy, qz, qw = q
    return math.atan2(2.0 * (qw * qz + qx * qy), 1.0 - 2.0 * (qy * qy + qz * qz))


class Area:
    """A simple polygon on the floor, given by its corner points ``[(x, y), ...]``.

    Sampling is uniform over the surface: a triangle is chosen with probability
    proportional to its area, then a point uniformly inside it (as the thesis does).
    """

    def __init__(self, points: list[tuple[float, float]] | list[list[float]], name: str = ""):
        self.name = name
        self.points = [(float(x), float(y)) for x, y in points]
        if len(self.points) < 3:
            raise ValueError("an area needs at least 3 points")
        self.polygon = Polygon(self.points)
        if not self.polygon.is_valid:
            raise ValueError("the area's polygon intersects itself")
        if self.polygon.area <= 0.0:
            raise ValueError("the area's polygon is empty")
        shapely.prepare(self.polygon)
        self._bounds = self.polygon.bounds
        self._edges = self.polygon.boundary
        shapely.prepare(self._edges)
        self._triangles = list(shapely.constrained_delaunay_triangles(self.polygon).geoms)
        weights = np.array([t.area for t in self._triangles])
        self._cumulative = np.cumsum(weights / weights.sum())
        self._corners = np.array([np.array(t.exterior.coords)[:3] for t in self._triangles])

    def contains(self, x: float, y: float) -> bool:
        """True when the point lies inside or on the border."""
        x0, y0, x1, y1 = self._bounds
        if x < x0 or x > x1 or y < y0 or y > y1:
            return False  # outside the bounding box: no need to ask shapely
        return bool(shapely.intersects_xy(self.polygon, x, y))

    def edge_distance(self, x: float, y: float) -> float:
        """How far the point is from the area's border (from inside or outside)."""
        return float(shapely.distance(self._edges, shapely.Point(x, y)))

    def sample(self, rng: np.random.Generator) -> tuple[float, float]:
        index = int(np.searchsorted(self._cumulative, rng.random(), side="right"))
        a, b, c = self._corners[min(index, len(self._corners) - 1)]
        u, v = rng.random(), rng.random()
        if u + v > 1.0:
            u, v = 1.0 - u, 1.0 - v
        point = a + u * (b - a) + v * (c - a)
        return float(point[0]), float(point[1])

    def __str__(self) -> str:
        """The port syntax ``x1,y1;x2,y2;...``."""
        return ";".join(f"{_fmt(x)},{_fmt(y)}" for x, y in self.points)

    def __repr__(self) -> str:
        return f"Area({self.name!r}, {self.points})"
