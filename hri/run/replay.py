"""A finished run's trees served to Groot2 again, paced by simulated time (``hri replay RUN_DIR --groot2``).

For users of Groot2 versions that can monitor a running tree but not open a ``.btlog``: each
of the run's ``person.btlog`` and ``robot.btlog`` (BehaviorTree.CPP 4.10's ``FileLogger2``
format, :mod:`hri.bt.loggers.btlog_reader`) is served by a
:class:`~hri.bt.loggers.groot2_publisher.Groot2Publisher` on the ports of ``hri run --groot2``
(:func:`hri.run.groot2.tree_ports`), as BehaviorTree.CPP's ``Groot2Publisher``
(``src/loggers/groot2_publisher.cpp``, BehaviorTree.CPP 4.10, Davide Faconti, 2025) would
serve the tree while it ran:

* **FULLTREE**: the XML the ``.btlog`` holds, byte for byte (the XML a live run serves).
* **STATUS**: the statuses after every recorded transition at or before the replay's
  simulated time, in the order of BehaviorTree.CPP's status buffer (:func:`xml_status_layout`):
  the publisher takes the file's 9-byte records as a live run hands it a tick's records.
* **BLACKBOARD**: a ``.btlog`` holds no blackboard, so the answer is what BehaviorTree.CPP's
  ``generateBlackboardsDump`` gives for the same tree with no blackboard entries: each scope
  asked for that the tree has (the main tree by its ID, a subtree by its ``_fullpath``) is
  JSON ``null`` (``ExportBlackboardToJSON`` of a blackboard without keys), with ``ROOT`` as
  ``null`` too when a subtree is asked for (its blackboard's root is the main tree's,
  ``Blackboard::create(parent)`` in ``xml_parsing.cpp``); a request naming no scope of the
  tree gets ``null`` (:func:`recorded_scopes`).

**Time.** A record's time counts microseconds from the file's first timestamp (hri writes
simulated time from 0). The replay's simulated time starts at ``start_s`` and runs at
``speed`` times the wall clock (:func:`time.monotonic`) until the last recorded transition of
either tree (or ``end_s``, when earlier). The statuses are brought up to the present each time
the replay wakes up, before a request is answered, so an answer is never older than the
request. :meth:`Replay.run` waits for requests at most :data:`MAX_WAIT_S` at a time, which is
how soon it notices its end or a signal.
"""

from __future__ import annotations

import math
import re
import time
import xml.etree.ElementTree as ET
from bisect import bisect_right
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping

import zmq

from hri.base.errors import HriError
from hri.base.untrusted import Missing, Unreadable, read_output
from hri.bt.blackboard import Blackboard
from hri.bt.loggers.btlog_reader import parse_btlog
from hri.bt.loggers.file_logger import SUFFIX
from hri.bt.loggers.groot2_publisher import DEFAULT_PORT, Access, Groot2Publisher
from hri.bt.loggers.transitions import RECORD_SIZE
from hri.run.groot2 import ROLE_ORDER, check_base_port, serve_trees, served_line
from hri.scenario.model import MAX_PEOPLE, PERSON_NAME_PATTERN

MAX_SPEED = 1e6  # the fastest replay: a simulated year in about half a minute
MAX_WAIT_S = 0.1  # the longest wait for a request: how late the end or a SIGTERM is noticed
LOOP_WAIT_S = 0.001  # with --loop, the shortest wait between two looks (a replay may last no time)
US = 1_000_000


@dataclass(frozen=True)
class RecordedTree:
    """One tree of a ``.btlog``: its XML, its status buffer's UID order, and its transition
    records (FileLogger2's 9 bytes each) in time order with their times."""

    xml: str
    layout: list[int]
    records: bytes
    times_us: list[int]

    @property
    def end_us(self) -> int:
        """The time of the last transition (0 without any)."""
        return self.times_us[-1] if self.times_us else 0


def xml_status_layout(xml: str) -> list[int]:
    """The UIDs in the order of BehaviorTree.CPP's status buffer, from the tree's logger XML:
    the ``<BehaviorTree>`` elements are its subtrees in the order they were created, each
    one's own nodes (a ``SubTree`` node has no children there) in UID order."""
    return [uid for tree in ET.fromstring(xml).findall("BehaviorTree")
            for uid in sorted(int(node.get("_uid", "")) for node in tree.iter() if "_uid" in node.attrib)]


def recorded_scopes(xml: str) -> dict[str, Blackboard]:
    """Empty blackboard scopes by the names Groot2 asks for them (the main tree's ID, each
    subtree's ``_fullpath``), each chained to its parent's as BehaviorTree.CPP chains them."""
    scopes: dict[str, Blackboard] = {}
    main: Blackboard | None = None
    for tree in ET.fromstring(xml).findall("BehaviorTree"):
        path = tree.get("_fullpath", "")
        scope = Blackboard(None if main is None else scopes.get(path.rpartition("/")[0], main))
        if main is None:
            main = scope
        scopes.setdefault(path or tree.get("ID", ""), scope)  # the first of a name, as unordered_map::insert
    return scopes


def read_recorded_tree(path: Path) -> RecordedTree:
    """The tree of the ``.btlog`` at ``path``; an HriError ``PATH: message`` when it cannot be read."""
    try:
        data = read_output(Path(path))
    except Missing:
        raise HriError("no such file (hri run --out writes one for each tree)", str(path)) from None
    except Unreadable as err:  # a symlink out of the run folder, a FIFO, too large
        raise HriError(str(err), str(path)) from None
    except OSError as err:
        raise HriError(f"cannot read: {err.strerror}", str(path)) from None
    try:
        log = parse_btlog(data)
        layout = xml_status_layout(log.xml)
    except UnicodeDecodeError:
        raise HriError("the tree XML is not UTF-8", str(path)) from None
    except ET.ParseError as err:
        raise HriError(f"the tree XML does not parse ({err})", str(path)) from None
    except ValueError as err:  # BtLogError, or a _uid that is not a number
        raise HriError(f"not a FileLogger2 file: {err}", str(path)) from None
    records = data[len(data) - RECORD_SIZE * len(log.transitions):] if log.transitions else b""
    times = [transition.time_us for transition in log.transitions]
    if any(later < earlier for earlier, later in zip(times, times[1:])):
        records, times = _in_time_order(records, times)
    return RecordedTree(log.xml, layout, records, times)


def _in_time_order(records: bytes, times: list[int]) -> tuple[bytes, list[int]]:
    """The records sorted by time, those of the same time in the order of the file."""
    order = sorted(range(len(times)), key=times.__getitem__)
    return (b"".join(records[RECORD_SIZE * i:RECORD_SIZE * (i + 1)] for i in order),
            [times[i] for i in order])


def read_run(run_dir: Path) -> dict[str, RecordedTree]:
    """The trees of a run directory, by name: ``person`` and ``robot``; of a run with several
    people each person's (their ``NAME.btlog``, in the order of their names), then ``robot``."""
    if not Path(run_dir).is_dir():
        raise HriError("no such run directory", str(run_dir))
    return {role: read_recorded_tree(Path(run_dir) / f"{role}{SUFFIX}") for role in run_trees(Path(run_dir))}


def run_trees(run_dir: Path) -> tuple[str, ...]:
    """The names of a run directory's trees (:func:`read_run`): a person's ``.btlog`` named like
    a person (``hri.scenario.model.PERSON_NAME_PATTERN``), at most ``MAX_PEOPLE`` of them."""
    if (run_dir / f"{ROLE_ORDER[0]}{SUFFIX}").exists():
        return ROLE_ORDER
    robot = ROLE_ORDER[-1]
    people = sorted(path.name[:-len(SUFFIX)] for path in run_dir.glob(f"*{SUFFIX}")
                    if re.fullmatch(PERSON_NAME_PATTERN, path.name[:-len(SUFFIX)]) and path.name != f"{robot}{SUFFIX}")
    if not people:
        return ROLE_ORDER  # the missing person.btlog is then the error
    if len(people) > MAX_PEOPLE:
        raise HriError(f"{len(people)} persons' .btlog files, at most {MAX_PEOPLE}", str(run_dir))
    return (*people, robot)


class TreeReplay:
    """One recorded tree on its publisher, its statuses moved forward in simulated time."""

    def __init__(self, tree: RecordedTree, port: int, access: Access = Access()) -> None:
        self.tree = tree
        scopes = recorded_scopes(tree.xml)
        self.publisher = Groot2Publisher(tree.xml, tree.layout, port, lambda: scopes, access=access)
        self.applied = 0  # how many records the publisher has taken

    def rewind(self, t_us: int) -> None:
        """Back to the statuses at ``t_us``: from a tree not yet ticked, the records up to it."""
        self.publisher.reset_statuses()
        self.applied = 0
        self.advance(t_us)

    def advance(self, t_us: int) -> None:
        """Apply the records at or before ``t_us`` that are not applied yet."""
        upto = bisect_right(self.tree.times_us, t_us)
        if upto > self.applied:
            self.publisher.apply(self.tree.records[RECORD_SIZE * self.applied:RECORD_SIZE * upto])
            self.applied = upto


def replay_span(trees: Mapping[str, RecordedTree], start_s: float = 0.0,
                end_s: float | None = None) -> tuple[int, int]:
    """The replay's first and last simulated time in microseconds: from ``start_s`` to the last
    transition of any tree, or to ``end_s`` when that is earlier; HriError naming the option."""
    last = max(tree.end_us for tree in trees.values())
    if not math.isfinite(start_s) or start_s < 0:
        raise HriError(f"--from {start_s:g}: must be a simulated time of 0 s or more")
    if round(start_s * US) > last:
        raise HriError(f"--from {start_s:g}: the recording ends at {last / US:g} s")
    if end_s is None:
        return round(start_s * US), last
    if not math.isfinite(end_s):
        raise HriError(f"--to {end_s:g}: must be a simulated time in seconds")
    if end_s <= start_s:
        raise HriError(f"--to {end_s:g}: must come after --from ({start_s:g} s)")
    return round(start_s * US), min(round(end_s * US), last)


class Replay:
    """A run's recorded trees served to Groot2 on the ports of ``hri run --groot2`` (at
    ``access.host``, 127.0.0.1 by default), their statuses following a simulated clock that
    runs ``speed`` times the wall clock."""

    def __init__(self, trees: Mapping[str, RecordedTree], base: int = DEFAULT_PORT, speed: float = 1.0,
                 start_s: float = 0.0, end_s: float | None = None,
                 clock: Callable[[], float] = time.monotonic, loop: bool = False,
                 access: Access = Access()) -> None:
        if not math.isfinite(speed) or speed <= 0 or speed > MAX_SPEED:
            raise HriError(f"--speed {speed:g}: must be a positive number up to {MAX_SPEED:g} (1 is real time)")
        check_base_port(base, len(trees))
        self.start_us, self.end_us = replay_span(trees, start_s, end_s)
        self.speed = speed
        self.loop = loop  # at the end, start again
        self.trees: dict[str, TreeReplay] = serve_trees(
            base, lambda role, port: TreeReplay(trees[role], port, access), lambda tree: tree.publisher.close(),
            access.host, tuple(trees))
        self._poller = zmq.Poller()
        for tree in self.trees.values():
            tree.advance(self.start_us)
            self._poller.register(tree.publisher.server, zmq.POLLIN)
        self._clock = clock
        self._t0 = clock()

    def now_us(self) -> int:
        """The replay's simulated time (microseconds), at most its end."""
        return min(self._clock_us(), self.end_us)

    def _clock_us(self) -> int:
        return self.start_us + round((self._clock() - self._t0) * self.speed * US)

    def step(self) -> bool:
        """Bring the statuses up to now and answer the requests waiting; False once at the end
        (with ``loop``, once past it the replay starts again from its start instead)."""
        if self.loop and self._clock_us() > self.end_us:
            self._t0 = self._clock()
            for tree in self.trees.values():
                tree.rewind(self.start_us)
        now = self.now_us()
        for tree in self.trees.values():
            tree.advance(now)
            tree.publisher.poll()
        return self.loop or now < self.end_us

    def run(self) -> float:
        """Serve until the end of the replay (with ``loop``, until interrupted); the simulated
        time it ended at (seconds)."""
        shortest_s = LOOP_WAIT_S if self.loop else 0.0  # a replay of no length does not spin
        while self.step():
            left_s = (self.end_us - self.now_us()) / US / self.speed
            self._poller.poll(1000 * min(MAX_WAIT_S, max(left_s, shortest_s)))
        return self.end_us / US

    def describe(self) -> list[str]:
        """One line per tree saying where it is served, then one saying what is replayed."""
        lines = [f"{served_line(role, tree.publisher)}, {len(tree.tree.times_us)} transitions"
                 for role, tree in self.trees.items()]
        span = (self.end_us - self.start_us) / US
        lines.append(f"replaying {self.start_us / US:g} to {self.end_us / US:g} s simulated at {self.speed:g}x "
                     f"({span / self.speed:.1f} s)" + (", again and again until interrupted" if self.loop else ""))
        return lines

    def close(self) -> None:
        """Close every publisher's sockets."""
        while self.trees:
            self.trees.popitem()[1].publisher.close()

    def __enter__(self) -> "Replay":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

