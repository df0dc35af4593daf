"""Node statuses of a running tree: recorded as changes in the event log, replayed at any time.

Groot2 monitors a BehaviorTree.CPP tree by its status transitions; we do the same in
simulated time. :class:`TreeStatusLog` numbers a loaded tree's nodes in pre-order (a
``SubTree`` node, then the subtree's root, as ``hri render`` draws them with subtrees
expanded), and after every tick emits one ``tree_status`` event with the nodes whose status
changed since the tick before::

    {"t": 12.35, "event": "tree_status", "tree": "person", "changes": {"4": "RUNNING", "5": "IDLE"}}

A ``tree_nodes`` event at the start names the file and the nodes, so a reader can check it
draws the same tree. :func:`statuses_at` replays the changes up to a simulated time, and
:func:`read_run_events` reads them back from a run directory. :data:`STATUS_COLOURS` (pictures)
and :data:`STATUS_TERMINAL_STYLES` are the one palette of every view of statuses (``hri render
--run``, ``hri run --show-trees``).

**What a tick did.** BehaviorTree.CPP's parents make their finished children IDLE again (a
ReactiveSequence after every child that answers RUNNING, any control node when it finishes),
so a tree looked at after its tick shows much of what the tick did as IDLE. Groot2 draws
such a node faded, with the status it had before the reset (``IDLE_FROM_SUCCESS``,
``IDLE_FROM_FAILURE``, ``IDLE_FROM_RUNNING``: 10 + the status in ``Groot2Publisher``'s
callback, ``src/loggers/groot2_publisher.cpp``). :func:`with_tick` does the same from the
tick's status transitions (the ``.btlog`` records of :mod:`hri.bt.loggers.transitions`): a
node that ended the tick IDLE after another status in it shows :data:`IDLE_FROM` of its last
one. Unlike Groot2, which keeps the faded status until the node changes again, it holds for
that one tick: the views show what the tree did in the tick they show.
"""

from __future__ import annotations

import json
import operator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import numpy as np
import py_trees
from py_trees.common import Status

from hri.base.errors import HriError
from hri.base.untrusted import Missing, Unreadable, read_output
from hri.bt.loggers.btlog_reader import FIRST_UID, parse_transitions

IDLE = "IDLE"
IDLE_FROM = {"RUNNING": "IDLE_FROM_RUNNING", "SUCCESS": "IDLE_FROM_SUCCESS", "FAILURE": "IDLE_FROM_FAILURE"}
"""Groot2's names of a node made IDLE in the tick after another status in it (:func:`with_tick`)."""
_STATUS_OF = operator.attrgetter("status")  # every tick, over every node
STATUS_NAMES = {Status.INVALID: IDLE, Status.RUNNING: "RUNNING", Status.SUCCESS: "SUCCESS",
                Status.FAILURE: "FAILURE"}
# Groot2's colours, so a picture reads like its monitor: running orange, success green,
# failure red, idle light grey; a status of the tick that ended IDLE in a light tint of its own.
STATUS_COLOURS = {"RUNNING": "#ffa726", "SUCCESS": "#66bb6a", "FAILURE": "#ef5350", IDLE: "#e0e0e0",
                  IDLE_FROM["RUNNING"]: "#ffe0b2", IDLE_FROM["SUCCESS"]: "#c8e6c9", IDLE_FROM["FAILURE"]: "#ffcdd2"}
# The same on a terminal, by ANSI name: a 16-colour terminal would turn orange into the red of
# FAILURE, and light grey vanishes on a light background.
STATUS_TERMINAL_STYLES = {"RUNNING": "bold yellow", "SUCCESS": "bold green", "FAILURE": "bold red", IDLE: "dim",
                          IDLE_FROM["RUNNING"]: "dim yellow", IDLE_FROM["SUCCESS"]: "dim green",
                          IDLE_FROM["FAILURE"]: "dim red"}

Emit = Callable[..., None]  # EventLog.emit: (t, event, **fields)
# a .btlog record (hri.bt.loggers.transitions) read at once for all: microseconds in 4 + 2 bytes
_RECORD = np.dtype([("low", "<u4"), ("high", "<u2"), ("uid", "<u2"), ("code", "u1")])


@dataclass(frozen=True)
class NodeState:
    """One node as a monitor shows it: depth in the tree, type ID, instance name, status."""

    depth: int
    node_id: str
    name: str
    status: str


def preorder(root: py_trees.behaviour.Behaviour) -> list[tuple[int, py_trees.behaviour.Behaviour]]:
    """``(depth, node)`` of every node, parents before children, children in order."""
    out: list[tuple[int, py_trees.behaviour.Behaviour]] = []
    stack = [(0, root)]
    while stack:
        depth, node = stack.pop()
        out.append((depth, node))
        stack.extend((depth + 1, child) for child in reversed(node.children))
    return out


def node_type_id(node: py_trees.behaviour.Behaviour) -> str:
    """The node's type as written in the tree file (``SubTree X`` for a subtree)."""
    tree_id = getattr(node, "tree_id", None)
    return f"SubTree {tree_id}" if tree_id else getattr(node, "type_id", None) or type(node).__name__


class TreeStatusLog:
    """Records one tree's node statuses after each tick as ``tree_status`` change events."""

    def __init__(self, tree: str, root: py_trees.behaviour.Behaviour, file: str) -> None:
        self.tree = tree
        self.file = file
        self._nodes = preorder(root)
        self._behaviours = [node for _, node in self._nodes]
        self._last = [IDLE] * len(self._nodes)
        self._last_raw = [Status.INVALID] * len(self._nodes)
        self._tick_us = -1  # the last tick's time, in whole microseconds as the records stamp it
        self._records = bytearray()  # the status transitions of the tick they are stamped with
        self._records_us = -1

    def start(self, t: float, emit: Emit) -> None:
        """Emit the ``tree_nodes`` legend: the file and the pre-order node type IDs."""
        emit(t, "tree_nodes", tree=self.tree, file=self.file,
             nodes=[node_type_id(node) for _, node in self._nodes])

    def record(self, t: float, emit: Emit) -> None:
        """After a tick: emit the changes since the last tick (nothing when none changed)."""
        statuses = list(map(_STATUS_OF, self._behaviours))
        if statuses == self._last_raw:
            return  # most ticks change nothing: one list comparison
        changes = {str(i): STATUS_NAMES[now] for i, (now, before) in enumerate(zip(statuses, self._last_raw))
                   if now is not before}
        self._last_raw = statuses
        for index, status in changes.items():
            self._last[int(index)] = status
        emit(t, "tree_status", tree=self.tree, changes=changes)

    def apply(self, changes: dict[str, str]) -> None:
        """Take the changes of a ``tree_status`` event (a mirror of a tree ticked elsewhere)."""
        for index, status in changes.items():
            self._last[int(index)] = status

    def observe(self, records: bytes) -> None:
        """Take status transitions of the tree (``.btlog`` records, :mod:`hri.bt.loggers.transitions`),
        as they come: those of a tick, or of a part of it. Only the newest tick's are kept."""
        if not records:
            return
        stamp = _stamp_us(records)
        if stamp != self._records_us:
            self._records.clear()
            self._records_us = stamp
        self._records += records

    def ticked(self, t: float) -> None:
        """The tree was ticked at ``t``: :meth:`current` shows what that tick did (the
        transitions :meth:`observe` took with its time; none: the tick changed nothing)."""
        self._tick_us = round(t * 1e6)

    def current(self) -> list[NodeState]:
        """Every node with the status it had after the last recorded tick, in pre-order; a node
        made IDLE in that tick after another status shows :data:`IDLE_FROM` of it (:func:`with_tick`)."""
        statuses = self._last
        if self._records and self._records_us == self._tick_us:
            statuses = with_tick(statuses, bytes(self._records))
        return [NodeState(depth, node_type_id(node), node.name, status)
                for (depth, node), status in zip(self._nodes, statuses)]


def _stamp_us(records: bytes) -> int:
    """The time of the first of ``records``, in microseconds."""
    return int.from_bytes(records[:6], "little")


def with_tick(statuses: Sequence[str], records: bytes) -> list[str]:
    """``statuses`` (every node after a tick, in pre-order) with each IDLE node that had
    another status in that tick's transition ``records`` shown as :data:`IDLE_FROM` of its last
    one. ValueError for a record of no node."""
    last: dict[int, str] = {}
    for transition in parse_transitions(records):
        if transition.status in IDLE_FROM:
            last[transition.uid - FIRST_UID] = transition.status
    shown = list(statuses)
    for index, status in last.items():
        if not 0 <= index < len(shown):
            raise ValueError(f"a status transition of node UID {index + FIRST_UID}, of {len(shown)} nodes")
        if shown[index] == IDLE:
            shown[index] = IDLE_FROM[status]
    return shown


def tick_records(records: bytes, t_us: int, period_us: int, end_us: int) -> bytes:
    """The transition records (``.btlog`` records, any order) of the last tick at or before
    ``t_us``: those of their latest time up to ``t_us``, if no tick came after it (ticks are
    ``period_us`` apart, and none at or after the run's end ``end_us``); else none (the later
    ticks changed no status)."""
    table = np.frombuffer(records, dtype=_RECORD, count=len(records) // _RECORD.itemsize)
    stamps = table["low"].astype(np.int64) | (table["high"].astype(np.int64) << 32)
    earlier = stamps[stamps <= t_us]
    if not earlier.size:
        return b""
    latest = int(earlier.max())
    if latest + period_us <= min(t_us, end_us - 1):
        return b""
    return table[stamps == latest].tobytes()


def statuses_at(events: Iterable[dict[str, Any]], tree: str, t: float) -> tuple[dict[str, Any], list[str]]:
    """``(tree_nodes event, statuses in pre-order)`` of ``tree`` after the last tick at or before ``t``.

    KeyError when the events have no ``tree_nodes`` legend for ``tree``.
    """
    legend: dict[str, Any] | None = None
    statuses: list[str] = []
    for event in events:
        if event.get("tree") != tree:
            continue
        if event["event"] == "tree_nodes":
            legend = event
            statuses = [IDLE] * len(event["nodes"])
        elif event["event"] == "tree_status" and legend is not None:
            if event["t"] > t + 1e-9:
                break
            for index, status in event["changes"].items():
                statuses[int(index)] = status
    if legend is None:
        raise KeyError(tree)
    return legend, statuses


def read_run_events(run_dir: Path) -> list[dict[str, Any]]:
    """The events of a run directory (``hri run --out``); HriError when there are none to read."""
    path = Path(run_dir) / "events.jsonl"
    if not Path(run_dir).is_dir():
        raise HriError("no such run directory", str(run_dir))
    try:
        lines = read_output(path).decode("utf-8").splitlines()
    except Missing:
        raise HriError("no events.jsonl here (is it a folder written by hri run --out?)", str(run_dir)) from None
    except Unreadable as err:  # a symlink out of the run folder, a FIFO, too large
        raise HriError(str(err), str(path)) from None
    except (OSError, UnicodeDecodeError) as err:
        raise HriError(f"cannot read: {getattr(err, 'strerror', None) or err}", str(path)) from None
    events = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            event = json.loads(line)
        except ValueError:
            raise HriError("not a JSON event", str(path), number) from None
        if not isinstance(event, dict) or not isinstance(event.get("t"), (int, float)) or "event" not in event:
            raise HriError("not an event (needs \"t\" and \"event\")", str(path), number)
        events.append(event)
    return events


def run_end(events: list[dict[str, Any]]) -> float:
    """The simulated time a run ended: its ``run_finished`` event, else its last event."""
    finished = [e["t"] for e in events if e["event"] == "run_finished"]
    return float(finished[-1] if finished else max((e["t"] for e in events), default=0.0))
