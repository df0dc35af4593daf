"""``hri export RUN_DIR -o run.mcap``: the MCAP file of a kept run, made by running it again.

A run folder keeps what made the run (``inputs/``, ``manifest.json``: :mod:`hri.run.run_dir`),
and a seeded run reruns bit for bit, so the MCAP file (:mod:`hri.view.mcap_file`) is written
by the same rerun as ``hri run --from RUN_DIR --mcap`` would make. The rerun's statistics are
then held against the folder's ``stats.json`` (but the wall clock): where they differ the
file would not show that run, so it is removed and the command fails with one line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hri.base.errors import HriError

CLOCK = ("wall_time_s", "real_time_factor")  # what differs between two runs of the same seed


def differing(kept: dict[str, Any], rerun: dict[str, Any]) -> list[str]:
    """The statistics, but the wall clock, whose values differ between the two runs."""
    keys = (set(kept) | set(rerun)) - set(CLOCK)
    return sorted(key for key in keys if kept.get(key) != rerun.get(key))


def export_command(run_dir: Path, output: Path, rate_hz: float | None, force: bool, trust_plugins: bool) -> str:
    """Rerun ``run_dir`` writing ``output``; the line saying what was written."""
    from hri.batch.report import read_json_object
    from hri.run.run_dir import load_kept_run
    from hri.run.sim import run_scenario
    from hri.view.mcap_file import DEFAULT_RATE_HZ, ChannelPublisher, McapFile

    kept = load_kept_run(run_dir, "export", trust_plugins=trust_plugins)
    stats_file = run_dir / "stats.json"
    kept_stats = read_json_object(stats_file)
    recorder = ChannelPublisher([McapFile(output, force=force, option="-o")],
                                DEFAULT_RATE_HZ if rate_hz is None else rate_hz)
    record = kept.record
    rerun = run_scenario(kept.scenario, record.duration_s, seed=record.seed, observers=[recorder],
                         strict=record.strict)
    changed = differing(kept_stats, rerun)
    if changed:
        output.unlink(missing_ok=True)
        named = ", ".join(changed[:3]) + (", ..." if len(changed) > 3 else "")
        raise HriError(f"export {run_dir}: the rerun's statistics differ from {stats_file.name} ({named}): this hri "
                       "does not run it as it ran, so no MCAP file was written")
    return f"{output}: {record.duration_s:g} simulated s of {run_dir}, rerun with the same statistics"
