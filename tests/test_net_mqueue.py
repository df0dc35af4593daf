"""hri.net over POSIX message queues: same endpoint interface, non-blocking, no queue left behind."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import posix_ipc
import pytest

from hri.base.mqueue import RunQueues, queue_exists
from hri.net import (Broker, CallTimeout, CodecError, MqEndpoint, MqTransport, NetError, Node,
                     QueueFull, Service, broker_service)


class Clock:
    """Simulated time of a test loop: advanced by hand."""

    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def registry(tmp_path) -> Path:
    return tmp_path / "registry"


def _poll_until(condition, nodes, clock: Clock, wall_s: float = 30.0, step: float = 0.01) -> None:
    deadline = time.monotonic() + wall_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        clock.t += step
        for node in nodes:
            node.poll()
        time.sleep(0.001)


def test_two_endpoints_in_one_process(registry):
    clock = Clock()
    with RunQueues(registry) as rq:
        transport = MqTransport(rq, max_messages=4, message_size=1024)
        names = [transport.create(1), transport.create(2)]
        server = Node(transport.endpoint(1, "server", clock), timeout=1.0)
        caller = Node(transport.endpoint(2, "caller", clock), timeout=1.0)
        client = caller.client(server.offer(Service("svc", ["svc"], {"echo": lambda req: req.payload})))

        future = client.call("echo", {"pose": np.array([1.0, 2.0, 0.5])})
        _poll_until(lambda: not future.pending, [server, caller], clock)
        assert future.value["pose"].tolist() == [1.0, 2.0, 0.5]

        # nobody reads the server's inbox: the 5th request finds it full, and says so at once
        futures = [client.call("echo", i) for i in range(5)]
        assert [f.status for f in futures] == ["pending"] * 4 + ["failed"]
        assert isinstance(futures[4].error, QueueFull) and "inbox of endpoint 1 is full" in str(futures[4].error)
        _poll_until(lambda: not any(f.pending for f in futures), [server, caller], clock)
        assert [f.value for f in futures[:4]] == [0, 1, 2, 3]

        with pytest.raises(CodecError, match="message size"):
            client.call("echo", b"x" * 2000)
        posix_ipc.MessageQueue(names[0]).send(b"not a frame")
        assert server.endpoint.receive() is None and server.endpoint.dropped == 1
        with pytest.raises(NetError, match="no endpoint 7"):
            server.endpoint._outbox(7)
        server.endpoint.close()
        caller.endpoint.close()
        assert all(queue_exists(name) for name in names)
    assert not any(queue_exists(name) for name in names)
    assert not rq.registry_path.exists()


CHILD = textwrap.dedent("""
    import json, sys, time
    from hri.net import BrokerClient, MqEndpoint, Node, Service
    spec = json.loads(sys.argv[1])
    clock = [0.0]
    node = Node(MqEndpoint.from_spec(spec, name="child", clock=lambda: clock[0]), timeout=1e6)
    done = []
    echo = Service("echo", ["echo-1", "echo", "service"],
                   {"echo": lambda req: req.payload, "quit": lambda req: done.append(1)},
                   streams=["ticks"])
    registered = BrokerClient(node, spec["broker"]).register(node.offer(echo))
    deadline = time.monotonic() + 60
    step = 0
    while not done and time.monotonic() < deadline:
        step += 1
        clock[0] += 0.01
        node.poll()
        if step % 10 == 0:  # not faster than the parent reads: replies share its inbox
            echo.publish("ticks", clock[0])
        time.sleep(0.002)
    node.poll()
    print(json.dumps({"registered": registered.done, "stats": node.stats()}), flush=True)
""")


def test_a_child_process_serves_over_message_queues_and_leaves_nothing(registry):
    clock = Clock()
    with RunQueues(registry) as rq:
        transport = MqTransport(rq, max_messages=8, message_size=1024)
        names = [transport.create(1), transport.create(2)]
        broker = Broker()
        parent = Node(transport.endpoint(1, "parent", clock), timeout=10.0)
        broker.register(parent.offer(broker_service(broker)))
        spec = {**transport.spec(2), "broker": 1}
        child = subprocess.Popen([sys.executable, "-c", CHILD, json.dumps(spec)], stdout=subprocess.PIPE, text=True)
        try:
            _poll_until(lambda: len(broker) == 2, [parent], clock)  # the child registered itself
            client = parent.client(broker.discover(all_of=["echo", "service"]))
            future = client.call("echo", [1, "two", 3.0])
            ticks = client.subscribe("ticks")
            _poll_until(lambda: not future.pending and ticks.latest() is not None, [parent], clock)
            assert future.value == [1, "two", 3.0]
            first = ticks.latest()
            _poll_until(lambda: ticks.latest() > first + 0.15, [parent], clock)
            assert ticks.stale == 0

            quit_call = client.call("quit")
            _poll_until(lambda: not quit_call.pending, [parent], clock)
            report = json.loads(child.stdout.readline())
            assert child.wait(timeout=30) == 0
            assert report["registered"] and report["stats"]["requests"] >= 3

            # the child is gone: a call is not answered and times out in simulated time
            lost = client.call("echo", 1, timeout=0.5)
            _poll_until(lambda: not lost.pending, [parent], clock)
            assert isinstance(lost.error, CallTimeout)
        finally:
            if child.poll() is None:
                child.kill()
                child.wait(timeout=30)
            child.stdout.close()
            parent.endpoint.close()
    assert not any(queue_exists(name) for name in names)


def test_attaching_needs_an_existing_queue(registry):
    with RunQueues(registry) as rq:
        transport = MqTransport(rq, max_messages=2, message_size=256)
        transport.create(1)
        with pytest.raises(NetError, match="already has a queue"):
            transport.create(1)
        with pytest.raises(NetError, match="no queue"):
            transport.spec(5)
        with pytest.raises(NetError, match="does not exist"):
            MqEndpoint(9, {9: rq.prefix + "-net-9"})
