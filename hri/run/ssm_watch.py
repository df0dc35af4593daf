"""SSM's part of the safety monitor (``safety.mode: ssm``): the invariant it checks on every
physics step, and the separation queries it takes for the SSM controller.

The invariant (ISO/TS 15066:2016, 5.5.4): while the robot moves (the joint speeds' bound of
its fastest point above rest), outside a protective stop the separation is at least S_p at the
robot's measured speed, less ``SSM_TOLERANCE_M``; in a protective stop the robot is at rest
within T_s of the speed it had when the stop began. A step that breaks it is a violation of the
monitor's (:meth:`SafetyMonitor.violation <hri.run.monitor.SafetyMonitor.violation>`).

The controller's sensor: :class:`~hri.run.ssm_control.SsmController` caps the speed from the
monitor's :meth:`~hri.run.monitor.SafetyMonitor.separation_bound`, the last query less what
the gap can have closed since. While that bound is within reach of S_p at full speed, a fresh
query is taken after a step when the bound has fallen ``SSM_STALE_M`` below the last query, on
a step on which the body was posed anyway when the last query is ``SSM_REFRESH_S`` old, and
when the controller would otherwise stop on the bound alone. The monitor poses the person's
body for it when the step did not (the body has no collisions: when it is posed does not
change the physics). With a safety sensor (``safety.sensor``) the controller acts on its
reports instead (:mod:`hri.run.sensor`), and the terms here are the truth's
(:func:`hri.run.ssm_control.truth_settings`). v_h is taken at the separation judged (ISO 13855:
2.0 m/s below 0.5 m, :meth:`hri.run.ssm.SsmSettings.person_speed_at`).
"""

from __future__ import annotations

import math

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from hri.run.ssm_control import FullSpeedWindow, SsmTerms
    from hri.run.stats import RunStats

#: a separation this much below S_p is not a violation; PyBullet's closest-point distance is
#: exact to far less (its collision margin is 0 for our shapes), so this only absorbs rounding
SSM_TOLERANCE_M = 1e-4
#: a margin (separation - S_p) below this is measured, not bounded (ssm_margin_min_m exact)
SSM_EXACT_MARGIN_M = 0.02
#: while the controller caps the speed, the separation it uses is queried when its bound has
#: fallen this far below the last query (what the cap may lose to a stale bound: a tenth of
#: the speed at most, where S_p grows by 3 to 4 m from rest to full speed; the person needs a
#: posing for it, the costliest part of SSM)
SSM_STALE_M = 0.3
#: ... and on a step on which the body was posed anyway (no posing to pay), when the last
#: query is this old, so that a person walking away frees the robot soon
SSM_REFRESH_S = 0.05


class Monitor(Protocol):
    """What :class:`SsmWatch` uses of the safety monitor (:class:`hri.run.monitor.SafetyMonitor`)."""

    robot: Any  # hri.robot.arm.RobotArm
    limits: Any  # hri.run.monitor.SafetyLimits
    stats: RunStats
    dt: float
    closing_speed: float
    last_separation: float
    measured_t: float
    posed: bool

    def separation_bound(self, t: float) -> float: ...
    def joint_speeds(self) -> tuple[float, float]: ...
    def robot_speeds(self) -> tuple[float, float]: ...
    def measure_posed(self) -> None: ...
    def violation(self, t: float, zone: str, speed: float, fraction: float, why: str) -> None: ...


class SsmWatch:
    """The SSM invariant and the controller's queries, for one safety monitor."""

    def __init__(self, monitor: Monitor, terms: SsmTerms, invariant: bool = True):
        self.monitor = monitor
        self.terms = terms
        # False (the PFL modes): neither the invariant (PFL's contacts are the check) nor the
        # SSM controller's queries (hri.run.pfl_control takes its own)
        self.invariant = invariant
        self._stop: tuple[float, float] | None = None  # (since, T_s allowed) of a protective stop
        self.window: FullSpeedWindow | None = None  # the controller's, where it holds (the simulation sets it)

    def after_step(self, t: float, zone: str) -> None:
        """The controller's query, if one is due, then the invariant."""
        if not self.invariant:
            return
        m = self.monitor
        window = self.window
        if window is not None and window.holds(t - m.dt, m.robot) and window.margin_m(t - m.dt) >= self.margin_floor():
            self._stop = None  # full speed without looking, and no new smallest margin possible
            return
        separation, full = m.separation_bound(t), self.terms.full_m()
        if m.measured_t != t and self._controller_due(t, separation, full):
            m.measure_posed()
            separation = m.separation_bound(t)
        self._check(t, zone, separation, full)

    def _controller_due(self, t: float, bound: float, full: float) -> bool:
        """Whether the controller's next step needs a fresh query (the module's schedule);
        ``bound`` is the separation bound now, ``full`` S_p at full speed."""
        m = self.monitor
        ahead = bound - 2.0 * m.closing_speed * m.dt  # the bound after the controller's next step
        if ahead >= full:
            return False  # the cap is 1 whatever the separation does in a step
        if self._full_speed_holds(ahead):
            return False
        if m.last_separation - bound >= SSM_STALE_M or m.posed and t - m.measured_t >= SSM_REFRESH_S:
            return True
        # the controller stops when S_p at the present speed does not fit its next bound:
        # measure rather than stop on a bound that only grew stale
        current = max(m.robot.effective_fraction, m.joint_speeds()[0])
        bound = m.separation_bound(t + m.dt)
        return bound < self.terms.required_m(current, self.terms.person_m_s(bound), self.terms.latest_stop())

    def _full_speed_holds(self, ahead: float) -> bool:
        """Whether the controller ran this step at full speed and S_p at full speed by the stop
        it took from the arm's state, or where the table decided by the first stop from the
        state that fits (:meth:`SsmTerms.full_speed_stop`, which the controller's next step
        reuses: the arm has not moved in between), still fits ``ahead`` (the bound after its
        next step) with ``SSM_STALE_M`` to spare: a stale bound costs the cap nothing then, and
        the controller's next stop from the state, one step further on, is within that spare."""
        if self.monitor.robot.safety_cap != 1.0:
            return False
        room = ahead - SSM_STALE_M
        v_h = self.terms.person_m_s(room)
        latest = self.terms.latest_stop()
        if latest is not None:
            return room >= self.terms.required_m(1.0, v_h, latest)
        return self.terms.full_speed_stop(room, v_h) is not None

    def margin_floor(self) -> float:
        """The smallest SSM margin so far, not below 0 (infinite before the first): a step
        whose margin cannot fall below it need not be checked."""
        smallest = self.monitor.stats.ssm_margin_min_m
        return math.inf if smallest is None else max(smallest, 0.0)

    def _check(self, t: float, zone: str, separation: float, full: float) -> None:
        """The invariant of this step (the module's); ``separation`` is the monitor's bound now,
        ``full`` S_p at full speed. The separation is the monitor's bound
        unless that leaves the margin below ``SSM_EXACT_MARGIN_M`` and below the smallest so
        far: then it is queried (the person posed for it). So every violation is measured, and
        ``ssm_margin_min_m`` is exact whenever it is below ``SSM_EXACT_MARGIN_M`` (above, it
        lies between that and the exact value)."""
        m = self.monitor
        fraction, bound = m.joint_speeds()
        if m.robot.safety_cap > 0.0:
            self._stop = None
        elif self._stop is None:
            allowed = self.terms.stopping.time(max(fraction, m.robot.velocity_fraction))
            latest = self.terms.latest_stop()  # the controller's, from the state it stopped in
            self._stop = (t, allowed if latest is None else min(allowed, latest.time_s))
        rest = m.limits.rest_speed_m_s
        if bound <= rest:
            return
        if self._stop is not None:
            since, allowed = self._stop
            if t - since > allowed + m.dt and (speed := m.robot_speeds()[1]) > rest:
                m.violation(t, zone, speed, fraction, f"moving at {speed:.4f} m/s {t - since:.3f} s into a protective stop")
            return
        smallest = m.stats.ssm_margin_min_m
        if smallest is not None and fraction <= 1.0 and separation - full >= max(smallest, 0.0):
            return  # S_p at any speed leaves a margin that is neither new nor short (most steps)
        required = self.terms.required_m(fraction, self.terms.person_m_s(separation), self.terms.latest_stop())
        # measured: a margin that may be the smallest yet, and any that may be a violation
        exact_below = SSM_EXACT_MARGIN_M if smallest is None else max(min(smallest, SSM_EXACT_MARGIN_M), -SSM_TOLERANCE_M)
        if separation - required < exact_below and m.measured_t != t:
            m.measure_posed()
            separation = m.last_separation
            required = self.terms.required_m(fraction, self.terms.person_m_s(separation))
        margin = separation - required
        m.stats.ssm_margin_min_m = margin if smallest is None else min(smallest, margin)
        if margin < -SSM_TOLERANCE_M and (speed := m.robot_speeds()[1]) > rest:
            m.violation(t, zone, speed, fraction, f"separation {separation:.4f} m below S_p {required:.4f} m")
