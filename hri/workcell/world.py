"""The workcell in PyBullet: floor, walls, furniture and the zones drawn on the floor.

Everything is built from the scenario's numbers (``room``, ``furniture``, ``zones``); no
dimension lives here. :func:`build_static_scene` is also what the robot's planner calls to
get the same obstacles in its private PyBullet client.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import pybullet as p
import shapely

from hri.base.geometry import Area, yaw_quaternion
from hri.workcell.layout import Furniture, Room

WALL_THICKNESS = 0.1
ZONE_COLORS = {"warning": (1.0, 0.75, 0.1, 0.55), "stop": (0.9, 0.15, 0.1, 0.6)}
FLOOR_COLOR = (0.82, 0.85, 0.8, 1.0)


def _box(client: int, half: tuple[float, float, float], center: tuple[float, float, float],
         color: tuple[float, ...], yaw: float = 0.0, collide: bool = True) -> int:
    visual = p.createVisualShape(p.GEOM_BOX, halfExtents=half, rgbaColor=color, physicsClientId=client)
    collision = p.createCollisionShape(p.GEOM_BOX, halfExtents=half, physicsClientId=client) if collide else -1
    return p.createMultiBody(0.0, collision, visual, center, yaw_quaternion(yaw), physicsClientId=client)


def _compound(client: int, parts: list[tuple[tuple[float, float, float], tuple[float, float, float]]],
              base: tuple[float, float, float], yaw: float, color: tuple[float, ...]) -> int:
    """One static body of several boxes: parts are (half extents, offset in the body frame)."""
    halves = [h for h, _ in parts]
    offsets = [o for _, o in parts]
    kw = dict(shapeTypes=[p.GEOM_BOX] * len(parts), halfExtents=halves, collisionFramePositions=offsets,
              physicsClientId=client)
    collision = p.createCollisionShapeArray(**kw)
    visual = p.createVisualShapeArray(shapeTypes=[p.GEOM_BOX] * len(parts), halfExtents=halves,
                                      visualFramePositions=offsets, rgbaColors=[color] * len(parts),
                                      physicsClientId=client)
    return p.createMultiBody(0.0, collision, visual, base, yaw_quaternion(yaw), physicsClientId=client)


def _shelf_parts(size: tuple[float, float, float], sections: int, boards: tuple[float, ...]) -> list:
    """Back panel, side panels between sections, and boards; open towards the body's +x."""
    depth, width, height = size
    t = 0.02
    parts = [((t / 2, width / 2, height / 2), (-depth / 2 + t / 2, 0.0, height / 2))]
    for i in range(sections + 1):
        y = -width / 2 + i * width / sections
        parts.append(((depth / 2, t / 2, height / 2), (0.0, y, height / 2)))
    for z in boards:
        parts.append(((depth / 2, width / 2, t / 2), (0.0, 0.0, z)))
    return parts


def build_furniture(client: int, furniture: Mapping[str, Furniture]) -> dict[str, int]:
    bodies = {}
    for name, piece in furniture.items():
        yaw = math.radians(piece.yaw_deg)
        cx, cy = piece.center
        if piece.kind in ("box", "conveyor"):  # a conveyor is a box whose top moves parts (hri.workcell.parts)
            sx, sy, sz = piece.size
            bodies[name] = _box(client, (sx / 2, sy / 2, sz / 2), (cx, cy, piece.base_z + sz / 2), piece.color, yaw)
        else:  # a shelf
            parts = _shelf_parts(piece.size, piece.sections, piece.boards)
            bodies[name] = _compound(client, parts, (cx, cy, 0.0), yaw, piece.color)
    return bodies


def build_room(client: int, room: Room) -> list[int]:
    sx, sy = room.size
    h = room.wall_height
    t = WALL_THICKNESS
    floor = _box(client, (sx / 2, sy / 2, 0.01), (sx / 2, sy / 2, -0.01), FLOOR_COLOR)
    wall = (0.9, 0.9, 0.88, 1.0)
    walls = [
        _box(client, (sx / 2 + t, t / 2, h / 2), (sx / 2, -t / 2, h / 2), wall),
        _box(client, (sx / 2 + t, t / 2, h / 2), (sx / 2, sy + t / 2, h / 2), wall),
        _box(client, (t / 2, sy / 2, h / 2), (-t / 2, sy / 2, h / 2), wall),
        _box(client, (t / 2, sy / 2, h / 2), (sx + t / 2, sy / 2, h / 2), wall),
    ]
    return [floor, *walls]


def build_static_scene(client: int, room: Room, furniture: Mapping[str, Furniture]) -> list[int]:
    """Floor, walls and furniture; returns their body ids (the robot's obstacles)."""
    return build_room(client, room) + list(build_furniture(client, furniture).values())


def build_world(client: int, room: Room, furniture: Mapping[str, Furniture]) -> dict[str, int]:
    """Floor, walls and furniture; returns the furniture's body ids by name."""
    build_room(client, room)
    return build_furniture(client, furniture)


def zones_by_size(zones: dict[str, Area]) -> list[tuple[str, Area]]:
    """The zones, largest first: each drawn above the ones before it."""
    return sorted(zones.items(), key=lambda kv: -kv[1].polygon.area)


def zone_triangles(area: Area) -> list[tuple[float, float, float]]:
    """The zone's floor patch as triangles on z = 0, three vertices each."""
    vertices = []
    for tri in shapely.constrained_delaunay_triangles(area.polygon).geoms:
        vertices += [(x, y, 0.0) for x, y in list(tri.exterior.coords)[:3]]
    return vertices


def draw_zones(client: int, zones: dict[str, Area]) -> list[int]:
    """Coloured, collision-free floor patches, one per zone, inner zones on top."""
    bodies = []
    for level, (name, area) in enumerate(zones_by_size(zones)):
        vertices = zone_triangles(area)
        indices = list(range(len(vertices)))
        # Both windings, so the patch is visible from above whatever the triangulation's order.
        indices = indices + [i for k in range(0, len(indices), 3) for i in (indices[k], indices[k + 2], indices[k + 1])]
        color = ZONE_COLORS.get(name, (0.3, 0.3, 0.9, 0.4))
        visual = p.createVisualShape(p.GEOM_MESH, vertices=vertices, indices=indices, rgbaColor=color,
                                     physicsClientId=client)
        bodies.append(p.createMultiBody(0.0, -1, visual, (0.0, 0.0, 0.002 + 0.002 * level), physicsClientId=client))
    return bodies


def zone_outline_points(area: Area, z: float = 0.01) -> np.ndarray:
    pts = np.array(area.points + [area.points[0]])
    return np.column_stack([pts, np.full(len(pts), z)])
