"""Statistics of one run and its event log.

:class:`EventLog` keeps the run's events (``t`` in simulated seconds, ``event``, fields) in
order; :class:`RunStats` accumulates the figures of a run (``docs/statistics.md``), among them why the trees' actions failed (:meth:`RunStats.count_failure`, by the
``reason`` of each failure's event). Both are written by :func:`write_run` atomically, with the
trajectory and the trees' ``.btlog`` files: a reader never sees half a file.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from hri.actor.yielding import YieldCounts
from hri.base.files import Spool, write_atomic
from hri.workcell.layout import PartsSettings

if TYPE_CHECKING:
    from hri.bt.loggers.file_logger import BtLogFile
    from hri.workcell.parts import PartCounts

ZONES = ("safe", "warning", "stop")
#: Hall's distances of a person from the robot (hri.run.monitor.PROXEMICS), nearest first
PROXEMIC_ZONES = ("intimate", "personal", "social", "public")
ROBOT_MODES = ("full", "reduced", "stopped")
#: the bands of the velocity fraction the safety function allows (``speed_band_time_s``)
SPEED_BANDS = ("0", "0-25%", "25-50%", "50-75%", "75-100%", "100%")
# The failure events of the trees, and the statistic that counts their reasons.
FAILURE_EVENTS = {"person_action_finished": "person_action_failures", "robot_move_finished": "robot_move_failures",
                  "service_call_failed": "service_call_failures"}


def _event_line(event: dict[str, Any]) -> str:
    return json.dumps(event, sort_keys=False) + "\n"


def _row_line(row: tuple) -> str:
    return ",".join(_csv(v) for v in row) + "\n"


class EventLog(Spool):
    """Events in the order they happened; each is a dict with ``t`` and ``event`` first.

    A run with an output folder spills them to ``events.jsonl`` as it goes (:class:`Spool`):
    :attr:`events` then holds only the ones not written yet.
    """

    def __init__(self) -> None:
        super().__init__(_event_line)
        self.recent: list[dict[str, Any]] = []  # the events of the current step (begin_step)

    @property
    def events(self) -> list[dict[str, Any]]:
        return self.items

    def emit(self, t: float, event: str, **fields: Any) -> None:
        event = {"t": round(float(t), 6), "event": event, **fields}
        self.append(event)
        self.recent.append(event)

    def begin_step(self) -> None:
        """A physics step begins: :attr:`recent` holds its events from now on (before the
        first step: those of set-up)."""
        self.recent = []


class TrajectoryLog(Spool):
    """The rows of ``trajectory.csv`` (:data:`TRAJECTORY_COLUMNS`, then with several people
    :func:`person_columns` for each, then the robot's joint positions: :func:`joint_columns`),
    spilled like the events; a row is made from the step's state
    (:func:`hri.run.state.trajectory_row`)."""

    def __init__(self, people: tuple[str, ...] = (), joints: tuple[str, ...] = ()) -> None:
        columns = (TRAJECTORY_COLUMNS + tuple(c for name in people for c in person_columns(name))
                   + joint_columns(joints))
        super().__init__(_row_line, ",".join(columns) + "\n")


def joint_columns(joints: tuple[str, ...]) -> tuple[str, ...]:
    """The robot's joint positions (rad) in ``trajectory.csv``: ``robot_q_JOINT``."""
    return tuple(f"robot_q_{name}" for name in joints)


def person_columns(name: str) -> tuple[str, ...]:
    """A person's columns of ``trajectory.csv`` in a run with several people: pelvis, zone and
    the newest separation from the robot (the first person's pelvis is also ``person_x`` ...)."""
    return tuple(f"person_{name}_{column}" for column in ("x", "y", "yaw", "zone", "separation_m"))


@dataclass
class PersonStats:
    """One person's figures in a run with several people (``people.NAME`` of the statistics);
    the run's own keep the overall ones (:meth:`RunStats.combine_people`). The attribute names
    are :class:`RunStats`'s: the safety monitor writes either (one person: the run's)."""

    zone_time_s: dict[str, float] = field(default_factory=lambda: {z: 0.0 for z in ZONES})
    zone_entries: dict[str, int] = field(default_factory=lambda: {"warning": 0, "stop": 0})
    min_separation_m: float = math.inf
    max_stop_intrusion_m: float | None = None
    person_distance_m: float = 0.0
    person_actions: int = 0
    person_actions_failed: int = 0
    person_action_failures: dict[str, int] = field(default_factory=dict)
    safety_violations: int = 0
    robot_touches: int = 0  # the person touching the robot at rest (hri.run.monitor); in as_dict when any
    # time within Hall's distances of the robot (hri.run.monitor.PROXEMICS), by the separation
    proxemic_time_s: dict[str, float] = field(default_factory=lambda: {z: 0.0 for z in PROXEMIC_ZONES})
    human_calls: int = 0  # the robot's calls of this person (their "called" flag)
    human_response_times: list[float] = field(default_factory=list)
    pfl_contacts: int = 0  # the robot's contacts with this person's body (RunStats's, of this person)
    pfl_violations: int = 0
    pfl_worst_ratio: float = 0.0
    pfl_worst_region: str | None = None
    # giving way to other people on the way (hri.actor.yielding.YieldCounts)
    yields: dict[str, float | int] = field(default_factory=lambda: YieldCounts().as_dict())
    parts: dict[str, Any] = field(default_factory=lambda: {"taken": 0, "put": {}})  # PersonParts.as_dict()

    def count_calls(self, calls: int, response_times: list[float]) -> None:
        """This person's calls and how long each took them to answer (their flag's)."""
        self.human_calls = calls
        self.human_response_times = list(response_times)

    def count_action(self, fields: dict[str, Any]) -> None:
        """A finished action of this person's (``person_action_finished``)."""
        self.person_actions += 1
        if fields.get("result") != "succeeded":
            self.person_actions_failed += 1
            reason = str(fields.get("reason") or "unspecified")
            self.person_action_failures[reason] = self.person_action_failures.get(reason, 0) + 1

    def as_dict(self) -> dict[str, Any]:
        return {
            "zone_time_s": {k: round(v, 6) for k, v in self.zone_time_s.items()},
            "zone_entries": dict(self.zone_entries),
            "min_separation_m": round(self.min_separation_m, 6) if math.isfinite(self.min_separation_m) else None,
            "max_stop_intrusion_m": None if self.max_stop_intrusion_m is None else round(self.max_stop_intrusion_m, 6),
            "person_distance_m": round(self.person_distance_m, 6),
            "person_actions": self.person_actions,
            "person_actions_failed": self.person_actions_failed,
            "person_action_failures": _most_frequent(self.person_action_failures),
            "safety_violations": self.safety_violations,
            **({"robot_touches": self.robot_touches} if self.robot_touches else {}),
            "proxemic_time_s": {k: round(v, 6) for k, v in self.proxemic_time_s.items()},
            "human_calls": self.human_calls,
            "human_response_s": _mean(self.human_response_times),
            "pfl_contacts": self.pfl_contacts,
            "pfl_violations": self.pfl_violations,
            "pfl_worst_ratio": round(self.pfl_worst_ratio, 6) if math.isfinite(self.pfl_worst_ratio) else None,
            "pfl_worst_region": self.pfl_worst_region,
            "yields": dict(self.yields),
            "parts": {"taken": self.parts["taken"], "put": dict(self.parts["put"])},
        }


@dataclass
class RunStats:
    """The figures of one run; :meth:`as_dict` gives the statistics object."""

    scenario: str
    seed: int
    sim_time_s: float = 0.0
    wall_time_s: float = 0.0
    zone_time_s: dict[str, float] = field(default_factory=lambda: {z: 0.0 for z in ZONES})
    zone_entries: dict[str, int] = field(default_factory=lambda: {"warning": 0, "stop": 0})
    robot_time_s: dict[str, float] = field(default_factory=lambda: {m: 0.0 for m in ROBOT_MODES})
    speed_band_time_s: dict[str, float] = field(default_factory=lambda: {b: 0.0 for b in SPEED_BANDS})
    protective_stops: int = 0
    min_separation_m: float = math.inf
    robot_cycles: int = 0
    human_calls: int = 0
    human_response_times: list[float] = field(default_factory=list)
    safety_violations: int = 0
    robot_touches: int = 0  # touches of the robot at rest by a person (not violations); in as_dict when any
    max_robot_speed_m_s: float = 0.0
    max_stop_intrusion_m: float | None = None  # deepest into the stop zone before the robot rested
    ssm_margin_min_m: float | None = None  # SSM: smallest separation minus S_p while the robot moved
    ssm_stops: int = 0  # SSM: protective stops of the controller
    pfl_contacts: int = 0  # contact episodes with the robot's point moving towards the person
    pfl_violations: int = 0  # of them, those whose worst ratio of speed to permissible speed is above 1
    pfl_worst_ratio: float = 0.0  # infinite on a region where no transient contact is permitted
    pfl_worst_region: str | None = None
    person_distance_m: float = 0.0
    person_actions: int = 0
    person_actions_failed: int = 0
    # {reason: count} of failed person actions, robot moves and service calls
    person_action_failures: dict[str, int] = field(default_factory=dict)
    robot_move_failures: dict[str, int] = field(default_factory=dict)
    service_call_failures: dict[str, int] = field(default_factory=dict)
    robot_failures: int = 0
    recoveries: int = 0
    messages_dropped: int = 0  # records and frames the simulation received and could not take
    parts: dict[str, Any] = field(default_factory=dict)
    parts_good: int = 0
    parts_bad: int = 0
    parts_shelved: int = 0
    complete: bool = True
    error: str | None = None  # the line of the error that ended the run; only then in stats.json
    people: dict[str, PersonStats] | None = None  # several people: each one's figures; only then in stats.json
    person_contacts: int = 0  # several people: steps on which two persons' bodies interpenetrate (violations)

    def combine_people(self) -> None:
        """The overall figures of several people: the smallest separation and the deepest
        intrusion of any, the sums of distances, zone entries and actions (``zone_time_s`` is
        the time of the strictest zone of any person, counted as the run goes)."""
        people = list((self.people or {}).values())
        if not people:
            return
        self.min_separation_m = min(person.min_separation_m for person in people)
        intrusions = [person.max_stop_intrusion_m for person in people if person.max_stop_intrusion_m is not None]
        self.max_stop_intrusion_m = max(intrusions) if intrusions else None
        self.person_distance_m = sum(person.person_distance_m for person in people)
        self.zone_entries = {zone: sum(person.zone_entries[zone] for person in people) for zone in self.zone_entries}

    def count_parts(self, counts: PartCounts, settings: PartsSettings) -> None:
        """Part tallies; good/bad/shelved by the surfaces the scenario names for them."""
        self.parts = {"picked_by_robot": counts.picked_by_robot, "placed_by_robot": dict(counts.placed_by_robot),
                      "taken_by_person": counts.taken_by_person, "put_by_person": dict(counts.put_by_person),
                      "delivered": counts.delivered, "collected": counts.collected}
        self.parts_good = sum(counts.placed_by_robot.get(s, 0) for s in settings.good_surfaces)
        self.parts_bad = sum(counts.placed_by_robot.get(s, 0) for s in settings.bad_surfaces)
        self.parts_shelved = sum(counts.put_by_person.get(s, 0) for s in settings.storage_surfaces)
        for name, person in (self.people or {}).items():
            person.parts = counts.of(name).as_dict()

    def count_failure(self, event: str, fields: dict[str, Any]) -> None:
        """Count the reason of a tree's event if it tells of a failure (a finished action that
        did not succeed, a failed service call)."""
        counts = FAILURE_EVENTS.get(event)
        if counts is None or fields.get("result") in ("succeeded", "success"):
            return
        reason = str(fields.get("reason") or "unspecified")
        tally = getattr(self, counts)
        tally[reason] = tally.get(reason, 0) + 1

    def as_dict(self) -> dict[str, Any]:
        rtf = self.sim_time_s / self.wall_time_s if self.wall_time_s > 0 else None
        return {
            "scenario": self.scenario,
            "seed": self.seed,
            "sim_time_s": round(self.sim_time_s, 6),
            "wall_time_s": round(self.wall_time_s, 3),
            "real_time_factor": round(rtf, 2) if rtf is not None else None,
            "zone_time_s": {k: round(v, 6) for k, v in self.zone_time_s.items()},
            "zone_entries": dict(self.zone_entries),
            "robot_time_s": {k: round(v, 6) for k, v in self.robot_time_s.items()},
            "speed_band_time_s": {k: round(v, 6) for k, v in self.speed_band_time_s.items()},
            "protective_stops": self.protective_stops,
            "min_separation_m": round(self.min_separation_m, 6) if math.isfinite(self.min_separation_m) else None,
            "robot_cycles": self.robot_cycles,
            "robot_cycles_per_hour": round(self.robot_cycles * 3600.0 / self.sim_time_s, 3) if self.sim_time_s > 0 else None,
            "human_calls": self.human_calls,
            "human_response_s": _mean(self.human_response_times),
            "safety_violations": self.safety_violations,
            **({"robot_touches": self.robot_touches} if self.robot_touches else {}),
            "max_robot_speed_m_s": round(self.max_robot_speed_m_s, 6),
            "max_stop_intrusion_m": None if self.max_stop_intrusion_m is None else round(self.max_stop_intrusion_m, 6),
            "ssm_margin_min_m": None if self.ssm_margin_min_m is None else round(self.ssm_margin_min_m, 6),
            "ssm_stops": self.ssm_stops,
            "pfl_contacts": self.pfl_contacts,
            "pfl_violations": self.pfl_violations,
            "pfl_worst_ratio": round(self.pfl_worst_ratio, 6) if math.isfinite(self.pfl_worst_ratio) else None,
            "pfl_worst_region": self.pfl_worst_region,
            "person_distance_m": round(self.person_distance_m, 6),
            "person_actions": self.person_actions,
            "person_actions_failed": self.person_actions_failed,
            "person_action_failures": _most_frequent(self.person_action_failures),
            "robot_move_failures": _most_frequent(self.robot_move_failures),
            "service_call_failures": _most_frequent(self.service_call_failures),
            "robot_failures": self.robot_failures,
            "recoveries": self.recoveries,
            "parts": self.parts,
            "parts_good": self.parts_good,
            "parts_bad": self.parts_bad,
            "parts_shelved": self.parts_shelved,
            "messages_dropped": self.messages_dropped,
            **({} if self.people is None else {
                "person_contacts": self.person_contacts,
                "people": {name: person.as_dict() for name, person in self.people.items()}}),
            "complete": self.complete,
            **({} if self.error is None else {"error": self.error}),
        }


def speed_band(fraction: float) -> str:
    """The :data:`SPEED_BANDS` key of an allowed velocity fraction: 0, up to a quarter, ...,
    below 1, full."""
    if fraction <= 0.0:
        return SPEED_BANDS[0]
    if fraction >= 1.0:
        return SPEED_BANDS[-1]
    return SPEED_BANDS[1 + min(3, int(math.ceil(fraction * 4.0)) - 1)]


def is_ssm(stats: dict[str, Any]) -> bool:
    """Whether statistics (a run's, or a sum of runs') come from speed and separation
    monitoring: its stops are ``ssm_stops``; zones mode leaves ``ssm_margin_min_m`` null."""
    return stats.get("ssm_margin_min_m") is not None or bool(stats.get("ssm_stops"))


def stops_key(stats: dict[str, Any]) -> str:
    """The statistic that counts the robot's protective stops in the run's safety function:
    ``ssm_stops`` in SSM mode, ``protective_stops`` (at rest in the stop zone) with the zones."""
    return "ssm_stops" if is_ssm(stats) else "protective_stops"


def _mean(times: list[float]) -> float | None:
    """The mean of response times, rounded as the statistics write them; None without any."""
    return round(sum(times) / len(times), 6) if times else None


def _most_frequent(counts: dict[str, int]) -> dict[str, int]:
    """``counts`` with the most frequent first (ties by name: the same order in every run)."""
    return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))


WALL_CLOCK_KEYS = ("wall_time_s", "real_time_factor")
TRAJECTORY_COLUMNS = ("t", "person_x", "person_y", "person_yaw", "zone", "robot_velocity_fraction",
                      "robot_speed_fraction", "robot_fastest_point_m_s", "separation_m")


def write_run(out_dir: Path, stats: dict[str, Any], events: EventLog, trajectory: TrajectoryLog | None = None,
              btlogs: Mapping[str, BtLogFile] | None = None) -> None:
    """Write ``trajectory.csv``, the trees' ``.btlog`` files, ``events.jsonl``, then
    ``stats.json`` (last: its presence means the run's files are complete)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    try:
        if trajectory is not None:
            trajectory.write(out_dir / "trajectory.csv")
        for btlog in (btlogs or {}).values():
            btlog.write()
    finally:  # a write that failed leaves no hidden .btlog file behind (a written one is gone)
        for btlog in (btlogs or {}).values():
            btlog.discard()
    events.write(out_dir / "events.jsonl")
    write_atomic(out_dir / "stats.json", json.dumps(stats, indent=2) + "\n")


def _csv(value: Any) -> str:
    return f"{value:.6g}" if isinstance(value, float) else str(value)


def format_table(stats: dict[str, Any]) -> str:
    """A human-readable summary of the statistics object."""
    rows = []
    for key, value in stats.items():
        if isinstance(value, dict):  # failure reasons come most frequent first
            value = ", ".join(f"{k} {_fmt(v)}" for k, v in value.items()) or "none"
        rows.append((key, _fmt(value) if not isinstance(value, str) else value))
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"{k.ljust(width)}  {v}" for k, v in rows)


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)
