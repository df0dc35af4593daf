"""The parts as a service on the network: finding, grasping and putting down parts.

The simulation offers :class:`~hri.workcell.parts.PartManager` as the service ``parts``
(identifiers ``part-manager``, ``parts``). An area travels as its corner points:

=============  =========================  ==========================================
op             request                    reply
=============  =========================  ==========================================
find           ``{"area": [[x, y], ...]}``  the top centre of the nearest free part in it
                                          (``[x, y, z, qx, qy, qz, qw]``) or ``null``
robot_grasp    ``null``                   true if a part at the tool is now held
robot_release  ``null``                   the surface it was put on, or ``null``
person_grab    ``{"area": ... | null}``    true if a part within reach is now in the hand
person_release ``null``                   the surface it was put on, or ``null``
=============  =========================  ==========================================

In a run with several people a person's requests name them: ``person_grab`` with
``{"area": ..., "person": NAME}``, ``person_release`` with ``{"person": NAME}``; each person
takes parts into their own hand and puts down what their own hand holds.

:class:`PartsClient` is the trees' side: every operation returns a future; the nodes that
use it (``FindPart``, ``SetGripper``, ``GrabPart``, ``ReleasePart``) stay RUNNING until
the answer arrives.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hri.base.errors import HriError
from hri.base.geometry import Area, Pose
from hri.net import Client, Future, Request, Service

if TYPE_CHECKING:
    from hri.workcell.parts import PartManager

SERVICE = "parts"
IDENTIFIERS = ("part-manager", SERVICE)
QUERY = {"all_of": [SERVICE], "op": "find"}


def _area(payload: Any, required: bool) -> Area | None:
    points = payload.get("area") if isinstance(payload, dict) else None
    if points is None and not required:
        return None
    try:
        return Area(points)
    except (TypeError, ValueError) as err:
        raise HriError(f"parts: 'area' must be a polygon's corner points ({err}), got {points!r}") from None


def _person(payload: Any) -> str | None:
    """The person a request names (None: the run's one person)."""
    person = payload.get("person") if isinstance(payload, dict) else None
    if person is not None and not isinstance(person, str):
        raise HriError(f"parts: 'person' must be a person's name, got {person!r}")
    return person


def parts_service(parts: "PartManager") -> Service:
    """``parts`` as the ``parts`` service (see the module docstring; it has no streams)."""

    def find(request: Request) -> list[float] | None:
        pose = parts.find(_area(request.payload, True))
        return None if pose is None else [*pose.position, *pose.orientation]

    handlers = {
        "find": find,
        "robot_grasp": lambda request: parts.robot_grasp(),
        "robot_release": lambda request: parts.robot_release(),
        "person_grab": lambda request: parts.person_grab(_area(request.payload, False), _person(request.payload)),
        "person_release": lambda request: parts.person_release(_person(request.payload)),
    }
    return Service(SERVICE, IDENTIFIERS, handlers)


def _pose(value: Any) -> Pose | None:
    return None if value is None else Pose(*(float(v) for v in value))


class PartsClient:
    """The trees' side of the parts: each operation returns a future of its answer. ``person``:
    whose hand a person's tree acts with, in a run with several people (None: the one person)."""

    def __init__(self, client: Client, person: str | None = None) -> None:
        self._client = client
        self._who = {} if person is None else {"person": person}

    @staticmethod
    def _wire(area: Area | None) -> dict[str, Any]:
        return {"area": None if area is None else [list(point) for point in area.points]}

    def find(self, area: Area) -> Future:
        """Future of the top centre (:class:`Pose`) of the nearest free part in ``area``, or None."""
        future = self._client.call("find", self._wire(area))
        future.transform = _pose
        return future

    def robot_grasp(self) -> Future:
        return self._client.call("robot_grasp")

    def robot_release(self) -> Future:
        return self._client.call("robot_release")

    def person_grab(self, area: Area | None) -> Future:
        return self._client.call("person_grab", {**self._wire(area), **self._who})

    def person_release(self) -> Future:
        return self._client.call("person_release", self._who or None)
