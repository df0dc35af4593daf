"""``hri stats`` of a sweep: configurations paired by seed, intervals inside the statistic's
range, configurations named by their settings, rows that are 0 in every run hidden, and a
warning when the runs never exercised what the sweep changes.

The batches are synthetic (``stats.json`` and ``run.json`` written by the test), so the
statistics are known exactly and no simulator runs; one small ``hri batch`` checks the
whole path."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hri.batch import plots
from hri.cli.main import main
from hri.batch.report import (
    Batch,
    RunDir,
    batch_report,
    config_labels,
    load,
    paired,
    summarize,
    t_quantile,
    welch,
)

RV = "robot.reduced_velocity"


def _stats(seed: int, **values: Any) -> dict[str, Any]:
    """A run's stats.json: a few statistics in the shape the simulator writes them."""
    out: dict[str, Any] = {"scenario": "coexistence", "seed": seed, "sim_time_s": 100.0, "wall_time_s": 1.0,
                           "zone_time_s": {"safe": 100.0, "warning": 0.0, "stop": 0.0},
                           "robot_time_s": {"full": 100.0, "reduced": 0.0, "stopped": 0.0},
                           "protective_stops": 0, "min_separation_m": 2.0, "robot_cycles": 30,
                           "safety_violations": 0, "complete": True}
    for key, value in values.items():
        if "__" in key:
            parent, child = key.split("__")
            out[parent] = {**out[parent], child: value}
        else:
            out[key] = value
    return out


StatsOf = Callable[[int, int, dict[str, Any]], dict[str, Any]]


def _write_batch(root: Path, overrides: list[dict[str, Any]], seeds: list[list[int]], stats_of: StatsOf,
                 failed: tuple[str, ...] = ()) -> Path:
    """A batch directory: configuration i has one run per seed in ``seeds[i]``; ``stats_of(i,
    seed, overrides)`` gives the run's statistics; run ids in ``failed`` failed."""
    configs = [{"id": f"c{i:03d}", "overrides": o} for i, o in enumerate(overrides)]
    for i, cfg in enumerate(configs):
        for k, seed in enumerate(seeds[i]):
            rid = f"{cfg['id']}-r{k:04d}"
            d = root / "runs" / rid
            d.mkdir(parents=True)
            status = "failed" if rid in failed else "ok"
            if status == "ok":
                (d / "stats.json").write_text(json.dumps(stats_of(i, seed, cfg["overrides"])))
            (d / "run.json").write_text(json.dumps({
                "run_id": rid, "config_id": cfg["id"], "overrides": cfg["overrides"], "seed": seed,
                "run_index": k, "status": status, "error": "RuntimeError: boom" if status == "failed" else None}))
    keys = list(dict.fromkeys(k for o in overrides for k in o))
    (root / "batch.json").write_text(json.dumps({
        "scenario": "coexistence", "duration_s": 100.0, "seed": 0, "runs": max(map(len, seeds)),
        "sweep": {k: [o.get(k) for o in overrides] for k in keys}, "configs": configs}))
    return root


def _crn_stats(i: int, seed: int, overrides: dict[str, Any]) -> dict[str, Any]:
    """Common random numbers: the seed decides the person (zone times identical run by run
    across configurations); the configuration adds 2 robot cycles."""
    person = np.random.default_rng(seed).normal(0.0, 1.0)
    return _stats(seed, zone_time_s__safe=round(80 + 8 * person, 6), zone_time_s__warning=round(20 - 8 * person, 6),
                  robot_cycles=int(30 + 6 * round(person) + 2 * i), min_separation_m=2.0 + 0.1 * person)


SEEDS6 = [101, 102, 103, 104, 105, 106]


@pytest.fixture()
def sweep(tmp_path: Path) -> Path:
    """2 configurations x 6 seeds, the seeds shared."""
    return _write_batch(tmp_path / "b", [{RV: 0.1}, {RV: 0.25}], [SEEDS6, SEEDS6], _crn_stats)


# --- paired by seed ------------------------------------------------------------------------

def test_a_sweep_of_2_configurations_by_6_seeds_shows_paired_differences(sweep: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["stats", str(sweep)]) == 0
    out = capsys.readouterr().out
    assert "paired by seed" in out
    assert "reduced_velocity=0.25 - reduced_velocity=0.1 [95% CI, paired, n=6]" in out
    row = next(line for line in out.splitlines() if line.startswith("zone_time_s.safe ") and "] " in line)
    assert row.endswith(" 0 [0, 0]")  # identical run by run: no difference, exactly
    row = next(line for line in out.splitlines() if line.startswith("robot_cycles ") and "] " in line)
    assert row.endswith(" 2 [2, 2]")

    assert main(["stats", str(sweep), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    safe = next(r for r in report["comparison"] if r["metric"] == "zone_time_s.safe")["configs"]["c001"]
    assert safe["method"] == "paired" and safe["pairs"] == 6
    assert safe["per_seed"] == {str(s): 0.0 for s in SEEDS6}
    # what the unpaired interval said of the same numbers: a wide interval around 0
    a = [v for r in load(sweep).ok_runs("c000") if (v := r.value("zone_time_s.safe")) is not None]  # type: ignore[union-attr]
    w = welch(a, a)
    assert w.ci_high - w.ci_low > 5.0


def test_paired_interval_is_the_t_interval_of_the_differences() -> None:
    a = {"1": 10.0, "2": 20.0, "3": 30.0, "4": 12.0}
    b = {"1": 11.0, "2": 23.0, "3": 30.5, "4": 14.0, "5": 99.0}  # seed 5 has no twin: left out
    d = paired(a, b)
    diffs = np.array([1.0, 3.0, 0.5, 2.0])
    half = t_quantile(0.975, 3) * diffs.std(ddof=1) / 2
    assert (d.method, d.n, d.df) == ("paired", 4, 3.0)
    assert d.diff == pytest.approx(1.625) and d.ci_low == pytest.approx(1.625 - half)
    assert d.per_seed == {"1": 1.0, "2": 3.0, "3": 0.5, "4": 2.0}
    assert paired({"1": 1.0}, {"2": 1.0}).diff is None and paired({"1": 1.0}, {"1": 3.0}).ci_low is None


def _crn_batch(rng: np.random.Generator, delta: float, n: int = 6) -> Batch:
    """An in-memory batch of 2 configurations x n shared seeds: a large person effect per
    seed, shared by both configurations, the configuration's effect ``delta`` and small noise."""
    runs = []
    person = rng.normal(0.0, 5.0, n)
    for i, cid in enumerate(("c000", "c001")):
        for k in range(n):
            value = 50.0 + person[k] + i * delta + rng.normal(0.0, 0.7)
            runs.append(RunDir(Path(f"{cid}-r{k}"), {"seed": k, "robot_cycles": value}, f"{cid}-r{k}", cid,
                               {RV: [0.1, 0.25][i]}))
    meta = {"configs": [{"id": "c000", "overrides": {RV: 0.1}}, {"id": "c001", "overrides": {RV: 0.25}}]}
    return Batch(Path("synthetic"), meta, runs)


def test_the_paired_95_interval_covers_the_true_difference_95_percent_of_the_time() -> None:
    rng = np.random.default_rng(29)
    reps, delta = 2000, 1.5
    covered = welch_covered = 0
    paired_width = welch_width = 0.0
    for _ in range(reps):
        batch = _crn_batch(rng, delta)
        e = batch_report(batch)["comparison"][0]["configs"]["c001"]
        assert e["method"] == "paired" and e["pairs"] == 6
        covered += e["diff_ci_low"] <= delta <= e["diff_ci_high"]
        paired_width += e["diff_ci_high"] - e["diff_ci_low"]
        a, b = ([r.value("robot_cycles") for r in batch.ok_runs(c)] for c in ("c000", "c001"))
        w = welch(a, b)  # type: ignore[arg-type]
        welch_covered += w.ci_low <= delta <= w.ci_high
        welch_width += w.ci_high - w.ci_low
    assert abs(covered / reps - 0.95) <= 0.02
    # unpaired, the person's variation swamps the difference: near-certain coverage, useless width
    assert welch_covered / reps > 0.99 and welch_width > 5 * paired_width


def test_configurations_with_different_seeds_are_compared_unpaired(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    batch = _write_batch(tmp_path / "b", [{RV: 0.1}, {RV: 0.25}], [SEEDS6, [201, 202, 203, 204, 205, 206]],
                         _crn_stats)
    assert main(["stats", str(batch)]) == 0
    out = capsys.readouterr().out
    assert "[95% CI, Welch, unpaired]" in out and "else Welch" in out
    report = batch_report(load(batch))  # type: ignore[arg-type]
    assert {r["configs"]["c001"]["method"] for r in report["comparison"]} == {"welch"}


def test_a_failed_run_leaves_its_seed_unpaired(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    batch = _write_batch(tmp_path / "b", [{RV: 0.1}, {RV: 0.25}], [SEEDS6, SEEDS6], _crn_stats,
                         failed=("c001-r0002",))
    report = batch_report(load(batch))  # type: ignore[arg-type]
    e = next(r for r in report["comparison"] if r["metric"] == "robot_cycles")["configs"]["c001"]
    assert e["pairs"] == 5 and "103" not in e["per_seed"]


# --- intervals inside the range ------------------------------------------------------------

def test_an_interval_below_zero_is_clipped_and_marked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    seps = [0.05, 0.1, 2.9, 0.02, 0.3, 0.08]
    batch = _write_batch(tmp_path / "b", [{RV: 0.1}], [SEEDS6],
                         lambda i, seed, o: _stats(seed, min_separation_m=seps[seed - 101]))
    assert summarize(seps).ci_low < 0  # what the t interval alone says
    assert main(["stats", str(batch)]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("min_separation_m "))
    assert row.split()[4] == "0*"
    assert "clipped to 0" in out
    s = batch_report(load(batch))["configs"][0]["metrics"]["min_separation_m"]  # type: ignore[arg-type]
    assert s["ci_low"] == 0.0 and s["clipped"] == "low"


def test_every_statistic_of_a_run_has_a_known_range() -> None:
    """A statistic added to stats.json must be declared non-negative (or signed) here too."""
    from hri.batch.report import NON_NEGATIVE, NOT_METRICS, SIGNED
    from hri.run.stats import RunStats

    numeric = {k for k, v in RunStats("x", 1).as_dict().items()
               if not isinstance(v, (str, bool)) and k not in NOT_METRICS}
    assert numeric <= NON_NEGATIVE | SIGNED


def test_clipping_keeps_the_coverage_of_the_t_interval() -> None:
    """Lognormal distances near 0 (true mean known): the clipped interval covers whenever the
    t interval does, and never reaches below 0."""
    rng = np.random.default_rng(7)
    sigma, reps, n = 1.0, 2000, 6
    mu = float(np.exp(sigma ** 2 / 2)) * 0.1
    covered_t = covered_clipped = 0
    for _ in range(reps):
        x = list(0.1 * rng.lognormal(0.0, sigma, n))
        t, c = summarize(x), summarize(x, lower=0.0)
        assert c.ci_low >= 0.0 and c.ci_high == t.ci_high
        covered_t += t.ci_low <= mu <= t.ci_high
        covered_clipped += c.ci_low <= mu <= c.ci_high
    assert covered_clipped == covered_t


def _bootstrap_percentile(x: np.ndarray, rng: np.random.Generator, resamples: int = 1000) -> tuple[float, float]:
    means = x[rng.integers(0, x.size, (resamples, x.size))].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return float(low), float(high)


def test_the_bootstrap_percentile_interval_undercovers_with_six_runs() -> None:
    """Why the report clips the t interval instead of using a bootstrap percentile interval
    (which would stay inside the range): with the few runs a batch has, it is too narrow."""
    rng = np.random.default_rng(11)
    reps, n = 2000, 6
    covered = sum(lo <= 0.0 <= hi for lo, hi in
                  (_bootstrap_percentile(rng.normal(0.0, 1.0, n), rng) for _ in range(reps)))
    assert covered / reps < 0.91  # about 0.88 for normal data


# --- names, hidden rows, warnings ----------------------------------------------------------

def _batch_of(overrides: list[dict[str, Any]]) -> Batch:
    meta = {"configs": [{"id": f"c{i:03d}", "overrides": o} for i, o in enumerate(overrides)]}
    runs = [RunDir(Path("x"), {"seed": 1}, f"c{i:03d}-r0", f"c{i:03d}", o) for i, o in enumerate(overrides)]
    return Batch(Path("x"), meta, runs)


def test_configurations_are_named_by_their_settings() -> None:
    assert list(config_labels(_batch_of([{RV: 0.1}, {RV: 0.25}])).values()) == \
        ["reduced_velocity=0.1", "reduced_velocity=0.25"]
    # only the keys that differ; a shared last part keeps the whole key
    two = _batch_of([{RV: 0.1, "person.walk_stride_m": 0.5, "seed_x": 1},
                     {RV: 0.1, "person.walk_stride_m": 0.7, "seed_x": 2}])
    assert list(config_labels(two).values()) == ["walk_stride_m=0.5, seed_x=1", "walk_stride_m=0.7, seed_x=2"]
    clash = _batch_of([{"robot.a.x": 1, "person.x": 2}, {"robot.a.x": 3, "person.x": 4}])
    assert list(config_labels(clash).values()) == ["robot.a.x=1, person.x=2", "robot.a.x=3, person.x=4"]
    # long values are cut short; if that makes two names equal, the ids tell them apart
    zone = [[0, 0], [2, 0], [2, 2], [0, 2], [0, 1]]
    long = _batch_of([{"zones.stop": zone}, {"zones.stop": zone[:4] + [[0, 1.5]]}])
    assert list(config_labels(long).values()) == [
        "stop=[[0,0],[2,0],[2,2],[0,2],[0... (c000)", "stop=[[0,0],[2,0],[2,2],[0,2],[0... (c001)"]
    assert list(config_labels(_batch_of([{}])).values()) == ["c000"]


def test_plot_legends_name_the_configurations_by_their_settings(sweep: Path) -> None:
    batch = load(sweep)
    assert isinstance(batch, Batch)
    names = ["reduced_velocity=0.1", "reduced_velocity=0.25"]
    zone_ax = plots.zone_time_figure(batch).axes[0]
    assert [t.get_text() for t in zone_ax.get_xticklabels()] == names
    legend = plots.separation_figure(batch).axes[0].get_legend()
    assert [t.get_text() for t in legend.get_texts()] == names
    for ax in plots.throughput_figure(batch).axes:
        assert [t.get_text() for t in ax.get_legend().get_texts()] == names


def test_rows_that_are_zero_in_every_run_are_hidden(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # protective_stops: 0 everywhere (hidden); zone_time_s.stop: 0 in c000 only (shown)
    batch = _write_batch(tmp_path / "b", [{RV: 0.1}, {RV: 0.25}], [SEEDS6, SEEDS6],
                         lambda i, seed, o: _stats(seed, zone_time_s__warning=5.0, zone_time_s__stop=float(i)))
    assert main(["stats", str(batch)]) == 0
    out = capsys.readouterr().out
    summaries = [part for part in out.split("\n\n") if part.startswith("config")]
    rows = [line.split()[0] for part in summaries for line in part.splitlines()[1:]]
    assert "protective_stops" not in rows and "safety_violations" not in rows
    assert "zone_time_s.stop" in rows
    # the safety counts that stayed 0 are in the risk sections, with their rate bounds
    assert "0 in every run (not shown): robot_time_s.reduced, robot_time_s.stopped\n" in out + "\n"
    assert out.count("\nsafety_violations ") == 2
    report = batch_report(load(batch))  # type: ignore[arg-type]
    assert report["all_zero"] == ["robot_time_s.reduced", "robot_time_s.stopped", "protective_stops",
                                  "safety_violations"]
    assert "protective_stops" not in report["configs"][0]["metrics"]
    assert not any(r["metric"] == "protective_stops" for r in report["comparison"])


def test_a_sweep_whose_runs_never_entered_the_warning_zone_is_warned_about(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    batch = _write_batch(tmp_path / "b", [{RV: 0.1}, {RV: 0.25}], [SEEDS6, SEEDS6],
                         lambda i, seed, o: _stats(seed, robot_cycles=30 + i + seed % 3))
    assert main(["stats", str(batch)]) == 0
    out = capsys.readouterr().out
    warning = ("warning: the sweep changes robot.reduced_velocity, but no run entered the warning zone "
               "(zone_time_s.warning is 0 in every run): its configurations cannot differ by it")
    assert out.splitlines()[1] == warning
    assert main(["stats", str(batch), "--format", "json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["warnings"] == [warning.removeprefix("warning: ")]
    assert captured.err == f"hri stats: {warning}\n"


def test_no_warning_when_some_run_entered_the_warning_zone(sweep: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["stats", str(sweep)]) == 0
    assert "warning:" not in capsys.readouterr().out


def test_configurations_identical_on_every_seed_are_warned_about(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """A setting outside the table of what shows it was exercised: the general rule."""
    batch = _write_batch(tmp_path / "b", [{"person.clearance_m": 0.3}, {"person.clearance_m": 0.5}],
                         [SEEDS6, SEEDS6], lambda i, seed, o: _crn_stats(0, seed, o))
    assert main(["stats", str(batch)]) == 0
    out = capsys.readouterr().out
    assert ("warning: clearance_m=0.5 gave the same statistics as clearance_m=0.3 on every seed: "
            "what it changes was never exercised") in out


# --- the whole path ------------------------------------------------------------------------

def test_a_real_sweep_is_compared_paired(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "b"
    assert main(["batch", "coexistence", "--runs", "2", "--duration", "3", "--workers", "2", "--seed", "3",
                 "--set", f"{RV}=0.1,0.25", "--out", str(out)]) == 0
    capsys.readouterr()
    assert main(["stats", str(out)]) == 0
    text = capsys.readouterr().out
    assert "config reduced_velocity=0.1 (c000)" in text
    assert "reduced_velocity=0.25 - reduced_velocity=0.1 [95% CI, paired, n=2]" in text
