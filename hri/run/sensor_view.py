"""What a mounted safety sensor sees (``safety.sensor.mount``): a person is seen when one of
their links lies within the sensor's field (its horizontal field of view around the way it
looks, and its range) and the straight line from the sensor to that link meets the person
before anything else: the robot, the furniture, a part or another person in between occludes.

The links are the points of the humanoid's body (each link's frame origin, as PyBullet has the
body posed); the lines are PyBullet rays (``rayTestBatch``), all of a person's in one batch. A
ray that ends at the link without meeting anything counts as meeting the person: nothing is in
between. The field of view is horizontal only (a laser scanner's plane, a camera's width); a
point straight above or below the sensor is within it.
"""

from __future__ import annotations

import math

import pybullet as p

from hri.scenario.model import SensorMount


class SensorView:
    """The line of sight from ``mount`` in the PyBullet client ``client``."""

    def __init__(self, client: int, mount: SensorMount):
        self.client = client
        self.mount = mount
        self.origin = (mount.x, mount.y, mount.z)
        self._half_fov = math.radians(mount.field_of_view_deg) / 2.0

    def in_field(self, point: tuple[float, float, float]) -> bool:
        """Whether ``point`` lies within the range and the horizontal field of view."""
        dx, dy, dz = (point[0] - self.mount.x, point[1] - self.mount.y, point[2] - self.mount.z)
        if math.sqrt(dx * dx + dy * dy + dz * dz) > self.mount.range_m:
            return False
        if self.mount.field_of_view_deg >= 360.0 or (dx == 0.0 and dy == 0.0):
            return True
        off = math.atan2(dy, dx) - self.mount.yaw
        return abs(math.atan2(math.sin(off), math.cos(off))) <= self._half_fov

    def sees(self, body: int) -> bool:
        """Whether some link of ``body`` (as posed now) is in the field and in plain sight."""
        points = [p.getBasePositionAndOrientation(body, physicsClientId=self.client)[0]]
        links = p.getNumJoints(body, physicsClientId=self.client)
        if links:
            points += [state[4] for state in p.getLinkStates(body, list(range(links)), physicsClientId=self.client)]
        targets = [point for point in points if self.in_field(point)]
        if not targets:
            return False
        hits = p.rayTestBatch([self.origin] * len(targets), targets, physicsClientId=self.client)
        return any(hit[0] in (body, -1) for hit in hits)
