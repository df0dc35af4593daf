"""Groot2's hooks, breakpoints and recording: hri's publisher against BehaviorTree.CPP's.

The client of ``test_groot2_publisher`` (written from ``groot2_protocol.h``) sends the same hook
and recording requests to hri's publisher and to behaviortreepy's ``Groot2Publisher`` serving
the same tree, ticked on demand, and compares the answers, the breakpoint announcements on
the PUB socket, the ticks' statuses and the recorded transitions. Each publisher runs apart
from the client: hri's in a thread that polls it, BehaviorTree.CPP's in a process of its own
(``btcpp_groot2_server.py``: behaviortreepy keeps Python's lock while a breakpoint holds its tick).

What the packaged behaviortreepy (BehaviorTree.CPP 4.8.2) does otherwise than 4.10, whose
sources hri follows, is pinned and checked against 4.10's code by hand:

* 4.8.2's ``insertHook`` puts every hook before the tick, whatever its position: POST hooks
  are compared with 4.10's behaviour only;
* 4.8.2's server loop does not catch the exception of a malformed hook request (its thread
  ends the process): those requests go to hri alone, with 4.10's answers;
* ``HOOKS_DUMP`` lists the hooks of a ``std::unordered_map``, in its order: compared as sorted
  lists;
* a recording's times: BehaviorTree.CPP's are wall-clock microseconds, hri's simulated time
  (0 here, where nobody sets the tree's clock): only the (UID, status) pairs are compared, and
  that ``start`` answers with a decimal number;
* 4.8.2's server thread sets the flag its heartbeat thread loops on (4.10 sets it when the
  publisher is made), so that thread may find it unset and end at once, and a silent client's
  breakpoint then holds for ever: the heartbeat test starts such a process again (at most
  twice more).
"""

from __future__ import annotations

import json
import queue
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import zmq
from py_trees.common import Status

from hri.bt.loggers.groot2_hooks import JsonError, get_int, parse
from hri.bt.loggers.groot2_publisher import Groot2Publisher, blackboard_scopes, status_layout
from hri.bt.loggers.transitions import TransitionRecorder
from hri.bt.loggers.tree_xml import nodes_by_uid, tree_xml
from hri.bt.node_status import SKIPPED, status_name
from test_btlog import SUBTREES, builtin_registry, load
from test_groot2_publisher import Client, free_port_pair

SERVER_SCRIPT = Path(__file__).with_name("btcpp_groot2_server.py")
HEARTBEAT_MS = 5000  # BehaviorTree.CPP's max_heartbeat_delay
SHORT_HEARTBEAT_MS = 300
HELD_S = 0.3  # how long a held tick is watched to stay held
TICK_TIMEOUT_S = 5.0


def hook(uid: int, mode: int = 0, position: int = 0, desired: str = "SKIPPED", once: bool = False,
         enabled: bool = True) -> dict:
    """A hook's JSON, as ``to_json`` writes it."""
    return {"enabled": enabled, "uid": uid, "mode": mode, "once": once, "desired_status": desired,
            "position": position}


def unlock(uid: int, desired: str, remove: bool, position: int = 0) -> bytes:
    return json.dumps({"uid": uid, "position": position, "desired_status": desired,
                       "remove_when_done": remove}).encode()


class TickedServer:
    """A publisher of a tree ticked on demand: :meth:`tick` asks for a tick, :meth:`result` waits for its status."""

    def __init__(self) -> None:
        self._results: queue.Queue[str] = queue.Queue()

    def result(self, timeout_s: float = TICK_TIMEOUT_S) -> str | None:
        """The status of the tick asked for, or None when it has not ended within ``timeout_s``."""
        try:
            return self._results.get(timeout=timeout_s)
        except queue.Empty:
            return None


class HriServer(TickedServer):
    """hri's publisher of a tree, polled by a thread of its own that also ticks the tree on demand.
    A breakpoint waits in that thread, after handing on the tick's transitions so far (as
    :meth:`hri.run.groot2.LiveTrees.pause` does)."""

    def __init__(self, xml: str, heartbeat_ms: int = HEARTBEAT_MS) -> None:
        super().__init__()
        self.tree = load(xml)
        self.recorder = TransitionRecorder(self.tree.root)
        scopes = blackboard_scopes(self.tree)
        self.port = free_port_pair()
        self.publisher = Groot2Publisher(tree_xml(self.tree, builtin_registry()), status_layout(self.tree.root),
                                         self.port, lambda: scopes, nodes=nodes_by_uid(self.tree.root),
                                         pause=self._pause)
        self.publisher.max_heartbeat_delay_s = heartbeat_ms / 1000
        self._ticks: queue.Queue[bool] = queue.Queue()
        self._stop = False
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _pause(self, until) -> None:
        self.publisher.apply(self.recorder.take())
        self.publisher.wait_polling(until)

    def _serve(self) -> None:
        while not self._stop:
            try:
                self._ticks.get_nowait()
            except queue.Empty:
                self.publisher.poll(0.005)
                continue
            status = self.tree.tick_once()
            self.publisher.apply(self.recorder.take())
            self._results.put(status_name(status))

    def tick(self) -> None:
        self._ticks.put(True)

    def close(self) -> None:
        self._stop = True
        self._thread.join()
        self.publisher.close()


class BtcppServer(TickedServer):
    """behaviortreepy's publisher of a tree, in ``btcpp_groot2_server.py``: its lines are the results."""

    def __init__(self, xml: str, tmp_path: Path, heartbeat_ms: int = HEARTBEAT_MS) -> None:
        super().__init__()
        tree_file = tmp_path / "tree.xml"
        tree_file.write_text(xml, encoding="utf-8")
        self.port = free_port_pair()
        self.process = subprocess.Popen([sys.executable, str(SERVER_SCRIPT), str(self.port), str(heartbeat_ms),
                                         str(tree_file)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        threading.Thread(target=self._read, daemon=True).start()
        assert self.result(30) == "ready"

    def _read(self) -> None:
        for line in self.process.stdout:
            self._results.put(line.strip())

    def tick(self) -> None:
        self.process.stdin.write("tick\n")
        self.process.stdin.flush()

    def close(self) -> None:
        self.process.stdin.close()
        try:
            self.process.wait(timeout=3)  # one held at a breakpoint does not end by itself
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


class Side:
    """One publisher with a client on its server and a subscriber on its PUB socket."""

    def __init__(self, server: HriServer | BtcppServer) -> None:
        self.server = server
        self.client = Client(server.port)
        self.breakpoints = zmq.Context.instance().socket(zmq.SUB)
        self.breakpoints.setsockopt(zmq.LINGER, 0)
        self.breakpoints.setsockopt(zmq.SUBSCRIBE, b"")
        self.breakpoints.connect(f"tcp://127.0.0.1:{server.port + 1}")

    def ask(self, kind: str, *more: bytes) -> list[bytes]:
        """The reply to one request: its header's first 6 bytes (the tree id is random), then the answer."""
        header, answer = self.client.ask(kind, *more)
        return [header[:6], *answer]

    def hooks(self) -> list[dict]:
        """HOOKS_DUMP, sorted (BehaviorTree.CPP lists an unordered_map)."""
        _, (text,) = self.client.ask("D")
        return sorted(json.loads(text), key=lambda h: (h["position"], h["uid"]))

    def transitions(self) -> list[tuple[int, int]]:
        """GET_TRANSITIONS as (UID, status) pairs (their times are pinned: wall clock or simulated)."""
        _, (records,) = self.client.ask("t")
        return [struct.unpack_from("<HB", records, i + 6) for i in range(0, len(records), 9)]

    def reached(self, timeout_s: float = TICK_TIMEOUT_S) -> list[bytes] | None:
        """The next BREAKPOINT_REACHED on the PUB socket (REPLACE hooks announce themselves too)."""
        if not self.breakpoints.poll(round(timeout_s * 1000)):
            return None
        return self.breakpoints.recv_multipart()

    def close(self) -> None:
        self.client.close()
        self.breakpoints.close(0)
        self.server.close()


@pytest.fixture
def sides(tmp_path, request):
    bt = pytest.importorskip("behaviortreepy")
    if not bt.GROOT2_AVAILABLE:
        pytest.skip("behaviortreepy built without Groot2")
    heartbeat_ms = getattr(request, "param", HEARTBEAT_MS)
    both = {"hri": Side(HriServer(SUBTREES, heartbeat_ms)),
            "btcpp": Side(BtcppServer(SUBTREES, tmp_path, heartbeat_ms))}
    time.sleep(0.2)  # a subscriber misses what was published before it joined
    yield both
    for side in both.values():
        side.close()


@pytest.fixture
def ours():
    side = Side(HriServer(SUBTREES))
    time.sleep(0.2)
    yield side
    side.close()


def both_ask(sides: dict[str, Side], kind: str, *more: bytes) -> list[bytes]:
    answers = {name: side.ask(kind, *more) for name, side in sides.items()}
    assert answers["hri"] == answers["btcpp"], (kind, more)
    return answers["hri"]


def both_hooks(sides: dict[str, Side]) -> list[dict]:
    hooks = {name: side.hooks() for name, side in sides.items()}
    assert hooks["hri"] == hooks["btcpp"]
    return hooks["hri"]


def both_tick(sides: dict[str, Side]) -> str | None:
    for side in sides.values():
        side.server.tick()
    results = {name: side.server.result() for name, side in sides.items()}
    assert results["hri"] == results["btcpp"]
    return results["hri"]


# --- hri against BehaviorTree.CPP ---------------------------------------------------------------

def test_hook_requests_get_the_same_answers(sides):
    assert both_ask(sides, "D") == [b"\x02D\xee\xff\xc0\x00", b"[]"]
    assert both_ask(sides, "I", json.dumps(hook(2, mode=1, desired="FAILURE")).encode()) == [b"\x02I\xee\xff\xc0\x00"]
    # a list of hooks; a UID the tree does not have is left out without a word
    both_ask(sides, "I", json.dumps([hook(4, enabled=False), hook(99, mode=1)]).encode())
    assert both_hooks(sides) == [hook(2, mode=1, desired="FAILURE"), hook(4, enabled=False)]
    both_ask(sides, "I", json.dumps(hook(2, mode=1, desired="SUCCESS", once=True)).encode())  # updates it
    assert both_hooks(sides)[0] == hook(2, mode=1, desired="SUCCESS", once=True)
    both_ask(sides, "R", b'{"uid": 4, "position": 0}')
    assert both_ask(sides, "R", b'{"uid": 4, "position": 0}') == [b"error", b"Node ID not found"]
    assert both_ask(sides, "R", b'{"uid": 999, "position": 0}') == [b"error", b"Node ID not found"]
    # an unlock sets the hook's status: SUCCESS and FAILURE stay, anything else is SKIPPED
    both_ask(sides, "U", unlock(2, "RUNNING", remove=False))
    assert both_hooks(sides) == [hook(2, mode=1, desired="SKIPPED", once=True)]
    assert both_ask(sides, "U", unlock(5, "FAILURE", remove=False)) == [b"error", b"Node ID not found"]
    both_ask(sides, "X")
    assert both_hooks(sides) == [hook(2, mode=1, desired="SKIPPED", once=True, enabled=False)]
    both_ask(sides, "A")
    assert both_hooks(sides) == []
    for kind in "IURr":
        assert both_ask(sides, kind) == [b"error", b"must be 2 parts message"]
    assert both_ask(sides, "I", b"{}", b"{}") == [b"error", b"must be 2 parts message"]


def test_a_replaced_tick_and_the_recording_agree(sides):
    starts = [side.ask("r", b"start") for side in sides.values()]
    assert all(header == b"\x02r\xee\xff\xc0\x00" and start.isdigit() for header, start in starts)
    # the AlwaysFailure under s1's RunOnce succeeds instead: the Fallback does not go on to Leaf
    both_ask(sides, "I", json.dumps(hook(8, mode=1, desired="SUCCESS")).encode())
    assert both_tick(sides) == "SUCCESS"
    recorded = {name: side.transitions() for name, side in sides.items()}
    assert recorded["hri"] == recorded["btcpp"]
    assert (8, 2) in recorded["hri"] and (10, 2) not in recorded["hri"] and (16, 2) in recorded["hri"]
    assert both_ask(sides, "t") == [b"\x02t\xee\xff\xc0\x00", b""]  # taken, so forgotten
    assert both_ask(sides, "r", b"stop") == [b"\x02r\xee\xff\xc0\x00"]
    assert both_ask(sides, "r", b"pause") == [b"\x02r\xee\xff\xc0\x00"]
    both_tick(sides)
    assert both_ask(sides, "t") == [b"\x02t\xee\xff\xc0\x00", b""]


def test_a_breakpoint_holds_the_tick_until_groot2_unlocks_it(sides):
    for side in sides.values():
        side.ask("r", b"start")
    both_ask(sides, "I", json.dumps(hook(4, mode=0)).encode())  # before "x'y" in the Parallel
    for side in sides.values():
        side.server.tick()
    reached = {name: side.reached() for name, side in sides.items()}
    assert reached["hri"][0][:2] == reached["btcpp"][0][:2] == b"\x02N" and len(reached["hri"][0]) == 6
    assert reached["hri"][1] == reached["btcpp"][1] == b"4"
    assert all(side.server.result(HELD_S) is None for side in sides.values())
    # Groot2 looks meanwhile: the tree as it stands at the breakpoint, the hooks, the blackboards
    _, status = both_ask(sides, "S")
    assert dict(struct.unpack_from("<HB", status, i) for i in range(0, len(status), 3))[3] == 1  # Parallel RUNNING
    assert both_hooks(sides) == [hook(4)]
    both_ask(sides, "B", b"Main")
    both_ask(sides, "U", unlock(4, "FAILURE", remove=True))
    results = {name: side.server.result() for name, side in sides.items()}
    assert results["hri"] == results["btcpp"] == "FAILURE"  # the Parallel fails, so does the Sequence
    recorded = {name: side.transitions() for name, side in sides.items()}
    assert recorded["hri"] == recorded["btcpp"] and (4, 3) in recorded["hri"]
    assert both_hooks(sides) == []  # removed when done
    assert both_tick(sides) == "SUCCESS"


def silent_client(side: Side) -> tuple[str | None, float, list[dict]]:
    """Set a breakpoint, tick, then ask nothing: the tick's status (None: still held after the
    heartbeat delay and 2 s more), how long it was held, and the hooks once requests come again."""
    side.ask("I", json.dumps(hook(2, mode=0, desired="FAILURE")).encode())
    started = time.monotonic()
    side.server.tick()
    assert side.reached() is not None
    result = side.server.result(SHORT_HEARTBEAT_MS / 1000 + 2)
    held = time.monotonic() - started
    if result is None:
        return None, held, []
    side.ask("S")
    time.sleep(0.05)  # BehaviorTree.CPP's heartbeat thread looks every 10 ms
    return result, held, side.hooks()


@pytest.mark.parametrize("sides", [SHORT_HEARTBEAT_MS], indirect=True)
def test_a_client_gone_silent_lets_the_breakpoint_go_and_its_hooks_wake_with_it(sides, tmp_path):
    ours, theirs = silent_client(sides["hri"]), silent_client(sides["btcpp"])
    for _ in range(5):  # 4.8.2's heartbeat thread may end as it starts (pinned above): a new process
        if theirs[0] is not None:
            break
        side = Side(BtcppServer(SUBTREES, tmp_path, SHORT_HEARTBEAT_MS))
        time.sleep(0.2)
        try:
            theirs = silent_client(side)
        finally:
            side.close()
    # no request for the heartbeat delay: every hook is disabled, the node ticks as without it;
    # a request again, and the hooks are enabled again
    assert ours[0] == theirs[0] == "SUCCESS"
    assert ours[2] == theirs[2] == [hook(2, desired="FAILURE")]
    assert min(ours[1], theirs[1]) >= SHORT_HEARTBEAT_MS / 1000


# --- 4.10's behaviour where 4.8.2 differs (hri alone) -------------------------------------------

def test_post_hooks_run_after_the_tick_and_replace_its_status(ours):
    ours.ask("r", b"start")
    ours.ask("I", json.dumps([hook(2, mode=1, position=1, desired="FAILURE"), hook(6, mode=1)]).encode())
    assert [(h["uid"], h["position"]) for h in json.loads(ours.client.ask("D")[1][0])] == [(6, 0), (2, 1)]
    ours.server.tick()
    assert ours.server.result() == "FAILURE"
    assert ours.transitions()[:3] == [(1, 1), (2, 3), (2, 0)]  # AlwaysSuccess ticked, then FAILURE
    assert ours.reached()[1] == b"2"  # REPLACE hooks are announced too (the Sequence stopped before 6)
    # a POST breakpoint holds the tick after the node ran
    ours.ask("A")
    ours.ask("I", json.dumps(hook(3, mode=0, position=1)).encode())
    ours.server.tick()
    assert ours.reached()[1] == b"3" and ours.server.result(HELD_S) is None
    assert ours.ask("U", unlock(3, "IDLE", remove=False)) == [b"error", b"Node ID not found"]  # not PRE
    ours.ask("U", unlock(3, "IDLE", remove=False, position=1))
    assert ours.server.result() == "SUCCESS"


MALFORMED_HOOKS = [
    (["I", b"{}"], "[json.exception.out_of_range.403] key 'uid' not found"),
    (["I", b"[1]"], "[json.exception.type_error.304] cannot use at() with number"),
    (["I", b'{"uid": "2", "position": 0}'], "[json.exception.type_error.302] type must be number, but is string"),
    (["I", json.dumps({**hook(2), "enabled": 1}).encode()],
     "[json.exception.type_error.302] type must be boolean, but is number"),
    (["I", json.dumps(hook(2, desired="MAYBE")).encode()], "Cannot convert this to NodeStatus: MAYBE"),
    (["I", b"NaN"], "[json.exception.parse_error.101] parse error at line 1, column 1: syntax error"),
    (["I", b'{"uid": 1e999}'], "[json.exception.out_of_range.406] number overflow parsing '1e999'"),
    (["I", b"\xff"], "[json.exception.parse_error.101] parse error: invalid UTF-8"),
    (["U", b'{"uid": 2}'], "[json.exception.out_of_range.403] key 'desired_status' not found"),
    (["U", b'{"uid": 2, "desired_status": 1}'], "[json.exception.type_error.302] type must be string, but is number"),
    (["R", b'{"uid": 2, "position": null}'], "[json.exception.type_error.302] type must be number, but is null"),
    (["R", b'"x"'], "[json.exception.type_error.304] cannot use at() with string"),
]


def test_malformed_hook_requests_get_the_exception_bt_cpp_4_10_answers_with(ours):
    for (kind, part), message in MALFORMED_HOOKS:
        reply = ours.ask(kind, part)
        assert reply[0] == b"error" and reply[1].decode().startswith(message), (part, reply)
    assert ours.hooks() == []
    # a list is taken hook by hook: those before the bad one stay
    ours.ask("I", json.dumps([hook(2), {"uid": 3}]).encode())
    assert ours.hooks() == [hook(2)]
    ours.server.tick()
    assert ours.reached() is not None  # the tree still ticks, and the hook holds it
    ours.ask("U", unlock(2, "SUCCESS", remove=True))
    assert ours.server.result() == "SUCCESS"


def test_numbers_convert_as_nlohmann_json_casts_them():
    assert get_int(65538, 16, signed=False) == 2 and get_int(-1, 16, signed=False) == 65535
    assert get_int(2.9, 16, signed=False) == 2 and get_int(True, 32) == 1
    assert get_int(2**31, 32) == -2**31 and get_int(2**70, 16, signed=False) == 0
    assert parse(b' [1, {"a": null}] ') == [1, {"a": None}]
    with pytest.raises(JsonError, match="parse_error"):
        parse(b"[1] 2")


def test_the_callbacks_run_where_execute_tick_runs_them():
    """BehaviorTree.CPP 4.10's executeTick: a pre-condition that decides the status skips the
    PRE callback, the POST callback still sees the status (here SKIPPED) and may replace it."""
    tree = load('<root BTCPP_format="4"><BehaviorTree ID="Main"><Sequence>'
                '<AlwaysSuccess _skipIf="true"/><AlwaysFailure/></Sequence></BehaviorTree></root>')
    _, skipped, failing = nodes_by_uid(tree.root)
    calls = []
    skipped.pre_tick = lambda node: calls.append(("pre", node.name)) or Status.SUCCESS
    skipped.post_tick = lambda node, status: calls.append(("post", status)) or Status.SUCCESS
    failing.pre_tick = lambda node: calls.append(("pre", node.name)) or SKIPPED
    assert status_name(tree.tick_once()) == "FAILURE"
    assert calls == [("post", SKIPPED), ("pre", "AlwaysFailure")]
    failing.pre_tick = lambda node: Status.SUCCESS  # replaces the tick
    assert status_name(tree.tick_once()) == "SUCCESS"
