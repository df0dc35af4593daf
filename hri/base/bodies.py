"""A PyBullet body's links by name: the robot's and the people's, for the safety functions, the
braking bound and the run's recorded state."""

from __future__ import annotations

import pybullet as p


def link_names(client: int, body: int) -> dict[int, str]:
    """``{link index: name}`` of a body, -1 being its base."""
    names = {-1: "base"}
    for link in range(p.getNumJoints(body, physicsClientId=client)):
        names[link] = p.getJointInfo(body, link, physicsClientId=client)[12].decode()
    return names
