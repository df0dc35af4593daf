"""Figure 5: batch throughput, simulated hours per wall hour, with one worker and with all.

Each measurement is a real :func:`hri.batch.batch.run_batch` (local worker processes, results.parquet)
of ``batch_runs`` runs of ``duration_s`` simulated seconds of the first scenario, into a
temporary directory that is removed afterwards. The wall time includes starting the worker
processes and writing the results: that is what a user waits for. The forkserver the workers
are forked from is started first (it imports the simulator once, about 0.9 s, which a batch
command pays once whatever its number of workers), so that the first batch timed does not
pay it alone.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

from hri.batch.backends import start_worker_server
from hri.bench.common import BenchSettings, Say, quiet_batch, summary


def measure_once(scenario: str, runs: int, duration_s: float, workers: int, seed: int, out: Path,
                 sets: tuple[str, ...] = ()) -> float:
    """Simulated hours per wall hour of one batch."""
    start = time.perf_counter()
    quiet_batch("batch", scenario, runs, duration_s, out, seed=seed, sets=list(sets), workers=workers)
    wall = time.perf_counter() - start
    return runs * duration_s / wall


def run(settings: BenchSettings, say: Say) -> dict[str, Any]:
    scenario = settings.scenarios[0]
    counts = sorted({1, settings.all_workers})
    per_count: dict[int, list[float]] = {n: [] for n in counts}
    start_worker_server()
    with tempfile.TemporaryDirectory(prefix="hri-bench-") as tmp:
        for k in range(settings.repeat):
            for n in counts:  # interleaved, so a change of load hits both alike
                say(f"batch: {n} worker{'s' if n > 1 else ''} {k + 1}/{settings.repeat}")
                out = Path(tmp) / f"w{n}-r{k}"
                per_count[n].append(measure_once(scenario, settings.batch_runs, settings.duration_s, n,
                                                 settings.seed, out, settings.sets))
    result: dict[str, Any] = {"scenario": scenario, "runs": settings.batch_runs, "duration_s": settings.duration_s,
                              "sim_h_per_h": {str(n): summary(v) for n, v in per_count.items()}}
    if len(counts) > 1:
        top = counts[-1]
        result["speedup"] = summary([a / b for a, b in zip(per_count[top], per_count[1])])
        result["workers"] = top
    return result
