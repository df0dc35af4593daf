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
"""

from __future__ import annotations

import json
import operator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

import py_trees
from py_trees.common import Status

from hri.base.errors import HriError
from hri.base.untrusted import Missing, Unreadable, read_output

IDLE = "IDLE"
_STATUS_OF = operator.attrgetter("status")  # every tick, over every node
STATUS_NAMES = {Status.INVALID: IDLE, Status.RUNNING: "RUNNING", Status.SUCCESS: "SUCCESS",
                Status.FAILURE: "FAILURE"}
# Groot2's colours, so a picture reads like its monitor: running orange, success green,
# failure red, idle light grey.
STATUS_COLOURS = {"RUNNING": "#ffa726", "SUCCESS": "#66bb6a", "FAILURE": "#ef5350", IDLE: "#e0e0e0"}
# The same on a terminal, by ANSI name: a 16-colour terminal would turn orange into the red of
# FAILURE, and light grey vanishes on a light background.
STATUS_TERMINAL_STYLES = {"RUNNING": "bold yellow", "SUCCESS": "bold green", "FAILURE": "bold red", IDLE: "dim"}

Emit = Callable[..., None]  # EventLog.emit: (t, event, **fields)


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

    def current(self) -> list[NodeState]:
        """Every node with the status it had after the last recorded tick, in pre-order."""
        return [NodeState(depth, node_type_id(node), node.name, status)
                for (depth, node), status in zip(self._nodes, self._last)]


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
