"""Figures 1 and 2: the headless real-time factor of each scenario, and beside it bare PyBullet
stepping the same world (:mod:`hri.bench.bare_pybullet`) for the same number of steps.

Each repeat runs the full simulation and then the bare world, interleaved, so a change of
load on the machine hits both alike. The ratio full/bare (of real-time factors, which is
bare step time / full step time) says how much of the physical limit the simulator keeps.
"""

from __future__ import annotations

import math
import statistics
import time
from typing import TYPE_CHECKING, Any

from hri.bench.common import BenchSettings, Say, load, sig, summary

if TYPE_CHECKING:
    from hri.scenario import Scenario


def run_full(scenario: "Scenario", duration_s: float, seed: int) -> dict[str, float]:
    """One headless run: set-up time, and the wall time of ``Simulation.run`` alone."""
    from hri.sim import Simulation

    start = time.perf_counter()
    with Simulation(scenario, seed) as sim:
        setup_s = time.perf_counter() - start
        sim.run(duration_s)
        steps, wall = sim.step_count, sim.stats.wall_time_s
    return {"steps": steps, "wall_s": wall, "setup_s": setup_s, "rtf": steps * sim.dt / wall}


def run_bare(scenario: "Scenario", steps: int, seed: int) -> dict[str, float]:
    from hri.bench.bare_pybullet import build_bare_world, step_bare

    with build_bare_world(scenario, seed) as world:
        wall = step_bare(world, steps)
    return {"steps": steps, "wall_s": wall, "rtf": steps * world.dt / wall}


def measure_scenario(name: str, settings: BenchSettings, say: Say) -> dict[str, Any]:
    scenario = load(name)
    dt = 1.0 / scenario.sim("physics_rate_hz")
    steps = int(math.floor(settings.duration_s / dt + 1e-9))  # what Simulation.run does
    full, bare = [], []
    for k in range(settings.repeat):
        say(f"realtime: {name} {k + 1}/{settings.repeat}")
        full.append(run_full(scenario, settings.duration_s, settings.seed))
        bare.append(run_bare(scenario, full[-1]["steps"], settings.seed))
    ratios = [f["rtf"] / b["rtf"] for f, b in zip(full, bare)]
    full_rtf = statistics.median(f["rtf"] for f in full)
    bare_rtf = statistics.median(b["rtf"] for b in bare)
    return {
        "physics_rate_hz": sig(1.0 / dt), "steps": steps, "sim_s": sig(steps * dt),
        "full_rtf": summary([f["rtf"] for f in full]),
        "bare_rtf": summary([b["rtf"] for b in bare]),
        "ratio": summary(ratios),  # median of the per-repeat ratios (paired measurements)
        "full_step_us": sig(dt / full_rtf * 1e6),
        "bare_step_us": sig(dt / bare_rtf * 1e6),
        "setup_s": summary([f["setup_s"] for f in full]),
    }


def run(settings: BenchSettings, say: Say) -> dict[str, Any]:
    return {name: measure_scenario(name, settings, say) for name in settings.scenarios}
