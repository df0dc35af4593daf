"""The "called" flag: whether the robot is calling the person, the state both trees share.

The flag lives in the simulation (:class:`CalledFlag`, which counts calls and response times
and logs ``person_called``/``person_released``), and the trees reach it through the service
network (service ``called``, identifiers ``called-flag``, ``called``):

======  =================  ==================================================
op      request            reply
======  =================  ==================================================
set     ``true``/``false``  the flag after the request
======  =================  ==================================================

and the keep-last stream ``state`` (the flag), published before the trees tick when it
changed. :class:`CalledClient` is the trees' side: ``IsCalled``/``AmICalled`` read
:meth:`CalledClient.get`, ``SetCalledTo`` calls :meth:`CalledClient.set`.
"""

from __future__ import annotations

from typing import Callable

from hri.base.errors import HriError
from hri.net import Client, Future, Request, Service, Subscription

SERVICE = "called"
IDENTIFIERS = ("called-flag", SERVICE)
STREAM = "state"
QUERY = {"all_of": [SERVICE], "stream": STREAM}


class CalledFlag:
    """The flag itself, in the simulation: its calls and how long the person took to answer."""

    def __init__(self, emit: Callable[..., None], now: Callable[[], float]) -> None:
        self._called = False
        self._since: float | None = None
        self._emit = emit  # EventLog.emit: (t, event, **fields)
        self._now = now
        self.calls = 0
        self.response_times: list[float] = []

    def get(self) -> bool:
        return self._called

    def set(self, value: bool) -> None:
        value = bool(value)
        if value == self._called:
            return
        t = self._now()
        self._called = value
        if value:
            self.calls += 1
            self._since = t
            self._emit(t, "person_called")
        else:
            self.response_times.append(t - (self._since if self._since is not None else t))
            self._emit(t, "person_released", response_s=round(self.response_times[-1], 6))


class CalledService:
    """The flag as the ``called`` service; :meth:`publish` sends its ``state`` when it changed."""

    def __init__(self, flag: CalledFlag) -> None:
        self.flag = flag
        self._published: bool | None = None
        self.service = Service(SERVICE, IDENTIFIERS, {"set": self._set}, streams=[STREAM])

    def _set(self, request: Request) -> bool:
        if not isinstance(request.payload, bool):
            raise HriError(f"called.set: expected true or false, got {request.payload!r}")
        self.flag.set(request.payload)
        return self.flag.get()

    def publish(self) -> None:
        if self.flag.get() != self._published:
            self._published = self.flag.get()
            self.service.publish(STREAM, self._published)


class CalledClient:
    """The trees' side of the flag."""

    def __init__(self, client: Client, subscription: Subscription) -> None:
        self._client = client
        self._state = subscription
        self._request: Future | None = None
        self._requested = False

    def get(self) -> bool:
        """The flag as this tree last learnt it; its own request while that is on the way."""
        if self._request is not None and self._request.pending:
            return self._requested
        return bool(self._state.latest())

    def set(self, value: bool) -> None:
        """Ask for the flag to be ``value``. Every call is sent: the other tree may have changed
        the flag since (the robot calls again after the person ended the last call)."""
        self._requested = bool(value)
        self._request = self._client.call("set", self._requested, supersede=True)
