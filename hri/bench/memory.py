"""Figure 6: the peak memory of a run, and whether memory grows with simulated time.

Each scenario runs ``memory_duration_s`` simulated seconds in a fresh child process, which
ends with the benchmark however that ends, and samples its resident set size
every ``1/SAMPLES`` of the run. Reported: ``ru_maxrss`` of that process (its peak: imports,
set-up and the run), the RSS before the simulation was built and after set-up, and the slope
of a least-squares line through the samples after the first tenth of the run (allocators
and caches settle first), in MB per simulated hour. The run has an output folder (a
temporary one), as ``hri run --out`` and every batch run do: its events and trajectory rows
go to disk as it goes, and the ones still in memory at the end are counted too.
"""

from __future__ import annotations

import os
import resource
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from hri.bench.common import BenchSettings, Say, sig

SAMPLES = 60
_PAGE_MB = os.sysconf("SC_PAGE_SIZE") / 2**20


def rss_mb() -> float:
    """The resident set size of this process now (Linux /proc; else the peak so far)."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * _PAGE_MB
    except OSError:
        return peak_rss_mb()


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # kB on Linux


def memory_run(scenario_name: str, duration_s: float, seed: int, sets: tuple[str, ...] = ()) -> dict[str, Any]:
    """Runs in the child: one simulation, RSS sampled in simulated time."""
    from hri.base.quiet import import_pybullet_quietly

    import_pybullet_quietly()
    from hri.scenario.load import load_scenario
    from hri.run.sim import Simulation

    scenario = load_scenario(scenario_name, list(sets))
    before = rss_mb()
    with tempfile.TemporaryDirectory(prefix="hri-bench-memory-") as out, \
            Simulation(scenario, seed, out_dir=Path(out)) as sim:
        after_setup = rss_mb()
        steps = int(duration_s / sim.dt + 1e-9)
        every = max(1, steps // SAMPLES)
        samples = [(0.0, after_setup)]
        for k in range(1, steps + 1):
            sim.step()
            if k % every == 0:
                samples.append((sim.now(), rss_mb()))
        kept = {"events": len(sim.events.events), "trajectory_rows": len(sim.trajectory.items)}
    return {"before_setup_mb": before, "after_setup_mb": after_setup, "samples": samples,
            "peak_rss_mb": peak_rss_mb(), **kept}


def growth_mb_per_h(samples: list[tuple[float, float]], duration_s: float) -> float:
    """Slope of RSS over simulated time, after the first tenth of the run."""
    settled = [(t, m) for t, m in samples if t >= duration_s / 10.0]
    if len(settled) < 2:
        return 0.0
    t, mb = np.array(settled).T
    return float(np.polyfit(t, mb, 1)[0] * 3600.0)


def measure_scenario(name: str, settings: BenchSettings) -> dict[str, Any]:
    from concurrent.futures import ProcessPoolExecutor

    from hri.batch.backends import watch_parent, worker_context

    # From the forkserver: unlike ``spawn``, the child's ru_maxrss does not start at the
    # parent's peak (Linux carries it over an exec).
    with ProcessPoolExecutor(max_workers=1, mp_context=worker_context(),
                             initializer=watch_parent, initargs=(os.getpid(),)) as pool:
        run = pool.submit(memory_run, name, settings.memory_duration_s, settings.seed, settings.sets).result()
    last_t, last_mb = run["samples"][-1]
    return {"sim_s": sig(last_t), "peak_rss_mb": sig(run["peak_rss_mb"]),
            "before_setup_mb": sig(run["before_setup_mb"]), "after_setup_mb": sig(run["after_setup_mb"]),
            "end_mb": sig(last_mb),
            "growth_mb_per_sim_h": sig(growth_mb_per_h(run["samples"], settings.memory_duration_s), 3),
            "events": run["events"], "trajectory_rows": run["trajectory_rows"],
            "samples": [[sig(t), sig(m)] for t, m in run["samples"]]}


def run(settings: BenchSettings, say: Say) -> dict[str, Any]:
    # Memory is not a timing: one run per scenario says it (--repeat does not apply).
    results = {}
    for name in settings.scenarios:
        say(f"memory: {name}, {settings.memory_duration_s:g} simulated s")
        results[name] = measure_scenario(name, settings)
    return results
