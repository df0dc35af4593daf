"""The robot's tree nodes: RobotMove and SetRobotVelocity (thesis "Roboterspezifische Nodes").

Both reach the same arm (``ctx.services["robot"]``): a velocity change takes effect on the
motion in progress, and RobotMove learns only of the success or failure of the whole motion.
A halted RobotMove brings the arm to a controlled stop; the arm keeps the target, so the next
RobotMove to the same target resumes it.
"""

from __future__ import annotations

from py_trees.common import Status

from hri.bt.node import BTNode
from hri.bt.ports import Port
from hri.geometry import Pose
from hri.robot.arm import MotionStatus


class RobotMove(BTNode):
    """Move the tool to ``target``; RUNNING while moving, SUCCESS when it arrived."""

    PORTS = (Port("target", "in", Pose, description="tool pose (x;y;z;qx;qy;qz;qw)"),)

    def initialise(self) -> None:
        target = self.get_input("target")
        self.ctx.services["robot"].move_to(target)
        self.ctx.events("robot_move_started", node=self.name, target=[round(v, 4) for v in target.position])

    def update(self) -> Status:
        status = self.ctx.services["robot"].status
        if status is MotionStatus.SUCCEEDED:
            self.ctx.events("robot_move_finished", node=self.name, result="succeeded")
            return Status.SUCCESS
        if status is MotionStatus.FAILED:
            self.ctx.events("robot_move_finished", node=self.name, result="failed")
            return Status.FAILURE
        return Status.RUNNING

    def on_halted(self) -> None:
        self.ctx.services["robot"].halt()
        self.ctx.events("robot_move_halted", node=self.name)


class SetRobotVelocity(BTNode):
    """Set the robot's maximum velocity fraction (0..1); always SUCCESS."""

    PORTS = (Port("velocity", "in", float, description="fraction of the joint velocity limits, 0..1"),)

    def update(self) -> Status:
        velocity = self.get_input("velocity")
        if not 0.0 <= velocity <= 1.0:
            raise self._error(f"velocity must be within 0..1, got {velocity}")
        self.ctx.services["robot"].set_velocity_fraction(velocity)
        return Status.SUCCESS


class SetGripper(BTNode):
    """Close the gripper on the part at the tool (FAILURE if there is none), or open it and put
    the carried part down on the surface below (SUCCESS, also when it held nothing)."""

    PORTS = (Port("closed", "in", bool, description="true: grasp the part at the tool; false: release"),)

    def update(self) -> Status:
        parts = self.ctx.services["parts"]
        if self.get_input("closed"):
            return Status.SUCCESS if parts.robot_grasp() else Status.FAILURE
        parts.robot_release()
        return Status.SUCCESS


def register_nodes(registry) -> None:
    registry.register("RobotMove", RobotMove, "action")
    registry.register("SetRobotVelocity", SetRobotVelocity, "action")
    registry.register("SetGripper", SetGripper, "action")
