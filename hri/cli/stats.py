"""``hri stats DIR``: the statistics of a run or a batch as a table, Markdown, CSV or JSON, and their plots."""

from __future__ import annotations

import sys
from pathlib import Path

from hri.base.errors import HriError
from hri.batch.report import FORMATS, Batch, batch_report, format_batch, format_run, load


def stats_command(path: Path, fmt: str = "table", plots: bool = False) -> str:
    """What ``hri stats DIR`` prints; with ``plots``, also writes ``DIR/plots/*.png``."""
    if fmt not in FORMATS:
        raise HriError(f"--format: one of {', '.join(FORMATS)}, got {fmt}")
    loaded = load(path)
    if isinstance(loaded, Batch):
        report = batch_report(loaded)
        text = format_batch(report, fmt)
        if fmt in ("csv", "json"):  # keep stdout parseable; the JSON holds them too
            for warning in report["warnings"]:
                print(f"hri stats: warning: {warning}", file=sys.stderr)
    else:
        text = format_run(loaded, fmt)
    if plots:
        from hri.batch.plots import write_plots  # matplotlib only when asked for

        notes = "\n".join(f"wrote {p}" for p in write_plots(loaded, path / "plots"))
        if fmt in ("table", "markdown"):
            text += "\n\n" + notes
        else:  # keep stdout parseable
            print(notes, file=sys.stderr)
    return text
