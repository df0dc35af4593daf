"""The experiment of docs/safety.md: what each safety function costs in cycle time, and how
close it lets the person come.

For each preset it runs one batch (``hri batch``, resumable: the same command again finishes
only the missing runs) of ``--runs`` seeded runs of ``--duration`` simulated seconds in five
safety modes, paired by seed: the fixed zones; speed and separation monitoring on the exact
separation (the ideal sensor) and on a safety laser scanner's reports (``safety.sensor``'s
``laser_scanner`` preset); power and force limiting; and SSM that lets the robot go on at
PFL's permissible speed inside S_p. It prints a Markdown table (the mean cycles per hour with
its 95 % t interval and the paired difference against the zones; the worst case of each safety
figure and the run it came from; PFL's contacts by body region; the person's touches of the
robot at rest; the violations with the 95 % upper bound on their rate per hour) and draws
productivity against the smallest separation, one point per run.

    python scripts/safety_experiment.py --out runs/safety-experiment
    python scripts/safety_experiment.py --out runs/safety-experiment --plot docs/images/safety_experiment.png

The batch sweeps ``safety.mode`` and ``safety.sensor`` together: (zones, none), (ssm, none),
(ssm, laser scanner), (pfl, none) and (ssm+pfl, none); the person's speed is ISO 13855's.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from hri.base.errors import HriError
from hri.batch.batch import run_batch
from hri.batch.report import Batch, RunDir, load, lower_bound, paired, summarize
from hri.batch.risk import observations, poisson_upper, risk_figure
from hri.bt.status import read_run_events

PRESETS = ("coexistence", "cooperation", "collaboration")
LASER = {"preset": "laser_scanner"}
SWEEP = ["safety.mode,safety.sensor=[zones,null],[ssm,null],[ssm,{preset: laser_scanner}],[pfl,null],[ssm+pfl,null]"]


@dataclass(frozen=True)
class Mode:
    label: str
    mode: str
    sensor: dict | None
    color: str


MODES = (Mode("zones", "zones", None, "#1f77b4"), Mode("SSM", "ssm", None, "#ff7f0e"),
         Mode("SSM, laser scanner", "ssm", LASER, "#2ca02c"), Mode("PFL", "pfl", None, "#d62728"),
         Mode("SSM+PFL", "ssm+pfl", None, "#9467bd"))


def _runs(batch: Batch, mode: Mode) -> list[RunDir]:
    """The batch's runs of one mode (its configuration found by its settings)."""
    for cid in batch.config_ids:
        settings = batch.overrides(cid)
        if settings.get("safety.mode") == mode.mode and settings.get("safety.sensor") == mode.sensor:
            return batch.ok_runs(cid)
    raise HriError(f"{batch.path}: no configuration with safety.mode={mode.mode} and safety.sensor={mode.sensor}")


def _values(runs: list[RunDir], metric: str) -> dict[int, float]:
    return {int(r.seed): v for r in runs if (v := r.value(metric)) is not None}


def _mean_ci(runs: list[RunDir], metric: str, digits: int) -> str:
    s = summarize(list(_values(runs, metric).values()), lower=lower_bound(metric))
    if s.n == 0:
        return "–"
    if s.ci_low is None:
        return f"{s.mean:.{digits}f}"
    return f"{s.mean:.{digits}f} [{s.ci_low:.{digits}f}, {s.ci_high:.{digits}f}]"


def _difference(zones: list[RunDir], runs: list[RunDir], metric: str) -> str:
    d = paired(_values(zones, metric), _values(runs, metric))
    if d.diff is None or d.ci_low is None:
        return "–"
    return f"{d.diff:+.0f} [{d.ci_low:+.0f}, {d.ci_high:+.0f}]"


def _worst(runs: list[RunDir], metric: str, digits: int) -> str:
    """The worst value of a safety figure over the runs, and which run (its index in the
    batch: the same person's run in every mode) it came from."""
    observed = observations(runs, metric)
    if not observed:
        return "–"
    worst = risk_figure(metric, observed)
    return f"{float(worst['worst']):.{digits}f} ({worst['worst_run'].split('-')[-1]})"


def _contacts(runs: list[RunDir]) -> str:
    """PFL's contacts in all, by the body region of each (its ``pfl_contact`` events)."""
    regions = Counter(event.get("region") for run in runs for event in read_run_events(run.path)
                      if event["event"] == "pfl_contact")
    total = sum(regions.values())
    if not total:
        return "0"
    return f"{total} ({', '.join(f'{region} {n}' for region, n in regions.most_common())})"


def _total(runs: list[RunDir], metric: str) -> int:
    return int(sum(r.value(metric) or 0.0 for r in runs))


def _violations(runs: list[RunDir]) -> str:
    """The robot's violations (physics steps) and PFL's, and the 95 % upper bound on the rate
    of either per hour over the runs' hours (Poisson; for 0, 3.0 / hours)."""
    hours = sum(r.value("sim_time_s") or 0.0 for r in runs) / 3600.0
    robot, pfl = _total(runs, "safety_violations"), _total(runs, "pfl_violations")
    bound = "" if hours <= 0 else f"; rate ≤ {poisson_upper(robot + pfl) / hours:.2g}/h"
    return f"{robot} + {pfl} PFL{bound}"


def table(batches: dict[str, Batch]) -> str:
    """The Markdown table of the experiment."""
    head = ("| preset | safety function | runs | robot cycles per hour | vs zones (paired) | "
            "worst separation (m) | worst SSM margin (m) | PFL contacts (by region) | touches of the robot at rest | "
            "violations |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for preset, batch in batches.items():
        zones = _runs(batch, MODES[0])
        for mode in MODES:
            runs = _runs(batch, mode)
            versus = "–" if mode is MODES[0] else _difference(zones, runs, "robot_cycles_per_hour")
            # S_p is the invariant of SSM alone (in ssm+pfl the robot may go on inside it)
            margin = _worst(runs, "ssm_margin_min_m", 3) if mode.mode == "ssm" else "–"
            lines.append(f"| {preset} | {mode.label} | {len(runs)} | {_mean_ci(runs, 'robot_cycles_per_hour', 0)} | "
                         f"{versus} | {_worst(runs, 'min_separation_m', 3)} | {margin} | {_contacts(runs)} | "
                         f"{_total(runs, 'robot_touches')} | {_violations(runs)} |")
    return "\n".join(lines)


def plot(batches: dict[str, Batch], path: Path) -> None:
    """Cycles per hour against the smallest separation, one point per run, a panel per preset."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    fig = Figure(figsize=(4 * len(batches), 3.8), layout="constrained")
    axes = fig.subplots(1, len(batches), squeeze=False)[0]
    for ax, (preset, batch) in zip(axes, batches.items()):
        for mode in MODES:
            runs = _runs(batch, mode)
            points = [(r.value("min_separation_m"), r.value("robot_cycles_per_hour")) for r in runs]
            points = [p for p in points if None not in p]
            if points:
                xs, ys = zip(*points)
                ax.scatter(xs, ys, color=mode.color, label=mode.label, alpha=0.8, edgecolor="black")
        ax.set_title(preset)
        ax.set_xlabel("smallest separation of a run (m)")
        ax.set_ylabel("robot cycles per hour")
        ax.grid(alpha=0.3)
    axes[0].legend(title="safety function")
    fig.suptitle("productivity against the smallest separation (one point per run)")
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="folder of the batches (one per preset; resumable)")
    parser.add_argument("--runs", type=int, default=10, help="seeded runs per preset and mode (default 10)")
    parser.add_argument("--duration", type=float, default=900.0, help="simulated seconds per run (default 900)")
    parser.add_argument("--workers", type=int, help="parallel runs (default: the number of CPUs)")
    parser.add_argument("--plot", help="also draw the figure into this PNG")
    args = parser.parse_args(argv)
    batches: dict[str, Batch] = {}
    try:
        for preset in PRESETS:
            out = Path(args.out) / preset
            with contextlib.redirect_stdout(sys.stderr):  # the batch's progress; stdout is the table's
                code = run_batch(preset, args.runs, args.duration, out, sets=SWEEP, workers=args.workers,
                                 resume_hint="the same command", say=lambda line: print(line, file=sys.stderr))
            if code != 0:
                return code
            loaded = load(out)
            assert isinstance(loaded, Batch)
            batches[preset] = loaded
        print(table(batches))
        if args.plot:
            plot(batches, Path(args.plot))
    except HriError as err:
        print(f"safety_experiment: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
