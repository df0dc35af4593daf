"""The person's tree nodes: ActorAnimation and ActorMovement (thesis "Menschenspezifische Nodes").

Both send one goal to the actor server over the service network (``ctx.services["actor"]``,
an :class:`~hri.actor.service.ActorClient`) and stay RUNNING until the goal is done: SUCCESS
when the plugin completed it, FAILURE when it was rejected, failed or cancelled, or when the
request was lost on the way; the ``person_action_finished`` event of a failure says why
(``reason``, a short name the run's statistics count, and ``error``, a sentence). A node
halted by its parent cancels its goal. A goal rejected
only because the previous one is still being cancelled is sent again on the next tick (the
cancel completes within a physics step or two), so a reactive tree can switch from one
action to the next. GrabPart and ReleasePart ask the ``parts`` service.
"""

from __future__ import annotations

from typing import Any

from py_trees.common import Status

from hri.actor.animation import MAX_WALKING_SPEED_M_S, ClipLibrary, clip_names
from hri.actor.server import GoalStatus
from hri.actor.service import ActorClient
from hri.bt.node import BTNode, ServiceCallNode
from hri.bt.ports import Port
from hri.base.geometry import Area, Pose
from hri.net import Future
from hri.net.goals import GoalHandle

_RESULT = {GoalStatus.SUCCEEDED: Status.SUCCESS, GoalStatus.FAILED: Status.FAILURE,
           GoalStatus.CANCELED: Status.FAILURE, GoalStatus.REJECTED: Status.FAILURE}


class _ActorGoalNode(BTNode):
    """Send a goal on the first tick, then follow it until it is done.

    Literal ports are checked when the tree is loaded (``check_value``): the plugin would
    only reject the goal at run time, and the person would stand still.
    """

    goal: GoalHandle | None = None
    started = False

    def send(self, actor: ActorClient) -> GoalHandle:
        raise NotImplementedError

    def describe(self) -> dict:
        raise NotImplementedError

    def initialise(self) -> None:
        self.goal = None
        self.started = False

    def update(self) -> Status:
        actor: ActorClient = self.ctx.services["actor"]
        if self.goal is not None and self.goal.request.pending:
            return Status.RUNNING  # the answer is on the way
        if self.goal is None or actor.rejected_while_canceling(self.goal):
            self.goal = self.send(actor)
            return Status.RUNNING
        status = actor.status(self.goal)
        if not self.started:
            self.started = True
            self.ctx.events("person_action_started", node=self.name, **self.describe())
        result = _RESULT.get(status, Status.RUNNING)
        if result is not Status.RUNNING:
            description = self.describe()
            self.ctx.events("person_action_finished", node=self.name, result=status.value, **description,
                            **actor.why(self.goal, status, description["animation"]))
        return result

    def on_halted(self) -> None:
        if self.goal is not None and not self.goal.request.failed:
            self.ctx.services["actor"].cancel(self.goal)
            self.ctx.events("person_action_cancelled", node=self.name, **self.describe())


class ActorAnimation(_ActorGoalNode):
    """Play a named animation clip in place; SUCCESS when it has played through."""

    PORTS = (
        Port("animation_name", "in", str, description="name of the clip, e.g. standing_extend_arm"),
        Port("animation_speed", "in", float, 1.0, "playback speed factor (1 = as authored)", above=0.0),
    )

    @classmethod
    def check_value(cls, port: str, value: Any) -> str | None:
        if value is None:
            return None
        if port == "animation_name" and value == ClipLibrary.WALK:
            return "port 'animation_name': 'walk' is the walk cycle: walk with ActorMovement"
        if port == "animation_name" and value not in clip_names():
            known = ", ".join(sorted(clip_names() - {ClipLibrary.WALK}))
            return f"port 'animation_name': unknown animation {value!r} (animations: {known})"
        return super().check_value(port, value)

    def send(self, actor: ActorClient) -> GoalHandle:
        return actor.animate(self.get_input("animation_name"), self.get_input("animation_speed"))

    def describe(self) -> dict:
        return {"animation": self.get_input("animation_name")}


class ActorMovement(_ActorGoalNode):
    """Walk to a target pose; the null quaternion as orientation keeps the walking direction."""

    PORTS = (
        Port("animation_name", "in", str, description="walk cycle clip, e.g. walk"),
        Port("animation_distance", "in", float, description="metres covered per walk cycle", above=0.0),
        Port("target", "in", Pose, description="where to walk to (x;y;z;qx;qy;qz;qw)"),
    )

    @classmethod
    def check_value(cls, port: str, value: Any) -> str | None:
        if value is None:
            return None
        if port == "animation_name" and value != ClipLibrary.WALK:
            return f"port 'animation_name': the person walks with the 'walk' cycle only, got {value!r}"
        if port == "animation_distance" and isinstance(value, float):
            speed = value / ClipLibrary.default().walk.duration
            if speed > MAX_WALKING_SPEED_M_S * (1.0 + 1e-6):
                return (f"port 'animation_distance': {value:g} m per walk cycle is {speed:.3g} m/s, faster than a "
                        f"person walks (at most {MAX_WALKING_SPEED_M_S:g} m/s)")
        return super().check_value(port, value)

    def send(self, actor: ActorClient) -> GoalHandle:
        return actor.move(self.get_input("animation_name"), self.get_input("animation_distance"),
                          self.get_input("target"))

    def describe(self) -> dict:
        target = self.get_input("target")
        return {"animation": self.get_input("animation_name"), "target": [round(target.x, 4), round(target.y, 4)]}


class GrabPart(ServiceCallNode):
    """Take the free part nearest to the right hand (within reach, optionally only from
    ``area``) into the hand; FAILURE if there is none. Use it at the end of a reach."""

    PORTS = (Port("area", "in", Area, None, "only parts lying in this area"),)

    def request(self) -> Future:
        area = self.get_input("area") if self.has_input("area") else None
        return self.ctx.services["parts"].person_grab(area)

    def result(self, grabbed: bool) -> Status:
        return Status.SUCCESS if grabbed else Status.FAILURE


class ReleasePart(ServiceCallNode):
    """Put the part in the hand down on the surface below it; SUCCESS (also with an empty hand)."""

    PORTS = ()

    def request(self) -> Future:
        return self.ctx.services["parts"].person_release()

    def result(self, surface: str | None) -> Status:
        return Status.SUCCESS


def register_nodes(registry) -> None:
    registry.register("ActorAnimation", ActorAnimation, "action")
    registry.register("ActorMovement", ActorMovement, "action")
    registry.register("GrabPart", GrabPart, "action")
    registry.register("ReleasePart", ReleasePart, "action")
