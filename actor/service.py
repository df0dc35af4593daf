"""The actor server as a service on the network: how the person's tree reaches the person.

The simulation offers the service ``actor`` (identifiers ``actor-server``, ``actor``,
``person``) in front of :class:`~hri.actor.server.ActorServer`, which talks to the actor
plugin over its two POSIX message queues. Goals are named by the client (``goal``, a number
per client), so a tree can cancel a goal whose answer is still on the way:

=======  =========================================================  ============================
op       request                                                    reply
=======  =========================================================  ============================
animate  ``{"goal", "name", "speed"}``                              ``{"status", "in_the_way"}``
move     ``{"goal", "name", "distance", "target": [x,y,z,qx,qy,qz,qw]}``  the same
cancel   ``{"goal"}``                                               true if a goal was cancelled
=======  =========================================================  ============================

``status`` is ``pending`` (accepted, sent to the plugin) or ``rejected`` (another goal is
still running; ``in_the_way`` is that goal's status, e.g. ``canceling``). The keep-last
stream ``goal`` carries the newest goal, ``{"goal", "client", "status"}`` and, when it
failed, ``"reason"`` (an :class:`~hri.actor.protocol.ActorFailure` reason such as
``unknown_animation``), published before the trees tick when it changed. A cancel that
overtakes its goal on the way (jitter) is remembered, and the goal is rejected when it
arrives. :meth:`ActorClient.why` tells the tree why a goal did not succeed.

:class:`ActorClient` is the tree's side (the nodes of :mod:`hri.actor.nodes`).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any

from hri.base.errors import HriError
from hri.base.geometry import Pose
from hri.net import Client, Future, Request, Service, Subscription
from hri.net.errors import failure_reason
from hri.base.numbers import is_number

from .protocol import ActorFailure, ProtocolError
from .queues import QueueFullError
from .server import ActorServer, Goal, GoalStatus

SERVICE = "actor"
IDENTIFIERS = ("actor-server", SERVICE, "person")
STREAM = "goal"
QUERY = {"all_of": [SERVICE], "op": "animate"}
_EARLY_CANCELS = 64  # cancels of goals not seen yet, remembered


def _number(payload: dict, key: str) -> float:
    value = payload.get(key)
    if not is_number(value):
        raise HriError(f"actor: {key!r} must be a number, got {value!r}")
    return float(value)


def _goal_id(payload: Any) -> int:
    goal = payload.get("goal") if isinstance(payload, dict) else None
    if isinstance(goal, bool) or not isinstance(goal, int):
        raise HriError(f"actor: 'goal' must be an integer, got {goal!r}")
    return goal


class ActorService:
    """The simulation's side: requests to :class:`ActorServer` goals, goal state to the stream."""

    def __init__(self, server: ActorServer) -> None:
        self.server = server
        self._owner: tuple[int, int] | None = None  # (client endpoint, goal id) of the current goal
        self._early_cancels: deque[tuple[int, int]] = deque(maxlen=_EARLY_CANCELS)
        self._published: dict | None = None
        self.service = Service(SERVICE, IDENTIFIERS, {"animate": self._animate, "move": self._move,
                                                      "cancel": self._cancel}, streams=[STREAM])

    def _start(self, request: Request, send) -> dict[str, Any]:
        key = (request.sender, _goal_id(request.payload))
        if key in self._early_cancels:
            self._early_cancels.remove(key)
            return {"status": GoalStatus.REJECTED.value, "in_the_way": None}
        in_the_way = self.server.current_goal.status.value if self.server.busy else None
        try:
            goal: Goal = send(request.payload)
        except (QueueFullError, ProtocolError) as error:
            raise HriError(f"actor: {error}") from None  # the tree's request fails; nothing hangs
        if goal.status is not GoalStatus.REJECTED:
            self._owner = key
        return {"status": goal.status.value, "in_the_way": in_the_way}

    def _animate(self, request: Request) -> dict[str, Any]:
        return self._start(request, lambda p: self.server.send_animation(str(p.get("name")), _number(p, "speed")))

    def _move(self, request: Request) -> dict[str, Any]:
        def send(payload: dict) -> Goal:
            target = payload.get("target")
            if not isinstance(target, list) or len(target) != 7:
                raise HriError(f"actor.move: 'target' must be 7 numbers, got {target!r}")
            return self.server.send_movement(str(payload.get("name")), _number(payload, "distance"),
                                             Pose(*(float(v) for v in target)))
        return self._start(request, send)

    def _cancel(self, request: Request) -> bool:
        key = (request.sender, _goal_id(request.payload))
        if key != self._owner:
            self._early_cancels.append(key)
            return False
        return self.server.cancel(self.server.current_goal)

    def publish(self) -> None:
        """Send the current goal's state if it changed (before the trees tick)."""
        goal = self.server.current_goal
        if goal is None or self._owner is None:
            return
        state = {"goal": self._owner[1], "client": self._owner[0], "status": goal.status.value}
        if goal.status is GoalStatus.FAILED:
            state["reason"] = goal.failure.reason
        if state != self._published:
            self._published = state
            self.service.publish(STREAM, state)


@dataclass
class GoalHandle:
    """One goal as the tree knows it: its number and the answer to the request."""

    goal: int
    request: Future


class ActorClient:
    """The tree's side of the actor server."""

    def __init__(self, client: Client, goals: Subscription) -> None:
        self._client = client
        self._goals = goals
        self._next = 0

    def _send(self, op: str, payload: dict[str, Any]) -> GoalHandle:
        self._next += 1
        return GoalHandle(self._next, self._client.call(op, {"goal": self._next, **payload}))

    def animate(self, name: str, speed: float) -> GoalHandle:
        """Play the clip ``name`` at ``speed`` times its authored speed."""
        return self._send("animate", {"name": name, "speed": float(speed)})

    def move(self, name: str, distance: float, target: Pose) -> GoalHandle:
        """Walk to ``target`` with the clip ``name``, ``distance`` m per cycle."""
        return self._send("move", {"name": name, "distance": float(distance), "target": [*target.position, *target.orientation]})

    def cancel(self, handle: GoalHandle) -> None:
        self._client.call("cancel", {"goal": handle.goal})

    def status(self, handle: GoalHandle) -> GoalStatus:
        """Where the goal stands as far as this tree knows; FAILED when the request failed."""
        if handle.request.pending:
            return GoalStatus.PENDING
        if handle.request.failed:
            return GoalStatus.FAILED
        if handle.request.value["status"] == GoalStatus.REJECTED.value:
            return GoalStatus.REJECTED
        state = self._goals.latest()
        if state is None or state["goal"] != handle.goal or state["client"] != self._client.node.id:
            return GoalStatus.PENDING  # accepted; the stream has not shown it yet
        return GoalStatus(state["status"])

    @staticmethod
    def rejected_while_canceling(handle: GoalHandle) -> bool:
        """Rejected only because the previous goal was still being cancelled: try again."""
        return (handle.request.done and handle.request.value["status"] == GoalStatus.REJECTED.value
                and handle.request.value["in_the_way"] == GoalStatus.CANCELING.value)

    def why(self, handle: GoalHandle, status: GoalStatus, name: str) -> dict[str, str]:
        """Why the goal for the clip ``name`` ended with ``status``: ``{"reason", "error"}``
        (a short name to count, and a sentence), or nothing when it succeeded."""
        if handle.request.failed:
            error = handle.request.error
            return {"reason": failure_reason(error), "error": error.message}
        if status is GoalStatus.REJECTED:
            in_the_way = handle.request.value["in_the_way"]
            return {"reason": "rejected", "error": "refused by the actor server: "
                    + (f"another goal is {in_the_way}" if in_the_way else "cancelled before it arrived")}
        if status is GoalStatus.CANCELED:
            return {"reason": "cancelled", "error": "the actor server cancelled the goal"}
        if status is GoalStatus.FAILED:
            state = self._goals.latest() or {}
            reason = str(state.get("reason", ActorFailure.NONE.reason)) if state.get("goal") == handle.goal \
                else ActorFailure.NONE.reason
            return {"reason": reason, "error": _FAILURE_TEXT.get(reason, "the actor plugin did not take it")
                    .format(name=name)}
        return {}


# What each reason of the plugin means, for the failure's event.
_FAILURE_TEXT = {
    ActorFailure.UNKNOWN_ANIMATION.reason: "the actor plugin has no animation {name!r}",
    ActorFailure.NOT_AN_ANIMATION.reason: "{name!r} is the walk cycle: walk with ActorMovement",
    ActorFailure.INVALID_SPEED.reason: "the speed of {name!r} is not a positive number",
    ActorFailure.NOT_WALK_CYCLE.reason: "the person walks with the 'walk' cycle only, got {name!r}",
    ActorFailure.INVALID_STATE.reason: "the actor plugin was asked for a state that is no action",
}
