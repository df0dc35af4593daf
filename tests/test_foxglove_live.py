"""``hri run --foxglove``: the run's channels served live over Foxglove's WebSocket protocol.

A WebSocket client (the ``websockets`` package, speaking the protocol as Foxglove does:
subprotocol ``foxglove.sdk.v1``, JSON ``advertise`` and ``subscribe``, binary message
data) subscribes to /safety and /tf during a seeded run and receives messages whose simulated
times advance; the run's statistics equal those of the same seed without a server, also when a
client sends garbage and drops the connection (and the events and the trajectory, with nobody
connected too); a port in use is refused with one line.
"""

from __future__ import annotations

import json
import re
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from mcap.reader import make_reader
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from hri.run.sim import run_scenario
from hri.scenario.load import load_scenario
from hri.view.channel_writer import ChannelWriter
from hri.view.foxglove_live import LiveServer
from hri.view.mcap_file import ChannelPublisher, McapFile

SEED, DURATION_S = 3, 20.0
CLOCK = ("wall_time_s", "real_time_factor")
PROTOCOL = "foxglove.sdk.v1"  # the subprotocol the SDK's server speaks (Foxglove's WebSocket protocol)
HRI = [sys.executable, "-m", "hri.cli.main"]
MESSAGE_DATA = 0x01  # the opcode of a binary message of a subscribed channel


class Gate:
    """An observer that holds the run at its first step until the test's client is
    subscribed to ``topics`` (a run takes about a second: it would end before the client is in)."""

    def __init__(self, publisher: ChannelPublisher, topics: tuple[str, ...]) -> None:
        self.publisher, self.topics, self.opened = publisher, topics, False

    def start(self, run) -> None:
        self.opened = True

    def after_step(self, run) -> None:
        deadline = time.monotonic() + 20
        while not self._subscribed() and time.monotonic() < deadline:
            time.sleep(0.01)
        self.after_step = lambda run: None

    def _subscribed(self) -> bool:
        live = [writer for writer in self.publisher.writers if isinstance(writer, ChannelWriter)]
        return bool(live) and all(live[0].subscribed(topic) for topic in self.topics)

    def finish(self, run) -> None: ...


def _results(stats: dict, out: Path) -> tuple[dict, bytes, bytes]:
    """What must not change: the statistics but the wall clock, the events and the trajectory."""
    return ({k: v for k, v in stats.items() if k not in CLOCK}, (out / "events.jsonl").read_bytes(),
            (out / "trajectory.csv").read_bytes())


@pytest.fixture(scope="module")
def without(tmp_path_factory):
    out = tmp_path_factory.mktemp("without")
    return _results(run_scenario(load_scenario("coexistence"), DURATION_S, seed=SEED, out_dir=out), out)


def _serve(client, out: Path, mcap: Path | None = None,
           topics: tuple[str, ...] = ("/safety", "/tf")) -> tuple[tuple[dict, bytes, bytes], list]:
    """A seeded run served on a free port (and written into ``mcap``) while ``client(port,
    received)`` runs in a thread, its files into ``out``; after it, the server's port is closed."""
    live = LiveServer(0)
    publisher = ChannelPublisher([live] if mcap is None else [McapFile(mcap), live])
    received: list = []
    errors: list = []

    def run_client() -> None:
        try:
            client(_port(live, gate), received)
        except Exception as err:  # noqa: BLE001 - failed in the test's thread: fails the test
            errors.append(err)

    gate = Gate(publisher, topics)
    thread = threading.Thread(target=run_client, daemon=True)
    thread.start()
    stats = run_scenario(load_scenario("coexistence"), DURATION_S, seed=SEED, observers=[publisher, gate],
                         out_dir=out)
    thread.join(30)
    assert not errors and not thread.is_alive()
    _assert_closed(live.port)
    return _results(stats, out), received


def _assert_closed(port: int) -> None:
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=5).close()


def _port(live: LiveServer, gate: Gate) -> int:
    while not gate.opened:  # the server is started by the publisher's start, before the gate's
        time.sleep(0.01)
    return live.port


def _subscribe(ws, topics: tuple[str, ...]) -> dict[int, str]:
    """Subscribe to ``topics`` once advertised: {subscription id: topic}."""
    channels: dict[str, int] = {}
    while not set(topics) <= set(channels):
        message = json.loads(ws.recv(timeout=10))
        if message.get("op") == "advertise":
            channels.update({channel["topic"]: channel["id"] for channel in message["channels"]})
    ids = dict(enumerate(topics, start=1))
    ws.send(json.dumps({"op": "subscribe",
                        "subscriptions": [{"id": k, "channelId": channels[topic]} for k, topic in ids.items()]}))
    return ids


def _listen(port: int, received: list) -> None:
    """Subscribe to /safety and /tf and keep every message: (topic, log time ns, payload)."""
    with connect(f"ws://127.0.0.1:{port}", subprotocols=[PROTOCOL], open_timeout=10) as ws:
        ids = _subscribe(ws, ("/safety", "/tf"))
        try:
            while True:
                data = ws.recv(timeout=10)
                if isinstance(data, bytes) and data[0] == MESSAGE_DATA:
                    sub, log_time = struct.unpack_from("<IQ", data, 1)
                    received.append((ids[sub], log_time, data[13:]))
        except ConnectionClosed:  # the run ended: the server stopped and closed the connection
            return


def test_a_client_receives_safety_and_tf_whose_times_advance_and_the_run_is_unchanged(without, tmp_path) -> None:
    results, received = _serve(_listen, tmp_path / "out")
    assert results == without
    for topic in ("/safety", "/tf"):
        times = [t for name, t, _ in received if name == topic]
        assert len(times) > 10, topic
        assert times == sorted(times) and times[-1] - times[0] > 1e9 * DURATION_S / 2, topic
    safety = [(t, json.loads(payload)) for name, t, payload in received if name == "/safety"]
    assert all(abs(message["t"] * 1e9 - t) < 1 for t, message in safety)  # the log time is simulated time
    assert {"zone", "velocity_fraction", "separation_m", "protective_stop"} <= set(safety[-1][1])


def test_mcap_and_foxglove_together_write_and_serve_the_same_messages(without, tmp_path) -> None:
    results, received = _serve(_listen, tmp_path / "out", tmp_path / "run.mcap")
    assert results == without
    with open(tmp_path / "run.mcap", "rb") as stream:
        written = {(channel.topic, message.log_time, message.data)
                   for _schema, channel, message in make_reader(stream).iter_messages()
                   if channel.topic in ("/safety", "/tf")}
    served = {(topic, log_time, payload) for topic, log_time, payload in received}
    assert len(served) > 20 and served <= written


def _garbage(port: int, received: list) -> None:
    """Garbage of every kind, a subscription, then the connection dropped in the middle."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as raw:  # not even HTTP
        raw.sendall(b"\x16\x03\x01garbage\r\n\r\n" * 100)
    with connect(f"ws://127.0.0.1:{port}", subprotocols=[PROTOCOL], open_timeout=10) as ws:
        for junk in ("not json", json.dumps({"op": "subscribe", "subscriptions": "x"}),
                     json.dumps({"op": "unsubscribe", "subscriptionIds": [99]}), json.dumps([1, 2]),
                     b"\xff\x00\x01", b"\x01" + b"\x00" * 40):
            ws.send(junk)
        _subscribe(ws, ("/safety", "/tf"))
        for _ in range(5):
            received.append(ws.recv(timeout=10))


def test_a_client_sending_garbage_and_going_does_not_change_the_run(without, tmp_path, capfd) -> None:
    results, received = _serve(_garbage, tmp_path / "out")
    assert len(received) == 5
    assert results == without
    said = capfd.readouterr().err.splitlines()  # what the SDK logged of the clients: one line, at the end
    assert len(said) == 1 and re.fullmatch(r"Foxglove: \d+ client problems? while the run went \(the last: .+\)", said[0])


def test_a_port_in_use_is_refused_with_one_line_before_the_run(tmp_path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run([*HRI, "run", "coexistence", "--duration", "1", "--foxglove", str(port),
                               "--out", str(tmp_path / "run")], capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and done.stdout == ""
    assert done.stderr == f"--foxglove {port}: cannot listen on 127.0.0.1:{port}: in use\n"
    assert not (tmp_path / "run").exists()


class Failing:
    """An observer whose step fails: the run ends with an error."""

    def start(self, run) -> None: ...

    def after_step(self, run) -> None:
        if run.now() > 1.0:
            raise RuntimeError("broken observer")

    def finish(self, run) -> None: ...


def test_a_run_that_fails_stops_the_server() -> None:
    live = LiveServer(0)
    with pytest.raises(RuntimeError, match="broken observer"):
        run_scenario(load_scenario("coexistence"), DURATION_S, seed=SEED,
                     observers=[ChannelPublisher([live]), Failing()])
    assert live.port != 0
    _assert_closed(live.port)


def test_with_nobody_connected_the_run_writes_the_same_files(without, tmp_path) -> None:
    """Same bits: a server that nobody connects to changes neither the statistics (but the wall
    clock) nor the events nor the trajectory."""
    stats = run_scenario(load_scenario("coexistence"), DURATION_S, seed=SEED, out_dir=tmp_path,
                         observers=[ChannelPublisher([LiveServer(0)])])
    assert _results(stats, tmp_path) == without


def test_with_nobody_connected_no_message_is_built(monkeypatch) -> None:
    """The cost of a server nobody is connected to: the samples read no state and no poses."""
    from hri.run.sim import RunView

    reads: list[str] = []
    for name in ("state", "bodies", "shapes"):
        original = getattr(RunView, name)
        monkeypatch.setattr(RunView, name, lambda run, _o=original, _n=name: reads.append(_n) or _o(run))
    run_scenario(load_scenario("coexistence"), 5.0, seed=SEED)
    others = list(reads)  # the run's own readers (its trajectory samples)
    reads.clear()
    publisher = ChannelPublisher([LiveServer(0)])
    run_scenario(load_scenario("coexistence"), 5.0, seed=SEED, observers=[publisher])
    assert publisher.samples >= 150 and reads == others


def _scene(port: int, received: list) -> None:
    """Subscribe to /scene after the run's start, when its first scene has gone by."""
    with connect(f"ws://127.0.0.1:{port}", subprotocols=[PROTOCOL], open_timeout=10) as ws:
        _subscribe(ws, ("/scene",))
        try:
            while True:
                data = ws.recv(timeout=10)
                if isinstance(data, bytes) and data[0] == MESSAGE_DATA:
                    received.append(data[13:])
        except ConnectionClosed:
            return


def test_a_client_that_subscribes_during_the_run_gets_the_scene(without, tmp_path) -> None:
    results, received = _serve(_scene, tmp_path / "out", topics=("/scene",))
    assert results == without
    scene = b"".join(received)  # protobuf SceneUpdates: the entities' ids are in them as they are
    assert all(entity in scene for entity in (b"fixed", b"zone/stop", b"robot/", b"person/"))
