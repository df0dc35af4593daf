"""Speed and separation monitoring as a safety function of the robot's controller, below the
trees (ISO/TS 15066:2016, clause 5.5.4; J. A. Marvel and R. Norcross, "Implementing speed and
separation monitoring in collaborative robot workcells", Robotics and Computer-Integrated
Manufacturing 44 (2017) 144-155).

:class:`SsmTerms` is S_p of :mod:`hri.run.ssm` for our arm: the scenario's terms
(``safety.ssm``), the arm's :class:`~hri.robot.stopping.StoppingModel` (built once at start-up)
and the person's speed, the constant of the settings or, with ``person_speed_m_s: measured``,
what the person does now (``ActorPlugin.speed_bound``: the top speed of its clip or walk,
nothing while it stands still).

:class:`SsmController` acts on every physics step, before the arm's own step. The separation
it uses is the safety monitor's lower bound (``SafetyMonitor.separation_bound``): the last
query of PyBullet's closest points between the person's body and the robot, less how far the
person can have come since (its top speed, less what it left unused) and how far the robot's
points can be from where they were at the query (from its joints); the monitor takes a new
query while the controller caps the speed, or may soon, whenever the bound has fallen
``SSM_STALE_M`` below the last, on steps with the body posed anyway when the last is
``SSM_REFRESH_S`` old, and when the controller would otherwise stop on the bound alone. The
robot's speed is the larger of the fraction it runs at and the fraction its joints measure. The
controller caps the arm's velocity fraction (:meth:`RobotArm.set_safety_cap`) at the largest
one whose S_p fits the bound at the step's end less what the gap can close in one more step,
(v_h + v_r) dt, rounded down to ``CAP_STEP``; where S_p at full speed by the table does not fit,
S_s and T_s come from the arm's state: first the bound of the straight segment the arm runs
(:meth:`StateStops.line`, once per segment) or its quick bound (:meth:`StateStops.quick`),
neither with the forward kinematics (cap 1 when S_p at full speed fits by one), else the forward
kinematics' bound (:meth:`StateStops.ahead`). With the ideal sensor, the settings' person speeds
and one person, a full-speed decision with room to spare holds without looking for as many
steps as the room lasts (:class:`FullSpeedWindow`). When S_p at the robot's present speed
does not fit (or rest does not) it makes a protective stop: cap 0, which brakes as ``halt()``
does but keeps the motion, which goes on when the cap rises again. ``ssm_stop`` and ``ssm_resume`` events mark them.
Acting every step makes T_r one physics step (the settings' default). With a safety sensor,
T_r is the report's age plus that step; over the age the controller knows where the robot was
(the report carries its joints) and takes the report less how far the robot's points have moved
since (ISO/TS 15066's S_r as the integral of the robot's speed, measured), so S_r bounds the
robot's travel by v_r over the one step ahead only (``SsmSettings.robot_measured_s``).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np

from hri.robot.arm import RobotArm
from hri.robot.braking import TRACKING_MARGIN, BrakingBound, StateStops, Stop
from hri.robot.stop_table import StopTable, TableStopping
from hri.robot.stopping import StoppingModel
from hri.run.sensor import SafetySensor
from hri.run.ssm import NEAR_SEPARATION_M, SeparationTable, SsmSettings
from hri.scenario.model import MEASURED, SsmOptions

def ssm_settings(options: SsmOptions, dt: float, sensor: SafetySensor | None = None) -> SsmSettings:
    """The scenario's ``safety.ssm`` over the standard's defaults (a measured person speed
    leaves the default constant, which the measurement replaces); T_r by default one physics
    step of ``dt`` seconds, the period at which :class:`SsmController` acts. With a safety
    sensor, T_r is by default the oldest its report can be (:attr:`SafetySensor.age_s`: the
    latency and one period, each rounded up to physics steps) plus the controller's cycle, and
    Z_d its noise bound (the tolerance); the scenario's own keys override both. Over a report's
    age the controller measures the robot's travel (:class:`SsmController`), so S_r bounds it by
    v_r over the rest of T_r only."""
    given = {"reaction_time_s": dt}
    if sensor is not None:
        given.update(reaction_time_s=sensor.age_s + dt, person_uncertainty_m=sensor.tolerance_m,
                     robot_measured_s=sensor.age_s)
    given.update((name, value) for name, value in vars(options).items() if value is not None and value != MEASURED)
    if isinstance(options.person_speed_m_s, float):  # the scenario's speed, close in too
        given["person_speed_near_m_s"] = options.person_speed_m_s
    return SsmSettings(**given)


def truth_settings(settings: SsmSettings, dt: float, sensor: SafetySensor | None) -> SsmSettings:
    """The terms the safety monitor checks the true separation against: the controller's, less
    what they hold for the sensor (its reports' age in T_r, its tolerance in Z_d), which the
    truth does not have; the controller's own without a sensor. A controller that keeps S_p on
    the sensor's reports keeps these on the truth (module docstring of :mod:`hri.run.sensor`)."""
    if sensor is None:
        return settings
    return replace(settings, reaction_time_s=max(dt, settings.reaction_time_s - sensor.age_s),
                   person_uncertainty_m=max(0.0, settings.person_uncertainty_m - sensor.tolerance_m),
                   robot_measured_s=0.0)


def stopping_model(robot: RobotArm, dt: float) -> StoppingModel:
    """The arm's stopping model (``StoppingModel.for_arm``), computed once per process for the
    same limits and step: a thousand brakings, seconds of set-up otherwise in every run."""
    return _stopping_model(tuple(robot.model.max_velocity.tolist()), tuple(robot.config.max_acceleration),
                           tuple(robot.config.max_jerk), tuple(robot.joint_reach.tolist()), dt)


@functools.lru_cache(maxsize=8)
def _stopping_model(max_velocity: tuple[float, ...], max_acceleration: tuple[float, ...],
                    max_jerk: tuple[float, ...], joint_reach: tuple[float, ...], dt: float) -> StoppingModel:
    return StoppingModel.from_limits(*(np.array(values) for values in
                                       (max_velocity, max_acceleration, max_jerk, joint_reach)), dt)


def sensed_person_speed(settings: SsmSettings, approach: Callable[[], float], separation_m: float) -> float:
    """v_h measured: the person's filtered speed towards the robot as the sensor sees it
    (``approach``: :meth:`SafetySensor.approach_m_s`, or the ideal sensor's
    :meth:`hri.run.sensor.ApproachFilter.speed`), never below the settings' (ISO 13855's) at ``separation_m``."""
    return max(settings.person_speed_at(separation_m), approach())


@dataclass(frozen=True)
class SsmTerms:
    """S_p of our arm at a velocity fraction, with the person's speed now."""

    settings: SsmSettings
    stopping: StoppingModel | TableStopping
    person_speed: Callable[[float], float] | None = None  # measured (at a separation); None: the settings'
    state: StateStops | None = None  # S_s and T_s from the arm's state (where below the table's)
    _tables: dict = field(default_factory=dict, compare=False, repr=False)  # S_p per constant v_h

    @classmethod
    def for_run(cls, options: SsmOptions, robot: RobotArm, dt: float, approach: Callable[[], float],
                sensor: SafetySensor | None = None,
                table: tuple[StopTable, float] | None = None) -> "tuple[SsmTerms, SsmTerms]":
        """The terms of a run: the controller's and those the safety monitor checks the truth
        against (:func:`truth_settings`), both with S_s and T_s from the arm's state (one
        :class:`~hri.robot.braking.StateStops`: the monitor checks the stop the controller took),
        or with ``table`` (a manufacturer's stop table and the run's payload) from that table.
        ``approach`` is the people's filtered speed towards the robot as the sensor (or the
        ideal one) sees it: with ``person_speed_m_s: measured`` the controller's v_h is
        :func:`sensed_person_speed`, and the truth is checked with ISO 13855's, which that
        never falls below."""
        terms, truth = cls._from_state(options, robot, dt, approach, sensor)
        if table is None:
            return terms, truth
        if truth is terms:
            return (terms.with_table(*table, robot),) * 2
        return terms.with_table(*table, robot), truth.with_table(*table, robot)

    @classmethod
    def _from_state(cls, options: SsmOptions, robot: RobotArm, dt: float, approach: Callable[[], float],
                    sensor: SafetySensor | None) -> "tuple[SsmTerms, SsmTerms]":
        """:meth:`for_run` with S_s and T_s from the arm's state."""
        settings = ssm_settings(options, dt, sensor)
        stopping, state = stopping_model(robot, dt), StateStops(robot, dt)
        truth = cls(truth_settings(settings, dt, sensor), stopping, None, state)
        if options.person_speed_m_s != MEASURED:
            return (truth, truth) if sensor is None else (cls(settings, stopping, None, state), truth)
        return cls(settings, stopping, functools.partial(sensed_person_speed, settings, approach), state), truth

    def with_table(self, table: StopTable, payload_kg: float, robot: RobotArm) -> "SsmTerms":
        """These terms with S_s and T_s from a stop table (``safety.stop_table``) at the run's
        payload instead of the arm's braking from its state."""
        stopping = TableStopping.from_table(table, payload_kg, robot.joint_reach,
                                            self.stopping.speed_per_fraction_m_s)
        return replace(self, stopping=stopping, state=None, _tables={})

    def person_m_s(self, separation_m: float = math.inf) -> float:
        """v_h now with the separation at ``separation_m``: measured, or the settings' (ISO
        13855's close in below 0.5 m, :meth:`SsmSettings.person_speed_at`)."""
        if self.person_speed is None:
            return self.settings.person_speed_at(separation_m)
        return self.person_speed(separation_m)

    def required_m(self, fraction: float, person_m_s: float | None = None, stop: Stop | None = None) -> float:
        """S_p (m) with the robot at ``fraction`` (v_h by default that of a far person; ``stop``:
        S_s and T_s from its state)."""
        v_h = self.person_m_s() if person_m_s is None else person_m_s
        return self._table(v_h).required(fraction, v_h, stop)

    def full_m(self) -> float:
        """S_p (m) at full speed with the person's speed now (close in, if S_p is that short)."""
        if self.person_speed is None:  # the settings' speeds: the same on every step
            return self._settings_full_m
        return self._full_m()

    @functools.cached_property
    def _settings_full_m(self) -> float:
        return self._full_m()

    def _full_m(self) -> float:
        """:meth:`full_m`, computed."""
        v_h = self.person_m_s()
        full = self._table(v_h).full(v_h)
        if full < NEAR_SEPARATION_M:
            v_h = self.person_m_s(full)
            full = self._table(v_h).full(v_h)
        return full

    def largest(self, separation_m: float, person_m_s: float, stop: Stop | None = None) -> float | None:
        """The largest fraction whose S_p fits ``separation_m``; None: not even rest."""
        return self._table(person_m_s).largest(separation_m, person_m_s, stop)

    def full_speed_fits(self, room_m: float, full_m: float, person_m_s: float) -> bool:
        """Whether S_p at full speed fits ``room_m``: by the table's S_p at full speed
        ``full_m`` (the arm's state then not asked), else by a stop from the arm's state
        without the forward kinematics (:meth:`full_speed_stop`, taken as this step's stop).
        Where none fits, :meth:`state_stop` is the stop."""
        state = self.state
        if room_m >= full_m:
            if state is not None:
                state.forget()
            return True
        stop = self.full_speed_stop(room_m, person_m_s)
        if stop is None:
            return False
        state.take(stop)
        return True

    def full_speed_stop(self, room_m: float, person_m_s: float) -> Stop | None:
        """The first stop from the arm's state by which S_p at full speed fits ``room_m``: the
        straight segment's (:meth:`StateStops.line`, once per segment), else the quick bound
        (:meth:`StateStops.quick`); None when neither fits, or without a state model."""
        state = self.state
        if state is None:
            return None
        for ask in (state.line, state.quick):
            stop = ask()
            if stop is not None and room_m >= self.required_m(1.0, person_m_s, stop):
                return stop
        return None

    def state_stop(self) -> Stop | None:
        """S_s and T_s from the arm's state one cycle ahead (None without a state model)."""
        return None if self.state is None else self.state.ahead()

    def latest_stop(self) -> Stop | None:
        """The controller's :meth:`state_stop` of this step, None when it asked none."""
        return None if self.state is None else self.state.latest

    @functools.cached_property
    def table(self) -> SeparationTable:
        return SeparationTable(self.settings, self.stopping)

    def _table(self, v_h: float) -> SeparationTable:
        """The table for ``v_h``: one each for the settings' two constant speeds (the person
        close in and far, which alternate), the shared one for measured speeds."""
        if v_h not in (self.settings.person_speed_m_s, self.settings.person_speed_near_m_s):
            return self.table
        table = self._tables.get(v_h)
        if table is None:
            table = self._tables[v_h] = SeparationTable(self.settings, self.stopping)
        return table


#: the cap is rounded down to a multiple of this: a cap that changed on every step would make
#: the arm's online trajectory generator plan anew on every step (costly, and some of those
#: plans fail), for speed differences of a per cent
CAP_STEP = 1.0 / 50.0


@dataclass
class FullSpeedWindow:
    """How long full speed holds without the controller looking (ideal sensor, the settings'
    person speeds, one person): the separation bound it acts on falls by at most
    ``decay_m_s`` per second (the safety monitor's closing speed), so after a full-speed
    decision with room to spare, the decisions of the next steps are full speed too, as long as
    that room lasts. With a stop from a straight segment of the motion, only while the arm is
    on that segment; the measured arm's lag behind the command, part of that stop, may grow
    each step by as much as the measured arm and the command can move apart (``growth_m_s``).
    The safety monitor's check after a step held may be skipped where :meth:`margin_m` leaves no
    new smallest SSM margin possible."""

    decay_m_s: float
    until_t: float = -math.inf
    line: object = None  # the segment (RobotArm.motion_line) the window's stop holds on; None: any
    _opened: tuple[float, float, float] = (0.0, -math.inf, 0.0)  # (t, spare, fall per second)

    def holds(self, t: float, robot: RobotArm) -> bool:
        """Whether the decision at ``t`` is full speed without looking."""
        return t < self.until_t and robot.safety_cap == 1.0 and (self.line is None or robot.motion_line is self.line)

    def open(self, t: float, dt: float, spare_m: float, growth_m_s: float, line: object) -> None:
        """After a full-speed decision at ``t`` whose room exceeded S_p at full speed by
        ``spare_m``: the steps after it for which it still does."""
        # the check after the last step held sees one more step of the lag's growth
        spare = spare_m - (1.0 + TRACKING_MARGIN) * growth_m_s * dt
        fall = self.decay_m_s + (1.0 + TRACKING_MARGIN) * growth_m_s
        steps = math.floor(spare / (fall * dt)) if math.isfinite(spare) else 0
        if steps >= 1:
            self.until_t = t + (steps + 0.5) * dt
            self.line = line
            self._opened = (t, spare, fall)

    def margin_m(self, t: float) -> float:
        """The least SSM margin the monitor can find after the step whose decision at ``t`` the
        window held: the separation less S_p at full speed, as the window's room falls."""
        opened, spare, fall = self._opened
        return spare - fall * (t - opened)


class SeparationRoom:
    """What a controller may take of the separation it acts on: less what the gap can close in
    one more step and, with a safety sensor, the robot's travel since the report was measured
    and room for the next report."""

    def __init__(self, robot: RobotArm, terms: SsmTerms, dt: float, sensor: SafetySensor | None = None):
        self.robot = robot
        self.terms = terms
        self.dt = dt
        self.sensor = sensor
        self._robot_top_m_s = terms.stopping.speed(1.0)  # v_r at full speed
        # with a sensor, the cap leaves room for the next report: the person's walk for one
        # period and the noise turning from one bound to the other (2 Z_d), so that a cap that
        # fits one report is not stopped by the next (the stop itself looks at the report only)
        self._lookahead_s = 0.0 if sensor is None else sensor.period_steps * dt
        self._lookahead_m = 0.0 if sensor is None else 2.0 * sensor.tolerance_m
        # with a sensor, how far the robot has moved since a report was measured (S_r's measured
        # part, SsmSettings.robot_measured_s): the arm's forward kinematics, once the joints'
        # reach bound of it leaves S_p at full speed in doubt
        self._travel = None if sensor is None else terms.state.bound if terms.state else BrakingBound.for_arm(robot, dt)

    def room(self, separation_m: float) -> tuple[float, float]:
        """v_h at ``separation_m`` and what S_p of the cap may take of it: less what the gap can
        close in one more step and, with a sensor, the lookahead to its next report."""
        v_h = self.terms.person_m_s(separation_m)
        room = separation_m - (v_h + self._robot_top_m_s) * self.dt
        if self._lookahead_s:
            room -= v_h * self._lookahead_s + self._lookahead_m
        return v_h, room

    def since_report(self, reported_m: float) -> float:
        """With a sensor, its report less how far the robot's points have moved since it was
        measured: ``sum_i joint_reach_i |dq_i|`` while that leaves S_p at full speed, else the
        farthest any point is from where it was (:meth:`BrakingBound.displacement_m`); without
        one, or with nobody seen, ``reported_m``."""
        if self._travel is None or not math.isfinite(reported_m):
            return reported_m
        then = self.sensor.current.robot_joints
        if then is None:  # a report with no joints (made outside a run): v_r over its age
            return reported_m - self._robot_top_m_s * self.sensor.age_s
        now = self.robot.joint_positions()
        bound = reported_m - self._travel.reach_m(now, then)
        if self.room(bound)[1] >= self.terms.full_m():
            return bound
        return reported_m - self._travel.displacement_m(then, now)


class SsmController:
    """Caps the arm's speed every physics step so that the separation keeps S_p."""

    def __init__(self, robot: RobotArm, terms: SsmTerms, dt: float, emit: Callable[..., None],
                 sensor: SafetySensor | None = None):
        self.robot = robot
        self.room = SeparationRoom(robot, terms, dt, sensor)
        self.terms = terms
        self.dt = dt
        self.emit = emit  # (t, event, **fields) of the run's event log
        self.stopped = False
        self.stops = 0
        self.separation_m = math.inf
        self.window: FullSpeedWindow | None = None  # set by the simulation where it holds (FullSpeedWindow)
        # set by the simulation with the ideal sensor: the separation bound at the step's end
        # measured now, None where the bound is of a measurement of this step already
        self.refresh: Callable[[float], float | None] | None = None

    def step(self, t: float, separation_m: float | None, joint_fraction: Callable[[], float]) -> None:
        """Decide and set the cap for the arm's step from ``t``: ``separation_m`` is a lower
        bound of the separation at the step's end as if the robot stood still (with a safety
        sensor: its newest report, whose age and tolerance S_p's T_r and Z_d cover; None: the
        sensor's update was lost, a protective stop until it reports again),
        ``joint_fraction()`` the largest of the joints' measured speed fractions now (asked only
        where full speed does not fit). A stop on the ideal sensor's bound is decided again on
        a fresh measurement (``refresh``): the bound may only have grown stale, and a stop of one
        step costs the robot the time to brake and start again."""
        if separation_m is None:
            self._follow(t, True, lost=True)
            self.robot.set_safety_cap(0.0)
            return
        separation_m = self.room.since_report(separation_m)
        cap = self._cap(t, separation_m, joint_fraction)
        if cap == 0.0 and self.refresh is not None:
            fresh = self.refresh(t)
            if fresh is not None and fresh > separation_m:
                cap = self._cap(t, fresh, joint_fraction)
        if cap is not None:
            self._follow(t, cap == 0.0)
            self.robot.set_safety_cap(cap)

    def _cap(self, t: float, separation_m: float, joint_fraction: Callable[[], float]) -> float | None:
        """The cap for ``separation_m``: 0 a protective stop; None where full speed fits, which
        is set here (most steps)."""
        v_h, room = self.room.room(separation_m)
        self.separation_m = separation_m
        if self.terms.full_speed_fits(room, self.terms.full_m(), v_h):  # most steps
            self._full_speed(t)
            if self.window is not None:
                self._open_window(t, room, v_h)
            return None
        current = max(self.robot.effective_fraction, joint_fraction())
        state = self.terms.state_stop()  # S_s and T_s from the arm's state, where below the table's
        cap = self.terms.largest(room, v_h, state)
        if cap is None or cap < CAP_STEP or self.terms.required_m(current, v_h, state) > separation_m:
            return 0.0
        return math.floor(cap / CAP_STEP) * CAP_STEP

    def _open_window(self, t: float, room: float, v_h: float) -> None:
        """After a full-speed decision: how many more steps it holds (:class:`FullSpeedWindow`),
        by the table's S_p at full speed, or by the straight segment's stop; a quick stop holds
        for this cycle only."""
        stop, growth, line = self.terms.latest_stop(), 0.0, None
        if stop is not None:
            line = self.robot.motion_line
            growth = self.terms.state.line_growth_m_s(stop)
            if growth is None:
                return
        full = self.terms.required_m(1.0, v_h, stop)
        if full >= NEAR_SEPARATION_M:  # v_h stays the far person's through the window
            self.window.open(t, self.dt, room - full, growth, line)

    def _full_speed(self, t: float) -> None:
        """S_p at full speed fits: no stop, cap 1."""
        self._follow(t, False)
        if self.robot.safety_cap != 1.0:
            self.robot.set_safety_cap(1.0)

    def _follow(self, t: float, stop: bool, lost: bool = False) -> None:
        """The ``ssm_stop`` and ``ssm_resume`` events (a stop for a lost sensor update says so:
        ``sensor_lost``, with no separation)."""
        if stop == self.stopped:
            return
        self.stopped = stop
        if stop:
            self.stops += 1
        if lost:
            self.emit(t, "ssm_stop", sensor_lost=True)
        else:
            separation = round(self.separation_m, 6) if math.isfinite(self.separation_m) else None  # None: nobody seen
            self.emit(t, "ssm_stop" if stop else "ssm_resume", separation_m=separation)
