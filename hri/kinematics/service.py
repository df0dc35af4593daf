"""The kinematics core as a service on the network (:mod:`hri.net`), with seed ``000``'s operations.

``kinematics_service(chain, ...)`` wraps a :class:`~hri.kinematics.chain.Chain` (and, when
given, the device's joint state) in a :class:`hri.net.Service`:

=======================  ============================================  =====================================
op                       request payload                               reply
=======================  ============================================  =====================================
GET_FORWARD_KINEMATIC    ``{"q": [...]}`` (omit ``q``: current joints)  ``{"position": [x,y,z], "orientation": [qx,qy,qz,qw]}``
GET_INVERSE_KINEMATIC    ``{"position", "orientation", "q_current"?}``  ``{"q", "valid", "position_error_m", ...}`` (closest to ``q_current``, else to the current joints)
INTERPOLATE              ``{"points": [[pos, quat], ...], "v_max",``    ``{"times", "q", "valid"}``: a Cartesian path with
                         ``"a_max", "rate_hz"?, "q_start"?}``           a trapezoidal profile, sampled, solved along
GET_AXIS_ANGLES          ``None``                                       the current joints
SET_AXIS_ANGLES          ``{"q": [...]}``                               ``True`` (only with ``set_joints``)
=======================  ============================================  =====================================

``rate_hz`` (set-points a second) may be left out where the service knows its device's update
rate (``update_rate_hz``), and may not exceed it. :func:`dh_kinematics_service` offers the
service a DH file declares (:mod:`hri.kinematics.dh`): the shipped UR-5's is found by
``["inverse-kinematic", "UR-5", "service"]`` and samples at its 8 set-points a second.

The joint state is also a keep-last stream, ``axis_angles``, which the owner publishes (seed
``000`` pushes it every 50 ms on change). A bad request is refused with an
:class:`~hri.base.errors.HriError` the caller receives as the failed future's error.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from hri.base.errors import HriError
from hri.kinematics.chain import Chain
from hri.kinematics.dh import DhRobot
from hri.kinematics.ik import solve, solve_path
from hri.kinematics.interpolate import cartesian_waypoints
from hri.kinematics.transforms import PoseLike
from hri.net import Request, Service
from hri.base.numbers import is_number

AXIS_STREAM = "axis_angles"
Joints = Callable[[], Sequence[float]]


def _plain(value: Any) -> Any:
    """NumPy values as plain Python ones for the wire."""
    if isinstance(value, np.ndarray):
        return [float(v) for v in value]
    return value.item() if isinstance(value, np.generic) else value


def _vector(payload: Any, key: str, size: int) -> list[float]:
    value = payload.get(key) if isinstance(payload, dict) else None
    try:
        vector = [float(v) for v in value]
    except (TypeError, ValueError):
        raise HriError(f"{key}: expected a list of {size} numbers, got {value!r}") from None
    if len(vector) != size:
        raise HriError(f"{key}: expected {size} numbers, got {len(vector)}")
    return vector


def _pose(payload: Any) -> tuple[list[float], list[float]]:
    return _vector(payload, "position", 3), _vector(payload, "orientation", 4)


def _number(payload: dict, key: str) -> float:
    value = payload.get(key)
    if not is_number(value, finite=False) or not value > 0:
        raise HriError(f"{key}: expected a positive number, got {value!r}")
    return float(value)


class _Handlers:
    def __init__(self, chain: Chain, joints: Joints | None, set_joints: Callable[[list[float]], None] | None,
                 update_rate_hz: float | None = None, device: str = ""):
        self.chain = chain
        self.joints = joints
        self.set_joints = set_joints
        self.update_rate_hz = update_rate_hz
        self.device = device

    def rate(self, payload: dict) -> float:
        """INTERPOLATE's sample rate: the request's, at most the device's update rate (its default)."""
        if self.update_rate_hz is None or payload.get("rate_hz") is not None:
            rate = _number(payload, "rate_hz")
            if self.update_rate_hz is not None and rate > self.update_rate_hz:
                raise HriError(f"rate_hz: at most {self.update_rate_hz:g} set-points a second for {self.device}, "
                               f"got {rate:g}")
            return rate
        return self.update_rate_hz

    def current(self, payload: Any, key: str) -> list[float]:
        if isinstance(payload, dict) and payload.get(key) is not None:
            return _vector(payload, key, self.chain.nq)
        if self.joints is None:
            raise HriError(f"{key}: required (this service has no joint state)")
        return [float(v) for v in self.joints()]

    def forward(self, request: Request) -> dict[str, list[float]]:
        position, orientation = self.chain.tip_pose(self.current(request.payload, "q"))
        return {"position": list(position), "orientation": list(orientation)}

    def inverse(self, request: Request) -> dict[str, Any]:
        target = _pose(request.payload)
        result = solve(self.chain, target, self.current(request.payload, "q_current"))
        return {k: _plain(v) for k, v in result.as_dict().items()}

    def interpolate(self, request: Request) -> dict[str, Any]:
        payload = request.payload if isinstance(request.payload, dict) else {}
        points = payload.get("points")
        if not isinstance(points, (list, tuple)) or len(points) < 2:
            raise HriError("points: expected a list of at least two [position, orientation] poses")
        poses = [_pose({"position": p[0], "orientation": p[1]}) if isinstance(p, (list, tuple)) and len(p) == 2
                 else _pose(None) for p in points]
        path = cartesian_waypoints(poses, _number(payload, "v_max"), _number(payload, "a_max"), self.rate(payload))
        results = solve_path(self.chain, path.poses, self.current(payload, "q_start"))
        return {"times": list(path.times), "q": [list(map(float, r.q)) for r in results],
                "valid": all(r.valid for r in results)}

    def get_axis_angles(self, request: Request) -> list[float]:
        return self.current(None, "q")

    def set_axis_angles(self, request: Request) -> bool:
        if self.set_joints is None:
            raise HriError("SET_AXIS_ANGLES: this device's joints cannot be set through the network")
        self.set_joints(_vector(request.payload, "q", self.chain.nq))
        return True


def kinematics_service(chain: Chain, name: str, identifiers: Sequence[str], joints: Joints | None = None,
                       set_joints: Callable[[list[float]], None] | None = None,
                       update_rate_hz: float | None = None) -> Service:
    """A service answering seed ``000``'s kinematics requests for ``chain`` (see the module docstring).

    ``update_rate_hz``: the set-points a second the device takes; INTERPOLATE then samples at
    that rate when the request names none, and refuses a higher one.
    """
    h = _Handlers(chain, joints, set_joints, update_rate_hz, chain.name or name)
    handlers = {"GET_FORWARD_KINEMATIC": h.forward, "GET_INVERSE_KINEMATIC": h.inverse,
                "INTERPOLATE": h.interpolate, "GET_AXIS_ANGLES": h.get_axis_angles,
                "SET_AXIS_ANGLES": h.set_axis_angles}
    return Service(name, list(identifiers), handlers, streams=[AXIS_STREAM])


def dh_kinematics_service(robot: DhRobot, joints: Joints | None = None,
                          set_joints: Callable[[list[float]], None] | None = None,
                          base_pose: PoseLike | None = None) -> Service:
    """The kinematics service a DH file declares (``service:``: its name, identifiers and
    update rate) for the arm it describes, e.g. the shipped UR-5's ``ur5-kinematics``,
    found as ``["inverse-kinematic", "UR-5", "service"]`` at 8 set-points a second."""
    if robot.service is None:
        raise HriError(f"{robot.name}: its DH file declares no service", str(robot.path))
    spec = robot.service
    return kinematics_service(robot.chain(base_pose), spec.name, spec.identifiers, joints, set_joints,
                              spec.update_rate_hz)
