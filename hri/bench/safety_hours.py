"""Safety over many simulated hours: every run of every scenario must report no violation.

``hri bench --only safety`` splits ``--safety-hours`` simulated hours evenly over the
scenarios, in runs of ``--safety-run`` simulated seconds with seeds from ``--seed`` on, and
runs them as one :func:`hri.batch.batch.run_batch` per scenario (all workers, results.parquet in a
temporary folder, or in ``--safety-dir`` where a stopped benchmark resumes like any batch). It reports, per scenario and in all, the simulated hours, the sum of
``safety_violations``, the runs that had any, protective stops, the smallest separation and
the wall time, and the 95 % upper bound on the violations' rate per simulated hour
(:func:`hri.batch.risk.poisson_upper`: 3.0 / T for none in T hours). Only on request: 100 simulated hours take about two wall hours on two cores.
"""

from __future__ import annotations

import contextlib
import math
import tempfile
import time
from pathlib import Path
from typing import Any, Iterator

from hri.batch.risk import poisson_upper
from hri.bench.common import BenchSettings, Say, quiet_batch
from hri.base.files import output_folder


def _batch(scenario: str, runs: int, settings: BenchSettings, out: Path) -> list[dict[str, Any]]:
    """The runs' statistics of one batch."""
    import pyarrow.parquet as pq

    quiet_batch("safety batch", scenario, runs, settings.safety_run_s, out, seed=settings.seed,
                sets=list(settings.sets), workers=settings.all_workers)
    return pq.read_table(out / "results.parquet").to_pylist()


def _figures(rows: list[dict[str, Any]], wall_s: float) -> dict[str, Any]:
    failed = sum(1 for r in rows if r.get("status") != "ok")  # a run that could not run at all
    rows = [r for r in rows if r.get("status") == "ok"]
    sim_h = sum(r["sim_time_s"] for r in rows) / 3600.0
    violations = int(sum(r["safety_violations"] for r in rows))
    return {"runs": len(rows), "failed_runs": failed, "sim_h": sim_h, "safety_violations": violations,
            "violations_per_h_upper": poisson_upper(violations) / sim_h if sim_h > 0.0 else None,
            "person_contacts": int(sum(r.get("person_contacts") or 0 for r in rows)),
            "runs_with_violations": sum(1 for r in rows if r["safety_violations"]),
            "protective_stops": int(sum(r["protective_stops"] for r in rows)),
            "ssm_stops": int(sum(r.get("ssm_stops") or 0 for r in rows)),
            "min_separation_m": _smallest(rows, "min_separation_m"),
            "ssm_margin_min_m": _smallest(rows, "ssm_margin_min_m"),  # SSM mode; None with the zones
            "pfl_contacts": int(sum(r.get("pfl_contacts") or 0 for r in rows)),
            "pfl_violations": int(sum(r.get("pfl_violations") or 0 for r in rows)),
            "incomplete": sum(1 for r in rows if not r["complete"]), "wall_h": wall_s / 3600.0}


def _smallest(rows: list[dict[str, Any]], key: str) -> float | None:
    values = [r[key] for r in rows if r.get(key) is not None]
    return min(values) if values else None


@contextlib.contextmanager
def _folder(kept: str | None) -> Iterator[str]:
    if kept is not None:
        output_folder(kept, "--safety-dir")
        yield kept
        return
    with tempfile.TemporaryDirectory(prefix="hri-bench-safety-") as tmp:
        yield tmp


def run(settings: BenchSettings, say: Say) -> dict[str, Any]:
    per_scenario = settings.safety_hours * 3600.0 / len(settings.scenarios)
    runs = max(1, math.ceil(per_scenario / settings.safety_run_s - 1e-9))
    result: dict[str, Any] = {"sim_h": settings.safety_hours, "run_s": settings.safety_run_s, "seed": settings.seed,
                              "scenarios": {}}
    everything: list[dict[str, Any]] = []
    started = time.perf_counter()
    with _folder(settings.safety_dir) as tmp:
        for name in settings.scenarios:
            say(f"safety: {name}, {runs} runs of {settings.safety_run_s:g} s")
            start = time.perf_counter()
            rows = _batch(name, runs, settings, Path(tmp) / Path(name).stem)
            result["scenarios"][name] = _figures(rows, time.perf_counter() - start)
            everything += rows
    result["total"] = _figures(everything, time.perf_counter() - started)
    return result
