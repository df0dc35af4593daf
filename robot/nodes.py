"""The robot's tree nodes: RobotMove, SetRobotVelocity and SetGripper (thesis "Roboterspezifische Nodes").

They reach the arm through its motion service on the network (``ctx.services["robot"]``, a
:class:`~hri.robot.service.RobotClient`): a velocity change takes effect on the motion in
progress, and RobotMove learns only of the success or failure of the whole motion (a failure's
``robot_move_finished`` event says why: ``reason`` and ``error``). A halted
RobotMove brings the arm to a controlled stop; the arm keeps the target, so the next
RobotMove to the same target resumes it. SetGripper asks the ``parts`` service.

:func:`arm_targets` tells which of the scenario's areas and poses a robot tree moves the tool
to, for the scenario's reach check (``hri.scenario.load``).
"""

from __future__ import annotations

from typing import Any

from py_trees.common import Status

from hri.bt.keys import _Walker
from hri.bt.node import BTNode, ServiceCallNode
from hri.bt.ports import Port, PortError, reference_key
from hri.bt.tree_files import Element
from hri.bt.value_types import to_pose
from hri.base.geometry import Pose
from hri.net import Future
from hri.net.goals import GoalHandle
from hri.robot.motion import MotionStatus


class RobotMove(BTNode):
    """Move the tool to ``target``; RUNNING while moving, SUCCESS when it arrived."""

    PORTS = (Port("target", "in", Pose, description="tool pose (x;y;z;qx;qy;qz;qw)"),)

    move: GoalHandle | None = None

    def initialise(self) -> None:
        target = self.get_input("target")
        self.move = self.ctx.services["robot"].move_to(target)
        self.ctx.events("robot_move_started", node=self.name, target=[round(v, 4) for v in target.position])

    def update(self) -> Status:
        robot = self.ctx.services["robot"]
        status = robot.status(self.move)
        if status is MotionStatus.SUCCEEDED:
            self.ctx.events("robot_move_finished", node=self.name, result="succeeded")
            return Status.SUCCESS
        if status is MotionStatus.FAILED:
            self.ctx.events("robot_move_finished", node=self.name, result="failed", **robot.why(self.move))
            return Status.FAILURE
        return Status.RUNNING

    def on_halted(self) -> None:
        self.ctx.services["robot"].halt(self.move)
        self.ctx.events("robot_move_halted", node=self.name)


class SetRobotVelocity(BTNode):
    """Set the robot's maximum velocity fraction (0..1); SUCCESS once asked (the request is
    sent when the fraction changes, and again if it was lost)."""

    PORTS = (Port("velocity", "in", float, description="fraction of the joint velocity limits, 0..1",
                  low=0.0, high=1.0),)

    def update(self) -> Status:
        velocity = self.get_input("velocity")
        self.ctx.services["robot"].set_velocity(velocity)
        return Status.SUCCESS


class SetGripper(ServiceCallNode):
    """Close the gripper on the part at the tool (FAILURE if there is none), or open it and put
    the carried part down on the surface below (SUCCESS, also when it held nothing)."""

    PORTS = (Port("closed", "in", bool, description="true: grasp the part at the tool; false: release"),)

    def request(self) -> Future:
        parts = self.ctx.services["parts"]
        return parts.robot_grasp() if self.get_input("closed") else parts.robot_release()

    def result(self, value: Any) -> Status:
        if self.get_input("closed"):
            return Status.SUCCESS if value else Status.FAILURE
        return Status.SUCCESS


# Nodes whose output pose is made from an input entry: (node ID, output port, input port).
# The robot's tree turns areas and poses into tool targets with these before RobotMove.
_POSE_FLOWS = (("OffsetPose", "output", "input"), ("GenerateXYPose", "pose", "area"),
               ("FindPart", "pose", "area"), ("SetBlackboard", "output_key", "value"))


class _TargetWalker(_Walker):
    """The key walker of :mod:`hri.bt.keys` (blackboard scopes through SubTrees), also
    recording which entries RobotMove moves to and which entries each pose is made from."""

    def __init__(self, trees: dict[str, Element], registry) -> None:
        super().__init__(trees, registry)
        self.targets: set[tuple[int, str]] = set()
        self.flows: list[tuple[tuple[int, str], tuple[int, str]]] = []  # (made, from)
        self.literals: list[tuple[Element, Pose]] = []

    def walk(self, element: Element, scope, stack: tuple[str, ...], depth: int) -> None:
        if element.tag == "RobotMove":
            self._robot_move(element, scope)
        for node_id, out, source in _POSE_FLOWS:
            if element.tag == node_id:
                made, used = _entry(element, out, scope), _entry(element, source, scope)
                if made is not None and used is not None:
                    self.flows.append((made, used))
        super().walk(element, scope, stack, depth)

    def _robot_move(self, element: Element, scope) -> None:
        target = _entry(element, "target", scope)
        if target is not None:
            self.targets.add(target)
            return
        try:
            self.literals.append((element, to_pose(element.attrib.get("target", ""))))
        except ValueError:
            pass  # not a pose: the tree's validation reports it


def _entry(element: Element, port: str, scope) -> tuple[int, str] | None:
    text = element.attrib.get(port)
    if text is None:
        return None
    try:
        key = reference_key(text, port)
    except PortError:
        return None
    if key is None and port in ("output", "pose", "output_key"):
        key = text.strip() or None  # an output port may name its key bare
    return scope.resolve(key) if key else None


def arm_targets(trees: dict[str, Element], main: str, registry) -> tuple[set[str], list[tuple[Element, Pose]]]:
    """What the tree ``main`` moves the robot's tool to: the root blackboard entries (the
    scenario's areas and poses) its RobotMove targets are made from, following SubTree
    scopes and OffsetPose, GenerateXYPose, FindPart and SetBlackboard; and the literal
    RobotMove targets with their elements."""
    walker = _TargetWalker(trees, registry)
    root = walker.new_scope()
    walker.walk_tree(main, root, ())
    targets = set(walker.targets)
    grown = True
    while grown:  # a pose made from an entry makes that entry a target too
        grown = False
        for made, source in walker.flows:
            if made in targets and source not in targets:
                targets.add(source)
                grown = True
    return {key for ident, key in targets if ident == root.ident}, walker.literals


def register_nodes(registry) -> None:
    registry.register("RobotMove", RobotMove, "action")
    registry.register("SetRobotVelocity", SetRobotVelocity, "action")
    registry.register("SetGripper", SetGripper, "action")
