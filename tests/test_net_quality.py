"""hri.net.quality: loss (Bernoulli, Gilbert–Elliott), jitter, bandwidth, settings from dicts."""

from __future__ import annotations

import math

import numpy as np
import pytest
import yaml

from hri.net import ConfigError, Network, NetworkQuality
from hri.net.quality import Link, LinkQuality, link_rng


def _link(settings: dict, seed: int = 0) -> Link:
    return Link(LinkQuality.from_dict(settings), link_rng(seed, "test", "to_service"))


def _losses(link: Link, n: int) -> np.ndarray:
    return np.array([link.transmit(i * 0.001).arrival is None for i in range(n)])


def _runs(lost: np.ndarray) -> np.ndarray:
    """Lengths of the runs of consecutive losses."""
    padded = np.concatenate(([0], lost.astype(int), [0]))
    edges = np.flatnonzero(np.diff(padded))
    return edges[1::2] - edges[::2]


# --------------------------------------------------------------------------------------------
# Loss

@pytest.mark.parametrize("p", [0.01, 0.1, 0.5])
def test_bernoulli_loss_rate_matches_p(p):
    n = 40_000
    rate = _losses(_link({"loss": p}, seed=1), n).mean()
    assert abs(rate - p) < 4 * math.sqrt(p * (1 - p) / n)


def test_gilbert_elliott_mean_loss_and_burst_length():
    n = 60_000
    link = _link({"loss": {"model": "gilbert", "p_gb": 0.05, "p_bg": 0.25}}, seed=2)
    assert link.quality.loss.mean_loss == pytest.approx(1 / 6)
    lost = _losses(link, n)
    runs = _runs(lost)
    # the loss fraction of a Markov chain: standard error widened by the correlation (burst 4)
    assert abs(lost.mean() - 1 / 6) < 4 * math.sqrt((1 / 6) * (5 / 6) / n) * 3
    # bad-state sojourns are geometric with mean 1/p_bg = 4 (sd sqrt(1-p)/p)
    assert abs(runs.mean() - 4.0) < 4 * (math.sqrt(0.75) / 0.25) / math.sqrt(len(runs))
    # a Bernoulli loss of the same mean has runs of mean 1/(1-p) = 1.2: bursts are the difference
    bernoulli_runs = _runs(_losses(_link({"loss": 1 / 6}, seed=2), n))
    assert bernoulli_runs.mean() == pytest.approx(1.2, abs=0.05)


def test_gilbert_from_mean_loss_and_burst():
    link = _link({"loss": {"model": "gilbert", "p": 0.1, "burst": 5}}, seed=3)
    loss = link.quality.loss
    assert loss.mean_loss == pytest.approx(0.1) and loss.mean_burst == pytest.approx(5)
    lost = _losses(link, 60_000)
    assert lost.mean() == pytest.approx(0.1, abs=0.015)
    assert _runs(lost).mean() == pytest.approx(5, rel=0.1)


# --------------------------------------------------------------------------------------------
# Jitter

def _delays(settings: dict, n: int = 20_000, seed: int = 4) -> np.ndarray:
    link = _link(settings, seed)
    return np.array([link.transmit(i * 0.01).arrival - i * 0.01 for i in range(n)])


def test_normal_jitter_mean_and_spread():
    delays = _delays({"latency": 0.2, "jitter": {"dist": "normal", "sd": 0.02}})
    assert delays.mean() == pytest.approx(0.2, abs=0.001)
    assert delays.std() == pytest.approx(0.02, rel=0.03)


def test_normal_jitter_is_clipped_at_zero_delay():
    delays = _delays({"jitter": 0.01})  # shorthand: normal, sd
    assert delays.min() == 0.0
    assert (delays == 0.0).mean() == pytest.approx(0.5, abs=0.02)


def test_exponential_and_uniform_jitter():
    exponential = _delays({"latency": 0.1, "jitter": {"dist": "exponential", "mean": 0.05}})
    assert exponential.min() >= 0.1 and exponential.mean() == pytest.approx(0.15, abs=0.002)
    uniform = _delays({"latency": 0.1, "jitter": {"dist": "uniform", "low": 0.01, "high": 0.03}})
    assert uniform.min() >= 0.11 and uniform.max() <= 0.13
    assert uniform.mean() == pytest.approx(0.12, abs=0.001)


def test_jitter_reorders_unless_fifo():
    settings = {"latency": 0.05, "jitter": {"dist": "exponential", "mean": 0.05}}
    free_link = _link(settings, 5)
    free = [free_link.transmit(i * 0.01).arrival for i in range(1000)]
    fifo_link = _link({**settings, "fifo": True}, 5)
    fifo = [fifo_link.transmit(i * 0.01).arrival for i in range(1000)]
    assert any(b < a for a, b in zip(free, free[1:]))
    assert all(b >= a for a, b in zip(fifo, fifo[1:]))


# --------------------------------------------------------------------------------------------
# Bandwidth

def test_shaping_spaces_departures_and_bounds_the_queue():
    link = _link({"rate": 10, "queue": 5})
    sent = [link.transmit(0.0) for _ in range(8)]
    assert [s.departure for s in sent[:6]] == pytest.approx([0.0, 0.1, 0.2, 0.3, 0.4, 0.5])
    assert [s.outcome for s in sent[6:]] == ["overflow", "overflow"]
    assert link.queued(0.0) == 5 and link.queued(0.25) == 3 and link.queued(1.0) == 0


def test_policing_drops_what_exceeds_the_bucket():
    assert [_link({"rate": 10, "policy": "police"}).transmit(0.0).outcome for _ in range(1)] == ["ok"]
    link = _link({"rate": 10, "burst": 3, "policy": "police"})
    assert [link.transmit(0.0).outcome for _ in range(5)] == ["ok"] * 3 + ["policed"] * 2
    # long run: 100 messages/s offered to a 40/s policer get 40/s through with a bucket of 2;
    # with a bucket of 1 only messages 1/rate apart pass: every 3rd one here (33/s)
    for burst, expected in ((2, 400), (1, 334)):
        link = _link({"rate": 40, "burst": burst, "policy": "police"})
        through = sum(link.transmit(i * 0.01).outcome == "ok" for i in range(1000))
        assert through == pytest.approx(expected, abs=2)


def test_rate_equal_to_the_send_rate_adds_no_delay():
    link = _link({"rate": 50})
    assert all(link.transmit(i * 0.02).departure == pytest.approx(i * 0.02) for i in range(500))


# --------------------------------------------------------------------------------------------
# Settings

EXAMPLE = """
default: {latency: 0.001}
safety:
  latency: 0.2
  jitter: {dist: normal, sd: 0.02}
  loss: {model: gilbert, p: 0.05, burst: 4}
  rate: 50
  queue: 16
  policy: shape
  to_client: {latency: 0.25}
"""


def test_the_documented_example_parses():
    quality = NetworkQuality.from_dict(yaml.safe_load(EXAMPLE))
    up, down = quality.link("safety", "to_service"), quality.link("safety", "to_client")
    assert (up.latency, down.latency) == (0.2, 0.25)
    assert up.jitter.sd == 0.02 and down.loss == up.loss and up.bandwidth.rate == 50
    assert up.loss.mean_burst == pytest.approx(4) and up.bandwidth.queue == 16
    assert quality.link("robot", "to_client").latency == 0.001  # default for other channels
    assert LinkQuality().ideal and not up.ideal


@pytest.mark.parametrize("settings, message", [
    ({"safety": {"latncy": 0.2}}, r"net\.safety\.latncy: unknown key \(did you mean 'latency'\?\)"),
    ({"safety": {"latency": -1}}, r"net\.safety\.latency: -1 is outside"),
    ({"safety": {"latency": "fast"}}, r"net\.safety\.latency: expected a number"),
    ({"safety": {"jitter": {"dist": "normal", "sd": -0.1}}}, r"net\.safety\.jitter\.sd"),
    ({"safety": {"jitter": {"dist": "cauchy"}}}, r"net\.safety\.jitter\.dist: 'cauchy'"),
    ({"safety": {"jitter": {"dist": "uniform", "low": 0.2, "high": 0.1}}}, r"net\.safety\.jitter\.high"),
    ({"safety": {"jitter": {"dist": "normal", "mean": 1}}}, r"net\.safety\.jitter\.mean: unknown key"),
    ({"safety": {"loss": 1.5}}, r"net\.safety\.loss\.p: 1\.5 is outside"),
    ({"safety": {"loss": {"model": "gilbert", "p": 0.6, "burst": 1}}}, r"net\.safety\.loss\.burst: too short"),
    ({"safety": {"loss": {"model": "markov"}}}, r"net\.safety\.loss\.model"),
    ({"safety": {"rate": 0}}, r"net\.safety\.rate"),
    ({"safety": {"queue": 2.5}}, r"net\.safety\.queue: expected a whole number"),
    ({"safety": {"policy": "drop"}}, r"net\.safety\.policy: 'drop'"),
    ({"safety": {"fifo": "yes"}}, r"net\.safety\.fifo"),
    ({"safety": {"to_client": {"latency": -2}}}, r"net\.safety\.to_client\.latency"),
    ({"safety": 3}, r"net\.safety: expected a mapping"),
    ({"default": {"loss": True}}, r"net\.default\.loss"),
])
def test_validation_errors_name_the_key(settings, message):
    with pytest.raises(ConfigError, match=message):
        NetworkQuality.from_dict(settings)


def test_same_seed_same_network_and_channels_are_independent():
    def arrivals(settings: dict, seed: int, channel: str) -> list:
        net = Network(settings, seed=seed)
        link = net.link(channel, "to_client")
        return [link.transmit(i * 0.01).arrival for i in range(200)]

    noisy = {"safety": {"jitter": 0.01, "loss": 0.2}, "robot": {"jitter": 0.01, "loss": 0.2}}
    assert arrivals(noisy, 7, "safety") == arrivals(noisy, 7, "safety")
    assert arrivals(noisy, 7, "safety") != arrivals(noisy, 8, "safety")
    # adding a channel does not change another channel's randomness
    assert arrivals(noisy, 7, "safety") == arrivals({**noisy, "extra": {"loss": 0.5}}, 7, "safety")
