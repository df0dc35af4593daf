"""``hri replay RUN_DIR --groot2``: a finished run's trees served to Groot2 from its ``.btlog``
files, asked through the client written from ``groot2_protocol.h`` (test_groot2_publisher)."""

from __future__ import annotations

import itertools
import os
import signal
import struct
import subprocess
import sys
from pathlib import Path

import msgpack
import pytest

import btcpp_oracle

from hri.bt.loggers.btlog_reader import read_btlog
from hri.bt.loggers.groot2_publisher import status_layout
from hri.bt.loggers.tree_xml import tree_xml
from hri.cli.main import main
from hri.run.groot2 import tree_ports
from hri.bt.loggers.file_logger import btlog_header
from hri.run.replay import Replay, read_recorded_tree, read_run, recorded_scopes, xml_status_layout
from hri.run.sim import run_scenario
from hri.scenario.load import load_scenario
from test_btlog import SUBTREES, builtin_registry, load
from test_groot2_publisher import Client, btcpp_publisher, freed
from test_groot2_run import _free_quad

CODES = {"IDLE": 0, "RUNNING": 1, "SUCCESS": 2, "FAILURE": 3, "SKIPPED": 4}
IDLE_FROM = 10  # groot2_protocol.h: IDLE_FROM_SUCCESS = 10 + SUCCESS, ...


class FakeClock:
    """Wall-clock seconds the test sets by hand."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("run")
    run_scenario(load_scenario("coexistence"), 10.0, seed=1, out_dir=out)
    return out


def statuses_at(path: Path, t_us: int) -> dict[int, int]:
    """What a STATUS answer holds at ``t_us``, computed apart from the replay: every
    transition of the file at or before ``t_us`` in the file's order."""
    shown: dict[int, int] = {}
    last: dict[int, int] = {}
    for transition in read_btlog(path).transitions:
        if transition.time_us <= t_us:
            _show(transition, shown, last)
    return shown


def _show(transition, shown: dict[int, int], last: dict[int, int]) -> None:
    """A reset to IDLE shows as 10 + the status the node had (BehaviorTree.CPP's publisher callback)."""
    code = CODES[transition.status]
    shown[transition.uid] = IDLE_FROM + last.get(transition.uid, 0) if code == 0 else code
    last[transition.uid] = code


def answer(status: bytes) -> dict[int, int]:
    """A STATUS answer's (uid, status) triples, the nodes that are not plain IDLE."""
    triples = [struct.unpack_from("<HB", status, i) for i in range(0, len(status), 3)]
    return {uid: code for uid, code in triples if code}


def tick_times(path: Path) -> list[int]:
    return sorted({t.time_us for t in read_btlog(path).transitions})


def changing_ticks(path: Path) -> list[int]:
    """The times whose transitions leave some node with another status than before them."""
    shown: dict[int, int] = {}
    last: dict[int, int] = {}
    changing = []
    for t_us, transitions in itertools.groupby(read_btlog(path).transitions, key=lambda t: t.time_us):
        before = dict(shown)
        for transition in transitions:
            _show(transition, shown, last)
        if shown != before:
            changing.append(t_us)
    return changing


# --- the answers ------------------------------------------------------------------------------

def test_fulltree_is_the_recorded_xml_and_status_is_the_btlog_applied_up_to_the_replay_time(run_dir):
    chosen = set()  # for each tree: a tick that changes a status, just after it, just before the next, the last
    for role in ("person", "robot"):
        ticks, changing = tick_times(run_dir / f"{role}.btlog"), changing_ticks(run_dir / f"{role}.btlog")
        at = changing[len(changing) // 2]
        chosen |= {at, at + 1, ticks[ticks.index(at) + 1] - 1, ticks[-1]}
    clock = FakeClock()
    base = _free_quad()
    ports = tree_ports(base)
    with Replay(read_run(run_dir), base, speed=1.0, clock=clock) as replay:
        clients = {role: Client(port, replay.step) for role, port in ports.items()}
        for role, client in clients.items():
            header, (xml,) = client.ask("T")
            assert header[:2] == b"\x02T" and xml == read_btlog(run_dir / f"{role}.btlog").xml.encode()
        for t_us in sorted(chosen):  # the replay goes forward only
            clock.now = t_us / 1e6
            for role, client in clients.items():
                _, (status,) = client.ask("S")
                assert answer(status) == statuses_at(run_dir / f"{role}.btlog", t_us), (role, t_us)
                assert len(status) == 3 * len(replay.trees[role].tree.layout)
        for client in clients.values():
            client.close()
    assert freed(range(base, base + 4))


def test_from_starts_with_the_statuses_of_that_time_and_the_replay_ends_at_the_last_transition(run_dir):
    ticks = tick_times(run_dir / "robot.btlog")
    clock = FakeClock()
    start = ticks[100]
    with Replay(read_run(run_dir), _free_quad(), speed=10.0, start_s=start / 1e6, clock=clock) as replay:
        client = Client(replay.trees["robot"].publisher.port, replay.step)
        _, (status,) = client.ask("S")
        assert answer(status) == statuses_at(run_dir / "robot.btlog", start)
        clock.now = 0.5  # 5 simulated seconds later
        _, (status,) = client.ask("S")
        assert answer(status) == statuses_at(run_dir / "robot.btlog", start + 5_000_000)
        client.close()
        clock.now = 100.0
        assert replay.step() is False and replay.run() == ticks[-1] / 1e6 == 9.95


def test_loop_starts_again_with_the_statuses_of_from(run_dir):
    """With ``loop`` the end is a new start: the statuses go back to those at ``--from``
    (nodes ticked only later are IDLE again), then forward as the first time."""
    ticks = tick_times(run_dir / "robot.btlog")
    clock = FakeClock()
    start = ticks[1]  # early: nodes of the robot's cycle not ticked yet
    assert statuses_at(run_dir / "robot.btlog", start) != statuses_at(run_dir / "robot.btlog", ticks[-1])
    with Replay(read_run(run_dir), _free_quad(), speed=10.0, start_s=start / 1e6, clock=clock, loop=True) as replay:
        client = Client(replay.trees["robot"].publisher.port, replay.step)
        first = [start, start + 5_000_000]
        clock.now = (ticks[-1] - start) / 1e7  # at the last transition
        _, (status,) = client.ask("S")
        assert answer(status) == statuses_at(run_dir / "robot.btlog", ticks[-1])
        clock.now = 100.0  # past the end: the replay starts again at --from
        assert replay.step() is True
        for t_us in first:
            clock.now = 100.0 + (t_us - start) / 1e7
            _, (status,) = client.ask("S")
            assert answer(status) == statuses_at(run_dir / "robot.btlog", t_us)
        client.close()


def test_transitions_out_of_time_order_are_applied_in_time_order(tmp_path):
    xml = '<root BTCPP_format="4"><BehaviorTree ID="T" _fullpath=""><Sleep _uid="1"/></BehaviorTree></root>'
    late, early = struct.pack("<HB", 1, 2), struct.pack("<HB", 1, 1)  # SUCCESS at 2 us, RUNNING at 1 us
    path = tmp_path / "person.btlog"
    at_1, at_2 = (1).to_bytes(6, "little") + early, (2).to_bytes(6, "little") + late
    path.write_bytes(btlog_header(xml) + at_2 + at_1)
    tree = read_recorded_tree(path)
    assert tree.times_us == [1, 2] and tree.records == at_1 + at_2


def test_the_layout_from_the_logger_xml_is_the_publishers_of_the_loaded_tree():
    tree = load(SUBTREES)
    assert xml_status_layout(tree_xml(tree, builtin_registry())) == status_layout(tree.root)


def test_blackboard_scopes_are_the_trees_names_empty_and_chained_to_the_main_one():
    scopes = recorded_scopes(tree_xml(load(SUBTREES), builtin_registry()))
    assert list(scopes) == ["Main", "s1", "s1/Leaf::9", "Sub::11", "Sub::11/Leaf::15"]
    assert scopes["s1/Leaf::9"].parent is scopes["s1"] and scopes["s1"].parent is scopes["Main"]
    assert scopes["Sub::11/Leaf::15"].root is scopes["Main"] and scopes["Main"].parent is None
    assert all(not scope.local_entries() for scope in scopes.values())


NO_ENTRIES = """<root BTCPP_format="4" main_tree_to_execute="Main">
<BehaviorTree ID="Main"><Sequence><AlwaysSuccess/><SubTree ID="Sub" name="s1"/><SubTree ID="Sub"/></Sequence></BehaviorTree>
<BehaviorTree ID="Sub"><Fallback><AlwaysFailure/><SubTree ID="Leaf"/></Fallback></BehaviorTree>
<BehaviorTree ID="Leaf"><AlwaysSuccess/></BehaviorTree>
</root>"""


def test_a_btcpp_btlog_replayed_to_its_end_answers_as_btcpps_publisher_did_live(tmp_path):
    """behaviortreepy logs a tree without blackboard entries to a .btlog while its own
    Groot2Publisher serves it; the replay of that file answers FULLTREE, STATUS and BLACKBOARD
    as the live publisher does. The blackboard answer is pinned: a .btlog holds no blackboard,
    and BehaviorTree.CPP answers ``null`` for each known scope of a tree without entries (not
    ``null`` for the whole request, which is its answer when no scope asked for exists). The
    packaged 4.8.2 leaves out the ``ROOT`` that 4.10 adds beside a subtree's scope."""
    base = _free_quad()
    tree, live = btcpp_publisher(NO_ENTRIES, base)
    bt = pytest.importorskip("behaviortreepy")
    path = str(tmp_path / "person.btlog")
    logger = bt.FileLogger(tree, path)
    tree.tick_once()
    theirs = Client(base)
    names = b"Main;s1;Sub::8;s1/Leaf::6;nothing"
    expected = [theirs.ask(kind, *more)[1] for kind, more in (("T", ()), ("S", ()), ("B", (names,)))]
    theirs.close()
    del live
    logs = btcpp_oracle.OpenLogs()  # the file is whole once its logger's thread is done
    logs.add(logger, tree, path)
    del logger, tree
    logs.close()
    (tmp_path / "robot.btlog").write_bytes((tmp_path / "person.btlog").read_bytes())
    assert freed(range(base, base + 2))
    with Replay(read_run(tmp_path), base, speed=1e6) as replay:
        replay.run()
        assert replay.trees["person"].applied == len(read_btlog(path).transitions) >= 12
        ours = Client(base, replay.step)
        got = [ours.ask(kind, *more)[1] for kind, more in (("T", ()), ("S", ()), ("B", (names,)))]
        _, nothing = ours.ask("B", b"nothing;Leaf")
        ours.close()
    assert got[:2] == expected[:2]
    dump = msgpack.unpackb(got[2][0])
    assert dump.pop("ROOT") is None  # 4.10's generateBlackboardsDump: a subtree's root blackboard
    assert dump == msgpack.unpackb(expected[2][0]) == {"Main": None, "s1": None, "Sub::8": None, "s1/Leaf::6": None}
    assert nothing == [b"\xc0"]  # no scope of the tree named: msgpack of JSON null


# --- the command ------------------------------------------------------------------------------

def _one_error_line(capsys, argv: list[str], code: int = 1) -> str:
    assert main(argv) == code
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    return err.strip()


def test_bad_input_is_one_line_and_a_nonzero_exit(run_dir, tmp_path, capsys):
    assert _one_error_line(capsys, ["replay", str(tmp_path / "nope"), "--groot2"]) == \
        f"{tmp_path / 'nope'}: no such run directory"
    (tmp_path / "person.btlog").write_bytes((run_dir / "person.btlog").read_bytes())
    assert _one_error_line(capsys, ["replay", str(tmp_path), "--groot2"]).startswith(
        f"{tmp_path / 'robot.btlog'}: no such file")
    (tmp_path / "robot.btlog").write_bytes(b"BTCPP4-FileLogger2\x01\x05\x00\x00\x00<root")
    assert _one_error_line(capsys, ["replay", str(tmp_path), "--groot2"]) == \
        f"{tmp_path / 'robot.btlog'}: not a FileLogger2 file: ends inside the XML or the first timestamp " \
        "(XML of 5 bytes announced)"
    (tmp_path / "robot.btlog").write_bytes(b"BTCPP4-FileLogger2\x01\x05\x00\x00\x00<root" + bytes(8))
    assert "the tree XML does not parse" in _one_error_line(capsys, ["replay", str(tmp_path), "--groot2"])
    base = str(_free_quad())
    for options, message in ((["--speed", "0"], "--speed 0: must be a positive number"),
                             (["--speed", "nan"], "--speed nan: must be a positive number"),
                             (["--from", "-1"], "--from -1: must be a simulated time"),
                             (["--from", "30"], "--from 30: the recording ends at 9.95 s"),
                             (["--from", "5", "--to", "5"], "--to 5: must come after --from (5 s)"),
                             (["--to", "inf"], "--to inf: must be a simulated time in seconds"),
                             ):
        assert _one_error_line(capsys, ["replay", str(run_dir), "--groot2", base, *options]).startswith(message)
    assert _one_error_line(capsys, ["replay", str(run_dir), "--groot2", "65534"]).startswith("--groot2 65534")
    with pytest.raises(SystemExit) as exit_:  # argparse's errors, one line too
        main(["replay", str(run_dir), "--groot2", base, "--speed", "x"])
    assert exit_.value.code == 2 and capsys.readouterr().err == "hri: argument --speed: invalid float value: 'x'\n"


def test_a_port_in_use_is_one_line(run_dir, capsys):
    base = _free_quad()
    with Replay(read_run(run_dir), base) as replay:
        assert replay.trees["robot"].publisher.port == base + 2
        assert not freed(range(base, base + 4), within_s=0.1)  # a listener is seen
        err = _one_error_line(capsys, ["replay", str(run_dir), "--groot2", str(base + 2)])
        assert err.startswith(f"--groot2: cannot listen on port {base + 2} or {base + 3} (")
    assert freed(range(base, base + 4))


def test_the_command_says_where_it_serves_and_ends_with_the_recording(run_dir, capsys):
    base = _free_quad()
    assert main(["replay", str(run_dir), "--groot2", str(base), "--speed", "1000", "--from", "9"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"person: Groot2 on port {base} (publisher {base + 1}), 21 transitions"
    assert lines[1].startswith(f"robot: Groot2 on port {base + 2} (publisher {base + 3}), ")
    assert lines[2] == "replaying 9 to 9.95 s simulated at 1000x (0.0 s)"
    assert lines[3] == "replay ended at 9.95 s simulated"
    assert freed(range(base, base + 4))


@pytest.mark.parametrize("sig, code, line", [(signal.SIGTERM, 143, "hri: terminated"),
                                             (signal.SIGINT, 130, "hri: interrupted")])
def test_a_signal_ends_the_replay_with_its_ports_closed(run_dir, sig, code, line):
    base = _free_quad()
    # SIGINT as on a terminal: a suite started in the background (`cmd &`) ignores it, and an
    # ignored SIGINT stays ignored in the processes it starts
    process = subprocess.Popen([sys.executable, "-m", "hri.cli.main", "replay", str(run_dir), "--groot2", str(base)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        assert process.stdout.readline().startswith("person: Groot2 on port")
        client = Client(base + 2)
        _, (xml,) = client.ask("T")
        assert xml == read_btlog(run_dir / "robot.btlog").xml.encode()
        client.close()
        os.kill(process.pid, sig)
        assert process.wait(5) == code
        assert process.stderr.read() == line + "\n"
    finally:
        if process.poll() is None:
            process.kill()
    assert freed(range(base, base + 4))
