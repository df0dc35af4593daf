"""Who reaches the Groot2 servers of ``hri run --groot2`` and ``hri replay --groot2``: they
listen on 127.0.0.1 unless ``--groot2-host`` says otherwise, a request part over the tree's cap
is dropped unread, and hooks come from this machine only unless ``--groot2-allow-remote-hooks``.

All traffic here goes to 127.0.0.1: a peer on another host is tested as the address string
the decision is made on (:func:`~hri.bt.loggers.groot2_publisher.is_loopback`), and the wiring
from a socket's peer to that decision on loopback.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest
import zmq

from hri.bt.loggers.groot2_publisher import (HOOK_JSON_BYTES, HOOK_REQUESTS, MIN_REQUEST_CAP, Access,
                                             Groot2Publisher, blackboard_scopes, is_loopback, request_cap,
                                             status_layout)
from hri.bt.loggers.tree_xml import nodes_by_uid, tree_xml
from hri.bt.loggers.groot2_hooks import dump
from hri.cli.main import main
from hri.run.replay import read_run
from hri.run.sim import run_scenario
from hri.scenario.load import load_scenario
from test_btlog import SUBTREES, builtin_registry, load
from test_groot2_hooks import hook
from test_groot2_publisher import REQUEST, Client, free_port_pair, freed
from test_groot2_run import _free_quad

LISTEN = 0x0A  # TCP_LISTEN in /proc/net/tcp's "st" column
GB = 1 << 30
MB = 1 << 20


# --- the peer decision, as address strings ------------------------------------------------------

@pytest.mark.parametrize("peer", ["127.0.0.1", "127.4.5.6", "127.255.255.254", "::1", "::ffff:127.0.0.1"])
def test_loopback_peers_are_this_machine(peer):
    assert is_loopback(peer)
    assert Access().takes_hooks_from(peer)


@pytest.mark.parametrize("peer", ["10.0.0.7", "192.168.1.20", "172.16.0.1", "8.8.8.8", "0.0.0.0", "::",
                                  "::ffff:10.0.0.7", "fe80::1", "fe80::1%eth0", "2001:db8::1", "128.0.0.1",
                                  "", "localhost", "127.0.0.1.evil", "not an address"])
def test_other_peers_are_other_hosts_and_send_hooks_only_when_let_in(peer):
    assert not is_loopback(peer)
    assert not Access("0.0.0.0").takes_hooks_from(peer)
    assert Access("0.0.0.0", remote_hooks=True).takes_hooks_from(peer)


@pytest.fixture
def publisher():
    tree = load(SUBTREES)
    scopes = blackboard_scopes(tree)
    served = Groot2Publisher(tree_xml(tree, builtin_registry()), status_layout(tree.root), free_port_pair(),
                             lambda: scopes, nodes=nodes_by_uid(tree.root))
    yield served
    served.close()


HOOK_PARTS = {"I": [json.dumps(hook(3)).encode()], "R": [b'{"uid":3,"position":0}'],
              "U": [b'{"uid":3,"position":0,"desired_status":"SUCCESS","remove_when_done":false}'],
              "A": [], "X": []}


@pytest.mark.parametrize("kind", sorted(HOOK_PARTS))
def test_a_hook_request_from_another_host_is_refused_and_changes_nothing(publisher, kind):
    assert {ord(k) for k in HOOK_PARTS} == HOOK_REQUESTS
    publisher.reply([REQUEST.pack(2, ord("I"), 1), json.dumps(hook(3)).encode()])  # one hook there
    before = publisher.hooks.dump()
    reply = publisher.reply([REQUEST.pack(2, ord(kind), 2), *HOOK_PARTS[kind]], peer="192.168.1.20")
    assert reply[0] == b"error" and b"not from 192.168.1.20" in reply[1]
    assert b"--groot2-allow-remote-hooks" in reply[1]
    assert publisher.hooks.dump() == before


def test_reading_requests_from_another_host_are_answered(publisher):
    for kind in "TSD":
        header = publisher.reply([REQUEST.pack(2, ord(kind), 1)], peer="10.0.0.7")[0]
        assert header[:2] == b"\x02" + kind.encode()


def test_remote_hooks_let_in_are_taken(publisher):
    publisher.access = Access("0.0.0.0", remote_hooks=True)
    reply = publisher.reply([REQUEST.pack(2, ord("I"), 1), json.dumps(hook(3)).encode()], peer="10.0.0.7")
    assert reply[0][:2] == b"\x02I"
    assert json.loads(publisher.hooks.dump()) == [hook(3)]


def test_the_peer_of_a_request_on_the_socket_is_what_decides(monkeypatch):
    """On loopback (IPv6's, so that the peer differs from the default): a hook is taken from
    ::1; and the address the socket saw is the one asked about (told "another host", the same
    request over the same socket is refused)."""
    tree = load(SUBTREES)
    publisher = Groot2Publisher(tree_xml(tree, builtin_registry()), status_layout(tree.root), free_port_pair(),
                                nodes=nodes_by_uid(tree.root), access=Access("::1"))
    client = Client(publisher.port, publisher.poll)
    client.socket.close(0)
    client.socket = zmq.Context.instance().socket(zmq.REQ)
    client.socket.setsockopt(zmq.IPV6, True)
    client.socket.setsockopt(zmq.LINGER, 0)
    client.socket.connect(f"tcp://[::1]:{publisher.port}")
    try:
        header, _ = client.ask("I", json.dumps(hook(3)).encode())
        assert header[:2] == b"\x02I" and json.loads(publisher.hooks.dump()) == [hook(3)]
        asked: list[str] = []
        monkeypatch.setattr(Access, "takes_hooks_from", lambda self, peer: asked.append(peer) or False)
        reply = client.send([REQUEST.pack(2, ord("A"), 2)])
        assert asked == ["::1"] and reply[0] == b"error"
        assert json.loads(publisher.hooks.dump()) == [hook(3)]
    finally:
        client.close()
        publisher.close()


# --- the size cap -------------------------------------------------------------------------------

def test_the_cap_holds_the_largest_request_groot2_sends(publisher):
    nodes = len(nodes_by_uid(load(SUBTREES).root))
    cap = publisher.max_request_bytes
    assert cap == request_cap(nodes, list(blackboard_scopes(load(SUBTREES)))) == MIN_REQUEST_CAP
    assert publisher.server.getsockopt(zmq.MAXMSGSIZE) == cap
    # every hook of a 65,535-node tree in one HOOK_INSERT, at the longest its fields get
    longest = dump(hook(65535, mode=1, position=1, desired="SKIPPED", once=False, enabled=False)).decode()
    assert len(longest) * 2 < HOOK_JSON_BYTES
    every = dump([hook(uid, position=p) for uid in range(1, 65536) for p in (0, 1)])
    assert len(every) < request_cap(65535, []) < 64 * MB
    names = [f"Main/sub_{i}::{i}" for i in range(10_000)]
    assert len(";".join(names).encode()) < request_cap(10, names)


def _zmtp_req_peer(port: int) -> socket.socket:
    """A raw TCP connection that has spoken ZMTP 3.0's greeting and NULL handshake as a REQ
    socket (RFC 23): the server now reads message frames from it."""
    peer = socket.create_connection(("127.0.0.1", port), timeout=5)
    # signature, version 3.0, mechanism NULL (20 bytes), as-server 0, filler (31 bytes)
    peer.sendall(b"\xff" + b"\x00" * 8 + b"\x7f" + b"\x03\x00" + b"NULL".ljust(20, b"\x00") + b"\x00" * 32)
    greeting = _read(peer, 64)
    assert greeting[0] == 0xFF and greeting[10] == 3 and greeting[12:16] == b"NULL"
    ready = b"\x05READY" + b"\x0bSocket-Type" + struct.pack(">I", 3) + b"REQ"
    peer.sendall(b"\x04" + bytes([len(ready)]) + ready)  # a short command
    flags, size = _read(peer, 2)
    assert flags == 0x04 and _read(peer, size).startswith(b"\x05READY")  # the server's READY
    return peer


def _read(peer: socket.socket, count: int) -> bytes:
    data = b""
    while len(data) < count:
        chunk = peer.recv(count - len(data))
        assert chunk, "the server closed the connection"
        data += chunk
    return data


def _memory_kb(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise KeyError(field)


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("run")
    run_scenario(load_scenario("coexistence"), 2.0, seed=1, out_dir=out)
    return out


def _serve(argv: list[str]) -> subprocess.Popen:
    """``hri ARGV`` started in a process of its own (its stdout and stderr piped)."""
    return subprocess.Popen([sys.executable, "-m", "hri.cli.main", *argv], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def test_a_1_gb_length_prefix_is_dropped_unread_and_the_server_still_answers(run_dir):
    base = _free_quad()
    process = _serve(["replay", str(run_dir), "--groot2", str(base), "--loop"])
    try:
        assert process.stdout.readline().startswith("person: Groot2 on port")
        before_kb = _memory_kb(process.pid, "VmRSS")
        peer = _zmtp_req_peer(base)
        # REQ's empty delimiter, then a last frame (long: 8-byte length) claiming 1 GB
        peer.sendall(b"\x01\x00" + b"\x02" + struct.pack(">Q", GB))
        sent = 0
        chunk = bytes(MB)
        try:
            while sent < 256 * MB:  # what a server reading it whole would hold: 2.5 times the bound
                peer.sendall(chunk)
                sent += len(chunk)
        except (BrokenPipeError, ConnectionResetError, socket.timeout):
            pass
        peer.close()
        assert sent < 256 * MB, "the server read 256 MB of a frame over its cap"
        peak_kb = _memory_kb(process.pid, "VmHWM")
        assert peak_kb - before_kb < 100 * 1024
        client = Client(base)
        _, (xml,) = client.ask("T")
        assert xml.startswith(b"<?xml") or xml.startswith(b"<root")
        client.close()
    finally:
        _stop(process)
    assert freed(range(base, base + 4))


# --- where the servers listen: /proc/net/tcp and tcp6 -------------------------------------------

def _address(hex_address: str) -> str:
    """An address of /proc/net/tcp{,6}: 32-bit words in the machine's byte order."""
    words = bytes.fromhex(hex_address)
    raw = b"".join(int.from_bytes(words[i:i + 4], "big").to_bytes(4, sys.byteorder) for i in range(0, len(words), 4))
    return socket.inet_ntop(socket.AF_INET6 if len(raw) == 16 else socket.AF_INET, raw)


def listening(pid: int) -> set[tuple[str, int]]:
    """(address, port) of every TCP socket of process ``pid`` in the LISTEN state."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            address, port = fields[1].split(":")
            if int(fields[3], 16) == LISTEN and fields[9] in inodes:
                found.add((_address(address), int(port, 16)))
    return found


def _listeners_once_serving(process: subprocess.Popen, count: int, within_s: float = 60.0) -> set[tuple[str, int]]:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        found = listening(process.pid)
        if len(found) >= count:
            return found
        assert process.poll() is None, process.stderr.read()
        time.sleep(0.05)
    raise TimeoutError(f"fewer than {count} listening sockets after {within_s} s: {found}")


@pytest.mark.parametrize("command", ["run", "replay"])
def test_the_servers_listen_on_127_0_0_1_only(run_dir, command):
    base = _free_quad()
    argv = (["run", "coexistence", "--realtime", "--duration", "120", "--groot2", str(base)] if command == "run"
            else ["replay", str(run_dir), "--groot2", str(base), "--loop"])
    process = _serve(argv)
    try:
        found = _listeners_once_serving(process, 4)
        assert found == {("127.0.0.1", port) for port in range(base, base + 4)}
    finally:
        _stop(process)


def test_groot2_host_opts_in_to_another_address(run_dir):
    base = _free_quad()
    process = _serve(["replay", str(run_dir), "--groot2", str(base), "--loop", "--groot2-host", "0.0.0.0"])
    try:
        assert process.stdout.readline() == f"person: Groot2 on port {base} (publisher {base + 1}) at 0.0.0.0, " \
                                            f"{len(read_run(run_dir)['person'].times_us)} transitions\n"
        assert _listeners_once_serving(process, 4) == {("0.0.0.0", port) for port in range(base, base + 4)}
    finally:
        _stop(process)


@pytest.mark.parametrize("argv, line", [
    (["replay", "RUN", "--groot2", "--groot2-host", "my-laptop"], "--groot2-host my-laptop: not an IP address"),
    (["run", "coexistence", "--groot2-host", "0.0.0.0"], "--groot2-host: only with --groot2"),
    (["run", "coexistence", "--groot2-allow-remote-hooks"], "--groot2-allow-remote-hooks: only with --groot2"),
    (["replay", "RUN", "--groot2", "--groot2-host", "192.0.2.1"], "--groot2: cannot listen on port"),
])
def test_a_bad_host_is_one_line(run_dir, capsys, argv, line):
    argv = [str(run_dir) if word == "RUN" else word for word in argv]
    if "--groot2" in argv:
        argv.insert(argv.index("--groot2") + 1, str(_free_quad()))
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith(line) and err.count("\n") == 1
