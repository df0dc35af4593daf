"""Which benchmarks exist, and running a selection of them into one JSON-ready document."""

from __future__ import annotations

import datetime
import importlib
import os
import platform
import time
from dataclasses import asdict
from typing import Any, Sequence

from hri.base.blas import kernel_in_use
from hri.base.errors import HriError
from hri.bench.common import BenchSettings, Say, busy_cpus, load, loadavg
from hri.bench.registry import BENCHMARKS, ON_REQUEST


def select(only: Sequence[str]) -> list[str]:
    """The benchmarks to run, in the suite's order; ``only`` empty means all but the ones
    that run only on request."""
    unknown = [name for name in only if name not in BENCHMARKS]
    if unknown:
        raise HriError(f"--only: unknown benchmark '{unknown[0]}' (known: {', '.join(BENCHMARKS)})")
    return [name for name in BENCHMARKS if name in only or (not only and name not in ON_REQUEST)]


def machine() -> dict[str, Any]:
    from importlib.metadata import PackageNotFoundError, version

    cpu = platform.processor() or ""
    try:
        with open("/proc/cpuinfo") as info:
            cpu = next((line.split(":", 1)[1].strip() for line in info if line.startswith("model name")), cpu)
    except OSError:
        pass
    try:
        pybullet = version("pybullet")
    except PackageNotFoundError:
        pybullet = None
    return {"cpus": os.cpu_count(), "cpu": cpu, "system": platform.platform(),
            "python": platform.python_version(), "pybullet": pybullet, "blas": kernel_in_use()}


def run_benchmarks(settings: BenchSettings, only: Sequence[str] = (), say: Say = lambda _: None) -> dict[str, Any]:
    """Run the selected benchmarks; return the document ``hri bench --json`` prints."""
    names = select(only)
    settings.check()
    if settings.against is not None and "ab" not in names:
        raise HriError("--against: only the ab benchmark uses it (--only ab)")
    for name in settings.scenarios:  # a typo fails now, not after minutes of benchmarks
        load(name, settings.sets)
    modules = {name: importlib.import_module(f"hri.bench.{BENCHMARKS[name][0]}") for name in names}
    for module in modules.values():  # what a benchmark checks of its options, before any runs
        if hasattr(module, "check"):
            module.check(settings)
    document: dict[str, Any] = {
        "hri_bench": 1,
        "started": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": machine(),
        "settings": {**asdict(settings), "batch_workers": settings.all_workers},
        # Other work on the machine skews every timing: say how much there was.
        "busy_cpus_before": busy_cpus(),
        "loadavg_start": loadavg(),
        "results": {},
        "wall_s": {},
    }
    for name, module in modules.items():
        start = time.perf_counter()
        document["results"][name] = module.run(settings, say)
        document["wall_s"][name] = round(time.perf_counter() - start, 1)
    document["busy_cpus_after"] = busy_cpus()
    document["loadavg_end"] = loadavg()
    return document
