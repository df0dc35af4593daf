"""Online jerk-limited joint motion with ruckig: waypoint following, velocity scaling, braking.

:class:`JointMotion` keeps the commanded joint state (position, velocity, acceleration)
and advances it by one control cycle per :meth:`JointMotion.update`. Along a path it
drives to each waypoint in turn, coming to rest at every one, with phase
synchronisation so each segment stays a straight line in joint space. The velocity
limit is ``fraction * max_velocity`` and may change at any cycle: ruckig recomputes
from the current state, braking within the acceleration and jerk limits when the
current velocity is above the new limit. :meth:`JointMotion.brake` switches to the
velocity interface with a zero target: a controlled stop, the path kept for later.
"""

from __future__ import annotations

import enum

import numpy as np
from ruckig import (ControlInterface, InputParameter, OutputParameter, Result, Ruckig, RuckigError,
                    Synchronization)

#: below this velocity fraction the motion is held (braked) instead of crawling
MIN_FRACTION = 1e-3
_UNSET = object()  # no target set in ruckig's input yet


class MotionStatus(enum.Enum):
    """Where the arm's current command stands (see :class:`hri.robot.arm.RobotArm`)."""

    IDLE = "idle"
    MOVING = "moving"
    STOPPING = "stopping"
    STOPPED = "stopped"
    SUCCEEDED = "succeeded"
    FAILED = "failed"


class Progress(enum.Enum):
    """What one :meth:`JointMotion.update` achieved."""

    MOVING = "moving"        # on the way (or braking because the fraction is ~0)
    ARRIVED = "arrived"      # the last waypoint is reached, commanded state at rest
    STOPPED = "stopped"      # braking finished, commanded state at rest
    ERROR = "error"          # ruckig rejected the input


class JointMotion:
    """The commanded joint trajectory, one ruckig cycle of ``dt`` seconds at a time."""

    def __init__(self, q0: np.ndarray, max_velocity: np.ndarray, max_acceleration: np.ndarray,
                 max_jerk: np.ndarray, dt: float, velocity: np.ndarray | None = None,
                 acceleration: np.ndarray | None = None) -> None:
        """At ``q0`` with ``velocity`` and ``acceleration`` (rest when None)."""
        self.dof = int(np.asarray(q0).size)
        self.dt = float(dt)
        self.max_velocity = np.asarray(max_velocity, dtype=float)
        self._otg = Ruckig(self.dof, self.dt)
        self._inp = InputParameter(self.dof)
        self._out = OutputParameter(self.dof)
        self._inp.current_position = [float(v) for v in q0]
        self._inp.current_velocity = ([0.0] * self.dof if velocity is None
                                      else [float(v) for v in velocity])
        self._inp.current_acceleration = ([0.0] * self.dof if acceleration is None
                                          else [float(a) for a in acceleration])
        self._inp.max_acceleration = [float(v) for v in max_acceleration]
        self._inp.max_jerk = [float(v) for v in max_jerk]
        self._inp.max_velocity = [float(v) for v in self.max_velocity]
        self._inp.synchronization = Synchronization.Phase
        self._waypoints: list[np.ndarray] = []
        self._index = 0
        self._braking = False
        self._zeros = [0.0] * self.dof
        self._scale: float | None = None  # the velocity scale and target ruckig's input holds
        self._target: object = _UNSET
        # (start, end, scale) while the command runs the one calculation of a straight segment
        # from rest at ``start`` to rest at ``end`` under velocity scale ``scale``; None otherwise
        self.line: tuple[np.ndarray, np.ndarray, float] | None = None

    # -- the commanded state ----------------------------------------------------------

    @property
    def position(self) -> np.ndarray:
        return np.array(self._inp.current_position)

    @property
    def velocity(self) -> np.ndarray:
        return np.array(self._inp.current_velocity)

    @property
    def position_list(self) -> list[float]:
        """:attr:`position` as a new list (for the motor command: no array made per step)."""
        return self._inp.current_position

    @property
    def velocity_list(self) -> list[float]:
        return self._inp.current_velocity

    @property
    def acceleration(self) -> np.ndarray:
        return np.array(self._inp.current_acceleration)

    @property
    def at_rest(self) -> bool:
        return (max(abs(v) for v in self._inp.current_velocity) < 1e-9
                and max(abs(a) for a in self._inp.current_acceleration) < 1e-9)

    @property
    def waypoints_left(self) -> int:
        return max(0, len(self._waypoints) - self._index)

    # -- commands ---------------------------------------------------------------------

    def follow(self, waypoints: list[np.ndarray]) -> None:
        """Drive through ``waypoints`` (the first one after the current position)."""
        self._waypoints = [np.asarray(w, dtype=float) for w in waypoints]
        self._index = 0
        self._braking = False
        self._target = _UNSET  # new waypoints: set ruckig's target again

    def brake(self) -> None:
        """Stop as fast as the acceleration and jerk limits allow; forget the path."""
        self._waypoints = []
        self._index = 0
        self._braking = True
        self._target = _UNSET

    # -- one control cycle ------------------------------------------------------------

    def update(self, fraction: float) -> Progress:
        """Advance the commanded state by one cycle with max velocity ``fraction * vmax``."""
        inp = self._inp
        holding = fraction < MIN_FRACTION
        scale = max(float(fraction), MIN_FRACTION)
        if scale != self._scale:  # setting ruckig's input lists costs: only what changed
            self._scale = scale
            inp.max_velocity = (self.max_velocity * scale).tolist()
            self.line = None  # ruckig plans anew from where the command is
        target = None if self._braking or holding or self._index >= len(self._waypoints) else self._index
        if self._target is _UNSET or target != self._target:
            self._target = target
            self.line = None if target is None or not self.at_rest else (
                self.position, self._waypoints[target], scale)
            if target is None:
                inp.control_interface = ControlInterface.Velocity
            else:
                inp.control_interface = ControlInterface.Position
                inp.target_position = self._waypoints[target].tolist()
            inp.target_velocity = self._zeros
            inp.target_acceleration = self._zeros
        result = self._calculate()
        if result is None:  # (Result.Working is 0: compare with None)
            result = self._calculate_unsynchronised()
        if result is None:
            return Progress.ERROR
        self._out.pass_to_input(inp)
        if result != Result.Finished:
            return Progress.MOVING
        if self._braking:
            self._rest()
            return Progress.STOPPED
        if holding:
            self._rest()
            return Progress.MOVING
        if self._index < len(self._waypoints):
            # snap exactly onto the waypoint (ruckig ends there up to rounding)
            inp.current_position = [float(v) for v in self._waypoints[self._index]]
            self._rest()
            self._index += 1
        if self._index >= len(self._waypoints):
            return Progress.ARRIVED
        return Progress.MOVING

    def _calculate(self) -> Result | None:
        """ruckig's update of this cycle; None when it failed (it raises some errors of a
        calculation it could not finish and returns others)."""
        try:
            result = self._otg.update(self._inp, self._out)
        except RuckigError:
            return None
        return result if result in (Result.Working, Result.Finished) else None

    def _calculate_unsynchronised(self) -> Result | None:
        """:meth:`_calculate` with every joint on its own time-optimal profile: ruckig's phase
        synchronisation can fail numerically (met when the speed limit changes in the middle
        of a motion, speed and separation monitoring's cap). Braking and holding need no
        synchronisation (each joint then brakes as hard as it may: no farther than
        synchronised); a move reaches its waypoint off the straight joint path instead of
        failing. The failed update may have gone on along the last trajectory (ruckig's clock
        advanced by a cycle): the retry is a new calculation from the cycle's start state, so the
        cycle advances once."""
        self._otg.reset()
        self.line = None  # off the straight joint path
        self._inp.synchronization = Synchronization.No
        try:
            return self._calculate()
        finally:
            self._inp.synchronization = Synchronization.Phase

    def _rest(self) -> None:
        self._inp.current_velocity = [0.0] * self.dof
        self._inp.current_acceleration = [0.0] * self.dof
