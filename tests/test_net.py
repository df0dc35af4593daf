"""hri.net: codec, broker, calls (ids, stale drops, timeouts), keep-last streams, full queues."""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from hri.base.errors import HriError
from hri.net import (Broker, BrokerClient, CallTimeout, Cancelled, CodecError, DiscoveryError, Frame,
                     Kind, NetError, Network, Node, QueueFull, Service, ServiceRecord, broker_service,
                     decode_frame, decode_value, encode_frame, encode_value)
from hri.net.codec import HEADER_SIZE, MAGIC, split_frames

# --------------------------------------------------------------------------------------------
# Codec

scalars = (st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
           | st.text() | st.binary())
keys = st.none() | st.booleans() | st.integers() | st.text() | st.binary()
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=5)
                      | st.lists(inner, max_size=5).map(tuple)
                      | st.dictionaries(keys, inner, max_size=5), max_leaves=30)
arrays = hnp.arrays(st.sampled_from([np.float64, np.float32, np.int64, np.int32, np.uint8, np.bool_]),
                    hnp.array_shapes(min_dims=0, max_dims=3, max_side=4))


def _same(a, b) -> bool:
    """Equality that also tells True from 1 and 1.0 (== alone does not)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    return a == b


@settings(max_examples=300, deadline=None)
@given(values)
def test_values_round_trip(value):
    assert _same(decode_value(encode_value(value)), value)


@settings(max_examples=100, deadline=None)
@given(arrays)
def test_arrays_round_trip(array):
    back = decode_value(encode_value(array))
    assert back.dtype == array.dtype and back.shape == array.shape
    assert np.array_equal(back, array, equal_nan=array.dtype.kind == "f")
    back[...] = 0  # a writable copy, not a view of the received bytes


frames = st.builds(Frame, st.sampled_from(list(Kind)), st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1),
                   st.integers(0, 2**64 - 1), st.text(max_size=20), st.text(max_size=20), values,
                   st.floats(allow_nan=False))


@settings(max_examples=200, deadline=None)
@given(frames)
def test_frames_round_trip(frame):
    data = encode_frame(frame)
    back = decode_frame(data)
    assert back == frame and _same(back.payload, frame.payload)
    assert struct.unpack_from("<I", data, 8)[0] == len(data)  # the length prefix is the frame's


@settings(max_examples=500, deadline=None)
@given(st.binary(max_size=200))
def test_any_bytes_give_a_frame_or_a_codec_error(data):
    for decode in (decode_frame, decode_value):
        try:
            decode(data)
        except CodecError:
            pass


@settings(max_examples=300, deadline=None)
@given(frames, st.data())
def test_corrupted_frames_give_a_frame_or_a_codec_error(frame, data):
    raw = bytearray(encode_frame(frame))
    for _ in range(data.draw(st.integers(1, 4))):
        raw[data.draw(st.integers(0, len(raw) - 1))] = data.draw(st.integers(0, 255))
    try:
        decode_frame(bytes(raw))
    except CodecError:
        pass


def test_truncated_and_padded_frames_are_errors():
    data = encode_frame(Frame(Kind.REQUEST, 1, 2, 9, "safety", "zone", {"x": [1.0, 2.0]}, 0.5))
    for cut in range(len(data)):
        with pytest.raises(CodecError):
            decode_frame(data[:cut])
    with pytest.raises(CodecError, match="says"):
        decode_frame(data + b"\0")


def test_bad_magic_version_kind_and_lengths_are_named():
    good = bytearray(encode_frame(Frame(Kind.REPLY, 1, 2, 3, "c", "o", [1, 2])))
    cases = {0: (b"XXXX", "magic"), 4: (b"\x02", "version"), 5: (b"\x63", "kind"),
             20: (struct.pack("<I", 99), "length")}
    for offset, (patch, message) in cases.items():
        bad = bytearray(good)
        bad[offset:offset + len(patch)] = patch
        with pytest.raises(CodecError, match=message):
            decode_frame(bytes(bad))


def test_hostile_counts_do_not_allocate():
    with pytest.raises(CodecError, match="count"):
        decode_value(b"l" + struct.pack("<I", 2**32 - 1))
    with pytest.raises(CodecError):
        decode_value(b"a\x03<f8\x02" + struct.pack("<II", 2**31, 2**31))
    with pytest.raises(CodecError, match="nested"):
        decode_value(b"l\x01\x00\x00\x00" * 40 + b"N")
    with pytest.raises(CodecError, match="dtype"):
        decode_value(b"a\x03|O8\x00")
    with pytest.raises(CodecError, match="unhashable"):
        decode_value(b"d\x01\x00\x00\x00l\x00\x00\x00\x00N")
    with pytest.raises(CodecError, match="trailing"):
        decode_value(b"NN")
    with pytest.raises(CodecError, match="shape"):  # no data, yet dimensions no array can have
        decode_value(b"a\x03<f8\x03" + struct.pack("<III", 0, 2**31, 2**31))


def test_the_wire_format_is_the_documented_one():
    """A frame's bytes, field by field as the module docstring gives them: a change of the
    encoder must not change what the other side (another process, a recorded run) reads."""
    frame = Frame(Kind.STREAM, 3, 5, 17, "safety", "pose", {"xy": [1.5, -2.0], "zone": "stop", "n": 7}, 0.25)
    payload = (b"d" + struct.pack("<I", 3)
               + b"s" + struct.pack("<I", 2) + b"xy" + b"l" + struct.pack("<I", 2)
               + b"f" + struct.pack("<d", 1.5) + b"f" + struct.pack("<d", -2.0)
               + b"s" + struct.pack("<I", 4) + b"zone" + b"s" + struct.pack("<I", 4) + b"stop"
               + b"s" + struct.pack("<I", 1) + b"n" + b"i" + struct.pack("<q", 7))
    header = struct.pack("<4sBBHIIIIQdBBH", MAGIC, 1, Kind.STREAM, 0, HEADER_SIZE + 6 + 4 + len(payload),
                         3, 5, len(payload), 17, 0.25, 6, 4, 0)
    assert encode_frame(frame) == header + b"safety" + b"pose" + payload
    assert encode_value((None, True, False, b"\x01", -(2**70))) == (
        b"t" + struct.pack("<I", 5) + b"N" + b"T" + b"F" + b"b" + struct.pack("<I", 1) + b"\x01"
        + b"I" + struct.pack("<I", 9) + (-(2**70)).to_bytes(9, "little", signed=True))


def test_codec_error_is_an_hri_error_and_unencodable_values_are_refused():
    assert issubclass(CodecError, HriError)
    for bad in (object(), {1, 2}, np.array([object()]), np.array(["text"]), 1j):
        with pytest.raises(CodecError, match="cannot encode"):
            encode_value(bad)
    with pytest.raises(CodecError):
        encode_value(_nested(40))


def _nested(depth: int):
    value = None
    for _ in range(depth):
        value = [value]
    return value


def test_special_values():
    assert math.isnan(decode_value(encode_value(math.nan)))
    assert decode_value(encode_value(np.float32(1.5))) == 1.5
    assert decode_value(encode_value(np.int64(-3))) == -3
    assert decode_value(encode_value(2**200)) == 2**200
    assert decode_value(encode_value(">i8 big-endian")) == ">i8 big-endian"
    big_endian = np.arange(4, dtype=">i4")
    assert np.array_equal(decode_value(encode_value(big_endian)), big_endian)
    assert decode_value(encode_value(np.arange(6.0)[::2])).tolist() == [0.0, 2.0, 4.0]


def test_split_frames_cuts_a_byte_stream_by_the_length_prefix():
    a = encode_frame(Frame(Kind.STREAM, 1, 2, 1, "s", "pose", [1.0]))
    b = encode_frame(Frame(Kind.STREAM, 1, 2, 2, "s", "pose", [2.0] * 10))
    whole, rest = split_frames(a + b + b[:7])
    assert whole == [a, b] and rest == b[:7]
    assert HEADER_SIZE == 44 and a.startswith(MAGIC)
    with pytest.raises(CodecError, match="magic"):
        split_frames(b"JUNK" + a)


# --------------------------------------------------------------------------------------------
# Broker

def _record(name: str, identifiers: list[str], address: int = 1, ops=("get",), streams=()) -> ServiceRecord:
    return ServiceRecord(name, tuple(identifiers), address, tuple(ops), tuple(streams))


@pytest.fixture
def broker() -> Broker:
    broker = Broker()
    broker.register(_record("robot-1", ["lbr-iisy-1", "lbr-iisy", "industrial-robot", "robot"], 1,
                            ("move_to", "set_velocity"), ("joints",)))
    broker.register(_record("robot-2", ["ur5-77", "ur5", "industrial-robot", "robot"], 2, ("move_to",)))
    broker.register(_record("ik-iisy", ["inverse-kinematics", "lbr-iisy", "service"], 3, ("GET_INVERSE_KINEMATIC",)))
    broker.register(_record("safety", ["safety-monitor", "safety", "robot"], 4, ("zone",), ("pose",)))
    return broker


def test_and_or_matching_and_ranking(broker):
    assert broker.discover(all_of=["lbr-iisy", "robot"]).name == "robot-1"
    assert broker.discover(all_of=["robot", "safety"]).name == "safety"
    assert broker.discover(any_of=["ur5", "nothing"]).name == "robot-2"
    assert [r.name for r in broker.find(all_of="industrial-robot")] == ["robot-1", "robot-2"]
    # ranked by the positions of the matching identifiers: a hit early in a list is more specific
    assert [r.name for r in broker.find(any_of=["inverse-kinematics", "robot"])] == ["ik-iisy", "safety", "robot-1", "robot-2"]
    assert broker.discover(all_of=["lbr-iisy"], any_of=["service", "robot"]).name == "ik-iisy"  # 1+2 < 1+3
    assert broker.discover(all_of=["lbr-iisy"], any_of=["industrial-robot"]).name == "robot-1"
    assert broker.discover(all_of=["lbr-iisy"], op="GET_INVERSE_KINEMATIC").name == "ik-iisy"
    assert broker.discover(any_of=["robot"], stream="joints").name == "robot-1"


def test_discovery_failures_are_errors(broker):
    with pytest.raises(DiscoveryError, match="no service matches all of \\['robot', 'camera'\\]"):
        broker.discover(all_of=["robot", "camera"])
    with pytest.raises(DiscoveryError, match="equally well: robot-1, robot-2"):
        broker.discover(all_of=["industrial-robot"])
    with pytest.raises(DiscoveryError, match="needs all_of"):
        broker.discover()
    with pytest.raises(DiscoveryError):
        broker.discover(any_of=["robot"], op="fly")
    with pytest.raises(DiscoveryError):
        broker.lookup("nobody")


def test_registration_rules(broker):
    broker.register(_record("robot-1", ["lbr-iisy-1", "robot"], 1))  # the same endpoint again: replaces
    assert broker.lookup("robot-1").identifiers == ("lbr-iisy-1", "robot")
    with pytest.raises(NetError, match="already offered"):
        broker.register(_record("robot-1", ["x"], 9))
    with pytest.raises(NetError, match="repeat"):
        broker.register(_record("dup", ["a", "a"]))
    with pytest.raises(NetError, match="at least one"):
        broker.register(_record("none", []))
    assert broker.unregister_address(1) == ["robot-1"]
    assert broker.unregister("safety") and not broker.unregister("safety")


def test_broker_as_a_service_over_the_network():
    net = Network()
    broker = Broker()
    hub, robot, tree = (Node(net.endpoint(n)) for n in ("broker", "robot", "tree"))
    broker.register(hub.offer(broker_service(broker)))
    motion = Service("motion", ["lbr-iisy-1", "robot"], {"move_to": lambda req: "moving"})
    registered = BrokerClient(robot, hub.id).register(robot.offer(motion))
    spoofed = BrokerClient(tree, hub.id).register(ServiceRecord("fake", ("robot",), robot.id))
    net.advance(0.1)
    assert registered.value is True
    assert isinstance(spoofed.error, NetError) and "cannot register" in str(spoofed.error)
    client = BrokerClient(tree, hub.id)
    found, missing = client.discover(all_of=["robot"]), client.discover(all_of=["camera"])
    net.advance(0.2)
    assert found.value == motion.record(robot.id)
    assert isinstance(missing.error, DiscoveryError)  # the error class survives the wire
    call = tree.client(found.value).call("move_to", [1, 2])
    net.advance(0.3)
    assert call.value == "moving"


# --------------------------------------------------------------------------------------------
# Calls

def _pair(quality=None, seed=0, timeout=1.0, **service_kw):
    net = Network(quality, seed=seed)
    server, caller = Node(net.endpoint("server")), Node(net.endpoint("caller"), timeout=timeout)
    service = Service("svc", ["svc"], **service_kw)
    client = caller.client(server.offer(service))
    return net, server, caller, service, client


def test_request_ids_are_echoed_and_futures_resolve():
    net, server, caller, _s, client = _pair(handlers={"id": lambda req: req.request_id,
                                                      "echo": lambda req: req.payload})
    futures = [client.call("id") for _ in range(3)] + [client.call("echo", {"a": np.arange(3.0)})]
    assert all(f.pending for f in futures)
    net.advance(0.0)
    assert [f.value for f in futures[:3]] == [f.request_id for f in futures[:3]] == [1, 2, 3]
    assert futures[3].value["a"].tolist() == [0.0, 1.0, 2.0]
    assert futures[0].answered_at == 0.0 and caller.stats()["done"] == 4


def test_stale_duplicate_and_unexpected_replies_are_dropped_and_counted():
    held = []
    net, server, caller, _s, client = _pair(handlers={"slow": lambda req: held.append(req.defer())})
    first, second = client.call("slow", supersede=True), client.call("slow", supersede=True)
    net.advance(0.1)
    held[1].reply("new")  # answered out of order: the newer answer wins
    net.advance(0.2)
    assert second.value == "new"
    assert isinstance(first.error, Cancelled) and "superseded" in str(first.error)
    held[0].reply("old")  # arrives after the newer one: stale
    duplicate = Frame(Kind.REPLY, server.id, caller.id, second.request_id, "svc", "slow", "again", 0.2)
    unknown = Frame(Kind.REPLY, server.id, caller.id, 999, "svc", "slow", "who?", 0.2)
    server.endpoint.send(duplicate)
    server.endpoint.send(unknown)
    net.advance(0.3)
    assert second.value == "new"
    stats = caller.stats()
    assert (stats["superseded"], stats["stale_replies"], stats["duplicate_replies"],
            stats["unexpected_replies"]) == (1, 1, 1, 1)


def test_a_newer_answer_supersedes_only_calls_about_the_same_thing():
    """``supersede="person:A"``: the answer about B leaves A's older call pending; the answer
    to a newer call about A cancels it (one person's flag, several people)."""
    held = []
    net, server, caller, _s, client = _pair(handlers={"slow": lambda req: held.append(req.defer())})
    about_a, about_b, again_a = (client.call("slow", supersede=key) for key in ("person:A", "person:B", "person:A"))
    net.advance(0.1)
    held[1].reply("b")
    net.advance(0.2)
    assert about_b.value == "b" and about_a.pending
    held[2].reply("a2")
    net.advance(0.3)
    assert again_a.value == "a2" and isinstance(about_a.error, Cancelled)
    assert caller.stats()["superseded"] == 1


def test_ended_calls_are_remembered_for_a_simulated_minute_only():
    """A long run's memory stays flat: a node forgets ended calls after 60 simulated seconds
    (a duplicate reply later than that counts as unexpected)."""
    net, server, caller, _s, client = _pair(handlers={"ping": lambda req: "pong"})
    first = client.call("ping")
    for k in range(600):  # a call every 0.2 s for two simulated minutes
        net.advance(0.2 * k)
        client.call("ping")
    net.advance(120.0)
    assert first.value == "pong" and len(caller._ended) <= 301
    late = Frame(Kind.REPLY, server.id, caller.id, first.request_id, "svc", "ping", "pong", 120.0)
    server.endpoint.send(late)
    net.advance(120.1)
    assert caller.stats().get("duplicate_replies", 0) == 0 and caller.stats()["unexpected_replies"] == 1


def test_a_reply_from_another_endpoint_or_service_does_not_count():
    net, server, caller, _s, client = _pair(handlers={"x": lambda req: req.defer()})
    future = client.call("x")
    intruder = Node(net.endpoint("intruder"))
    intruder.endpoint.send(Frame(Kind.REPLY, intruder.id, caller.id, future.request_id, "svc", "x", "forged"))
    net.advance(0.1)
    assert future.pending and caller.stats()["unexpected_replies"] == 1


def test_timeouts_in_simulated_time_and_late_replies_are_stale():
    net, _server, caller, _s, client = _pair({"svc": {"latency": 0.3}}, timeout=0.5,
                                             handlers={"ping": lambda req: "pong"})
    future = client.call("ping")
    net.advance(0.5)
    assert future.pending  # the reply is due at 0.6, the deadline is 0.5: not yet decided
    net.advance(0.52)
    assert future.failed and isinstance(future.error, CallTimeout)
    with pytest.raises(CallTimeout, match="svc.ping #1: no answer within 0.5 s"):
        future.value
    net.advance(1.0)
    assert caller.stats()["timeouts"] == 1 and caller.stats()["stale_replies"] == 1
    quick = client.call("ping", timeout=0.7)
    net.advance(1.6)
    assert quick.value == "pong" and quick.answered_at == pytest.approx(1.6)


def test_a_lost_request_times_out_even_if_nobody_polls():
    net, _server, caller, _s, client = _pair({"svc": {"loss": 1.0}}, timeout=0.2,
                                             handlers={"ping": lambda req: "pong"})
    future = client.call("ping")
    net.advance(1.0)
    assert caller.stats()["timeouts"] == 1 and caller.pending_calls() == 0
    assert isinstance(future.error, CallTimeout)


def test_service_errors_travel_back_as_their_class_and_bugs_are_not_hidden():
    def refuse(req):
        raise DiscoveryError("no such pose")

    def bug(req):
        raise ZeroDivisionError("oops")

    net, _server, _caller, _s, client = _pair(handlers={"refuse": refuse, "bug": bug,
                                                        "bad": lambda req: object()})
    refused, unknown_op, bad = client.call("refuse"), client.call("nothing"), client.call("bad")
    other = Node(net.endpoint("x")).call(1, "no-such-service", "op")
    net.advance(0.0)
    assert isinstance(refused.error, DiscoveryError) and "no such pose" in str(refused.error)
    assert "no request kind 'nothing'" in str(unknown_op.error)
    assert isinstance(bad.error, CodecError)
    assert "offers no service 'no-such-service'" in str(other.error)
    client.call("bug")
    with pytest.raises(ZeroDivisionError):
        net.advance(0.1)
    with pytest.raises(CodecError):
        client.call("refuse", object())


def test_deferred_answers_and_callbacks():
    held = []
    net, _server, _caller, _s, client = _pair(handlers={"move": lambda req: held.append(req.defer())})
    future = client.call("move", [1.0, 2.0], timeout=5.0)
    seen = []
    future.add_done_callback(lambda f: seen.append(f.value))
    net.advance(1.0)
    assert future.pending and held[0].payload == [1.0, 2.0]
    held[0].reply("reached")
    with pytest.raises(NetError, match="already answered"):
        held[0].reply("twice")
    net.advance(2.0)
    assert seen == ["reached"]
    future.cancel()  # too late: nothing changes
    assert future.value == "reached"


# --------------------------------------------------------------------------------------------
# Full queues

def test_full_inbox_fails_the_callers_future_at_once():
    net = Network()
    server = Node(net.endpoint("server", inbox_size=2), auto=False)  # nobody drains it
    caller = Node(net.endpoint("caller"))
    client = caller.client(server.offer(Service("svc", ["svc"], {"x": lambda req: 1})))
    futures = [client.call("x") for _ in range(3)]
    net.advance(0.0)
    assert [f.status for f in futures] == ["pending", "pending", "failed"]
    assert isinstance(futures[2].error, QueueFull) and "inbox of server is full" in str(futures[2].error)
    server.poll()
    net.advance(0.1)
    assert [f.value for f in futures[:2]] == [1, 1]


def test_full_bandwidth_queue_is_an_error_to_the_sender():
    net, _server, caller, _s, client = _pair({"svc": {"rate": 1, "queue": 2}}, timeout=5.0,
                                             handlers={"x": lambda req: 1})
    futures = [client.call("x") for _ in range(4)]
    assert [f.status for f in futures] == ["pending", "pending", "pending", "failed"]
    assert isinstance(futures[3].error, QueueFull)
    net.advance(3.0)
    assert [f.value for f in futures[:3]] == [1, 1, 1]
    assert [round(f.answered_at, 6) for f in futures[:3]] == [0.0, 1.0, 2.0]  # one per second


def test_no_endpoint_and_closed_endpoint_are_errors_not_hangs():
    net, server, caller, _s, client = _pair(handlers={"x": lambda req: 1})
    assert isinstance(caller.call(42, "svc", "x").error, NetError)
    server.endpoint.close()
    future = client.call("x")
    net.advance(0.0)
    assert "closed" in str(future.error)


# --------------------------------------------------------------------------------------------
# Streams

def test_a_slow_reader_gets_the_newest_state_never_a_backlog():
    net = Network()
    monitor = Node(net.endpoint("monitor"))
    safety = Service("safety", ["safety"], streams=["pose"])
    record = monitor.offer(safety)
    reader = Node(net.endpoint("reader", inbox_size=4), auto=False)
    poses = reader.client(record).subscribe("pose")
    net.advance(0.0)
    reader.poll()
    assert poses.established and poses.latest() is None
    for step in range(1, 21):  # 20 samples, the reader polls only every 10 steps
        safety.publish("pose", [step * 0.1, 0.0])
        net.advance(step * 0.01)
        if step % 10 == 0:
            reader.poll()
            assert poses.take() == [step * 0.1, 0.0] and poses.seq == step
            assert poses.take() is None  # nothing newer: no history to work through
    assert reader.endpoint.counts["replaced"] == 12  # the inbox held 4, older samples were replaced


def test_reordered_samples_never_go_back_in_time():
    net = Network({"safety": {"jitter": {"dist": "uniform", "low": 0.0, "high": 0.2}}}, seed=5)
    monitor, reader = Node(net.endpoint("monitor")), Node(net.endpoint("reader"))
    safety = Service("safety", ["safety"], streams=["zone"])
    seen = []
    sub = reader.client(monitor.offer(safety)).subscribe("zone", on_update=seen.append)
    net.advance(0.5)
    for step in range(100):
        safety.publish("zone", step)
        net.advance(0.5 + step * 0.01)
    net.advance(2.0)
    assert seen == sorted(seen) and seen[-1] == 99
    assert sub.stale > 0 and sub.received + sub.stale == 100


def test_late_subscriber_gets_the_current_state_and_lossy_subscribe_is_retried():
    net = Network({"safety": {"loss": 0.7}}, seed=11)
    monitor, reader = Node(net.endpoint("monitor")), Node(net.endpoint("reader"), timeout=0.1)
    safety = Service("safety", ["safety"], streams=["zone"])
    record = monitor.offer(safety)
    safety.publish("zone", "green")
    sub = reader.client(record).subscribe("zone")
    for step in range(1, 200):
        net.advance(step * 0.05)
        if sub.latest() is not None:
            break
    assert sub.latest() == "green" and sub.attempts > 1


def test_keep_last_at_the_bandwidth_limiter():
    net = Network({"safety": {"rate": 5, "latency": 0.05}})
    monitor, reader = Node(net.endpoint("monitor")), Node(net.endpoint("reader"))
    safety = Service("safety", ["safety"], streams=["pose"])
    sub = reader.client(monitor.offer(safety)).subscribe("pose")
    ages = []
    for step in range(1, 300):  # 100 samples/s into a 5 messages/s channel
        now = step * 0.01
        net.advance(now)
        safety.publish("pose", now)
        if sub.latest() is not None:
            ages.append(now - sub.latest())
    assert max(ages[50:]) < 2 / 5 + 0.05 + 0.011  # bounded: no backlog builds up
    assert net.counts["replaced"] > 200


def test_unsubscribe_stops_the_stream():
    net = Network()
    monitor, reader = Node(net.endpoint("monitor")), Node(net.endpoint("reader"))
    safety = Service("safety", ["safety"], streams=["pose"])
    sub = reader.client(monitor.offer(safety)).subscribe("pose")
    net.advance(0.0)
    assert safety.publish("pose", 1) == 1
    sub.close()
    net.advance(0.1)
    assert safety.publish("pose", 2) == 0
    with pytest.raises(NetError, match="no stream"):
        safety.publish("nope", 1)
