"""Where the person walks: the shortest way around what stands on the floor.

The thesis's actor walked in a straight line to its target, through tables and a stopped
robot arm alike. A :class:`WalkingArea` knows the room and what stands on its floor: the
furniture's footprints, and (asked anew for every walk) the floor under the robot arm as it
stands then. Each obstacle is grown by the person's clearance (half the width of the body
with its swinging arms), and :meth:`WalkingArea.route` gives the corners of the shortest walk
that keeps it: straight if nothing is in the way, else a visibility graph over the grown
obstacles' corners, searched with Dijkstra (shapely for the geometry).

A person working at the shelf stands closer to it than the clearance: an obstacle is grown
only as far as keeps the walk's start and goal outside it, and one that holds either is left
out. With no way around (the goal walled in), the walk is the straight line.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Iterable, Sequence

import numpy as np
import shapely
from shapely.geometry import LineString, Point, Polygon
from shapely.ops import unary_union

#: Half the width of a walking person with swinging arms (m): the default clearance.
CLEARANCE_M = 0.35
#: Corners are this much outside the grown obstacles, so a walk past one does not touch it.
_CORNER_MARGIN_M = 0.01
#: Segments per quarter circle of a grown corner.
_QUAD_SEGS = 2

Point2 = tuple[float, float]


class WalkingArea:
    """The room's floor, its fixed obstacles and a source of moving ones (the robot arm).

    ``room``: the floor polygon; ``obstacles``: footprints that do not move; ``moving``: a
    function giving the footprints of what may have moved (asked at every :meth:`route`);
    ``clearance``: how far the walk keeps from every obstacle (m); ``people``: a function
    giving the footprints of other people a walk goes around when it starts (asked at every
    :meth:`route` not given others to avoid).
    """

    def __init__(self, room: Polygon, obstacles: Iterable[Polygon] = (),
                 moving: Callable[[], Sequence[Polygon]] | None = None,
                 clearance: float = CLEARANCE_M,
                 people: Callable[[], Sequence[Polygon]] | None = None) -> None:
        if not clearance >= 0.0:
            raise ValueError("clearance must be >= 0")
        self.room = room
        self.obstacles = list(obstacles)
        self.moving = moving
        self.clearance = float(clearance)
        self.people = people

    def route(self, start: Point2, goal: Point2, avoid: Sequence[Polygon] | None = None) -> list[Point2]:
        """The corners of the shortest walk from ``start`` to ``goal``, ending with ``goal``;
        around ``avoid`` instead of :attr:`people` when given (a new way on a walk)."""
        grown = self._grown(start, goal, avoid)
        direct = LineString([start, goal])
        if not grown or start == goal or not any(g.intersects(direct) for g in grown):
            return [goal]
        blocked = unary_union(grown)
        corners = self._corners(grown, blocked)
        nodes = [start, goal, *corners]
        path = _shortest(nodes, _visible(nodes, blocked))
        return [nodes[i] for i in path[1:]] if path else [goal]

    # ------------------------------------------------------------------ geometry
    def _grown(self, start: Point2, goal: Point2, avoid: Sequence[Polygon] | None) -> list[Polygon]:
        """Each obstacle grown by the clearance, or less where the start or the goal is nearer."""
        moving = list(self.moving()) if self.moving is not None else []
        people = list(avoid) if avoid is not None else list(self.people()) if self.people is not None else []
        ends = (Point(start), Point(goal))
        grown = []
        for shape in (*self.obstacles, *moving, *people):
            nearest = min(shape.distance(end) for end in ends)
            if nearest <= 0.0:
                continue  # the walk starts or ends on it: nothing to walk around
            margin = min(self.clearance, nearest - _CORNER_MARGIN_M)
            grown.append(shape.buffer(margin, quad_segs=_QUAD_SEGS) if margin > 0.0 else shape)
        return grown

    def _corners(self, grown: list[Polygon], blocked) -> list[Point2]:
        """Points just outside the grown obstacles' corners, on the free floor of the room."""
        candidates = []
        for shape in grown:
            outline = shape.buffer(_CORNER_MARGIN_M, quad_segs=_QUAD_SEGS, join_style="mitre")
            candidates.extend(outline.exterior.coords[:-1])
        if not candidates:
            return []
        points = shapely.points(np.asarray(candidates))
        free = shapely.contains(self.room, points) & ~shapely.intersects(blocked, points)
        return [tuple(map(float, c)) for c, ok in zip(candidates, free) if ok]


def _visible(nodes: list[Point2], blocked) -> dict[int, list[tuple[int, float]]]:
    """Edges between nodes whose straight segment does not enter the blocked floor."""
    n = len(nodes)
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    coords = np.array([[nodes[i], nodes[j]] for i, j in pairs])
    clear = ~shapely.intersects(blocked, shapely.linestrings(coords))
    edges: dict[int, list[tuple[int, float]]] = {i: [] for i in range(n)}
    for (i, j), ok in zip(pairs, clear):
        if ok:
            length = math.dist(nodes[i], nodes[j])
            edges[i].append((j, length))
            edges[j].append((i, length))
    return edges


def _shortest(nodes: list[Point2], edges: dict[int, list[tuple[int, float]]]) -> list[int] | None:
    """Dijkstra from node 0 to node 1: the node indices of the path, or None."""
    best = {0: 0.0}
    previous: dict[int, int] = {}
    queue = [(0.0, 0)]
    while queue:
        cost, node = heapq.heappop(queue)
        if node == 1:
            path = [1]
            while path[-1] != 0:
                path.append(previous[path[-1]])
            return path[::-1]
        if cost > best.get(node, math.inf):
            continue
        for other, length in edges[node]:
            new = cost + length
            if new < best.get(other, math.inf):
                best[other], previous[other] = new, node
                heapq.heappush(queue, (new, other))
    return None
