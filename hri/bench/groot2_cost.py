"""What serving the trees to Groot2 costs a run (``hri run --groot2``): the headless real-time
factor of the same seeded run three ways, alternated in each repeat so that a change of load
on the machine hits all three alike:

- *plain*: without ``--groot2``;
- *idle*: with ``--groot2`` and nobody connected;
- *client*: with ``--groot2`` and a client in another process asking both trees for their
  statuses 20 times a (wall-clock) second, as Groot2's monitor does, on the protocol of
  BehaviorTree.CPP 4.10 (``groot2_protocol.h``).

The ratios idle/plain and client/plain are the medians of the per-repeat ratios (paired runs).
The client's answered requests per second say that it was served while the run went on.
"""

from __future__ import annotations

import multiprocessing
import socket
import statistics
import time
from typing import TYPE_CHECKING, Any

from hri.bench.common import BenchSettings, Say, load, sig, summary

if TYPE_CHECKING:
    from multiprocessing.synchronize import Event
    from multiprocessing.sharedctypes import Synchronized

    from hri.scenario.model import Scenario

CLIENT_HZ = 20.0  # the polling rate of the client (Groot2's monitor polls at about this rate)
ANSWER_TIMEOUT_S = 1.0  # a request unanswered this long is dropped and the socket made anew
FIRST_PORT = 1667  # where the search for four free ports starts (Groot2's default)
STATUS_REQUEST = "S"  # RequestType::STATUS


def free_base_port(first: int = FIRST_PORT, tries: int = 200) -> int:
    """The first base from ``first`` up (in steps of four) whose four ports are free."""
    from hri.run.groot2 import PORTS_PER_TREE, ROLE_ORDER

    span = PORTS_PER_TREE * len(ROLE_ORDER)
    for base in range(first, first + span * tries, span):
        if all(_free(port) for port in range(base, base + span)):
            return base
    raise RuntimeError(f"no four free ports from {first}")


def _free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def poll_statuses(ports: list[int], hz: float, ready: "Event", stop: "Event", answered: "Synchronized") -> None:
    """The client: a STATUS request to each port ``hz`` times a second until ``stop``; each
    answer counts in ``answered``; ``ready`` is set once it is connected. A request left
    unanswered is dropped with its socket (a REQ socket cannot send again before its answer)."""
    import zmq

    from hri.bt.loggers.groot2_publisher import PROTOCOL_ID, REQUEST_HEADER

    context = zmq.Context()
    sockets = {port: _connect(context, port) for port in ports}
    request = REQUEST_HEADER.pack(PROTOCOL_ID, ord(STATUS_REQUEST), 1)
    period = 1.0 / hz
    ready.set()
    try:
        while not stop.is_set():
            due = time.monotonic() + period
            for port in ports:
                sockets[port] = _ask(context, sockets[port], port, request, answered)
            stop.wait(max(0.0, due - time.monotonic()))
    finally:
        for sock in sockets.values():
            sock.close(0)
        context.term()


def _connect(context: Any, port: int) -> Any:
    import zmq

    sock = context.socket(zmq.REQ)
    sock.setsockopt(zmq.LINGER, 0)
    sock.connect(f"tcp://127.0.0.1:{port}")
    return sock


def _ask(context: Any, sock: Any, port: int, request: bytes, answered: "Synchronized") -> Any:
    """One request and its answer; the socket to use next (a new one after a time-out)."""
    sock.send_multipart([request])
    if sock.poll(int(ANSWER_TIMEOUT_S * 1000)):
        sock.recv_multipart()
        with answered.get_lock():
            answered.value += 1
        return sock
    sock.close(0)
    return _connect(context, port)


def run_once(scenario: "Scenario", duration_s: float, seed: int, groot2: bool, client: bool) -> dict[str, float]:
    """One headless run (without ``--groot2``, with it, or with it and the polling client): the
    wall time of ``Simulation.run`` alone, and the client's answers per wall second."""
    from hri.run.groot2 import tree_ports
    from hri.run.sim import Simulation

    base = free_base_port() if groot2 else None
    spawn = multiprocessing.get_context("spawn")  # the client shares nothing with PyBullet
    ready, stop, answered = spawn.Event(), spawn.Event(), spawn.Value("q", 0)
    poller = None
    with Simulation(scenario, seed, groot2_port=base) as sim:
        if client:
            poller = spawn.Process(target=poll_statuses, daemon=True,
                                   args=(list(tree_ports(base).values()), CLIENT_HZ, ready, stop, answered))
            poller.start()
            ready.wait(30.0)  # the client's start-up is not the run's
        try:
            sim.run(duration_s)
        finally:
            stop.set()
            if poller is not None:
                poller.join(5.0)
        steps, wall = sim.step_count, sim.stats.wall_time_s
    return {"steps": steps, "wall_s": wall, "rtf": steps * sim.dt / wall,
            "answers_per_s": answered.value / wall if client else 0.0}


def measure_scenario(name: str, settings: BenchSettings, say: Say) -> dict[str, Any]:
    scenario = load(name, settings.sets)
    plain, idle, client = [], [], []
    for k in range(settings.repeat):
        say(f"groot2: {name} {k + 1}/{settings.repeat}")
        plain.append(run_once(scenario, settings.duration_s, settings.seed, False, False))
        idle.append(run_once(scenario, settings.duration_s, settings.seed, True, False))
        client.append(run_once(scenario, settings.duration_s, settings.seed, True, True))
    return {
        "plain_rtf": summary([r["rtf"] for r in plain]),
        "idle_rtf": summary([r["rtf"] for r in idle]),
        "client_rtf": summary([r["rtf"] for r in client]),
        "idle_ratio": summary([i["rtf"] / p["rtf"] for p, i in zip(plain, idle)]),
        "client_ratio": summary([c["rtf"] / p["rtf"] for p, c in zip(plain, client)]),
        "client_hz": CLIENT_HZ,
        "answers_per_s": sig(statistics.median(r["answers_per_s"] for r in client)),
    }


def run(settings: BenchSettings, say: Say) -> dict[str, Any]:
    return {name: measure_scenario(name, settings, say) for name in settings.scenarios}
