"""Goals: requests whose work outlasts their answer, numbered by the client and followed on a stream.

Moving the arm or playing an animation takes seconds; the request that starts it is answered
at once. Every service with such goals speaks the same protocol, with its own key (``goal``
for the actor, ``move`` for the robot):

- The client numbers its goals 1, 2, 3, ... and sends the number under the key with each goal
  request (``{"goal": 3, ...}``). A goal is named by its client's endpoint and its number.
- The service answers the request (accepted or not, and how far it got) and publishes the
  current goal on a keep-last stream: ``{KEY: number, "client": endpoint, "status": ...}``,
  plus ``"reason"`` (a short name) when it failed; a sample goes out only when it changed.
- The client matches its handle against the stream: a sample is about its goal when both the
  number and the client endpoint are its own; until the stream shows it, its state is unknown.
- The client cancels (or halts) a goal with a request ``{KEY: number}``; the service acts only
  when it names its current goal. A service may remember cancels naming another goal, since
  one may have overtaken its goal on the way (jitter), and refuse that goal when it arrives.

:class:`GoalBoard` is the service's side, :class:`GoalClient` and its :class:`GoalHandle` the
client's. What a goal does, its statuses and its reasons belong to the service using them.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any

from hri.base.errors import HriError

from .errors import failure_reason
from .future import Future
from .rpc import Client, Request, Service
from .stream import Subscription

GoalName = tuple[int, int]  # (client endpoint, goal number)


class GoalBoard:
    """The service's side: the current goal, cancels that came before their goal, the stream."""

    def __init__(self, service: Service, stream: str, key: str, early_cancels: int = 0) -> None:
        self.service = service
        self.stream = stream
        self.key = key
        self.current: GoalName | None = None
        self._early_cancels: deque[GoalName] = deque(maxlen=early_cancels)
        self._published: dict[str, Any] | None = None

    def goal_of(self, request: Request) -> GoalName:
        """The goal a request names; HriError when its number is not an integer."""
        payload = request.payload
        number = payload.get(self.key) if isinstance(payload, dict) else None
        if isinstance(number, bool) or not isinstance(number, int):
            raise HriError(f"{self.service.name}: {self.key!r} must be an integer, got {number!r}")
        return (request.sender, number)

    def cancelled_early(self, goal: GoalName) -> bool:
        """Whether a cancel of ``goal`` arrived before it (that cancel is then used up)."""
        if goal not in self._early_cancels:
            return False
        self._early_cancels.remove(goal)
        return True

    def cancel_names_current(self, request: Request) -> bool:
        """Whether the cancel ``request`` names the current goal; one naming another goal is
        remembered (as many as ``early_cancels``) for :meth:`cancelled_early`."""
        goal = self.goal_of(request)
        if goal == self.current:
            return True
        self._early_cancels.append(goal)
        return False

    def publish(self, status: str, reason: str | None = None) -> None:
        """Send the current goal's state (``reason``: why it failed) if it changed."""
        client, number = self.current if self.current is not None else (None, None)
        state: dict[str, Any] = {self.key: number, "client": client, "status": status}
        if reason is not None:
            state["reason"] = reason
        if state != self._published:
            self._published = state
            self.service.publish(self.stream, state)


@dataclass
class GoalHandle:
    """One goal as its client knows it: its number and the answer to its request."""

    number: int
    request: Future


class GoalClient:
    """The client's side: numbers and sends goals, finds them on the stream, cancels them."""

    def __init__(self, client: Client, stream: Subscription, key: str) -> None:
        self.client = client
        self.stream = stream
        self.key = key
        self._next = 0

    def send(self, op: str, payload: dict[str, Any]) -> GoalHandle:
        """Request the next goal with ``op``; its number goes first in the payload."""
        self._next += 1
        return GoalHandle(self._next, self.client.call(op, {self.key: self._next, **payload}))

    def cancel(self, op: str, handle: GoalHandle) -> None:
        """Ask the service to stop ``handle``'s goal with ``op``."""
        self.client.call(op, {self.key: handle.number})

    def _state(self, handle: GoalHandle) -> dict[str, Any] | None:
        state = self.stream.latest()
        if state is None or state[self.key] != handle.number or state["client"] != self.client.node.id:
            return None
        return state

    def status(self, handle: GoalHandle) -> str | None:
        """The goal's status on the stream; None while the stream shows another goal."""
        state = self._state(handle)
        return None if state is None else state["status"]

    def reason(self, handle: GoalHandle, default: str) -> str:
        """Why the goal failed, as the stream says (``default`` when it gives no reason)."""
        state = self._state(handle) or {}
        return str(state.get("reason", default))

    @staticmethod
    def call_failure(handle: GoalHandle) -> dict[str, str] | None:
        """Why the goal's request failed, ``{"reason", "error"}``; None if it did not."""
        if not handle.request.failed:
            return None
        error = handle.request.error
        return {"reason": failure_reason(error), "error": error.message}
