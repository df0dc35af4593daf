"""One straight leg of the person's movement, and where the person is along it.

A movement (:mod:`hri.actor.plugin`, state MOVEMENT) is a list of legs, one per corner of the
route (:mod:`hri.actor.route`). Each leg is four segments in time: turn in place towards the
walk, walk, turn to the final heading, let the legs settle into the rest pose (the last two
only on the movement's last leg). :meth:`Leg.at` says where the person stands and faces at a
time into the leg; which pose the body shows there is the plugin's business.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import math
from dataclasses import dataclass

import numpy as np

from hri.actor.quaternions import wrap_angle


@dataclass
class Leg:
    """One straight piece of a movement: turn towards its end, walk, turn, settle (the last two
    only on the movement's last leg)."""

    start_xy: np.ndarray
    direction: np.ndarray  # unit vector of the walk
    distance: float
    start_heading: float
    walk_heading: float
    final_heading: float
    stride: float  # metres per walk cycle
    speed: float  # m/s
    turn1: float  # seconds
    walk: float
    turn2: float
    settle: float

    @functools.cached_property
    def duration(self) -> float:
        return self.turn1 + self.walk + self.turn2 + self.settle

    @functools.cached_property
    def ends(self) -> tuple[float, float, float, float]:
        """When each segment ends (turn, walk, turn, settle), seconds after the start."""
        return tuple(itertools.accumulate((self.turn1, self.walk, self.turn2, self.settle)))

    def segment_at(self, t: float) -> int:
        """The segment ``t`` s into the leg is in (at a segment's end: the next one)."""
        return bisect.bisect_right(self.ends, t)

    def segment_end(self, segment: int) -> float:
        """When ``segment`` ends, seconds after the leg's start (after the settling: never)."""
        return self.ends[segment] if segment < len(self.ends) else math.inf

    def segment_done(self, segment: int) -> float:
        """How far ``segment`` has got at its end (what :meth:`at` reports as it ends)."""
        if segment == 0:
            return wrap_angle(self.walk_heading - self.start_heading)
        if segment == 1:
            return self.distance
        if segment == 2:
            return wrap_angle(self.final_heading - self.walk_heading)
        return 0.0

    @functools.cached_property
    def _line(self) -> tuple[float, float, float, float]:
        """Start x, y and direction x, y as plain numbers: :meth:`at` runs every physics step
        while the person walks (the same numbers as the arrays' arithmetic)."""
        return (*self.start_xy.tolist(), *self.direction.tolist())

    def at(self, t: float, x: float, y: float) -> tuple[int, float, float, float, float]:
        """``t`` s into the leg: the segment (0 turn, 1 walk, 2 turn, 3 and on settle), where
        the person stands (at (x, y) while turning towards the walk) and faces, and how far the
        segment has got (the angle turned, or the distance walked; 0 settling)."""
        ends = self.ends
        sx, sy, dx, dy = self._line
        segment = self.segment_at(t)
        if segment == 0:
            turned = (t / self.turn1) * wrap_angle(self.walk_heading - self.start_heading)
            return segment, x, y, self.start_heading + turned, turned
        if segment == 1:
            walked = min(self.distance, (t - ends[0]) * self.speed)
            return segment, sx + walked * dx, sy + walked * dy, self.walk_heading, walked
        x, y = sx + self.distance * dx, sy + self.distance * dy
        if segment == 2:
            turned = ((t - ends[1]) / self.turn2) * wrap_angle(self.final_heading - self.walk_heading)
            return segment, x, y, self.walk_heading + turned, turned
        return segment, x, y, self.final_heading, 0.0
