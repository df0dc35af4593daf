"""The actor server as a service on the network: how the person's tree reaches the person.

The simulation offers the service ``actor`` (identifiers ``actor-server``, ``actor``,
``person``) in front of :class:`~hri.actor.server.ActorServer`, which talks to the actor
plugin over its two POSIX message queues. Its animations and walks are goals of the protocol
of :mod:`hri.net.goals` with the key ``goal``, so a tree can cancel a goal whose answer is
still on the way:

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

from typing import Any

from hri.base.errors import HriError
from hri.base.geometry import Pose
from hri.net import Client, Request, Service, Subscription
from hri.net.goals import GoalBoard, GoalClient, GoalHandle
from hri.base.numbers import is_number

from .protocol import ActorFailure, ProtocolError
from .queues import QueueFullError
from .server import ActorServer, Goal, GoalStatus

SERVICE = "actor"
IDENTIFIERS = ("actor-server", SERVICE, "person")
STREAM = "goal"
KEY = "goal"  # a request's goal number, and the stream's
QUERY = {"all_of": [SERVICE], "op": "animate"}


def service_name(person: str | None = None) -> str:
    """The actor service of ``person`` in a run with several people (None: the one person's);
    a service is its own channel, so each person's traffic is too (``net.actor`` sets them all)."""
    return SERVICE if person is None else f"{SERVICE}-{person}"


def query(person: str | None = None) -> dict:
    """How a person's tree finds their actor through the broker (None: the one person's)."""
    return QUERY if person is None else {"all_of": [SERVICE, f"person-{person}"], "op": "animate"}
_EARLY_CANCELS = 64  # cancels of goals not seen yet, remembered


def _number(payload: dict, key: str) -> float:
    value = payload.get(key)
    if not is_number(value):
        raise HriError(f"actor: {key!r} must be a number, got {value!r}")
    return float(value)


class ActorService:
    """The simulation's side: requests to :class:`ActorServer` goals, goal state to the stream."""

    def __init__(self, server: ActorServer, person: str | None = None) -> None:
        self.server = server
        identifiers = IDENTIFIERS if person is None else (f"person-{person}", *IDENTIFIERS)
        self.service = Service(service_name(person), identifiers, {"animate": self._animate, "move": self._move,
                                                                   "cancel": self._cancel}, streams=[STREAM])
        self.goals = GoalBoard(self.service, STREAM, KEY, early_cancels=_EARLY_CANCELS)

    def _start(self, request: Request, send) -> dict[str, Any]:
        goal = self.goals.goal_of(request)
        if self.goals.cancelled_early(goal):
            return {"status": GoalStatus.REJECTED.value, "in_the_way": None}
        in_the_way = self.server.current_goal.status.value if self.server.busy else None
        try:
            sent: Goal = send(request.payload)
        except (QueueFullError, ProtocolError) as error:
            raise HriError(f"actor: {error}") from None  # the tree's request fails; nothing hangs
        if sent.status is not GoalStatus.REJECTED:
            self.goals.current = goal
        return {"status": sent.status.value, "in_the_way": in_the_way}

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
        if not self.goals.cancel_names_current(request):
            return False
        return self.server.cancel(self.server.current_goal)

    def publish(self) -> None:
        """Send the current goal's state if it changed (before the trees tick)."""
        goal = self.server.current_goal
        if goal is None or self.goals.current is None:
            return
        self.goals.publish(goal.status.value, goal.failure.reason if goal.status is GoalStatus.FAILED else None)


class ActorClient:
    """The tree's side of the actor server."""

    def __init__(self, client: Client, goals: Subscription) -> None:
        self._goals = GoalClient(client, goals, KEY)

    def animate(self, name: str, speed: float) -> GoalHandle:
        """Play the clip ``name`` at ``speed`` times its authored speed."""
        return self._goals.send("animate", {"name": name, "speed": float(speed)})

    def move(self, name: str, distance: float, target: Pose) -> GoalHandle:
        """Walk to ``target`` with the clip ``name``, ``distance`` m per cycle."""
        return self._goals.send("move", {"name": name, "distance": float(distance),
                                         "target": [*target.position, *target.orientation]})

    def cancel(self, handle: GoalHandle) -> None:
        self._goals.cancel("cancel", handle)

    def status(self, handle: GoalHandle) -> GoalStatus:
        """Where the goal stands as far as this tree knows; FAILED when the request failed."""
        if handle.request.pending:
            return GoalStatus.PENDING
        if handle.request.failed:
            return GoalStatus.FAILED
        if handle.request.value["status"] == GoalStatus.REJECTED.value:
            return GoalStatus.REJECTED
        status = self._goals.status(handle)
        return GoalStatus.PENDING if status is None else GoalStatus(status)  # None: accepted, not shown yet

    @staticmethod
    def rejected_while_canceling(handle: GoalHandle) -> bool:
        """Rejected only because the previous goal was still being cancelled: try again."""
        return (handle.request.done and handle.request.value["status"] == GoalStatus.REJECTED.value
                and handle.request.value["in_the_way"] == GoalStatus.CANCELING.value)

    def why(self, handle: GoalHandle, status: GoalStatus, name: str) -> dict[str, str]:
        """Why the goal for the clip ``name`` ended with ``status``: ``{"reason", "error"}``
        (a short name to count, and a sentence), or nothing when it succeeded."""
        failure = GoalClient.call_failure(handle)
        if failure is not None:
            return failure
        if status is GoalStatus.REJECTED:
            in_the_way = handle.request.value["in_the_way"]
            return {"reason": "rejected", "error": "refused by the actor server: "
                    + (f"another goal is {in_the_way}" if in_the_way else "cancelled before it arrived")}
        if status is GoalStatus.CANCELED:
            return {"reason": "cancelled", "error": "the actor server cancelled the goal"}
        if status is GoalStatus.FAILED:
            reason = self._goals.reason(handle, ActorFailure.NONE.reason)
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
    ActorFailure.BLOCKED.reason: "another person stood in the way too long: the walk was given up",
}
