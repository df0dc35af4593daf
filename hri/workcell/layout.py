"""What a scenario puts into the workcell, typed: the room, its furniture and the parts' settings.

The scenario (:mod:`hri.scenario.model`) reads them from its ``room``, ``furniture`` and
``parts`` sections; :mod:`hri.workcell.world` builds the furniture, :mod:`hri.workcell.parts` runs the
parts, and a walk goes around each piece's :attr:`Furniture.footprint`.
"""

from __future__ import annotations

from dataclasses import dataclass

from shapely import affinity
from shapely.geometry import Polygon, box

KINDS = ("box", "shelf", "conveyor")


@dataclass(frozen=True)
class Room:
    """The floor ``size`` [x, y] from the origin, and the walls' height (m)."""

    size: tuple[float, float]
    wall_height: float = 1.0


@dataclass(frozen=True)
class Furniture:
    """A static body: a ``box``, a ``shelf`` (``sections``, ``boards`` heights; open towards its
    local +x) or a ``conveyor`` (a box whose top moves parts at ``speed`` m/s along its local +x)."""

    name: str
    kind: str
    center: tuple[float, float]
    size: tuple[float, float, float]  # x, y, z; a shelf's depth, width, height
    yaw_deg: float = 0.0
    base_z: float = 0.0  # what a box or conveyor stands on
    color: tuple[float, ...] = (0.6, 0.6, 0.6, 1.0)
    sections: int = 1
    boards: tuple[float, ...] = ()
    speed: float = 0.0

    @property
    def footprint(self) -> Polygon:
        """Its rectangle on the floor (size x, y, turned by ``yaw_deg`` about its centre)."""
        sx, sy = self.size[:2]
        rect = affinity.rotate(box(-sx / 2, -sy / 2, sx / 2, sy / 2), self.yaw_deg, origin=(0.0, 0.0))
        return affinity.translate(rect, *self.center)


@dataclass(frozen=True)
class FeederSpec:
    """Keeps ``keep`` parts lying in the area named ``area``, at height ``surface_z``."""

    area: str
    surface_z: float
    keep: int = 1
    min_spacing: float = 0.1  # m, centre to centre, from every part in the area


@dataclass(frozen=True)
class SinkSpec:
    """Parts left in the area named ``area`` for ``after_s`` seconds are taken away."""

    area: str
    after_s: float


@dataclass(frozen=True)
class PartsSettings:
    """The parts of a workcell: their box, the feeders and sinks, and the surfaces that count."""

    size: tuple[float, ...] = (0.06, 0.06, 0.06)
    mass: float = 0.3
    color: tuple[float, ...] = (0.2, 0.45, 0.85, 1.0)
    grasp_distance: float = 0.04  # how close the tool must be to grasp
    person_reach: float = 1.0  # how far the hand reaches for a part
    person_put_distance: float = 0.7  # how far ahead the person puts a part down
    person_put_spread: float = 0.25  # how far to the side that may vary
    feeders: tuple[FeederSpec, ...] = ()
    sinks: tuple[SinkSpec, ...] = ()
    good_surfaces: tuple[str, ...] = ()
    bad_surfaces: tuple[str, ...] = ()
    storage_surfaces: tuple[str, ...] = ()
