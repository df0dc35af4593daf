"""The figure of docs/network.md: seed 002's three laws on a ping-pong pair over hri.net.

    .venv/bin/python scripts/net_pingpong_figure.py docs/images/net_pingpong.png

Uses the ping-pong of ``tests/test_net_laws.py`` (a task of N control steps, one sample every
Ts; the same code the tests check the laws with).
"""
import math  # noqa: F401
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
OUT = sys.argv[1] if len(sys.argv) > 1 else "net_pingpong.png"
import numpy as np
import matplotlib; matplotlib.use("Agg")
import matplotlib.pyplot as plt
from test_net_laws import ping_pong, T0, PERIOD

fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
# latency
Ls = np.arange(0, 0.0605, 0.0005)
t_plain = [ping_pong({"latency": L}).time / T0 for L in Ls]
t_jit = [np.mean([ping_pong({"latency": L, "jitter": {"dist": "normal", "sd": 0.005}}, seed=s).time for s in range(5)]) / T0 for L in Ls]
seed_formula = [1 + math.floor(2 * L / PERIOD) for L in Ls]
ax = axes[0]
ax.plot(Ls * 1000, seed_formula, "k:", label="seed: 1+⌊2L/Ts⌋")
ax.plot(Ls * 1000, t_plain, "C0-", drawstyle="steps-post", label="measured")
ax.plot(Ls * 1000, t_jit, "C1-", label="with jitter (normal, sd 5 ms)")
ax.set_xlabel("one-way latency L [ms]  (Ts = 20 ms)"); ax.set_ylabel("t / t0"); ax.set_title("latency"); ax.legend()
# loss
ps = np.arange(0, 0.71, 0.05)
def mc(loss_of, p, runs=16):
    ts = np.array([ping_pong(loss_of(p), steps=200, seed=s, limit=400).time for s in range(runs)]) / (200 * PERIOD)
    return ts.mean(), 1.96 * ts.std(ddof=1) / math.sqrt(runs)
bern = [mc(lambda p: {"loss": p}, p) for p in ps]
gil = [mc(lambda p: {"loss": {"model": "gilbert", "p": p, "burst": 8}} if p else None, p) for p in ps[:-1]]
ax = axes[1]
ax.plot(ps, 1 / (1 - ps) ** 2, "k:", label="seed: 1/(1-p)²")
ax.errorbar(ps, [m for m, _ in bern], yerr=[c for _, c in bern], fmt="C0o", ms=4, capsize=2, label="Bernoulli, 16 seeds, 95% CI")
ax.errorbar(ps[:-1] + 0.008, [m for m, _ in gil], yerr=[c for _, c in gil], fmt="C1s", ms=4, capsize=2, label="Gilbert–Elliott, burst 8")
ax.set_xlabel("loss p (each direction)"); ax.set_ylabel("t / t0"); ax.set_title("loss"); ax.legend()
# bandwidth
rates = [100, 80, 60, 55, 52, 50, 49, 48, 46, 45, 42, 40, 35, 30, 25]
def rel(o): return np.nan if o.time is None else o.time / T0
shape = [rel(ping_pong({"rate": r, "queue": 64}, limit=200)) for r in rates]
police = [rel(ping_pong({"rate": r, "burst": 2, "policy": "police"}, limit=200)) for r in rates]
stream = [rel(ping_pong({"rate": r, "queue": 64}, mode="stream", limit=200)) for r in rates]
ax = axes[2]
ax.semilogy(rates, shape, "C3o-", ms=4, label="requests, FIFO shaper (queue 64)")
ax.semilogy(rates, police, "C0s-", ms=4, label="requests, policer (drop, bucket 2)")
ax.semilogy(rates, stream, "C2^-", ms=4, label="keep-last state streams")
ax.axvline(50, color="k", ls=":", lw=1); ax.text(50.5, 60, "send rate", fontsize=8)
ax.set_xlabel("bandwidth [messages/s]"); ax.set_ylabel("t / t0 (log)"); ax.set_title("bandwidth"); ax.invert_xaxis(); ax.legend(fontsize=8)
fig.suptitle("Ping-pong over hri.net: a task of N = 50 control steps, one sample every Ts = 20 ms (t0 = 1 s)")
fig.tight_layout(); fig.savefig(OUT, dpi=110)
print("shape", dict(zip(rates, np.round(shape, 2)))); print("police", dict(zip(rates, np.round(police, 2)))); print("stream", dict(zip(rates, np.round(stream, 2))))
print("bern", [(round(p,2), round(m,3), round(c,3)) for p,(m,c) in zip(ps,bern)])
print("gil", [(round(p,2), round(m,3), round(c,3)) for p,(m,c) in zip(ps,gil)])
