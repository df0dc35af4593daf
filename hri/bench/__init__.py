"""``hri bench``: the benchmark suite: figures, not pass/fail tests.

One module per benchmark, each with ``run(settings, say) -> dict``:

* :mod:`~hri.bench.realtime_factor`: headless real-time factor per scenario, and bare
  PyBullet stepping the same world (:mod:`~hri.bench.bare_pybullet`), and their ratio;
* :mod:`~hri.bench.step_breakdown`: time per simulation step by component;
* :mod:`~hri.bench.actor_roundtrip`: one actor action message, server -> plugin -> server;
* :mod:`~hri.bench.batch_throughput`: simulated hours per wall hour, 1 and all workers;
* :mod:`~hri.bench.memory`: peak memory of a run, and growth over a long run.

:mod:`~hri.bench.runner` runs a selection into one document (``--json``),
:mod:`~hri.bench.report` draws it as tables, :mod:`~hri.bench.command` is the subcommand.
:mod:`~hri.bench.registry` names them. Importing this package is cheap (the command line
only; the rest on first use): ``hri/cli/main.py`` imports it at every start.
"""

from __future__ import annotations

from typing import Any

from hri.bench.command import add_bench_parser, bench_command
from hri.bench.registry import BENCHMARKS

__all__ = ["BENCHMARKS", "BenchSettings", "add_bench_parser", "bench_command", "run_benchmarks"]


def __getattr__(name: str) -> Any:  # PEP 562: the heavier parts when first asked for
    if name == "BenchSettings":
        from hri.bench.common import BenchSettings

        return BenchSettings
    if name == "run_benchmarks":
        from hri.bench.runner import run_benchmarks

        return run_benchmarks
    raise AttributeError(f"module 'hri.bench' has no attribute {name!r}")
