"""The experiment of docs/safety.md: what each safety function costs in cycle time, and how
close it lets the person come.

For each preset it runs one batch (``hri batch``, resumable: the same command again finishes
only the missing runs) of ``--runs`` seeded runs of ``--duration`` simulated seconds in three
safety modes, paired by seed: the fixed zones, speed and separation monitoring with the
person's speed at 1.6 m/s, and SSM with the person's measured speed. It prints a Markdown
table (means with 95 % t intervals, and the paired difference of cycles per hour against the
zones) and draws productivity against the smallest separation, one point per run.

    python scripts/safety_experiment.py --out runs/safety-experiment
    python scripts/safety_experiment.py --out runs/safety-experiment --plot docs/images/safety_experiment.png

The batch sweeps ``safety.mode`` and ``safety.ssm.person_speed_m_s`` together: (zones, 1.6),
(ssm, 1.6) and (ssm, measured); the person's speed does not apply to the zones.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from dataclasses import dataclass
from pathlib import Path

from hri.base.errors import HriError
from hri.batch.batch import run_batch
from hri.batch.report import Batch, RunDir, load, lower_bound, paired, summarize

PRESETS = ("coexistence", "cooperation", "collaboration")
SWEEP = ["safety.mode,safety.ssm.person_speed_m_s=[zones,1.6],[ssm,1.6],[ssm,measured]"]


@dataclass(frozen=True)
class Mode:
    label: str
    mode: str
    person_speed: str
    color: str


MODES = (Mode("zones", "zones", "1.6", "#1f77b4"), Mode("SSM, v_h 1.6 m/s", "ssm", "1.6", "#ff7f0e"),
         Mode("SSM, measured v_h", "ssm", "measured", "#2ca02c"))


def _runs(batch: Batch, mode: Mode) -> list[RunDir]:
    """The batch's runs of one mode (its configuration found by its settings)."""
    for cid in batch.config_ids:
        settings = {k: str(v) for k, v in batch.overrides(cid).items()}
        if (settings.get("safety.mode") == mode.mode
                and settings.get("safety.ssm.person_speed_m_s") == mode.person_speed):
            return batch.ok_runs(cid)
    raise HriError(f"{batch.path}: no configuration with safety.mode={mode.mode} "
                   f"and safety.ssm.person_speed_m_s={mode.person_speed}")


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


def _worst_pfl(runs: list[RunDir]) -> str:
    ratios = [(r.value("pfl_worst_ratio"), r.stats.get("pfl_worst_region")) for r in runs
              if r.value("pfl_contacts")]
    if not ratios:
        return "no contact"
    if any(ratio is None for ratio, _ in ratios):  # a head region: no transient contact permitted
        return "head contact"
    ratio, region = max(ratios, key=lambda item: item[0])
    return f"{ratio:.2f} ({region})"


def _sum(runs: list[RunDir], metric: str) -> str:
    return str(int(sum(r.value(metric) or 0.0 for r in runs)))


def table(batches: dict[str, Batch]) -> str:
    """The Markdown table of the experiment."""
    head = ("| preset | safety function | runs | robot cycles per hour | vs zones (paired) | "
            "smallest separation (m) | SSM margin (m) | PFL contacts | worst PFL ratio | violations |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for preset, batch in batches.items():
        zones = _runs(batch, MODES[0])
        for mode in MODES:
            runs = _runs(batch, mode)
            versus = "–" if mode is MODES[0] else _difference(zones, runs, "robot_cycles_per_hour")
            margin = "–" if mode.mode == "zones" else _mean_ci(runs, "ssm_margin_min_m", 3)
            lines.append(f"| {preset} | {mode.label} | {len(runs)} | {_mean_ci(runs, 'robot_cycles_per_hour', 0)} | "
                         f"{versus} | {_mean_ci(runs, 'min_separation_m', 3)} | {margin} | "
                         f"{_sum(runs, 'pfl_contacts')} | {_worst_pfl(runs)} | "
                         f"{_sum(runs, 'safety_violations')} + {_sum(runs, 'pfl_violations')} PFL |")
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
