"""Figure 4: the round trip of one actor action message, server -> plugin -> server.

One round trip is what a goal costs on the wire: the server builds and sends an
ActionMessage (encode, ``mq_send``), the plugin receives and decodes it, answers with a
FeedbackMessage (build, encode, send), and the server receives and decodes that. Both ends
use the run's own code (:class:`hri.actor.queues.ActorLink` and its endpoints) on queues made
by :class:`hri.base.mqueue.RunQueues`.

* ``in_process``: both ends in this process, one after the other (the simulation's mode today).
* ``split_process``: the plugin's end in a child process; each end waits for the other's
  message with the endpoints' ``wait`` (:func:`hri.base.mqueue.receive_waiting`): polling for up
  to ``hri.base.mqueue.SPIN_S`` (200 µs), then asleep in a blocking receive (timed, so a dead
  child cannot hang the benchmark). An answer that comes while the waiting end still polls
  costs no wake-up.
* ``split_process_same_cpu``: the same with both processes pinned to one CPU (Linux); the
  polling end yields the CPU to its peer between polls.
* ``split_process_asleep``: the same without polling: each wait sleeps at once, so a round
  trip includes two wake-ups of a sleeping process. Where the scheduler puts the two
  processes matters (on an idle virtual machine a wake-up on another, halted CPU costs tens
  of µs), so the figure of one run can be bimodal.
* ``split_process_spin``: both ends poll for the whole wait (each burns a CPU while it
  waits): the floor of a two-process design.
"""

from __future__ import annotations

import os
import time
from functools import partial
from typing import Any

import numpy as np
import posix_ipc

from hri.actor.protocol import ActionMessage, ActorState, FeedbackMessage
from hri.actor.queues import ActorLink, PluginEndpoint, ServerEndpoint
from hri.batch.backends import worker_context
from hri.bench.common import BenchSettings, Say, summary
from hri.base.errors import HriError
from hri.base.geometry import Pose
from hri.base.mqueue import SPIN_S, RunQueues

STOP_NAME = "__bench_stop__"  # the action that ends the child's echo loop
WARMUP = 200                  # round trips not counted (first touches, the child starting)
TIMEOUT_S = 30.0              # the child may still be starting when the first action is sent
POLL_S = 0.5                  # wall seconds a wait lasts before the other side is checked on


def _action(sequence: int) -> ActionMessage:
    return ActionMessage(ActorState.ANIMATION, "wave", 1.0, Pose(), sequence)


def _answer(message: ActionMessage) -> FeedbackMessage:
    return FeedbackMessage(message.state, 0.0, message.target, message.sequence, 0.0)


def in_process(link: ActorLink, messages: int) -> list[int]:
    """Round-trip times in ns, both endpoints in this process."""
    server, plugin = link.server_endpoint(), link.plugin_endpoint()
    clock = time.perf_counter_ns
    samples = []
    for i in range(WARMUP + messages):
        start = clock()
        server.send(_action(i + 1))
        plugin.send(_answer(plugin.receive()))
        reply = server.receive()
        end = clock()
        if reply is None or reply.sequence != i + 1:
            raise HriError("bench: the in-process round trip lost a message")
        if i >= WARMUP:
            samples.append(end - start)
    return samples


def echo_plugin(action_name: str, feedback_name: str, spin_s: float, cpu: int | None = None) -> None:
    """The plugin's end in a child process: answer each action, waiting for the next with the
    endpoint's ``wait`` (polling for ``spin_s``, then asleep); on CPU ``cpu`` alone if given."""
    if cpu is not None:
        os.sched_setaffinity(0, {cpu})
    actions = posix_ipc.MessageQueue(action_name)  # our own handles
    feedback = posix_ipc.MessageQueue(feedback_name)
    actions.block = feedback.block = False
    endpoint = PluginEndpoint(actions, feedback)
    try:
        while True:
            message = endpoint.wait(POLL_S, spin_s)
            if message is None:
                if os.getppid() == 1:  # the benchmark is gone
                    return
                continue
            if message.animation_name == STOP_NAME:
                return
            endpoint.send(_answer(message))
    finally:
        actions.close()
        feedback.close()


def _await_answer(server: ServerEndpoint, spin_s: float, child: Any) -> FeedbackMessage:
    """The next feedback; an error if the child died or stays silent for ``TIMEOUT_S``."""
    deadline = time.monotonic() + TIMEOUT_S
    while (reply := server.wait(POLL_S, spin_s)) is None:
        if not child.is_alive() or time.monotonic() > deadline:
            why = "died" if not child.is_alive() else f"did not answer in {TIMEOUT_S:g} s"
            raise HriError(f"bench: the actor plugin's child process {why}")
    return reply


def split_process(link: ActorLink, messages: int, spin_s: float = SPIN_S, same_cpu: bool = False) -> list[int]:
    """Round-trip times in ns, the plugin's end in a child process, both ends waiting with
    ``wait`` (polling for ``spin_s``, then asleep); both on one CPU with ``same_cpu``."""
    cpu = min(os.sched_getaffinity(0)) if same_cpu else None
    child = worker_context().Process(target=echo_plugin, args=(link.action_name, link.feedback_name, spin_s, cpu),
                                    daemon=True)
    child.start()
    if cpu is None:
        return _server_side(link, messages, spin_s, child)
    allowed = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {cpu})
    try:
        return _server_side(link, messages, spin_s, child)
    finally:
        os.sched_setaffinity(0, allowed)


def _server_side(link: ActorLink, messages: int, spin_s: float, child: Any) -> list[int]:
    """Send, await the answer, time it; stop and reap the child at the end."""
    server = link.server_endpoint()
    clock = time.perf_counter_ns
    samples = []
    try:
        for i in range(WARMUP + messages):
            start = clock()
            server.send(_action(i + 1))
            reply = _await_answer(server, spin_s, child)
            end = clock()
            if reply.sequence != i + 1:
                raise HriError("bench: the split-process round trip lost a message")
            if i >= WARMUP:
                samples.append(end - start)
        server.send(ActionMessage(ActorState.ANIMATION, STOP_NAME))
    except BaseException:  # stopped (Ctrl-C, SIGTERM, an error): the child ignores SIGINT, end it now
        child.terminate()
        raise
    finally:
        child.join(5.0)
        if child.is_alive():
            child.terminate()  # our own child, by its handle
            child.join(5.0)
    return samples


def _figures(samples_ns: list[int]) -> dict[str, float]:
    us = np.asarray(samples_ns, float) / 1000.0
    return {"median_us": float(np.median(us)), "p95_us": float(np.percentile(us, 95))}


def run(settings: BenchSettings, say: Say) -> dict[str, Any]:
    modes = {"in_process": in_process, "split_process": split_process,
             "split_process_same_cpu": partial(split_process, same_cpu=True),
             "split_process_asleep": partial(split_process, spin_s=0.0),
             "split_process_spin": partial(split_process, spin_s=TIMEOUT_S)}
    if not hasattr(os, "sched_setaffinity"):  # not Linux
        del modes["split_process_same_cpu"]
    per_mode: dict[str, list[dict[str, float]]] = {mode: [] for mode in modes}
    for k in range(settings.repeat):
        say(f"roundtrip: {k + 1}/{settings.repeat}")
        for mode, measure in modes.items():
            with RunQueues() as queues:  # fresh queues: no message left over from the other mode
                per_mode[mode].append(_figures(measure(ActorLink(queues), settings.messages)))
    return {mode: {"messages": settings.messages,
                   "median_us": summary([r["median_us"] for r in runs]),
                   "p95_us": summary([r["p95_us"] for r in runs])}
            for mode, runs in per_mode.items()}
