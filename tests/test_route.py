"""The person's walks around furniture and the robot arm (hri.actor.route; the plugin walking a
route is in test_actor_plugin.py)."""

from __future__ import annotations

import math

import pytest
from shapely.geometry import LineString, Point, box

from hri.actor.route import WalkingArea
from hri.scenario.load import load_scenario

ROOM = box(0.0, 0.0, 8.0, 6.0)
TABLE = box(3.0, 1.0, 4.0, 4.0)  # 1 m x 3 m, across the straight walk below


def _legs(start, corners):
    points = [start, *corners]
    return [LineString([a, b]) for a, b in zip(points, points[1:])]


def _length(start, corners) -> float:
    return sum(leg.length for leg in _legs(start, corners))


def test_a_free_walk_is_straight():
    area = WalkingArea(ROOM, [TABLE])
    assert area.route((1.0, 5.0), (7.0, 5.0)) == [(7.0, 5.0)]


def test_a_walk_goes_around_a_table_by_the_short_side_and_keeps_the_clearance():
    area = WalkingArea(ROOM, [TABLE], clearance=0.35)
    start, goal = (1.0, 1.5), (6.0, 1.5)
    corners = area.route(start, goal)
    assert corners[-1] == goal and len(corners) >= 2
    for leg in _legs(start, corners):
        assert leg.distance(TABLE) >= 0.35 * math.cos(math.pi / 8)  # the grown corners are octagon chords
    assert max(y for _, y in corners[:-1]) < 1.0  # below the table (the short way), not over its 4-m side
    # close to the true shortest: down to y = 0.65 past the table's lower corners, and back
    assert _length(start, corners) < 1.02 * (2 * math.hypot(2.0, 0.85) + 1.0 + 0.3)


def test_the_goal_may_be_nearer_an_obstacle_than_the_clearance():
    area = WalkingArea(ROOM, [TABLE], clearance=0.35)
    goal = (4.2, 2.5)  # 0.2 m in front of the table's far side, as at a workbench
    corners = area.route((1.0, 2.5), goal)
    assert corners[-1] == goal
    assert all(leg.distance(TABLE) > 0.0 for leg in _legs((1.0, 2.5), corners))


def test_what_moved_is_asked_at_every_walk():
    where = [box(3.0, 4.5, 3.5, 6.0)]
    area = WalkingArea(ROOM, [], moving=lambda: where, clearance=0.3)
    assert area.route((1.0, 5.0), (7.0, 5.0)) != [(7.0, 5.0)]
    where = []
    assert area.route((1.0, 5.0), (7.0, 5.0)) == [(7.0, 5.0)]


def test_no_way_around_means_straight():
    wall = box(3.0, 0.0, 3.2, 6.0)  # wall to wall
    assert WalkingArea(ROOM, [wall]).route((1.0, 3.0), (6.0, 3.0)) == [(6.0, 3.0)]


def test_collaboration_walk_that_cut_the_robot_table_goes_around_it():
    """The 100-hour benchmark's one violation: from the stop zone to the warning zone, straight
    across the robot table's corner into the stopped arm (seed 227095882, t = 1244.55 s)."""
    scenario = load_scenario("collaboration")
    table = scenario.furniture["robot_table"].footprint
    start, goal = (0.6283, 2.0777), (3.5957, 0.4668)
    assert LineString([start, goal]).intersects(table)  # the straight walk went over the table
    walking_area = WalkingArea(box(0.0, 0.0, *scenario.room.size),
                               [piece.footprint for piece in scenario.furniture.values()],
                               clearance=scenario.person.clearance_m)
    corners = walking_area.route(start, goal)
    assert min(leg.distance(table) for leg in _legs(start, corners)) >= 0.3
