"""The robot as the safety functions see it: the arm's links, its tool and the part it carries.

The arm is one PyBullet body (its links); the tool (a gripper's envelope,
:class:`~hri.robot.scene.ToolShape`) and a part the robot holds are bodies of their own, with no
collisions, which move with the arm's tool frame. :class:`RobotShapes` puts them where the tool
frame is now before a distance query and answers the queries over all of them: the separation
(:meth:`RobotShapes.closest`), the contacts of power and force limiting
(:meth:`RobotShapes.records`), the name of the robot's side of a closest-point record
(:meth:`RobotShapes.name`) and the arm link whose motion a point of it shares
(:meth:`RobotShapes.moving_link`: the tool link for the tool and the part).

With ``whole=False`` (zones mode) it is the arm's links alone, as the separation was measured
before the tool and the part counted: zones runs keep their figures (docs/safety.md).
"""

from __future__ import annotations

from collections.abc import Callable

import pybullet as p

from hri.base.bodies import link_names

#: a closest-point record's fields (PyBullet's getClosestPoints)
BODY_B, LINK_B, DISTANCE = 2, 4, 8
TOOL_NAME = "tool"
PART_NAME = "carried_part"


def _nearest(records: list) -> tuple | None:
    return min(records, key=lambda record: record[DISTANCE], default=None)


class RobotShapes:
    """The arm body ``robot.body_id`` and, with ``whole``, the tool's body (``robot.tool_body``,
    if it has one) and the body of the part ``held_part()`` says the robot holds (None: none),
    which ``follow_part()`` puts at the tool frame where it is now."""

    def __init__(self, client: int, robot, whole: bool = False,
                 held_part: Callable[[], int | None] | None = None,
                 follow_part: Callable[[], None] | None = None) -> None:
        self.client = client
        self.robot = robot
        self.arm = robot.body_id
        self.tool = getattr(robot, "tool_body", None) if whole else None
        self.held_part = held_part if whole else None
        self.follow_part = follow_part
        self.whole = whole
        self._names = link_names(client, robot.body_id)
        self._posed_at: object = None  # the tool frame the extra bodies were last put at

    def bodies(self) -> list[int]:
        """The robot's bodies now, the arm first; the tool and a held part put where the tool
        frame is (a PyBullet query of them follows)."""
        if not self.whole:
            return [self.arm]
        bodies = [self.arm]
        part = self.held_part() if self.held_part is not None else None
        if self.tool is not None or part is not None:
            self._pose(part)
        if self.tool is not None:
            bodies.append(self.tool)
        if part is not None:
            bodies.append(part)
        return bodies

    def _pose(self, part: int | None) -> None:
        from hri.robot.scene import pose_tool_body

        frame = self.robot.tool_frame()
        if self.tool is not None and frame != self._posed_at:
            pose_tool_body(self.client, self.tool, frame)
            self._posed_at = frame
        if part is not None and self.follow_part is not None:
            self.follow_part()

    def closest(self, person: int, cutoff: float, pair: tuple[int, int, int] | None = None) -> tuple | None:
        """PyBullet's closest point pair of ``person`` and the robot within ``cutoff`` m, or
        None; with ``pair`` (person link, robot body, robot link) only that pair is asked."""
        if pair is not None:
            person_link, body, link = pair
            if body not in self.bodies():
                return None
            kwargs = {"linkIndexB": link} if body == self.arm else {}
            return _nearest(p.getClosestPoints(person, body, cutoff, linkIndexA=person_link,
                                               physicsClientId=self.client, **kwargs))
        return _nearest(self.records(person, cutoff))

    def records(self, person: int, cutoff: float) -> list:
        """Every closest-point record of ``person`` and the robot's bodies within ``cutoff`` m
        (one per pair of links)."""
        bodies = self.bodies()
        if len(bodies) == 1:
            return p.getClosestPoints(person, self.arm, cutoff, physicsClientId=self.client)
        return [record for body in bodies
                for record in p.getClosestPoints(person, body, cutoff, physicsClientId=self.client)]

    def name(self, record: tuple) -> str:
        """The robot's side of a closest-point record: the arm link's name, ``tool`` or
        ``carried_part``."""
        body = record[BODY_B]
        if body == self.arm:
            return self._names[record[LINK_B]]
        return TOOL_NAME if body == self.tool else PART_NAME

    def moving_link(self, record: tuple) -> int:
        """The arm link the robot's point of ``record`` moves with (the tool link for the tool
        and a held part: they are fixed to it)."""
        if record[BODY_B] == self.arm:
            return record[LINK_B]
        return self.robot.model.tool_link


def point_velocity(shapes: RobotShapes, record: tuple) -> tuple[float, float, float]:
    """The velocity (m/s), after the step, of the robot's material point of a closest-point
    ``record`` (its position on the robot, ``record[6]``): its arm link's linear velocity at the
    centre of mass plus the angular velocity crossed with the lever from there, ``v + w x r``."""
    link, point = shapes.moving_link(record), record[6]
    client, arm = shapes.client, shapes.arm
    if link < 0:
        linear, angular = p.getBaseVelocity(arm, physicsClientId=client)
        centre = p.getBasePositionAndOrientation(arm, physicsClientId=client)[0]
    else:
        state = p.getLinkState(arm, link, computeLinkVelocity=1, physicsClientId=client)
        centre, linear, angular = state[0], state[6], state[7]
    rx, ry, rz = (a - b for a, b in zip(point, centre))
    wx, wy, wz = angular
    return (linear[0] + (wy * rz - wz * ry), linear[1] + (wz * rx - wx * rz), linear[2] + (wx * ry - wy * rx))
