"""The person's tree nodes: ActorAnimation and ActorMovement (thesis "Menschenspezifische Nodes").

Both send one goal to the actor server (``ctx.services["actor"]``) and stay RUNNING until the
goal is done: SUCCESS when the plugin completed it, FAILURE when it was rejected, failed or
cancelled. A node halted by its parent cancels its goal. A goal rejected only because the
previous one is still being cancelled is sent again on the next tick (the cancel completes
within a physics step or two), so a reactive tree can switch from one action to the next.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

from py_trees.common import Status

from hri.actor.animation import ClipLibrary, clip_names
from hri.actor.server import Goal, GoalStatus
from hri.bt.blackboard import Blackboard
from hri.bt.context import TreeContext
from hri.bt.node import BTNode
from hri.bt.ports import Port, PortError
from hri.geometry import Area, Pose

_RESULT = {GoalStatus.SUCCEEDED: Status.SUCCESS, GoalStatus.FAILED: Status.FAILURE,
           GoalStatus.CANCELED: Status.FAILURE, GoalStatus.REJECTED: Status.FAILURE}


class _ActorGoalNode(BTNode):
    """Send a goal on the first tick, then follow it until it is done.

    Literal ports are checked when the tree is loaded (``check_value``): the plugin would
    only reject the goal at run time, and the person would stand still.
    """

    goal: Goal | None = None

    def __init__(self, name: str, ports: Mapping[str, str], ctx: TreeContext, blackboard: Blackboard):
        super().__init__(name, ports, ctx, blackboard)
        for port in self.PORTS:
            message = self.check_value(port.name, self.literal_input(port.name))
            if message:
                raise PortError(message)

    @classmethod
    def check_value(cls, port: str, value: Any) -> str | None:
        """The problem of a value of ``port``, else None (None: a reference, checked later)."""
        return None

    def send(self, server) -> Goal:
        raise NotImplementedError

    def describe(self) -> dict:
        raise NotImplementedError

    def initialise(self) -> None:
        self.goal = None

    def update(self) -> Status:
        server = self.ctx.services["actor"]
        if self.goal is None or self._retry_after_cancel(server):
            self.goal = self.send(server)
            if self.goal.status is GoalStatus.REJECTED and self._previous_canceling(server):
                return Status.RUNNING
            self.ctx.events("person_action_started", node=self.name, **self.describe())
        status = _RESULT.get(self.goal.status, Status.RUNNING)
        if status is not Status.RUNNING:
            self.ctx.events("person_action_finished", node=self.name, result=self.goal.status.value,
                            **self.describe())
        return status

    def _retry_after_cancel(self, server) -> bool:
        return self.goal is not None and self.goal.status is GoalStatus.REJECTED and not server.busy

    @staticmethod
    def _previous_canceling(server) -> bool:
        current = server.current_goal
        return current is not None and current.status is GoalStatus.CANCELING

    def on_halted(self) -> None:
        if self.goal is not None and not self.goal.done:
            self.ctx.services["actor"].cancel(self.goal)
            self.ctx.events("person_action_cancelled", node=self.name, **self.describe())


class ActorAnimation(_ActorGoalNode):
    """Play a named animation clip in place; SUCCESS when it has played through."""

    PORTS = (
        Port("animation_name", "in", str, description="name of the clip, e.g. standing_extend_arm"),
        Port("animation_speed", "in", float, 1.0, "playback speed factor (1 = as authored)"),
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
        if port == "animation_speed" and not (value > 0.0 and math.isfinite(value)):
            return f"port 'animation_speed': must be positive, got {value}"
        return None

    def send(self, server) -> Goal:
        return server.send_animation(self.get_input("animation_name"), self.get_input("animation_speed"))

    def describe(self) -> dict:
        return {"animation": self.get_input("animation_name")}


class ActorMovement(_ActorGoalNode):
    """Walk to a target pose; the null quaternion as orientation keeps the walking direction."""

    PORTS = (
        Port("animation_name", "in", str, description="walk cycle clip, e.g. walk"),
        Port("animation_distance", "in", float, description="metres covered per walk cycle"),
        Port("target", "in", Pose, description="where to walk to (x;y;z;qx;qy;qz;qw)"),
    )

    @classmethod
    def check_value(cls, port: str, value: Any) -> str | None:
        if value is None:
            return None
        if port == "animation_name" and value != ClipLibrary.WALK:
            return f"port 'animation_name': the person walks with the 'walk' cycle only, got {value!r}"
        if port == "animation_distance" and not (value > 0.0 and math.isfinite(value)):
            return f"port 'animation_distance': must be positive (metres per walk cycle), got {value}"
        return None

    def send(self, server) -> Goal:
        return server.send_movement(self.get_input("animation_name"), self.get_input("animation_distance"),
                                    self.get_input("target"))

    def describe(self) -> dict:
        target = self.get_input("target")
        return {"animation": self.get_input("animation_name"), "target": [round(target.x, 4), round(target.y, 4)]}


class GrabPart(BTNode):
    """Take the free part nearest to the right hand (within reach, optionally only from
    ``area``) into the hand; FAILURE if there is none. Use it at the end of a reach."""

    PORTS = (Port("area", "in", Area, None, "only parts lying in this area"),)

    def update(self) -> Status:
        area = self.get_input("area") if self.has_input("area") else None
        return Status.SUCCESS if self.ctx.services["parts"].person_grab(area) else Status.FAILURE


class ReleasePart(BTNode):
    """Put the part in the hand down on the surface below it; SUCCESS (also with an empty hand)."""

    PORTS = ()

    def update(self) -> Status:
        self.ctx.services["parts"].person_release()
        return Status.SUCCESS


def register_nodes(registry) -> None:
    registry.register("ActorAnimation", ActorAnimation, "action")
    registry.register("ActorMovement", ActorMovement, "action")
    registry.register("GrabPart", GrabPart, "action")
    registry.register("ReleasePart", ReleasePart, "action")
