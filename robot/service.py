"""The robot's motion service on the network: how the robot's tree reaches the arm.

The simulation offers the service ``robot``, as the original service network did for its UR-5: the device
known by identifiers from specific to general (:func:`identifiers`: ``lbr-iisy-1``,
``lbr-iisy``, ``industrial-robot``, ``robot`` for the LBR iisy), with its motion commands and the kinematics operations of
:func:`hri.kinematics.service.kinematics_service` on the arm's URDF chain:

======================  ==================================  =========================================
op                      request                             reply
======================  ==================================  =========================================
move_to                 ``{"move", "target": [7 numbers]}``  the motion status after planning
halt                    ``{"move"}``                        true if that move was halted
set_velocity            a fraction 0..1                     the fraction now in force
GET/SET_AXIS_ANGLES,    as in :mod:`hri.kinematics.service`  (SET_AXIS_ANGLES plans a joint-space move)
GET_FORWARD_KINEMATIC,
GET_INVERSE_KINEMATIC,
INTERPOLATE
======================  ==================================  =========================================

Streams (keep-last, published before the trees tick when they changed): ``motion``, the
current move ``{"move", "client", "status"}`` (status: a :class:`~hri.robot.arm.MotionStatus`
value; a failed move also has ``"reason"``, one of :data:`FAILURE_TEXT`), and
``axis_angles``, the measured joint positions (only while someone subscribes).
Moves are goals of the protocol of :mod:`hri.net.goals` with the key ``move``, so a tree can
halt the move it started, and only that one; a halt is not remembered for a move still on
its way, and a joint-space move (SET_AXIS_ANGLES) is nobody's (``"move"`` and ``"client"``
are null).

:class:`RobotClient` is the tree's side (the nodes of :mod:`hri.robot.nodes`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hri.base.errors import HriError
from hri.base.geometry import Pose
from hri.kinematics.service import AXIS_STREAM, kinematics_service
from hri.net import Client, Request, Service, Setpoint, Subscription
from hri.net.goals import GoalBoard, GoalClient, GoalHandle
from hri.base.numbers import is_number

from .motion import MotionStatus

if TYPE_CHECKING:
    from .arm import RobotArm

SERVICE = "robot"  # the service's name is also its channel's: net.robot.latency


def identifiers(arm_type: str) -> tuple[str, ...]:
    """The robot's identifiers, specific to general, for an arm of type ``arm_type``
    (:attr:`hri.kinematics.arm_model.ArmModel.identifier`): ``lbr-iisy-1``, ``lbr-iisy``,
    ``industrial-robot``, ``robot`` for the LBR iisy; ``UR-5-1``, ``UR-5``, ... for the UR-5."""
    return (f"{arm_type}-1", arm_type, "industrial-robot", SERVICE)

MOTION_STREAM = "motion"
KEY = "move"  # a request's move number, and the motion stream's
QUERY = {"all_of": ["robot"], "op": "move_to"}
# Why the arm did not complete a move (RobotArm.failure), and what that means.
FAILURE_TEXT = {
    "unreachable": "no collision-free joint configuration reaches the target within the tolerances",
    "invalid_joints": "the joint values are outside the limits or collide",
    "no_path": "the planner found no collision-free path to the target",
    "trajectory_error": "the trajectory generator rejected the motion",
    "not_settled": "the arm did not come to rest at the target within settle_timeout",
    "unspecified": "the arm gave no reason",
}


def _target(payload: dict) -> Pose:
    target = payload.get("target")
    if (not isinstance(target, list) or len(target) != 7
            or not all(is_number(v) for v in target)):
        raise HriError(f"robot.move_to: 'target' must be 7 numbers (x, y, z, qx, qy, qz, qw), got {target!r}")
    return Pose(*(float(v) for v in target))


class RobotService:
    """The simulation's side: requests to :class:`RobotArm` commands, its state to the streams."""

    def __init__(self, arm: "RobotArm") -> None:
        self.arm = arm
        names = identifiers(arm.arm_model.identifier)
        kinematics = kinematics_service(arm.scene.chain, SERVICE, names, joints=arm.joint_positions,
                                        set_joints=self._set_axis_angles)
        handlers = {"move_to": self._move_to, "halt": self._halt, "set_velocity": self._set_velocity,
                    **kinematics.handlers}
        self.service = Service(SERVICE, names, handlers, streams=[MOTION_STREAM, AXIS_STREAM])
        self.moves = GoalBoard(self.service, MOTION_STREAM, KEY)

    def _move_to(self, request: Request) -> str:
        move = self.moves.goal_of(request)
        self.arm.move_to(_target(request.payload))
        self.moves.current = move
        return self.arm.status.value

    def _set_axis_angles(self, q: list[float]) -> None:
        self.moves.current = None  # a joint-space move is nobody's numbered move
        self.arm.move_to_joints(q)
        if self.arm.status is MotionStatus.FAILED:
            raise HriError(f"SET_AXIS_ANGLES: {[round(v, 4) for v in q]} is outside the joint limits or collides")

    def _halt(self, request: Request) -> bool:
        if not self.moves.cancel_names_current(request):
            return False
        self.arm.halt()
        return True

    def _set_velocity(self, request: Request) -> float:
        fraction = request.payload
        if not is_number(fraction, finite=False) or not 0.0 <= fraction <= 1.0:
            raise HriError(f"robot.set_velocity: expected a fraction within 0..1, got {fraction!r}")
        self.arm.set_velocity_fraction(float(fraction))
        return self.arm.velocity_fraction

    def publish(self) -> None:
        """Send the motion state if it changed, and the joint positions to any subscriber."""
        failed = self.arm.status is MotionStatus.FAILED
        self.moves.publish(self.arm.status.value, (self.arm.failure or "unspecified") if failed else None)
        axes = self.service.publisher(AXIS_STREAM)
        if axes.subscribers:
            axes.publish([float(v) for v in self.arm.joint_positions()])


class RobotClient:
    """The tree's side of the robot's motion service."""

    def __init__(self, client: Client, motion: Subscription) -> None:
        self._moves = GoalClient(client, motion, KEY)
        self._velocity = Setpoint(client, "set_velocity")

    def move_to(self, target: Pose) -> GoalHandle:
        """Move the tool to ``target``; follow it with :meth:`status`."""
        return self._moves.send("move_to", {"target": [*target.position, *target.orientation]})

    def status(self, handle: GoalHandle) -> MotionStatus | None:
        """The move's status as far as this tree knows (None: not known yet); FAILED when the
        request failed."""
        if handle.request.failed:
            return MotionStatus.FAILED
        status = self._moves.status(handle)
        return None if status is None else MotionStatus(status)

    def halt(self, handle: GoalHandle) -> None:
        """Brake the move to rest (the arm keeps its target: a move to the same target resumes)."""
        self._moves.cancel("halt", handle)

    def set_velocity(self, fraction: float) -> None:
        """Ask for the velocity fraction ``fraction`` (sent when it changes or was lost)."""
        self._velocity.set(float(fraction))

    def why(self, handle: GoalHandle) -> dict[str, str]:
        """Why the failed move ``handle`` failed: ``{"reason", "error"}`` (a short name to
        count, and a sentence)."""
        failure = GoalClient.call_failure(handle)
        if failure is not None:
            return failure
        reason = self._moves.reason(handle, "unspecified")
        return {"reason": reason, "error": FAILURE_TEXT.get(reason, FAILURE_TEXT["unspecified"])}
