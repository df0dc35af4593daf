"""``hri stats``: summary statistics of one run directory or of a batch of runs.

A *run directory* holds ``stats.json``, ``events.jsonl`` and ``trajectory.csv`` (``hri run
--out DIR``). A *batch directory* holds ``batch.json`` and ``runs/<run_id>/`` folders, each
with a ``run.json`` and, for runs whose status is ``ok``, the run's files (``hri batch``).

For a batch, every numeric statistic (nested ones flattened with dots, ``zone_time_s.stop``)
is summarised per configuration: n, mean, standard deviation (n - 1), the 95 % confidence
interval of the mean with the Student t quantile ``t(0.975, n - 1)``, min, quartiles and max.
Missing values (``human_response_s`` of a run without calls) are left out of n; failed runs
are counted and listed, never averaged. With several configurations, each one's mean is
compared with the first configuration's by a Welch 95 % confidence interval of the
difference. The t quantiles come from ``scipy.stats.t``.
"""

from __future__ import annotations

import csv
import io
import json
import math
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats as sps

from hri.errors import HriError

FORMATS = ("table", "markdown", "csv", "json")
# Measured on the wall clock: shown in the summaries, left out of the comparison.
WALL_CLOCK = frozenset({"wall_time_s", "real_time_factor"})
# Identifiers and settings rather than outcomes.
NOT_METRICS = frozenset({"seed", "sim_time_s"})


# --- statistics ----------------------------------------------------------------------------

def t_quantile(p: float, df: float) -> float:
    """The ``p`` quantile of Student's t distribution with ``df`` degrees of freedom."""
    return float(sps.t.ppf(p, df))


@dataclass
class Summary:
    """Descriptive statistics of one metric's values (missing values already left out)."""

    n: int
    mean: float | None = None
    sd: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    min: float | None = None
    q25: float | None = None
    median: float | None = None
    q75: float | None = None
    max: float | None = None


def summarize(values: list[float], level: float = 0.95) -> Summary:
    """n, mean, sd (n - 1), t confidence interval of the mean, min, quartiles, max."""
    x = np.asarray([v for v in values if v is not None and not math.isnan(v)], dtype=float)
    n = int(x.size)
    if n == 0:
        return Summary(0)
    q25, median, q75 = (float(q) for q in np.percentile(x, [25, 50, 75]))
    out = Summary(n, float(x.mean()), None, None, None, float(x.min()), q25, median, q75, float(x.max()))
    if n >= 2:
        out.sd = float(x.std(ddof=1))
        half = t_quantile(0.5 + level / 2, n - 1) * out.sd / math.sqrt(n)
        out.ci_low, out.ci_high = out.mean - half, out.mean + half
    return out


@dataclass
class Difference:
    """``mean(b) - mean(a)`` with its Welch confidence interval (None with fewer than 2 values)."""

    diff: float | None
    ci_low: float | None
    ci_high: float | None
    df: float | None


def welch(a: list[float], b: list[float], level: float = 0.95) -> Difference:
    """Welch's confidence interval for the difference of means ``mean(b) - mean(a)``."""
    xa = np.asarray([v for v in a if v is not None], dtype=float)
    xb = np.asarray([v for v in b if v is not None], dtype=float)
    if xa.size == 0 or xb.size == 0:
        return Difference(None, None, None, None)
    diff = float(xb.mean() - xa.mean())
    if xa.size < 2 or xb.size < 2:
        return Difference(diff, None, None, None)
    va, vb = xa.var(ddof=1) / xa.size, xb.var(ddof=1) / xb.size
    se = math.sqrt(va + vb)
    if se == 0.0:  # both constant: the difference is exact
        return Difference(diff, diff, diff, float(xa.size + xb.size - 2))
    df = (va + vb) ** 2 / (va ** 2 / (xa.size - 1) + vb ** 2 / (xb.size - 1))
    half = t_quantile(0.5 + level / 2, df) * se
    return Difference(diff, diff - half, diff + half, float(df))


# --- loading -------------------------------------------------------------------------------

def flatten(stats: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested statistics as ``dotted.key -> value`` (leaves only; empty mappings vanish)."""
    out: dict[str, Any] = {}
    for key, value in stats.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(flatten(value, name + "."))
        else:
            out[name] = value
    return out


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as err:
        raise HriError(f"{path}: cannot read: {err}") from None


@dataclass
class RunDir:
    """One run's directory and its statistics (``stats`` is empty for a failed run)."""

    path: Path
    stats: dict[str, Any]
    run_id: str = ""
    config_id: str = ""
    overrides: dict[str, Any] = field(default_factory=dict)
    status: str = "ok"
    error: str | None = None

    @property
    def flat(self) -> dict[str, Any]:
        return flatten(self.stats)

    def value(self, metric: str) -> float | None:
        """The metric's value; a key missing from a mapping of counts the run has is 0."""
        flat = self.flat
        if metric in flat:
            return float(flat[metric]) if _is_number(flat[metric]) else None
        node: Any = self.stats
        parts = metric.split(".")
        for part in parts[:-1]:
            node = node.get(part) if isinstance(node, dict) else None
        return 0.0 if isinstance(node, dict) and len(parts) > 1 else None


@dataclass
class Batch:
    """A batch directory: its ``batch.json`` and its runs in ``runs/``."""

    path: Path
    meta: dict[str, Any]
    runs: list[RunDir]

    @property
    def config_ids(self) -> list[str]:
        ids = [str(c["id"]) for c in self.meta.get("configs") or [] if isinstance(c, dict) and "id" in c]
        ids += sorted({r.config_id for r in self.runs} - set(ids))
        return [i for i in ids if any(r.config_id == i for r in self.runs)] or ids

    def overrides(self, config_id: str) -> dict[str, Any]:
        for c in self.meta.get("configs") or []:
            if isinstance(c, dict) and c.get("id") == config_id:
                return dict(c.get("overrides") or {})
        return next((r.overrides for r in self.runs if r.config_id == config_id), {})

    def ok_runs(self, config_id: str | None = None) -> list[RunDir]:
        return [r for r in self.runs if r.status == "ok" and config_id in (None, r.config_id)]

    @property
    def failed_runs(self) -> list[RunDir]:
        return [r for r in self.runs if r.status != "ok"]


def _load_batch_run(path: Path) -> RunDir:
    info = _read_json(path / "run.json") if (path / "run.json").is_file() else {}
    run = RunDir(path, {}, str(info.get("run_id") or path.name), str(info.get("config_id") or "?"),
                 dict(info.get("overrides") or {}), str(info.get("status") or "failed"), info.get("error"))
    if not info:
        run.error = "run.json missing"
    if run.status == "ok":
        try:
            run.stats = _read_json(path / "stats.json")
        except HriError as err:
            run.status, run.error = "failed", str(err)
    return run


def load(path: Path) -> RunDir | Batch:
    """A run directory (``stats.json``) or a batch directory (``batch.json``)."""
    if not path.is_dir():
        raise HriError(f"{path}: no such directory")
    if (path / "stats.json").is_file():
        run = RunDir(path, _read_json(path / "stats.json"), path.name)
        if (path / "run.json").is_file():  # a run inside a batch: its overrides matter for the floor plan
            run.overrides = dict(_read_json(path / "run.json").get("overrides") or {})
        return run
    if (path / "batch.json").is_file():
        meta = _read_json(path / "batch.json")
        runs_dir = path / "runs"
        dirs = sorted(d for d in runs_dir.iterdir() if d.is_dir() and not d.name.startswith(".tmp-")) \
            if runs_dir.is_dir() else []
        return Batch(path, meta if isinstance(meta, dict) else {}, [_load_batch_run(d) for d in dirs])
    raise HriError(f"{path}: neither a run directory (stats.json) nor a batch directory (batch.json)")


def metric_names(runs: list[RunDir]) -> list[str]:
    """Numeric metrics of the runs, in the order of their stats.json."""
    names: dict[str, None] = {}
    for run in runs:
        for key, value in run.flat.items():
            if key not in NOT_METRICS and (_is_number(value) or value is None):
                names.setdefault(key)
    return [n for n in names if any(r.value(n) is not None for r in runs)]


# --- the report ----------------------------------------------------------------------------

SUMMARY_COLUMNS = ("metric", "n", "mean", "sd", "ci95_low", "ci95_high", "min", "q25", "median", "q75", "max")


def batch_report(batch: Batch) -> dict[str, Any]:
    """The batch's statistics as one JSON-ready object."""
    configs = []
    per_config: dict[str, dict[str, list[float]]] = {}
    for cid in batch.config_ids:
        ok = batch.ok_runs(cid)
        names = metric_names(ok)
        values = {m: [v for r in ok if (v := r.value(m)) is not None] for m in names}
        per_config[cid] = values
        configs.append({"id": cid, "overrides": batch.overrides(cid),
                        "runs": sum(1 for r in batch.runs if r.config_id == cid), "ok": len(ok),
                        "failed": sum(1 for r in batch.runs if r.config_id == cid and r.status != "ok"),
                        "metrics": {m: asdict(summarize(v)) for m, v in values.items()}})
    comparison = []
    ids = batch.config_ids
    if len(ids) > 1:
        ref = ids[0]
        all_names = metric_names(batch.ok_runs())
        for metric in (m for m in all_names if m not in WALL_CLOCK):
            row: dict[str, Any] = {"metric": metric, "reference": ref, "configs": {}}
            for cid in ids:
                vals = per_config[cid].get(metric, [])
                s = summarize(vals)
                entry = {"n": s.n, "mean": s.mean, "ci_low": s.ci_low, "ci_high": s.ci_high}
                if cid != ref:
                    d = welch(per_config[ref].get(metric, []), vals)
                    entry.update(diff=d.diff, diff_ci_low=d.ci_low, diff_ci_high=d.ci_high, diff_df=d.df)
                row["configs"][cid] = entry
            comparison.append(row)
    return {"kind": "batch", "dir": str(batch.path), "scenario": batch.meta.get("scenario"),
            "duration_s": batch.meta.get("duration_s"), "runs": len(batch.runs),
            "ok": len(batch.ok_runs()), "failed": len(batch.failed_runs),
            "failed_runs": [{"run_id": r.run_id, "config_id": r.config_id, "error": r.error}
                            for r in batch.failed_runs],
            "configs": configs, "comparison": comparison}


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, int):
        return str(value)
    if value == 0:
        return "0"
    return f"{value:.4g}" if abs(value) < 1e5 else f"{value:.0f}"


def _ci(low: Any, high: Any) -> str:
    return "-" if low is None else f"[{_fmt(low)}, {_fmt(high)}]"


def _table(headers: list[str], rows: list[list[str]], markdown: bool) -> str:
    if markdown:
        lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
        lines += ["| " + " | ".join(r) + " |" for r in rows]
        return "\n".join(lines)
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    def line(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths))).rstrip()
    return "\n".join([line(headers), line(["-" * w for w in widths])] + [line(r) for r in rows])


def _overrides_text(overrides: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in overrides.items()) or "no overrides"


def format_batch(report: dict[str, Any], fmt: str) -> str:
    """The batch report as aligned text (``table``), ``markdown``, ``csv`` or ``json``."""
    if fmt == "json":
        return json.dumps(report, indent=2)
    if fmt == "csv":
        return _batch_csv(report)
    md = fmt == "markdown"
    head = "## " if md else ""
    sub = "### " if md else ""
    out = [f"{head}batch {report['dir']}: scenario {report['scenario']}, {_count(len(report['configs']), 'configuration')}, "
           f"{report['runs']} runs ({report['ok']} ok, {report['failed']} failed)"]
    if report["failed_runs"]:
        out.append("")
        out.append(f"{sub}failed runs")
        out.append(_table(["run", "config", "error"],
                          [[f["run_id"], f["config_id"], str(f["error"] or "").splitlines()[-1:][0]
                            if f["error"] else "-"] for f in report["failed_runs"]], md))
    for cfg in report["configs"]:
        out += ["", f"{sub}config {cfg['id']} ({_overrides_text(cfg['overrides'])}): {cfg['ok']} ok runs, "
                f"{cfg['failed']} failed; 95 % CI of the mean with t(0.975, n-1)"]
        rows = [[m, str(s["n"]), _fmt(s["mean"]), _fmt(s["sd"]), _fmt(s["ci_low"]), _fmt(s["ci_high"]),
                 _fmt(s["min"]), _fmt(s["q25"]), _fmt(s["median"]), _fmt(s["q75"]), _fmt(s["max"])]
                for m, s in cfg["metrics"].items()]
        out.append(_table(list(SUMMARY_COLUMNS), rows, md))
    if report["comparison"]:
        ids = [c["id"] for c in report["configs"]]
        ref = ids[0]
        headers = ["metric"] + [f"{c} mean [95% CI]" for c in ids] + [f"{c}-{ref} [Welch 95% CI]" for c in ids[1:]]
        rows = []
        for row in report["comparison"]:
            cells = [row["metric"]]
            for cid in ids:
                e = row["configs"][cid]
                cells.append(f"{_fmt(e['mean'])} {_ci(e['ci_low'], e['ci_high'])}" if e["n"] else "-")
            for cid in ids[1:]:
                e = row["configs"][cid]
                cells.append(f"{_fmt(e['diff'])} {_ci(e['diff_ci_low'], e['diff_ci_high'])}")
            rows.append(cells)
        out += ["", f"{sub}comparison with {ref} (wall-clock fields left out)", _table(headers, rows, md)]
    return "\n".join(out)


CSV_COLUMNS = ("kind", "config", "reference", "metric", "n", "mean", "sd", "ci95_low", "ci95_high", "df",
               "min", "q25", "median", "q75", "max", "run_id", "error")


def _batch_csv(report: dict[str, Any]) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for cfg in report["configs"]:
        for m, s in cfg["metrics"].items():
            writer.writerow({"kind": "summary", "config": cfg["id"], "metric": m, "n": s["n"], "mean": s["mean"],
                             "sd": s["sd"], "ci95_low": s["ci_low"], "ci95_high": s["ci_high"], "min": s["min"],
                             "q25": s["q25"], "median": s["median"], "q75": s["q75"], "max": s["max"]})
    for row in report["comparison"]:
        for cid, e in row["configs"].items():
            if "diff" in e:
                writer.writerow({"kind": "difference", "config": cid, "reference": row["reference"],
                                 "metric": row["metric"], "mean": e["diff"], "ci95_low": e["diff_ci_low"],
                                 "ci95_high": e["diff_ci_high"], "df": e["diff_df"]})
    for f in report["failed_runs"]:
        writer.writerow({"kind": "failed", "config": f["config_id"], "run_id": f["run_id"], "error": f["error"]})
    return buf.getvalue().rstrip("\n")


def format_run(run: RunDir, fmt: str) -> str:
    """One run's statistics (flattened) as a table, markdown, csv or json."""
    flat = run.flat
    if fmt == "json":
        return json.dumps({"kind": "run", "dir": str(run.path), "stats": flat}, indent=2)
    if fmt == "csv":
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(["metric", "value"])
        writer.writerows([k, "" if v is None else v] for k, v in flat.items())
        return buf.getvalue().rstrip("\n")
    title = f"{'## ' if fmt == 'markdown' else ''}run {run.path}"
    return title + "\n" + _table(["metric", "value"], [[k, _fmt(v)] for k, v in flat.items()], fmt == "markdown")


def stats_command(path: Path, fmt: str = "table", plots: bool = False) -> str:
    """What ``hri stats DIR`` prints; with ``plots``, also writes ``DIR/plots/*.png``."""
    if fmt not in FORMATS:
        raise HriError(f"--format: one of {', '.join(FORMATS)}, got {fmt}")
    loaded = load(path)
    if isinstance(loaded, Batch):
        text = format_batch(batch_report(loaded), fmt)
    else:
        text = format_run(loaded, fmt)
    if plots:
        from hri import plots as plotting

        notes = "\n".join(f"wrote {p}" for p in plotting.write_plots(loaded, path / "plots"))
        if fmt in ("table", "markdown"):
            text += "\n\n" + notes
        else:  # keep stdout parseable
            print(notes, file=sys.stderr)
    return text


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"
