"""Seed 002's laws on a ping-pong pair over hri.net, in simulated time.

The model is the seed's networked control loop: the robot samples its state every period
Ts and sends it to an event-driven controller, which answers at once with the next set-point.
The robot applies a set-point only if it is new (the seed's plugin dropped repeated control
data); the task is N control steps, so it takes t0 = N·Ts on an ideal network. Then:

- latency L (one way): the answer to a sample comes 2L later; the samples sent meanwhile
  carry the old state and their answers are duplicates, so each step takes
  max(1, ⌈2L/Ts⌉) periods: t = t0·(1 + ⌊2L/Ts⌋) except exactly at 2L = m·Ts, where a reply
  arriving at the tick is used in that tick (ours gives t0·m, the seed's formula t0·(m+1));
- loss p in both directions: a period advances the task only if the sample and its answer
  both arrive, with probability (1-p)², so t ≈ t0/(1-p)² (a sum of geometric variables);
- bandwidth below the send rate: requests queue up at the limiter (FIFO, as in the seed's
  relay), their waiting time grows with every period, and the task time collapses; a policer
  (drop instead of queue) or keep-last state streams degrade gracefully instead.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pytest

from hri.net import Broker, Network, Node, Service

PERIOD = 0.02  # Ts: 50 samples per second, the send rate
STEPS = 50  # N
T0 = STEPS * PERIOD


@dataclass
class Outcome:
    time: float | None  # completion time in simulated seconds, None if not within the limit
    duplicates: int  # answers that carried no new set-point
    failed: int  # calls that failed (timeouts, full queues)
    stale: int  # replies dropped by the request-id check


def ping_pong(quality: dict | None, *, steps: int = STEPS, period: float = PERIOD, seed: int = 0,
              limit: float = 60.0, mode: str = "rpc", timeout: float = 5.0) -> Outcome:
    """Run the loop; ``quality`` applies to both channels (``control`` and ``robot``)."""
    net = Network({"control": quality or {}, "robot": quality or {}}, seed=seed)
    runner = _rpc_loop if mode == "rpc" else _stream_loop
    return runner(net, steps, period, limit, timeout)


def _rpc_loop(net: Network, steps: int, period: float, limit: float, timeout: float) -> Outcome:
    broker = Broker()
    controller, robot = Node(net.endpoint("controller")), Node(net.endpoint("robot"), timeout=timeout)
    broker.register(controller.offer(Service("control", ["peg-in-hole", "controller"],
                                             {"step": lambda request: request.payload + 1})))
    client = robot.client(broker.discover(all_of=["controller"]))
    k, duplicates, failed, waiting = 0, 0, 0, []
    for tick in range(int(limit / period) + 1):
        net.advance(tick * period)
        for future in waiting:
            if future.done:
                if future.value > k:
                    k = future.value
                else:
                    duplicates += 1
            elif future.failed:
                failed += 1
        waiting = [future for future in waiting if future.pending]
        if k >= steps:
            return Outcome(tick * period, duplicates, failed, robot.counts["stale_replies"])
        waiting.append(client.call("step", k))
    return Outcome(None, duplicates, failed, robot.counts["stale_replies"])


def _stream_loop(net: Network, steps: int, period: float, limit: float, timeout: float) -> Outcome:
    controller, robot = Node(net.endpoint("controller"), timeout=timeout), Node(net.endpoint("robot"), timeout=timeout)
    control = Service("control", ["controller"], streams=["setpoint"])
    plant = Service("robot", ["robot"], streams=["state"])
    control_record, plant_record = controller.offer(control), robot.offer(plant)
    controller.client(plant_record).subscribe("state", on_update=lambda k: control.publish("setpoint", k + 1))
    setpoints = robot.client(control_record).subscribe("setpoint")
    tick = 0
    while not plant.publisher("state").subscribers or not setpoints.established:
        net.advance(tick * period)  # wait until both subscriptions stand (not part of the task)
        tick += 1
    start, k, duplicates = tick * period, 0, 0
    for tick in range(tick, tick + int(limit / period) + 1):
        net.advance(tick * period)
        setpoint = setpoints.take()
        if setpoint is not None:
            if setpoint > k:
                k = setpoint
            else:
                duplicates += 1
        if k >= steps:
            return Outcome(tick * period - start, duplicates, 0, setpoints.stale)
        plant.publish("state", k)
    return Outcome(None, duplicates, 0, setpoints.stale)


# --------------------------------------------------------------------------------------------
# Latency: steps

LATENCIES = [0.0, 0.002, 0.0095, 0.0105, 0.019, 0.021, 0.029, 0.031, 0.045, 0.055]


@pytest.mark.parametrize("mode", ["rpc", "stream"])
def test_completion_time_steps_up_with_latency(mode):
    times = [ping_pong({"latency": latency}, mode=mode).time for latency in LATENCIES]
    expected = [T0 * (1 + math.floor(2 * latency / PERIOD)) for latency in LATENCIES]
    assert times == pytest.approx(expected, abs=1e-9)
    assert [round(t / T0) for t in times] == [1, 1, 1, 2, 2, 3, 3, 4, 5, 6]


def test_latency_at_the_step_boundary_and_duplicates():
    at_boundary = ping_pong({"latency": PERIOD / 2})  # 2L = Ts exactly
    assert at_boundary.time == pytest.approx(T0)  # the reply arrives at the tick and is used in it
    slow = ping_pong({"latency": 0.031})  # 4 periods per step: 3 answers of each 4 are repeats
    assert slow.duplicates == 3 * (STEPS - 1) and slow.failed == 0  # (the last step's come after the end)


def test_jitter_smooths_the_steps():
    # around a step (2L = 1.5·Ts ± jitter) the time lies between the two plateaus, not on one
    times = [ping_pong({"latency": 0.015, "jitter": {"dist": "normal", "sd": 0.005}}, seed=s).time
             for s in range(3)]
    assert all(T0 * 1.5 < t < T0 * 3.0 for t in times)


# --------------------------------------------------------------------------------------------
# Loss: t0 / (1 - p)^2

@pytest.mark.parametrize("p", [0.1, 0.3, 0.5])
def test_completion_time_grows_as_one_over_one_minus_p_squared(p):
    steps, runs = 200, 8
    q = (1 - p) ** 2
    times = [ping_pong({"loss": p}, steps=steps, seed=seed, limit=100.0).time for seed in range(runs)]
    t0 = steps * PERIOD
    # periods per step are geometric (success q): mean 1/q, variance (1-q)/q²
    sd_of_mean = PERIOD * math.sqrt(steps * (1 - q)) / q / math.sqrt(runs)
    assert abs(np.mean(times) - t0 / q) < 4 * sd_of_mean
    # the seed's formula t0/(1-p)² is that mean
    assert np.mean(times) == pytest.approx(t0 / (1 - p) ** 2, rel=0.1)


def test_bursty_loss_has_the_same_mean_but_more_spread():
    def times(loss):
        return [ping_pong({"loss": loss}, steps=100, seed=seed, limit=60.0).time for seed in range(12)]

    bernoulli, bursty = times(0.3), times({"model": "gilbert", "p": 0.3, "burst": 8})
    assert np.mean(bursty) == pytest.approx(np.mean(bernoulli), rel=0.35)
    assert np.std(bursty) > 1.5 * np.std(bernoulli)


# --------------------------------------------------------------------------------------------
# Bandwidth: collapse below the send rate

def test_completion_time_collapses_when_the_budget_falls_below_the_send_rate():
    send_rate = 1 / PERIOD
    above = {rate: ping_pong({"rate": rate}).time for rate in (None, 100, 60, send_rate)}
    assert all(t == pytest.approx(T0) for t in above.values())
    below = {rate: ping_pong({"rate": rate, "queue": 64}, limit=30.0) for rate in (45, 40, 25)}
    for rate, outcome in below.items():
        assert outcome.time is None or outcome.time > 10 * T0, (rate, outcome)
    assert any(outcome.failed for outcome in below.values())  # the queue fills: QueueFull, timeouts


def test_dropping_or_keep_last_instead_of_queueing_degrades_gracefully():
    policed = ping_pong({"rate": 40, "burst": 2, "policy": "police"})
    streamed = ping_pong({"rate": 40, "queue": 64}, mode="stream")
    assert T0 < policed.time < 2 * T0
    assert T0 < streamed.time < 2 * T0
