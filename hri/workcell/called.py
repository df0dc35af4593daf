"""The "called" flags: whether the robot is calling a person, the state the trees share.

Each person has a flag of their own. The flags live in the simulation (:class:`CalledFlags`,
one :class:`CalledFlag` per person, which counts calls and response times and logs
``person_called``/``person_released``, with ``person`` in a run with several people), and the
trees reach them through the service network (service ``called``, identifiers
``called-flag``, ``called``):

======  ==============================================  ==================================
op      request                                         reply
======  ==============================================  ==================================
set     ``true``/``false``: the first person's flag;    the flag after the request
        ``{"person": NAME, "state": true/false}``
======  ==============================================  ==================================

and the keep-last stream ``state``, published before the trees tick when it changed: the
flag (``true``/``false``) in a run with one person, the names of the people called (in the
scenario's order) in a run with several. :class:`CalledClient` is the trees' side:
``IsCalled``/``AmICalled`` read :meth:`CalledClient.get`, ``SetCalledTo`` calls
:meth:`CalledClient.set`, for the person their ``person`` port names, by default the tree's
own person (a person's tree) or the first person (the robot's tree).
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from hri.base.errors import HriError
from hri.net import Client, Future, Request, Service, Subscription

SERVICE = "called"
IDENTIFIERS = ("called-flag", SERVICE)
STREAM = "state"
QUERY = {"all_of": [SERVICE], "stream": STREAM}


def unknown_person(name: Any, people: Sequence[str]) -> str:
    """The message of a name that is none of ``people``'s."""
    return f"no person {name!r} in the scenario (people: {', '.join(people)})"


class CalledFlag:
    """One person's flag: their calls and how long they took to answer. ``who``: the fields
    that name the person in the flag's events (with several people ``{"person": NAME}``);
    ``answered``: told every response time, for the run's figures over everyone."""

    def __init__(self, emit: Callable[..., None], now: Callable[[], float], who: dict[str, str] | None = None,
                 answered: Callable[[float], None] | None = None) -> None:
        self._called = False
        self._since: float | None = None
        self._emit = emit  # EventLog.emit: (t, event, **fields)
        self._now = now
        self._who = who or {}
        self._answered = answered
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
            self._emit(t, "person_called", **self._who)
        else:
            self.response_times.append(t - (self._since if self._since is not None else t))
            if self._answered is not None:
                self._answered(self.response_times[-1])
            self._emit(t, "person_released", response_s=round(self.response_times[-1], 6), **self._who)


class CalledFlags:
    """Every person's flag (``people``: their names, in the scenario's order); the run's figures
    over everyone: :attr:`calls`, :attr:`response_times` in the order they ended."""

    def __init__(self, people: Sequence[str], emit: Callable[..., None], now: Callable[[], float]) -> None:
        self.people = tuple(people)
        self.several = len(self.people) > 1
        self.response_times: list[float] = []
        self.flags = {name: CalledFlag(emit, now, {"person": name} if self.several else None,
                                       self.response_times.append) for name in self.people}

    def flag(self, person: str | None = None) -> CalledFlag:
        """``person``'s flag (None: the first person's); HriError for a name of nobody."""
        if person is None:
            return self.flags[self.people[0]]
        if person not in self.flags:
            raise HriError(unknown_person(person, self.people))
        return self.flags[person]

    @property
    def calls(self) -> int:
        return sum(flag.calls for flag in self.flags.values())

    def state(self) -> bool | list[str]:
        """The ``state`` stream's sample: the flag (one person), or the names called."""
        if not self.several:
            return self.flag().get()
        return [name for name, flag in self.flags.items() if flag.get()]


class CalledService:
    """The flags as the ``called`` service; :meth:`publish` sends its ``state`` when it changed."""

    def __init__(self, flags: CalledFlags) -> None:
        self.flags = flags
        self._published: bool | list[str] | None = None
        self.service = Service(SERVICE, IDENTIFIERS, {"set": self._set}, streams=[STREAM])

    def _set(self, request: Request) -> bool:
        payload = request.payload
        person, state = (payload.get("person"), payload.get("state")) if isinstance(payload, dict) else (None, payload)
        if not isinstance(state, bool) or not (person is None or isinstance(person, str)):
            raise HriError(f"called.set: expected true, false or {{person: NAME, state: true/false}}, got {payload!r}")
        flag = self.flags.flag(person)
        flag.set(state)
        return flag.get()

    def publish(self) -> None:
        state = self.flags.state()
        if state != self._published:
            self._published = state
            self.service.publish(STREAM, state)


class CalledClient:
    """The trees' side of the flags: ``people`` the scenario's names, ``default`` the person a
    node without a ``person`` port addresses (None: the first)."""

    def __init__(self, client: Client, subscription: Subscription, people: Sequence[str] = (),
                 default: str | None = None) -> None:
        self._client = client
        self._state = subscription
        self.people = tuple(people)
        self._several = len(self.people) > 1
        self.default = default if default is not None else (self.people[0] if self.people else None)
        self._requests: dict[str | None, tuple[Future, bool]] = {}  # each person's last request

    def problem(self, person: str) -> str | None:
        """Why ``person`` cannot be addressed (a name of nobody), else None."""
        return None if not self.people or person in self.people else unknown_person(person, self.people)

    def _whom(self, person: str | None) -> str | None:
        return self.default if person is None else person

    def get(self, person: str | None = None) -> bool:
        """``person``'s flag (None: the default person's) as this tree last learnt it; its own
        request while that is on the way."""
        whom = self._whom(person)
        request = self._requests.get(whom)
        if request is not None and request[0].pending:
            return request[1]
        state = self._state.latest()
        return whom in state if self._several and isinstance(state, list) else bool(state)

    def set(self, value: bool, person: str | None = None) -> None:
        """Ask for ``person``'s flag (None: the default person's) to be ``value``. Every call is
        sent: the other tree may have changed the flag since (the robot calls again after the
        person ended the last call)."""
        whom, value = self._whom(person), bool(value)
        payload: Any = {"person": whom, "state": value} if self._several else value
        supersede = f"person:{whom}" if self._several else True  # one person's answer leaves another's call be
        self._requests[whom] = (self._client.call("set", payload, supersede=supersede), value)
