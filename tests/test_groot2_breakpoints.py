"""Breakpoints during ``hri run --groot2``: they pause the whole simulation, and resuming changes nothing.

A client written from ``groot2_protocol.h`` (``test_groot2_publisher.Client``) sets a breakpoint
before the person's ``PullBack`` (coexistence, seed 1: first ticked at 5.05 s) and asks for the
statuses until it is reached (each request keeps the publisher's heartbeat), while the run
goes on in the main thread. At the breakpoint the simulation's step stays where it is, both
trees' publishers answer, and after the unlock the run ends with the same files (statistics but for
the wall time, events, trajectory, both ``.btlog``) as the run without ``--groot2``. A client
that vanishes at a breakpoint holds the run for the heartbeat delay only.
"""

from __future__ import annotations

import json
import struct
import threading
import time
from pathlib import Path
from typing import Callable

import pytest
import zmq

from hri.bt.loggers.btlog_reader import read_btlog
from hri.run.groot2 import tree_ports
from hri.run.sim import Simulation
from hri.run.stats import write_run
from hri.scenario.load import load_scenario
from test_groot2_hooks import hook, unlock
from test_groot2_publisher import REQUEST, Client
from test_groot2_run import _free_quad

BREAK_UID = 8  # the person's PullBack, after ReachToBench (7) in WorkOnBench (5)
DURATION_S = 30.0
WATCHED_S = 0.3  # wall seconds the paused run is watched
SHORT_HEARTBEAT_S = 0.3
WALL_FIELDS = ("wall_time_s", "real_time_factor")
COMPARED_FILES = ("events.jsonl", "trajectory.csv", "person.btlog", "robot.btlog")

ClientBody = Callable[[Simulation, dict[str, int], threading.Event], None]


def run(out: Path, client: ClientBody | None = None, heartbeat_s: float | None = None) -> Simulation:
    """Coexistence, seed 1, for DURATION_S into ``out``; with ``client``, served to Groot2 and
    ``client`` run in a thread of its own (the run starts once it sets the event it is given)."""
    base = _free_quad() if client is not None else None
    errors: list[BaseException] = []
    ready = threading.Event()
    with Simulation(load_scenario("coexistence"), seed=1, out_dir=out, groot2_port=base) as sim:
        thread = None
        if client is not None:
            for publisher in sim.live.publishers.values():
                publisher.max_heartbeat_delay_s = heartbeat_s or publisher.max_heartbeat_delay_s

            def body() -> None:
                try:
                    client(sim, tree_ports(base), ready)
                except BaseException as error:  # noqa: BLE001 - raised again in the test's thread
                    errors.append(error)
                    ready.set()

            thread = threading.Thread(target=body)
            thread.start()
            assert ready.wait(10)
        try:
            started = time.perf_counter()
            sim.run(DURATION_S)
            sim.loop_wall_s = time.perf_counter() - started  # type: ignore[attr-defined]
            sim.paused_wall_s = sim.live.paused_s if sim.live is not None else 0.0  # type: ignore[attr-defined]
        finally:
            write_run(out, sim.stats.as_dict(), sim.events, sim.trajectory, sim.btlogs)
            if thread is not None:
                thread.join(30)
    if errors:
        raise errors[0]
    return sim


def outputs(out: Path) -> dict[str, object]:
    stats = json.loads((out / "stats.json").read_text())
    return {"stats": {k: v for k, v in stats.items() if k not in WALL_FIELDS},
            **{name: (out / name).read_bytes() for name in COMPARED_FILES}}


@pytest.fixture(scope="module")
def without_groot2(tmp_path_factory) -> dict[str, object]:
    out = tmp_path_factory.mktemp("plain")
    run(out)
    return outputs(out)


def subscriber(port: int) -> zmq.Socket:
    socket = zmq.Context.instance().socket(zmq.SUB)
    socket.setsockopt(zmq.LINGER, 0)
    socket.setsockopt(zmq.SUBSCRIBE, b"")
    socket.connect(f"tcp://127.0.0.1:{port}")
    return socket


def set_breakpoint(ports: dict[str, int], ready: threading.Event) -> tuple[Client, zmq.Socket]:
    """Ask for a breakpoint before BREAK_UID before the run starts (it is answered at the run's
    first poll), let the run start, and ask for the statuses until the breakpoint is reached."""
    person = Client(ports["person"])
    reached = subscriber(ports["person"] + 1)
    person.socket.send_multipart([REQUEST.pack(2, ord("I"), 1), json.dumps(hook(BREAK_UID)).encode()])
    time.sleep(0.1)  # the subscriber joins before anything is published
    ready.set()
    assert person.socket.poll(10_000) and person.socket.recv_multipart()[1:] == []
    deadline = time.monotonic() + 30
    while not reached.poll(10):
        assert time.monotonic() < deadline, "the breakpoint was not reached"
        statuses(person)
    assert reached.recv_multipart()[1] == str(BREAK_UID).encode()
    return person, reached


def statuses(client: Client) -> dict[int, int]:
    _, (status,) = client.ask("S")
    return dict(struct.unpack_from("<HB", status, i) for i in range(0, len(status), 3))


def inspect_and_resume(sim: Simulation, ports: dict[str, int], ready: threading.Event) -> None:
    person, reached = set_breakpoint(ports, ready)
    robot = Client(ports["robot"])
    step, pose, t = sim.step_count, sim.plugin.pose, sim.now()
    deadline = time.monotonic() + WATCHED_S
    while time.monotonic() < deadline:  # Groot2 looks at both trees while the world waits
        assert statuses(robot) and robot.ask("B", sim.trees["robot"].tree.tree_id.encode())[1][0][:1] != b"\xc0"
        time.sleep(0.02)
    assert (sim.step_count, sim.plugin.pose, sim.now()) == (step, pose, t) and t == pytest.approx(5.05)
    # the tree as it stands at the breakpoint: ReachToBench succeeded in this tick, WorkOnBench runs
    person_status = statuses(person)
    assert (person_status[7], person_status[5], person_status[BREAK_UID]) == (2, 1, 0)  # PullBack: not yet ticked
    assert json.loads(person.ask("D")[1][0]) == [hook(BREAK_UID)]
    assert person.ask("U", unlock(BREAK_UID, "IDLE", remove=True))[1] == []
    deadline = time.monotonic() + 5  # the tick goes on and removes the hook after the unlock's answer
    while json.loads(person.ask("D")[1][0]) != []:
        assert time.monotonic() < deadline, "the hook was not removed"
        time.sleep(0.01)
    for socket in (person, robot):
        socket.close()
    reached.close(0)


def vanish(sim: Simulation, ports: dict[str, int], ready: threading.Event) -> None:
    person, reached = set_breakpoint(ports, ready)
    person.close()
    reached.close(0)


def test_a_breakpoint_pauses_the_whole_run_and_resuming_ends_it_as_without(tmp_path, without_groot2):
    sim = run(tmp_path, inspect_and_resume)
    assert sim.live is None and sim.stats.complete
    assert outputs(tmp_path) == without_groot2
    # the wall time (and the real-time factor) leave out the time held at the breakpoint
    assert sim.paused_wall_s >= WATCHED_S
    assert sim.stats.wall_time_s == pytest.approx(sim.loop_wall_s - sim.paused_wall_s, abs=0.05)


def test_a_client_that_vanishes_at_a_breakpoint_holds_the_run_for_the_heartbeat_delay_only(tmp_path, without_groot2):
    paused: list[float] = []
    started = time.monotonic()

    def client(sim, ports, ready):
        vanish(sim, ports, ready)
        while sim.live is not None and sim.now() < DURATION_S - 1:
            time.sleep(0.01)
        paused.append(sim.live.paused_s if sim.live is not None else -1.0)

    run(tmp_path, client, heartbeat_s=SHORT_HEARTBEAT_S)
    assert outputs(tmp_path) == without_groot2
    assert SHORT_HEARTBEAT_S * 0.8 <= paused[0] < SHORT_HEARTBEAT_S + 1.0
    assert time.monotonic() - started < 30


def test_recording_gives_the_transitions_in_simulated_time_from_its_start(tmp_path):
    base = _free_quad()
    with Simulation(load_scenario("coexistence"), seed=1, out_dir=tmp_path, groot2_port=base) as sim:
        robot = Client(tree_ports(base)["robot"], sim.step)
        sim.run(5.0)
        _, (start,) = robot.ask("r", b"start")
        sim.run(1.0)
        _, (records,) = robot.ask("t")
        robot.close()
        write_run(tmp_path, sim.stats.as_dict(), sim.events, sim.trajectory, sim.btlogs)
    start_us = int(start)
    assert 5_000_000 <= start_us <= 5_100_000 and start_us % 50_000 == 0  # a tick's time (20 Hz)
    got = [(start_us + int.from_bytes(records[i:i + 6], "little"), *struct.unpack_from("<HB", records, i + 6))
           for i in range(0, len(records), 9)]
    logged = [(t.time_us, t.uid, ("IDLE", "RUNNING", "SUCCESS", "FAILURE").index(t.status))
              for t in read_btlog(tmp_path / "robot.btlog").transitions if t.time_us > start_us]
    assert len(got) > 100 and got == logged[:len(got)]


def test_a_tree_in_its_own_process_refuses_hooks_with_one_line(capfd):
    base = _free_quad()
    with Simulation(load_scenario("coexistence"), seed=1, split=True, groot2_port=base) as sim:
        person = Client(tree_ports(base)["person"], sim.step)
        for _ in range(2):
            reply = person.send([REQUEST.pack(2, ord("I"), 1), json.dumps(hook(BREAK_UID)).encode()])
            assert reply[0] == b"error" and b"--split" in reply[1]
        assert json.loads(person.ask("D")[1][0]) == []
        person.close()
    lines = [line for line in capfd.readouterr().err.splitlines() if "--groot2" in line]
    assert lines == ["hri: --groot2: breakpoints and hooks need the person's tree in hri's process; "
                     "with --split it runs in its own: hook refused"]
