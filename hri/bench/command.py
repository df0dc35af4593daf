"""``hri bench``: the command line of the benchmark suite (hri/cli/main.py adds the subcommand)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from hri.bench.registry import BENCHMARKS, DEFAULT_SCENARIOS

if TYPE_CHECKING:
    from hri.bench.common import BenchSettings


def add_bench_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add ``bench`` to ``hri``'s subcommands; return its parser."""
    bench = subparsers.add_parser(
        "bench", help="measure the simulator's speed and memory (figures, not pass/fail; docs/performance.md)")
    bench.add_argument("--scenario", dest="scenarios", action="append", metavar="NAME",
                       help="preset or scenario file (repeatable; default: the three presets)")
    bench.add_argument("--duration", type=float, default=60.0, metavar="S",
                       help="simulated seconds per timed run and per batch run (default 60)")
    bench.add_argument("--repeat", type=int, default=3, metavar="N", help="runs per figure; medians (default 3)")
    bench.add_argument("--only", action="append", default=[], metavar="NAMES",
                       help=f"comma-separated benchmarks to run (repeatable): {', '.join(BENCHMARKS)}")
    bench.add_argument("--json", action="store_true", help="print one JSON document instead of tables")
    bench.add_argument("--seed", type=int, default=0, help="seed of the benchmarked runs (default 0)")
    bench.add_argument("--messages", type=int, default=5000, metavar="N",
                       help="actor round trips per run and mode (default 5000)")
    bench.add_argument("--batch-runs", type=int, default=8, metavar="N", help="runs per batch measurement (default 8)")
    bench.add_argument("--batch-workers", type=int, metavar="N",
                       help="'all workers' of the batch figure (default: the number of CPUs)")
    bench.add_argument("--memory-duration", type=float, default=600.0, metavar="S",
                       help="simulated seconds of the memory-growth run (default 600)")
    bench.add_argument("--safety-hours", type=float, default=100.0, metavar="H",
                       help="simulated hours of the safety benchmark, split over the scenarios (default 100)")
    bench.add_argument("--safety-run", type=float, default=3600.0, metavar="S",
                       help="simulated seconds per run of the safety benchmark (default 3600)")
    bench.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE",
                       help="override a scenario parameter in every benchmarked run, as hri run --set "
                            "(repeatable), e.g. safety.mode=ssm")
    bench.add_argument("--safety-dir", metavar="DIR",
                       help="keep the safety benchmark's batches in DIR; the same command again finishes "
                            "only the missing runs (default: a temporary folder)")
    bench.add_argument("--against", metavar="PATH",
                       help="the ab benchmark: the hri executable of another install to compare this one with, "
                            "e.g. another checkout's .venv/bin/hri")
    return bench


def settings_from_args(args: argparse.Namespace) -> "BenchSettings":
    from hri.bench.common import BenchSettings

    return BenchSettings(scenarios=tuple(args.scenarios or DEFAULT_SCENARIOS), duration_s=args.duration,
                         repeat=args.repeat, seed=args.seed, messages=args.messages,
                         batch_runs=args.batch_runs, batch_workers=args.batch_workers,
                         memory_duration_s=args.memory_duration, safety_hours=args.safety_hours,
                         safety_run_s=args.safety_run, safety_dir=args.safety_dir, sets=tuple(args.sets),
                         against=args.against)


def bench_command(args: argparse.Namespace) -> int:
    """Run the benchmarks; tables (or ``--json``) on stdout, progress on stderr."""
    from hri.bench.runner import run_benchmarks

    only = [name.strip() for value in args.only for name in value.split(",") if name.strip()]
    if args.only and not only:  # an empty --only would otherwise run everything
        from hri.base.errors import HriError

        raise HriError("--only: name at least one benchmark, e.g. --only realtime")
    from hri.base.errors import sigterm_raises

    with sigterm_raises():  # as Ctrl-C: a batch's workers are stopped before the bench ends
        document = run_benchmarks(settings_from_args(args), only,
                                  say=lambda line: print(f"bench: {line}", file=sys.stderr, flush=True))
    if args.json:
        print(json.dumps(document))
    else:
        from hri.bench.report import print_report

        print_report(document)
    return 0
