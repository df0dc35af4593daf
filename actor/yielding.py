"""People who meet on the way: what a walking person does when the next stretch of their walk
would come within passing distance of another person.

A walk is planned when it starts, around where the others stand and the rest of their walks
(:mod:`hri.run.sim`); people who meet on the way are left to this module. At each of their
steps while walking, a person's actor plugin (:class:`~hri.actor.plugin.ActorPlugin`) asks
:meth:`Yielding.decide` with the stretch of the walk just ahead of them (up to
:data:`LOOKAHEAD_M` along it) and the others as :class:`Neighbour` values; the answer is one of:

* ``GO``: nobody is within :data:`PASSING_DISTANCE_M` of the stretch (stand point to stand
  point) but those it leads away from (:func:`blocks`), or the only ones are walking people of lower priority who have this person in
  their own stretch: they yield.
* ``WAIT``: another person walks into the stretch, and either does not have this person in
  their own stretch (they cross or walk away: wait until they have passed) or has priority
  (they come towards this person: the one of lower priority waits). The walk pauses in
  simulated time, the walking animation standing, and goes on when the stretch is clear.
* ``REPLAN``: someone stands in the stretch (working, playing an animation, or waiting for
  someone else): walk around them, at most once every :data:`REPLAN_PERIOD_S` while blocked;
  where the new way still passes them, wait.

Priority is the order of the people in the scenario (``rank``: the first one first), so two
people who meet head-on never both wait for a walking other: the lower one waits, the higher
one sees them standing and walks around. Where nobody can pass (both waiting, no way around),
the one who has waited :data:`GIVE_UP_S` gives up: the walk ends where they stand, failed as
``blocked``, and their tree goes on. Everything here is plain geometry on numbers: no
simulator, no clock but the simulated time it is given, so the same seed decides the same.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field
from typing import Callable, Sequence

#: How close (m) the stretch ahead of a walking person may come to where another person stands
#: (stand point to stand point) before one of them gives way: two bodies' halves across the
#: shoulders with swinging arms (about 0.3 m each, see ``PERSON_FOOTPRINT_M``) and a margin
#: for a standing person's reach and sway.
PASSING_DISTANCE_M = 0.8
#: How much closer (m) a stretch may bring a walker to someone already within
#: :data:`PASSING_DISTANCE_M` and still count as walking away or past them: a way that leaves at
#: a right angle to them has them nearest where it starts, and one a few degrees short of that
#: comes a centimetre or two closer before it leaves.
CLOSER_TOLERANCE_M = 0.02
#: How far ahead along the walk (m) a walking person looks: about a second of walking.
LOOKAHEAD_M = 1.0
#: How often (simulated s) a blocked person tries a new way around someone standing.
REPLAN_PERIOD_S = 1.0
#: After waiting this long (simulated s) in one go, the person gives up the walk.
GIVE_UP_S = 20.0

Point2 = tuple[float, float]


class Decision(enum.Enum):
    GO = "go"
    WAIT = "wait"
    REPLAN = "replan"


@dataclass(frozen=True)
class Neighbour:
    """Another person as a walking person sees them: ``rank`` their priority (the order in the
    scenario, lower first), ``xy`` where they stand, ``walking`` whether they are on their way
    now (not turning at the end, not waiting), ``stretch`` the walk just ahead of them
    (starting at ``xy``; empty when not walking)."""

    name: str
    rank: int
    xy: Point2
    walking: bool
    stretch: tuple[Point2, ...] = ()


@dataclass
class YieldCounts:
    """What a person's giving way came to: episodes of waiting (``waits``), new ways around
    someone (``replans``), the simulated time spent waiting, and walks given up."""

    waits: int = 0
    replans: int = 0
    wait_s: float = 0.0
    gave_up: int = 0

    def as_dict(self) -> dict[str, float | int]:
        return {"waits": self.waits, "replans": self.replans, "wait_s": round(self.wait_s, 6),
                "gave_up": self.gave_up}


def distance_to_path(xy: Point2, path: Sequence[Point2]) -> float:
    """The distance (m) from ``xy`` to the polyline ``path`` (inf for an empty one)."""
    if not path:
        return math.inf
    px, py = xy
    best = math.dist(xy, path[0])
    for (ax, ay), (bx, by) in zip(path, path[1:]):
        dx, dy = bx - ax, by - ay
        length2 = dx * dx + dy * dy
        u = 0.0 if length2 == 0.0 else max(0.0, min(1.0, ((px - ax) * dx + (py - ay) * dy) / length2))
        best = min(best, math.hypot(ax + u * dx - px, ay + u * dy - py))
    return best


def blocks(other: Point2, other_ahead: Sequence[Point2], xy: Point2, stretch: Sequence[Point2]) -> bool:
    """Whether another person, standing at ``other`` with the walk ``other_ahead`` before them
    (empty when not walking), blocks the walk ``stretch`` from ``xy``.

    Someone farther than :data:`PASSING_DISTANCE_M` blocks it where it comes within that
    distance of where they stand. Someone already that close blocks it only where it brings
    the two closer (by more than :data:`CLOSER_TOLERANCE_M`) than they are now, the other's
    own walk ahead counted: walking away from, or past, someone already close is always
    allowed (otherwise two people who stopped inside the distance would each block every way
    the other could take), and two walks that converge are not."""
    now = math.dist(other, xy)
    if now >= PASSING_DISTANCE_M:
        return distance_to_path(other, stretch) < PASSING_DISTANCE_M
    ahead = distance_between_paths(other_ahead or (other,), stretch)
    return ahead < min(PASSING_DISTANCE_M, now - CLOSER_TOLERANCE_M)


def distance_between_paths(a: Sequence[Point2], b: Sequence[Point2]) -> float:
    """The smallest distance (m) between the polylines ``a`` and ``b`` (inf if either is empty);
    a single point is a polyline too."""
    if not a or not b:
        return math.inf
    segments_a = list(zip(a, a[1:])) or [(a[0], a[0])]
    segments_b = list(zip(b, b[1:])) or [(b[0], b[0])]
    best = math.inf
    for p, q in segments_a:
        for r, t in segments_b:
            if _cross(p, q, r, t):
                return 0.0
            best = min(best, distance_to_path(p, (r, t)), distance_to_path(q, (r, t)),
                       distance_to_path(r, (p, q)), distance_to_path(t, (p, q)))
    return best


def _cross(p: Point2, q: Point2, r: Point2, t: Point2) -> bool:
    """Whether the segments p-q and r-t cross properly (each one's ends on both sides of the other)."""
    def side(a: Point2, b: Point2, c: Point2) -> float:
        return (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])
    return side(p, q, r) * side(p, q, t) < 0.0 and side(r, t, p) * side(r, t, q) < 0.0


def clip_path(points: Sequence[Point2], length: float) -> tuple[Point2, ...]:
    """The first ``length`` metres of the polyline ``points``."""
    if not points:
        return ()
    out = [points[0]]
    left = length
    for a, b in zip(points, points[1:]):
        d = math.dist(a, b)
        if d >= left:
            u = left / d if d > 0.0 else 0.0
            out.append((a[0] + u * (b[0] - a[0]), a[1] + u * (b[1] - a[1])))
            return tuple(out)
        out.append(b)
        left -= d
    return tuple(out)


@dataclass
class Yielding:
    """One person's giving way: who they are (``name``, ``rank``), where the others are
    (``others``, asked at each decision), and what they report (``report(t, event, fields)``:
    ``person_yield`` as an episode of waiting or a new way begins, ``person_yield_gave_up``).
    Keeps the state of the episode under way: since when the person waits, when they last
    tried a new way."""

    name: str
    rank: int
    others: Callable[[], list[Neighbour]]
    report: Callable[[float, str, dict], None] | None = None
    counts: YieldCounts = field(default_factory=YieldCounts)
    waiting_since: float | None = None  # simulated time the wait under way began
    replanned_at: float = -math.inf
    _last: float | None = None  # simulated time of the last decision (waiting time counts from it)

    def decide(self, t: float, xy: Point2, stretch: Sequence[Point2]) -> tuple[Decision, list[Neighbour]]:
        """What to do at ``t``, standing at ``xy`` with ``stretch`` ahead, and whom it is for:
        the standing people to walk around (``REPLAN``), or those waited for (``WAIT``)."""
        blockers = [o for o in self.others() if blocks(o.xy, o.stretch, xy, stretch)]
        wait_for = [o for o in blockers if o.walking and not self._has_way(o, xy, stretch)]
        standing = [o for o in blockers if not o.walking]
        if wait_for:
            return Decision.WAIT, wait_for
        if standing:
            if t - self.replanned_at >= REPLAN_PERIOD_S - 1e-9:
                return Decision.REPLAN, standing
            return Decision.WAIT, standing
        return Decision.GO, []

    def _has_way(self, other: Neighbour, xy: Point2, stretch: Sequence[Point2]) -> bool:
        """Over walking ``other``: they have this person in their stretch and a lower priority
        (they will wait)."""
        return self.rank < other.rank and blocks(xy, stretch, other.xy, other.stretch)

    # ------------------------------------------------------------------ the episode
    def waiting(self, t: float, whom: list[Neighbour]) -> bool:
        """The person waits at ``t`` for ``whom``; False once they have waited :data:`GIVE_UP_S`
        (the walk is given up, reported)."""
        if self.waiting_since is None:
            self.waiting_since = t
            self.counts.waits += 1
            self._emit(t, "person_yield", how="wait", to=[o.name for o in whom])
        elif self._last is not None:
            self.counts.wait_s += t - self._last
        self._last = t
        if t - self.waiting_since >= GIVE_UP_S - 1e-9:
            self.counts.gave_up += 1
            self._emit(t, "person_yield_gave_up", to=[o.name for o in whom],
                       waited_s=round(t - self.waiting_since, 6))
            self.clear()
            return False
        return True

    def replanned(self, t: float, whom: list[Neighbour]) -> None:
        """A new way around ``whom`` was taken at ``t``."""
        self.replanned_at = t
        self.counts.replans += 1
        self._emit(t, "person_yield", how="replan", to=[o.name for o in whom])

    def going(self, t: float) -> None:
        """The way is clear at ``t`` (or the walk ended): the wait under way, if any, is over."""
        if self.waiting_since is not None and self._last is not None:
            self.counts.wait_s += t - self._last
        self.clear()

    def clear(self) -> None:
        self.waiting_since = None
        self._last = None

    def _emit(self, t: float, event: str, **fields) -> None:
        if self.report is not None:
            self.report(t, event, {"person": self.name, **fields})
