"""``hri stats``: summary statistics of one run directory or of a batch of runs.

A *run directory* holds ``stats.json``, ``events.jsonl`` and ``trajectory.csv`` (``hri run
--out DIR``). A *batch directory* holds ``batch.json`` and ``runs/<run_id>/`` folders, each
with a ``run.json`` and, for runs whose status is ``ok``, the run's files (``hri batch``).

For a batch, every numeric statistic (nested ones flattened with dots, ``zone_time_s.stop``)
is summarised per configuration: n, mean, standard deviation (n - 1), the 95 % confidence
interval of the mean with the Student t quantile ``t(0.975, n - 1)``, min, quartiles and max.
Every statistic of a run is non-negative, so an interval's bound below 0 is clipped to 0 and
marked. Missing values (``human_response_s`` of a run without calls) are left out of n;
failed runs are counted and listed, never averaged; statistics that are 0 in every run are
named once instead of shown as rows. After each configuration's table come its risk figures
(:mod:`hri.batch.risk`: worst case and its run, tail bound, rate bound), which also carry the
safety figures that stayed 0.

Configurations are named by the settings they change (``reduced_velocity=0.1``). With
several, each one is compared with the first. The configurations of ``hri batch`` share their
seeds (common random numbers), so runs with the same seed are paired: the difference per
seed, its mean and the t interval of that mean. Configurations without common seeds are
compared by a Welch interval. A sweep whose runs never exercised what it changes is warned
about (:data:`EXERCISED`, and configurations identical to the first on every seed). The t
quantiles come from ``scipy.stats.t``.
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats as sps

from hri.base.errors import HriError
from hri.base.files import wrong_kind
from hri.base.numbers import is_number
from hri.base.untrusted import JSON_MAX_BYTES, Unreadable, read_inside, read_output
from hri.batch import risk

FORMATS = ("table", "markdown", "csv", "json")
# Measured on the wall clock: shown in the summaries, left out of the comparison.
WALL_CLOCK = frozenset({"wall_time_s", "real_time_factor"})
# Identifiers, settings and names rather than numeric outcomes (pfl_worst_region: a body
# region's name, null without a contact).
NOT_METRICS = frozenset({"seed", "sim_time_s", "pfl_worst_region"})


# --- statistics ----------------------------------------------------------------------------

def t_quantile(p: float, df: float) -> float:
    """The ``p`` quantile of Student's t distribution with ``df`` degrees of freedom."""
    return float(sps.t.ppf(p, df))


@dataclass
class Summary:
    """Descriptive statistics of one metric's values (missing values already left out).

    ``clipped`` is ``"low"`` when the t interval's lower bound left the metric's range and
    ``ci_low`` is that range's bound instead.
    """

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
    clipped: str | None = None


def summarize(values: list[float], level: float = 0.95, lower: float | None = None) -> Summary:
    """n, mean, sd (n - 1), t confidence interval of the mean, min, quartiles, max.

    With ``lower`` (the smallest value the quantity can take) a bound below it is clipped:
    the true mean cannot lie there, so the clipped interval covers whenever the t one does.
    """
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
        if lower is not None and out.ci_low < lower:
            out.ci_low, out.clipped = lower, "low"
    return out


@dataclass
class Difference:
    """``mean(b) - mean(a)`` with its confidence interval (None with fewer than 2 values).

    ``method`` is ``"paired"`` (runs matched by seed: ``n`` pairs, ``per_seed`` their
    differences) or ``"welch"`` (independent samples).
    """

    diff: float | None
    ci_low: float | None
    ci_high: float | None
    df: float | None
    method: str = "welch"
    n: int = 0
    per_seed: dict[Any, float] | None = None


def welch(a: list[float], b: list[float], level: float = 0.95) -> Difference:
    """Welch's confidence interval for the difference of means ``mean(b) - mean(a)``."""
    xa = np.asarray([v for v in a if v is not None], dtype=float)
    xb = np.asarray([v for v in b if v is not None], dtype=float)
    n = int(min(xa.size, xb.size))
    if xa.size == 0 or xb.size == 0:
        return Difference(None, None, None, None, n=n)
    diff = float(xb.mean() - xa.mean())
    if xa.size < 2 or xb.size < 2:
        return Difference(diff, None, None, None, n=n)
    va, vb = xa.var(ddof=1) / xa.size, xb.var(ddof=1) / xb.size
    se = math.sqrt(va + vb)
    if se == 0.0:  # both constant: the difference is exact
        return Difference(diff, diff, diff, float(xa.size + xb.size - 2), n=n)
    df = (va + vb) ** 2 / (va ** 2 / (xa.size - 1) + vb ** 2 / (xb.size - 1))
    half = t_quantile(0.5 + level / 2, df) * se
    return Difference(diff, diff - half, diff + half, float(df), n=n)


def paired(a: dict[Any, float], b: dict[Any, float], level: float = 0.95) -> Difference:
    """``b[s] - a[s]`` for every seed ``s`` both have: their mean and its t interval (n - 1 df).

    Runs with a common seed saw the same person, so what they share cancels in the
    difference; the interval is that of one sample, the differences.
    """
    seeds = [s for s in a if s in b]
    per_seed = {s: float(b[s]) - float(a[s]) for s in seeds}
    d = np.asarray(list(per_seed.values()), dtype=float)
    if d.size == 0:
        return Difference(None, None, None, None, "paired", 0, per_seed)
    mean = float(d.mean())
    if d.size < 2:
        return Difference(mean, None, None, None, "paired", 1, per_seed)
    half = t_quantile(0.5 + level / 2, d.size - 1) * float(d.std(ddof=1)) / math.sqrt(d.size)
    return Difference(mean, mean - half, mean + half, float(d.size - 1), "paired", int(d.size), per_seed)


# Every statistic of stats.json counts, times, measures distances or speeds: none is
# negative (top-level keys; nested ones, zone_time_s.stop, take their parent's range), but
# those of SIGNED (a margin, negative when a run broke it).
SIGNED = frozenset({"ssm_margin_min_m"})
NON_NEGATIVE = frozenset({
    "wall_time_s", "real_time_factor", "zone_time_s", "zone_entries", "robot_time_s", "protective_stops",
    "min_separation_m", "robot_cycles", "human_calls", "human_response_s", "safety_violations",
    "max_robot_speed_m_s", "max_stop_intrusion_m", "person_distance_m", "person_actions",
    "person_actions_failed", "person_action_failures", "robot_move_failures", "service_call_failures",
    "robot_failures", "recoveries", "parts", "parts_good", "parts_bad", "parts_shelved", "messages_dropped",
    "ssm_stops", "speed_band_time_s", "robot_cycles_per_hour", "pfl_contacts", "pfl_violations",
    "pfl_worst_ratio"})


def lower_bound(metric: str) -> float | None:
    """The smallest value the metric can take, or None when it is not known."""
    return 0.0 if metric.split(".", 1)[0] in NON_NEGATIVE else None


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


def read_json_object(path: Path, folder: Path | None = None) -> dict[str, Any]:
    """A JSON object from ``path`` (every file of a run or batch holds one), or one line; read
    only as a regular file inside ``folder`` (default: its own), at most ``JSON_MAX_BYTES``."""
    try:
        data = read_output(path, JSON_MAX_BYTES) if folder is None else \
            read_inside(folder, str(path.relative_to(folder)), JSON_MAX_BYTES)
        value = json.loads(data.decode("utf-8"))
    except Unreadable as err:
        raise HriError(f"{path}: {err}") from None
    except (OSError, ValueError, RecursionError) as err:
        raise HriError(f"{path}: cannot read: {err}") from None
    if not isinstance(value, dict):
        raise HriError(f"{path}: not a JSON object, as hri writes it")
    return value


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

    @property
    def seed(self) -> Any:
        """The run's seed (from ``stats.json``), or None."""
        return self.stats.get("seed")

    def value(self, metric: str) -> float | None:
        """The metric's value; a key missing from a mapping of counts the run has is 0."""
        flat = self.flat
        if metric in flat:
            return float(flat[metric]) if _is_stat_number(flat[metric]) else None
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


def _load_batch_run(path: Path, batch: Path) -> RunDir:
    info = read_json_object(path / "run.json", batch) if (path / "run.json").is_file() else {}
    run = RunDir(path, {}, str(info.get("run_id") or path.name), str(info.get("config_id") or "?"),
                 dict(info.get("overrides") or {}), str(info.get("status") or "failed"), info.get("error"))
    if not info:
        run.error = "run.json missing"
    if run.status == "ok":
        try:
            run.stats = read_json_object(path / "stats.json", batch)
        except HriError as err:
            run.status, run.error = "failed", str(err)
    return run


def load(path: Path) -> RunDir | Batch:
    """A run directory (``stats.json``) or a batch directory (``batch.json``)."""
    if not path.is_dir():
        raise HriError(f"{path}: {wrong_kind(path, folder=True) or 'no such directory'}")
    if (path / "stats.json").is_file():
        run = RunDir(path, read_json_object(path / "stats.json"), path.name)
        if (path / "run.json").is_file():  # a run inside a batch: its overrides matter for the floor plan
            run.overrides = dict(read_json_object(path / "run.json").get("overrides") or {})
        return run
    if (path / "batch.json").is_file():
        meta = read_json_object(path / "batch.json")
        if not isinstance(meta.get("configs", []), list):
            raise HriError(f"{path / 'batch.json'}: 'configs' is not a list, as hri writes it")
        runs_dir = path / "runs"
        dirs = sorted(d for d in runs_dir.iterdir() if d.is_dir() and not d.name.startswith(".tmp-")) \
            if runs_dir.is_dir() else []
        return Batch(path, meta, [_load_batch_run(d, path) for d in dirs])  # no run read through a symlink out
    raise HriError(f"{path}: neither a run directory (stats.json) nor a batch directory (batch.json)")


def metric_names(runs: list[RunDir]) -> list[str]:
    """Numeric metrics of the runs, in the order of their stats.json."""
    names: dict[str, None] = {}
    for run in runs:
        for key, value in run.flat.items():
            if key not in NOT_METRICS and (_is_stat_number(value) or value is None):
                names.setdefault(key)
    return [n for n in names if any(r.value(n) is not None for r in runs)]


# --- the configurations --------------------------------------------------------------------

LABEL_VALUE_CHARS = 30  # a longer value (a zone's polygon) is cut short in a label


def _value_text(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))
    return text if len(text) <= LABEL_VALUE_CHARS else text[:LABEL_VALUE_CHARS - 3] + "..."


def swept_keys(batch: Batch) -> list[str]:
    """The override keys whose value differs between the batch's configurations."""
    overrides = [batch.overrides(c) for c in batch.config_ids]
    keys = list(dict.fromkeys(k for o in overrides for k in o))
    return [k for k in keys if len({json.dumps(o.get(k), sort_keys=True) for o in overrides}) > 1]


def config_labels(batch: Batch) -> dict[str, str]:
    """Each configuration named by the settings that tell it apart: ``reduced_velocity=0.1``.

    A key is shortened to its last part unless two swept keys share it; labels that would
    still be equal (values cut short) get the configuration's id appended.
    """
    ids = batch.config_ids
    keys = swept_keys(batch) or list(dict.fromkeys(k for c in ids for k in batch.overrides(c)))
    last = [k.rsplit(".", 1)[-1] for k in keys]
    short = {k: s if last.count(s) == 1 else k for k, s in zip(keys, last)}
    labels = {}
    for cid in ids:
        overrides = batch.overrides(cid)
        labels[cid] = ", ".join(f"{short[k]}={_value_text(overrides[k])}" for k in keys if k in overrides) or cid
    if len(set(labels.values())) < len(labels):
        labels = {c: f"{label} ({c})" if label != c else c for c, label in labels.items()}
    return labels


def _pair_keys(runs: list[RunDir]) -> list[str]:
    """The key that pairs each run with its twins in other configurations: its seed (a
    repeated seed is told apart by its order; a run without a seed pairs with nothing)."""
    keys: list[str] = []
    seen: dict[Any, int] = {}
    for run in runs:
        if run.seed is None:
            keys.append(f"run {run.run_id}")
            continue
        seen[run.seed] = seen.get(run.seed, 0) + 1
        keys.append(str(run.seed) if seen[run.seed] == 1 else f"{run.seed}#{seen[run.seed]}")
    return keys


def _by_seed(runs: list[RunDir], metric: str) -> dict[str, float]:
    return {k: v for r, k in zip(runs, _pair_keys(runs)) if (v := r.value(metric)) is not None}


# --- the report ----------------------------------------------------------------------------

SUMMARY_COLUMNS = ("metric", "n", "mean", "sd", "ci95_low", "ci95_high", "min", "q25", "median", "q75", "max")

# A swept setting -> the statistic that is above 0 in a run that exercised it, and what its
# being 0 in every run means. A setting matches its own key and the keys below it.
EXERCISED: dict[str, tuple[str, str]] = {
    "robot.reduced_velocity": ("zone_time_s.warning", "no run entered the warning zone"),
    "zones.warning": ("zone_time_s.warning", "no run entered the warning zone"),
    "zones.stop": ("zone_time_s.stop", "no run entered the stop zone"),
    "safety.reaction_time_s": ("protective_stops", "no run had a protective stop"),
    "safety.stopping_time_s": ("protective_stops", "no run had a protective stop"),
    "safety.rest_speed_m_s": ("protective_stops", "no run had a protective stop"),
}


def _all_zero(runs: list[RunDir], metric: str) -> bool:
    values = [v for r in runs if (v := r.value(metric)) is not None]
    return bool(values) and all(v == 0 for v in values)


def _config_summary(batch: Batch, cid: str, label: str, metrics: list[str]) -> dict[str, Any]:
    ok = batch.ok_runs(cid)
    values = {m: [v for r in ok if (v := r.value(m)) is not None] for m in metrics}
    return {"id": cid, "label": label, "overrides": batch.overrides(cid),
            "runs": sum(1 for r in batch.runs if r.config_id == cid), "ok": len(ok),
            "failed": sum(1 for r in batch.runs if r.config_id == cid and r.status != "ok"),
            "metrics": {m: asdict(summarize(v, lower=lower_bound(m))) for m, v in values.items() if v},
            "risk": risk.risk_report(ok)}


def comparison_method(batch: Batch, ref: str, cid: str) -> str:
    """``paired`` when the two configurations have runs with a common seed, else ``welch``."""
    common = set(_pair_keys(batch.ok_runs(ref))) & set(_pair_keys(batch.ok_runs(cid)))
    return "paired" if common else "welch"


def _difference(batch: Batch, ref: str, cid: str, metric: str, method: str) -> dict[str, Any]:
    a, b = _by_seed(batch.ok_runs(ref), metric), _by_seed(batch.ok_runs(cid), metric)
    d = paired(a, b) if method == "paired" else welch(list(a.values()), list(b.values()))
    out = {"diff": d.diff, "diff_ci_low": d.ci_low, "diff_ci_high": d.ci_high, "diff_df": d.df,
           "method": d.method, "pairs": d.n if d.method == "paired" else None}
    if d.per_seed is not None:
        out["per_seed"] = d.per_seed
    return out


def _comparison(batch: Batch, metrics: list[str]) -> list[dict[str, Any]]:
    ids = batch.config_ids
    ref = ids[0]
    methods = {cid: comparison_method(batch, ref, cid) for cid in ids[1:]}
    rows = []
    for metric in (m for m in metrics if m not in WALL_CLOCK):
        row: dict[str, Any] = {"metric": metric, "reference": ref, "configs": {}}
        for cid in ids:
            s = summarize([v for r in batch.ok_runs(cid) if (v := r.value(metric)) is not None],
                          lower=lower_bound(metric))
            entry = {"n": s.n, "mean": s.mean, "ci_low": s.ci_low, "ci_high": s.ci_high, "clipped": s.clipped}
            if cid != ref:
                entry.update(_difference(batch, ref, cid, metric, methods[cid]))
            row["configs"][cid] = entry
        rows.append(row)
    return rows


def sweep_warnings(batch: Batch, labels: dict[str, str], comparison: list[dict[str, Any]]) -> list[str]:
    """What the sweep changed but no run exercised: a swept setting whose statistic in
    :data:`EXERCISED` is 0 in every run, and a configuration whose every statistic equals the
    first configuration's on every seed."""
    out = []
    runs = batch.ok_runs()
    for key in swept_keys(batch):
        rule = next((r for k, r in EXERCISED.items() if key == k or key.startswith(k + ".")), None)
        if rule and runs and all(not r.value(rule[0]) for r in runs):
            out.append(f"the sweep changes {key}, but {rule[1]} ({rule[0]} is 0 in every run): "
                       "its configurations cannot differ by it")
    ids = batch.config_ids
    for cid in ids[1:]:
        diffs = [e.get("per_seed") for row in comparison if (e := row["configs"][cid]).get("method") == "paired"]
        if diffs and all(d is not None for d in diffs) and any(diffs) \
                and all(v == 0 for d in diffs for v in d.values()):
            out.append(f"{labels[cid]} gave the same statistics as {labels[ids[0]]} on every seed: "
                       "what it changes was never exercised")
    return out


def batch_report(batch: Batch) -> dict[str, Any]:
    """The batch's statistics as one JSON-ready object."""
    labels = config_labels(batch)
    names = metric_names(batch.ok_runs())
    all_zero = [m for m in names if _all_zero(batch.ok_runs(), m)]
    shown = [m for m in names if m not in all_zero]
    comparison = _comparison(batch, shown) if len(batch.config_ids) > 1 else []
    return {"kind": "batch", "dir": str(batch.path), "scenario": batch.meta.get("scenario"),
            "duration_s": batch.meta.get("duration_s"), "runs": len(batch.runs),
            "ok": len(batch.ok_runs()), "failed": len(batch.failed_runs),
            "failed_runs": [{"run_id": r.run_id, "config_id": r.config_id, "error": r.error}
                            for r in batch.failed_runs],
            "configs": [_config_summary(batch, c, labels[c], shown) for c in batch.config_ids],
            "all_zero": all_zero, "comparison": comparison,
            "warnings": sweep_warnings(batch, labels, comparison)}


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if not is_number(value, finite=False):
        return str(value)
    if isinstance(value, int):
        return str(value)
    if value == 0:
        return "0"
    return f"{value:.4g}" if abs(value) < 1e5 else f"{value:.0f}"


CLIPPED_MARK = "*"


def _low(value: Any, clipped: str | None) -> str:
    return _fmt(value) + (CLIPPED_MARK if clipped == "low" else "")


def _ci(low: Any, high: Any, clipped: str | None = None) -> str:
    return "-" if low is None else f"[{_low(low, clipped)}, {_fmt(high)}]"


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


CLIPPED_NOTE = f"{CLIPPED_MARK} the t interval went below 0, which the statistic cannot; its bound is clipped to 0"


def _config_section(cfg: dict[str, Any], sub: str, md: bool) -> list[str]:
    name = cfg["label"] if cfg["label"] == cfg["id"] else f"{cfg['label']} ({cfg['id']})"
    rows = [[m, str(s["n"]), _fmt(s["mean"]), _fmt(s["sd"]), _low(s["ci_low"], s.get("clipped")),
             _fmt(s["ci_high"]), _fmt(s["min"]), _fmt(s["q25"]), _fmt(s["median"]), _fmt(s["q75"]),
             _fmt(s["max"])] for m, s in cfg["metrics"].items()]
    title = f"{sub}config {name}: {cfg['ok']} ok runs, {cfg['failed']} failed; 95 % CI of the mean with t(0.975, n-1)"
    out = ["", title, _table(list(SUMMARY_COLUMNS), rows, md)]
    clipped = any(s.get("clipped") for s in cfg["metrics"].values())
    return out + _notes([CLIPPED_NOTE] if clipped else [], md)


def _notes(notes: list[str], md: bool) -> list[str]:
    """Lines under a table; in Markdown after an empty line, else they would be rows of it."""
    return ([""] if md and notes else []) + notes


RISK_COLUMNS = ("safety figure", "worse", "n", "worst", "worst run", "tail quantile", "95% bound",
                "count", "per hour", "per hour, 95% upper")


def _risk_row(metric: str, f: dict[str, Any]) -> list[str]:
    every = f["worst_ties"] == f["n"] and f["n"] > 1
    run = "every run" if every else f"{f['worst_run']} (seed {f['worst_seed']})" + \
        (f" +{f['worst_ties'] - 1}" if f["worst_ties"] > 1 else "")
    tail = f"q{round(100 * f['tail']):02d} {_fmt(f['quantile'])}"
    bound = f"n<{f['bound_min_n']}" if f["bound"] is None else f"{_fmt(f['bound'])} (#{f['bound_rank']})"
    if not f["count"]:
        return [metric, f["worse"], str(f["n"]), _fmt(f["worst"]), run, tail, bound, "-", "-", "-"]
    count = f"{_fmt(f['total'])} {f['unit']}{'' if f['total'] == 1 else 's'}"
    return [metric, f["worse"], str(f["n"]), _fmt(f["worst"]), run, tail, bound, count,
            _fmt(f["rate_per_h"]), _fmt(f["rate_upper_per_h"])]


def _risk_section(cfg: dict[str, Any], sub: str, md: bool) -> list[str]:
    figures = cfg["risk"]["figures"]
    if not figures:
        return []
    name = cfg["label"] if cfg["label"] == cfg["id"] else f"{cfg['label']} ({cfg['id']})"
    hours = cfg["risk"]["hours"]
    title = (f"{sub}risk, config {name}: {cfg['ok']} ok runs, {_fmt(hours)} simulated hours; the worst run, "
             "a run's tail quantile with its one-sided 95 % order-statistic bound, counts per hour with "
             "their 95 % Poisson upper bound")
    notes = []
    small = next((f for f in figures.values() if f["bound"] is None), None)
    if small is not None:
        notes.append(f"n<{small['bound_min_n']}: a 95 % bound on the 5 % tail needs at least {small['bound_min_n']} "
                     f"runs (the worst of {small['bound_min_n']} lies beyond the 5 % quantile with 95 % confidence)")
    if any(f["count"] and f["total"] == 0 for f in figures.values()) and hours:
        notes.append(f"a count that stayed 0 in {_fmt(hours)} h: its rate is below -ln(0.05)/T = "
                     f"{_fmt(risk.poisson_upper(0) / hours)} per hour with 95 % confidence")
    table = _table(list(RISK_COLUMNS), [_risk_row(m, f) for m, f in figures.items()], md)
    return ["", title, table] + _notes(notes, md)


def _diff_cell(e: dict[str, Any], pairs: int) -> str:
    cell = f"{_fmt(e['diff'])} {_ci(e['diff_ci_low'], e['diff_ci_high'])}"
    return cell + (f" (n={e['pairs']})" if e["method"] == "paired" and e["pairs"] != pairs else "")


def _comparison_section(report: dict[str, Any], sub: str, md: bool) -> list[str]:
    cfgs = report["configs"]
    ref, others = cfgs[0], cfgs[1:]
    methods = {c["id"]: {row["configs"][c["id"]]["method"] for row in report["comparison"]} for c in others}
    pairs = {c["id"]: max((row["configs"][c["id"]]["pairs"] or 0 for row in report["comparison"]), default=0)
             for c in others}
    def head(c: dict[str, Any]) -> str:
        how = f"paired, n={pairs[c['id']]}" if methods[c["id"]] == {"paired"} else "Welch, unpaired"
        return f"{c['label']} - {ref['label']} [95% CI, {how}]"
    headers = ["metric"] + [f"{c['label']} mean [95% CI]" for c in cfgs] + [head(c) for c in others]
    rows, clipped = [], False
    for row in report["comparison"]:
        cells = [row["metric"]]
        for c in cfgs:
            e = row["configs"][c["id"]]
            clipped |= e["clipped"] is not None
            cells.append(f"{_fmt(e['mean'])} {_ci(e['ci_low'], e['ci_high'], e['clipped'])}" if e["n"] else "-")
        cells += [_diff_cell(row["configs"][c["id"]], pairs[c["id"]]) for c in others]
        rows.append(cells)
    paired_ = all(m == {"paired"} for m in methods.values())
    how = ("paired by seed (the configurations share their seeds): the mean of the per-seed differences "
           "with its t interval" if paired_ else
           "paired by seed where the configurations share their seeds, else Welch (independent samples)")
    out = ["", f"{sub}comparison with {ref['label']}: {how}; wall-clock fields left out", _table(headers, rows, md)]
    return out + _notes([CLIPPED_NOTE] if clipped else [], md)


def format_batch(report: dict[str, Any], fmt: str) -> str:
    """The batch report as aligned text (``table``), ``markdown``, ``csv`` or ``json``."""
    if fmt == "json":
        return json.dumps(report, indent=2)
    if fmt == "csv":
        return _batch_csv(report)
    md = fmt == "markdown"
    sub = "### " if md else ""
    out = [(f"{'## ' if md else ''}batch {report['dir']}: scenario {report['scenario']}, "
            f"{_count(len(report['configs']), 'configuration')}, "
            f"{report['runs']} runs ({report['ok']} ok, {report['failed']} failed)")]
    out += [f"warning: {w}" for w in report["warnings"]]
    if report["failed_runs"]:
        out += ["", f"{sub}failed runs"]
        out.append(_table(["run", "config", "error"],
                          [[f["run_id"], f["config_id"], str(f["error"] or "").splitlines()[-1:][0]
                            if f["error"] else "-"] for f in report["failed_runs"]], md))
    for cfg in report["configs"]:
        out += _config_section(cfg, sub, md)
        out += _risk_section(cfg, sub, md)
    # a safety figure that stayed 0 is in the risk sections, with the bound on its rate
    hidden = [m for m in report["all_zero"] if risk.figure(m) is None]
    if hidden:
        out += ["", f"0 in every run (not shown): {', '.join(hidden)}"]
    if report["comparison"]:
        out += _comparison_section(report, sub, md)
    return "\n".join(out)


CSV_COLUMNS = ("kind", "config", "label", "reference", "metric", "method", "seed", "n", "mean", "sd",
               "ci95_low", "ci95_high", "clipped", "df", "min", "q25", "median", "q75", "max", "run_id", "error")


def _batch_csv(report: dict[str, Any]) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for cfg in report["configs"]:
        for m, s in cfg["metrics"].items():
            writer.writerow({"kind": "summary", "config": cfg["id"], "label": cfg["label"], "metric": m,
                             "n": s["n"], "mean": s["mean"], "sd": s["sd"], "ci95_low": s["ci_low"],
                             "ci95_high": s["ci_high"], "clipped": s["clipped"], "min": s["min"],
                             "q25": s["q25"], "median": s["median"], "q75": s["q75"], "max": s["max"]})
    labels = {c["id"]: c["label"] for c in report["configs"]}
    for row in report["comparison"]:
        for cid, e in row["configs"].items():
            if "diff" not in e:
                continue
            common = {"config": cid, "label": labels[cid], "reference": row["reference"], "metric": row["metric"],
                      "method": e["method"]}
            writer.writerow({**common, "kind": "difference", "n": e["pairs"], "mean": e["diff"],
                             "ci95_low": e["diff_ci_low"], "ci95_high": e["diff_ci_high"], "df": e["diff_df"]})
            for seed, d in (e.get("per_seed") or {}).items():
                writer.writerow({**common, "kind": "seed_difference", "seed": seed, "mean": d})
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


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _is_stat_number(value: Any) -> bool:
    return is_number(value, finite=False)
