"""The workcell's general nodes: poses and areas, the "called" flag, parts, random failures.

Each finishes (SUCCESS/FAILURE) in one tick, except ``FindPart`` (RUNNING until the
``parts`` service answers).

====================  =============================================================
``GenerateXYPose``    in ``area`` (Area); out ``pose``: a uniform sample, z = 0,
                      the null orientation
``InAreaTest``        in ``area``, ``pose``: SUCCESS when the pose's x, y is inside
``OffsetPose``        in ``input`` (Pose), ``offset`` (``x;y;z``), ``orientation``
                      (``qx;qy;qz;qw``); out ``output``
``IsCalled``          (also ``AmICalled``) in ``person`` (optional): SUCCESS when that
                      person's "called" flag is set, as the tree last learnt it
                      (``services["called"].get()``)
``SetCalledTo``       in ``state`` (bool), ``person`` (optional): asks for the person's flag
                      (``services["called"].set``); SUCCESS once asked (sent again if the
                      request was lost)
``FindPart``          in ``area``; out ``pose``: a free part's top centre (``parts``)
``RandomFailure``     in ``failure_chance`` (0..1): FAILURE with that probability
====================  =============================================================

``person`` names one of the scenario's people (:data:`PERSON_PORT`); without it a person's
tree addresses its own person and the robot's tree the first person (a scenario's one
person). A literal name, or a scenario ``blackboard`` value the port reads, is checked when
the scenario is loaded (:func:`hri.scenario.trees.check_trees_against`); a name the tree
makes at run time when the node ticks.
"""

from __future__ import annotations


from py_trees.common import Status

from hri.bt.node import BTNode, ServiceCallNode
from hri.bt.ports import Port
from hri.bt.value_types import Quaternion
from hri.base.geometry import Area, Pose
from hri.net import Future


class GenerateXYPose(BTNode):
    """Samples a point uniformly in ``area``: ``pose`` at z = 0 with the null quaternion.

    The null orientation ``0;0;0;0`` is what the thesis's ROS pose held by default, and what
    ActorMovement reads as "end facing the walking direction".
    """

    PORTS = (
        Port("area", "in", Area, description="where to sample"),
        Port("pose", "out", Pose, description="the sampled pose"),
    )

    def update(self) -> Status:
        area: Area = self.get_input("area")
        x, y = area.sample(self.ctx.rng)
        self.set_output("pose", Pose(x, y, 0.0, 0.0, 0.0, 0.0, 0.0))
        return Status.SUCCESS


class InAreaTest(BTNode):
    """SUCCESS when ``pose`` (x, y) lies inside or on the border of ``area``."""

    PORTS = (
        Port("area", "in", Area, description="the area"),
        Port("pose", "in", Pose, description="the pose to test"),
    )

    def update(self) -> Status:
        area: Area = self.get_input("area")
        pose: Pose = self.get_input("pose")
        return Status.SUCCESS if area.contains(pose.x, pose.y) else Status.FAILURE


class OffsetPose(BTNode):
    """``output`` = ``input`` moved by ``offset``; orientation replaced by ``orientation`` if given.

    The null quaternion ``0;0;0;0`` is a valid replacement ("no orientation").
    """

    PORTS = (
        Port("input", "in", Pose, description="the pose to offset"),
        Port("offset", "in", Pose, default=None, description="added to the position, x;y;z"),
        Port("orientation", "in", Quaternion, default=None, description="replaces the orientation"),
        Port("output", "out", Pose, description="the result"),
    )

    def update(self) -> Status:
        pose: Pose = self.get_input("input")
        offset: Pose | None = self.get_input("offset")
        if offset is not None:
            pose = pose.with_position(pose.x + offset.x, pose.y + offset.y, pose.z + offset.z)
        orientation: Quaternion | None = self.get_input("orientation")
        if orientation is not None:
            pose = Pose(pose.x, pose.y, pose.z, *orientation)
        self.set_output("output", pose)
        return Status.SUCCESS


PERSON_PORT = Port("person", "in", str, None, "whose call: a name from the scenario's people (default: a "
                   "person's tree its own person, the robot's tree the first person)")
"""The port of a node that addresses one person: its value is checked against the scenario's people."""


class _CallNode(BTNode):
    """A node of the "called" flags: the ``called`` service and the person ``person`` names."""

    def _called(self):
        called = self.ctx.services.get("called")
        if called is None:
            raise self._error("the tree context has no 'called' service")
        return called

    def _person(self, called) -> str | None:
        """The name the ``person`` port gives (checked), None without it."""
        person = self.get_input("person")
        if person is None:
            return None
        problem = called.problem(person)
        if problem is not None:
            raise self._error(f"port 'person': {problem}")
        return person


class IsCalled(_CallNode):
    """SUCCESS when the person is called (``ctx.services["called"].get(person)``); also ``AmICalled``."""

    PORTS = (PERSON_PORT,)

    def update(self) -> Status:
        called = self._called()
        return Status.SUCCESS if called.get(self._person(called)) else Status.FAILURE


class SetCalledTo(_CallNode):
    """Asks for the person's "called" flag (``ctx.services["called"].set(state, person)``);
    SUCCESS once asked (sent again if the request was lost)."""

    PORTS = (Port("state", "in", bool, description="true or false"), PERSON_PORT)

    def update(self) -> Status:
        called = self._called()
        called.set(bool(self.get_input("state")), self._person(called))
        return Status.SUCCESS


class RandomFailure(BTNode):
    """FAILURE with probability ``failure_chance`` (drawn from ``ctx.rng``), else SUCCESS."""

    PORTS = (Port("failure_chance", "in", float, description="probability of FAILURE, 0..1", low=0.0, high=1.0),)

    def update(self) -> Status:
        chance = self.get_input("failure_chance")
        if self.ctx.rng.random() < chance:
            self.ctx.events("random_failure", node=self.name)
            return Status.FAILURE
        return Status.SUCCESS


class FindPart(ServiceCallNode):
    """SUCCESS with ``pose`` = the top centre of a free part lying in ``area``; FAILURE if none.

    The robot's "camera": the oldest part in the area first. The orientation is the null
    quaternion, as GenerateXYPose gives. Asks the ``parts`` service: RUNNING until it answers.
    """

    PORTS = (
        Port("area", "in", Area, description="where to look for a part"),
        Port("pose", "out", Pose, description="the part's top centre"),
    )

    def request(self) -> Future:
        return self.ctx.services["parts"].find(self.get_input("area"))

    def result(self, pose: Pose | None) -> Status:
        if pose is None:
            return Status.FAILURE
        self.set_output("pose", pose)
        return Status.SUCCESS


def register_nodes(registry) -> None:
    """Register the workcell's nodes (an entry point of the group ``hri.nodes``, see pyproject.toml)."""
    for node_id, cls in (("GenerateXYPose", GenerateXYPose), ("OffsetPose", OffsetPose),
                         ("SetCalledTo", SetCalledTo), ("FindPart", FindPart)):
        registry.register(node_id, cls, "action")
    for node_id, cls in (("InAreaTest", InAreaTest), ("IsCalled", IsCalled), ("AmICalled", IsCalled),
                         ("RandomFailure", RandomFailure)):
        registry.register(node_id, cls, "condition")
