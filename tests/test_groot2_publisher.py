"""hri's Groot2 publisher against BehaviorTree.CPP's, through a client written from its protocol.

The client below speaks ``groot2_protocol.h`` (BehaviorTree.CPP 4.10): a 6-byte request
header (protocol 2, the request type, a ``uint32`` id), a 22-byte reply header (the request's
header, then a 16-byte tree id). It asks hri's publisher and behaviortreepy's
``Groot2Publisher`` (the BehaviorTree.CPP its package bundles) for the full tree, the statuses
and the blackboards of the same tree at the same tick, and compares the answers. Then it sends
hri's publisher random and malformed requests while the tree ticks.
"""

from __future__ import annotations

import random
import socket
import struct
import time

import msgpack
import pytest
import zmq
from hypothesis import given, settings
from hypothesis import strategies as st

from hri.bt.loggers.groot2_publisher import (Groot2Publisher, blackboard_scopes, random_tree_id,
                                             status_layout)
from hri.bt.loggers.transitions import TransitionRecorder
from hri.bt.loggers.tree_xml import tree_xml
from test_btlog import SUBTREES, builtin_registry, canonical, load

REQUEST = struct.Struct("<BBI")  # SerializeHeader(RequestHeader): protocol, type, unique_id
REPLY_HEADER_SIZE = REQUEST.size + 16
TIMEOUT_MS = 3000
SUBTREE_NAMES = b"Main;s1;Sub::11;s1/Leaf::9;nothing"
# What the packaged behaviortreepy (BehaviorTree.CPP 4.8.2) answers otherwise than 4.10, whose
# sources hri follows: 4.10's generateBlackboardsDump adds the root blackboard as ROOT when a
# subtree's blackboard is not its own root, and 4.10's XML parser keeps a SubTree's literal port
# ("lit=3") as a number where 4.8.2 keeps its text.
PINNED_BLACKBOARD = {"drop": "ROOT", "literal": ("s1", "lit")}


def free_port_pair() -> int:
    """A base port whose pair (port, port + 1) nobody listens on now."""
    for _ in range(100):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        if port < 65535 and all(_free(p) for p in (port, port + 1)):
            return port
    raise RuntimeError("no free pair of ports")


def _free(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("0.0.0.0", port))
        except OSError:
            return False
    return True


def freed(ports: range, within_s: float = 2.0) -> bool:
    """True once nobody listens on ``ports`` (ZeroMQ lets a closed socket's port go in its
    own thread, a moment after ``close``)."""
    deadline = time.monotonic() + within_s
    while not all(_listenable(p) for p in ports):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def _listenable(port: int) -> bool:
    """Whether a server could listen on ``port``, binding as ZeroMQ binds (``SO_REUSEADDR``):
    a connection the server closed first waits out TIME_WAIT on the port for a minute, which
    keeps a plain ``bind`` from it but not a new server."""
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("0.0.0.0", port))
            probe.listen()
        except OSError:
            return False
    return True


class Client:
    """Groot2's side of the protocol: a REQ socket on a publisher's server port."""

    def __init__(self, port: int, serve=lambda: None) -> None:
        self.socket = zmq.Context.instance().socket(zmq.REQ)
        self.socket.setsockopt(zmq.LINGER, 0)
        self.socket.connect(f"tcp://127.0.0.1:{port}")
        self.serve = serve  # called while waiting: hri's publisher answers when polled

    def send(self, parts: list[bytes]) -> list[bytes]:
        self.socket.send_multipart(parts)
        deadline = time.monotonic() + TIMEOUT_MS / 1000
        while time.monotonic() < deadline:
            self.serve()
            if self.socket.poll(5):
                return self.socket.recv_multipart()
        raise TimeoutError(f"no answer to {parts!r}")

    def ask(self, kind: str, *more: bytes, unique_id: int = 0xC0FFEE) -> tuple[bytes, list[bytes]]:
        """The reply header and the answer's parts to one request."""
        reply = self.send([REQUEST.pack(2, ord(kind), unique_id), *more])
        return reply[0], reply[1:]

    def close(self) -> None:
        self.socket.close(0)


def ticked_hri_tree():
    tree = load(SUBTREES)
    recorder = TransitionRecorder(tree.root)
    tree.tick_once()
    return tree, recorder


@pytest.fixture
def hri_side():
    tree, recorder = ticked_hri_tree()
    scopes = blackboard_scopes(tree)
    publisher = Groot2Publisher(tree_xml(tree, builtin_registry()), status_layout(tree.root),
                                free_port_pair(), lambda: scopes)
    publisher.apply(recorder.take())
    client = Client(publisher.port, publisher.poll)
    yield client, publisher
    client.close()
    publisher.close()


def btcpp_publisher(xml: str, port: int):
    """(tree, publisher): behaviortreepy's tree of ``xml`` served by its ``Groot2Publisher`` on
    ``port`` and ``port + 1``; the test is skipped without behaviortreepy or its Groot2."""
    bt = pytest.importorskip("behaviortreepy")
    if not bt.GROOT2_AVAILABLE:
        pytest.skip("behaviortreepy built without Groot2")
    tree = bt.BehaviorTreeFactory().create_tree_from_text(xml)
    return tree, bt.Groot2Publisher(tree, port)


@pytest.fixture
def btcpp_side():
    port = free_port_pair()
    tree, publisher = btcpp_publisher(SUBTREES, port)
    tree.tick_once()
    client = Client(port)
    yield client
    client.close()
    del publisher


def pinned(dump: dict) -> dict:
    dump = {name: value for name, value in dump.items() if name != PINNED_BLACKBOARD["drop"]}
    scope, key = PINNED_BLACKBOARD["literal"]
    dump[scope] = {**dump[scope], key: str(dump[scope][key])}
    return dump


# --- the protocol, by hand ----------------------------------------------------------------------

def test_the_reply_header_is_the_request_header_then_a_version_4_uuid(hri_side):
    client, _ = hri_side
    header, _ = client.ask("T", unique_id=0x01020304)
    assert header[:6] == b"\x02T\x04\x03\x02\x01" and len(header) == REPLY_HEADER_SIZE
    assert header[6 + 6] >> 4 == 4 and header[6 + 8] >> 6 == 0b10
    uuid = random_tree_id()
    assert uuid[6] >> 4 == 4 and uuid[8] >> 6 == 0b10


def test_the_status_buffer_is_uid_then_status_subtree_by_subtree(hri_side):
    client, _ = hri_side
    _, (status,) = client.ask("S")
    triples = [struct.unpack_from("<HB", status, i) for i in range(0, len(status), 3)]
    assert [uid for uid, _ in triples] == [1, 2, 3, 4, 5, 11, 6, 7, 8, 9, 10, 12, 13, 14, 15, 16]
    # every node ticked was reset to IDLE by its parent: 10 + the status it had
    assert dict(triples)[1] == 12 and dict(triples)[8] == 13


# --- hri against BehaviorTree.CPP ---------------------------------------------------------------

def test_both_publishers_answer_the_same_tree_statuses_and_blackboards(hri_side, btcpp_side):
    ours, _ = hri_side
    theirs = btcpp_side
    answers = {}
    for name, client in (("hri", ours), ("btcpp", theirs)):
        tree_header, (xml,) = client.ask("T", unique_id=7)
        _, (status,) = client.ask("S")
        _, (dump,) = client.ask("B", SUBTREE_NAMES)
        _, (nothing,) = client.ask("B", b"nothing")
        answers[name] = (tree_header[:6], canonical(xml.decode())[0], status, msgpack.unpackb(dump),
                         nothing)
    assert answers["hri"][:3] == answers["btcpp"][:3]
    assert pinned(answers["hri"][3]) == answers["btcpp"][3]
    assert answers["hri"][4] == answers["btcpp"][4] == b"\xc0"  # msgpack of JSON null


MALFORMED = [
    [b"abc"],  # a header that is not 6 bytes
    [b""],
    [b"\x02Q\x00\x00\x00\x00"],  # a request type nobody knows
    [b"\x02B\x00\x00\x00\x00"],  # BLACKBOARD without its list of names
    [b"\x02B\x00\x00\x00\x00", b"a", b"b"],
    [b"\x02I\x00\x00\x00\x00", b"{}"],  # a hook without its fields (pinned below)
]


def test_both_publishers_answer_malformed_requests_with_the_same_errors(hri_side, btcpp_side):
    ours, _ = hri_side
    for parts in MALFORMED[:-1]:
        assert ours.send(parts) == btcpp_side.send(parts), parts
    # 4.10 answers with nlohmann::json's exception; 4.8.2's server loop does not catch it and its
    # process ends (test_groot2_hooks sends such requests to hri alone)
    assert ours.send(MALFORMED[-1]) == [b"error", b"[json.exception.out_of_range.403] key 'uid' not found"]


# --- bad input does not disturb the tree --------------------------------------------------------

def random_request(rng: random.Random) -> list[bytes]:
    kind = rng.random()
    if kind < 0.3:
        return rng.choice(MALFORMED)
    if kind < 0.6:  # a well-formed header of any type, with 0 to 3 random parts after it
        head = REQUEST.pack(rng.randrange(256), rng.randrange(256), rng.getrandbits(32))
        return [head, *(rng.randbytes(rng.randrange(40)) for _ in range(rng.randrange(4)))]
    if kind < 0.8:  # a blackboard request naming random or known subtrees
        names = rng.choice([SUBTREE_NAMES, b"ROOT;s1", b"ROOT", b";;;", rng.randbytes(rng.randrange(30))])
        return [REQUEST.pack(2, ord("B"), 1), names]
    return [rng.randbytes(rng.randrange(12)) for _ in range(rng.randrange(1, 4))]


def test_a_thousand_random_requests_neither_stop_the_publisher_nor_change_the_ticks():
    reference_tree, reference = ticked_hri_tree()
    expected = [reference.take()]
    for _ in range(20):
        reference_tree.tick_once()
        expected.append(reference.take())

    tree, recorder = ticked_hri_tree()
    scopes = blackboard_scopes(tree)
    got = [recorder.take()]
    rng = random.Random(1)
    with Groot2Publisher(tree_xml(tree, builtin_registry()), status_layout(tree.root),
                         free_port_pair(), lambda: scopes) as publisher:
        client = Client(publisher.port, publisher.poll)
        for i in range(1000):
            reply = client.send(random_request(rng))
            assert reply and (reply[0] == b"error" or len(reply[0]) == REPLY_HEADER_SIZE)
            if i % 50 == 49:
                tree.tick_once()
                records = recorder.take()
                publisher.apply(records)
                got.append(records)
        # a client that vanishes with its request unanswered
        dealer = zmq.Context.instance().socket(zmq.DEALER)
        dealer.setsockopt(zmq.LINGER, 0)
        dealer.connect(f"tcp://127.0.0.1:{publisher.port}")
        dealer.send_multipart([b"", REQUEST.pack(2, ord("T"), 3)])
        dealer.close(0)
        for _ in range(20):
            publisher.poll()
        _, (status,) = client.ask("S")
        assert status == publisher.status_buffer()
        client.close()
        assert publisher.answered >= 1001
    assert got == expected


def test_polling_with_nobody_connected_answers_nothing_and_closing_frees_the_ports():
    tree, _ = ticked_hri_tree()
    port = free_port_pair()
    publisher = Groot2Publisher(tree_xml(tree, builtin_registry()), status_layout(tree.root), port)
    assert publisher.poll() == 0
    publisher.close()
    assert publisher.poll() == 0  # a closed publisher does not raise into the run
    assert freed(range(port, port + 2))
    again = Groot2Publisher("<root/>", [], port)
    again.close()


def _statuses_one_by_one(layout: list[int], records: list[tuple[int, int]]) -> bytes:
    """The status buffer as BehaviorTree.CPP's callback leaves it, transition after transition:
    the new status, or for a reset to IDLE 10 + the status before."""
    value = {uid: 0 for uid in layout}
    for uid, code in records:
        if uid in value:
            value[uid] = 10 + value[uid] % 10 if code == 0 else code
    return b"".join(struct.pack("<HB", uid, value[uid]) for uid in layout)


@settings(max_examples=300, deadline=None)
@given(batches=st.lists(st.lists(st.tuples(st.integers(1, 6), st.sampled_from([0, 0, 1, 2, 3])), max_size=30),
                        max_size=6))
def test_the_status_buffer_folds_pending_transitions_as_one_by_one(batches) -> None:
    """Transitions are folded into the status buffer when it is asked for, many at once: the
    same buffer as applying each in turn (uid 6 is not in the tree), asked after each batch."""
    layout = [1, 2, 3, 4, 5]
    port = free_port_pair()
    publisher = Groot2Publisher("<root/>", layout, port)
    try:
        seen: list[tuple[int, int]] = []
        for batch in batches:
            publisher.apply(b"".join(bytes(6) + struct.pack("<HB", uid, code) for uid, code in batch))
            seen += batch
            assert publisher.status_buffer() == _statuses_one_by_one(layout, seen)
    finally:
        publisher.close()
