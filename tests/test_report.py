"""``hri stats``: the statistics (t intervals, Welch), the formats, and the figures."""

from __future__ import annotations

import csv
import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from matplotlib.figure import Figure

from hri.batch import plots
from hri.cli.main import main
from hri.batch.report import Batch, RunDir, load, summarize, t_quantile, welch
from hri.cli.stats import stats_command

HRI = str(Path(sys.executable).with_name("hri"))


# --- statistics ----------------------------------------------------------------------------

@pytest.mark.parametrize("df, expected", [(1, 12.706), (4, 2.776), (29, 2.045), (9, 2.262)])
def test_t_quantile_matches_the_table(df: int, expected: float) -> None:
    assert t_quantile(0.975, df) == pytest.approx(expected, abs=5e-4)


def test_t_quantile_exact() -> None:
    assert t_quantile(0.975, 1) == pytest.approx(12.706204736174696, abs=1e-9)  # tan(0.475 pi)


def test_confidence_interval_covers_the_mean_95_percent_and_1_96_would_not() -> None:
    rng = np.random.default_rng(12345)
    reps, n, mu = 2000, 5, 3.0
    covered = covered_z = 0
    for _ in range(reps):
        x = rng.normal(mu, 2.0, n)
        s = summarize(list(x))
        covered += s.ci_low <= mu <= s.ci_high
        half_z = 1.96 * s.sd / np.sqrt(n)
        covered_z += s.mean - half_z <= mu <= s.mean + half_z
    assert abs(covered / reps - 0.95) <= 0.015
    assert covered_z / reps < 0.92  # the normal quantile under-covers with n = 5 (about 0.88)


def test_summary_fields() -> None:
    s = summarize([1.0, 2.0, 3.0, 4.0, None])  # type: ignore[list-item]
    assert s.n == 4 and s.mean == 2.5 and s.min == 1.0 and s.max == 4.0
    assert s.sd == pytest.approx(np.std([1, 2, 3, 4], ddof=1))
    assert (s.q25, s.median, s.q75) == (1.75, 2.5, 3.25)
    assert summarize([]).n == 0 and summarize([5.0]).ci_low is None


def test_welch_interval() -> None:
    a, b = [1.0, 2.0, 3.0, 4.0], [2.0, 4.0, 6.0, 8.0, 10.0]
    d = welch(a, b)
    va, vb = np.var(a, ddof=1) / 4, np.var(b, ddof=1) / 5
    df = (va + vb) ** 2 / (va ** 2 / 3 + vb ** 2 / 4)
    assert d.diff == pytest.approx(3.5) and d.df == pytest.approx(df)
    assert d.ci_high - d.diff == pytest.approx(t_quantile(0.975, df) * np.sqrt(va + vb))


# --- a fake batch from real tiny runs ------------------------------------------------------

def _run(out: Path, seed: int, overrides: dict) -> None:
    cmd = [HRI, "run", "coexistence", "--duration", "10", "--seed", str(seed), "--out", str(out)]
    for k, v in overrides.items():
        cmd += ["--set", f"{k}={v}"]
    subprocess.run(cmd, check=True, capture_output=True)


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("run") / "one"
    _run(out, 1, {})
    return out


@pytest.fixture(scope="module")
def batch_dir(tmp_path_factory: pytest.TempPathFactory, run_dir: Path) -> Path:
    root = tmp_path_factory.mktemp("batch")
    configs = [{"id": "c000", "overrides": {"robot.reduced_velocity": 0.1}},
               {"id": "c001", "overrides": {"robot.reduced_velocity": 0.3}}]
    for cfg in configs:
        for i in range(2):
            rid = f"{cfg['id']}-r{i:03d}"
            d = root / "runs" / rid
            if cfg["id"] == "c000" and i == 0:
                shutil.copytree(run_dir, d)  # same command as run_dir's (seed 1, default 0.1)
            else:
                _run(d, i + 1, cfg["overrides"])
            (d / "run.json").write_text(json.dumps({
                "run_id": rid, "config_id": cfg["id"], "overrides": cfg["overrides"], "seed": i + 1,
                "run_index": i, "status": "ok", "error": None, "wall_time_s": 1.0}))
    failed = root / "runs" / "c001-r002"
    failed.mkdir()
    (failed / "run.json").write_text(json.dumps({
        "run_id": "c001-r002", "config_id": "c001", "overrides": configs[1]["overrides"], "seed": 3,
        "run_index": 2, "status": "failed", "error": "RuntimeError: boom", "wall_time_s": 0.1}))
    (root / "runs" / ".tmp-c000-r009").mkdir()  # a run being written: ignored
    (root / "batch.json").write_text(json.dumps({
        "scenario": "coexistence", "duration_s": 10.0, "seed": 1, "runs": 3,
        "sweep": {"robot.reduced_velocity": [0.1, 0.3]}, "configs": configs}))
    return root


def test_batch_table(batch_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["stats", str(batch_dir)]) == 0
    out = capsys.readouterr().out
    assert "config reduced_velocity=0.1 (c000)" in out and "config reduced_velocity=0.3 (c001)" in out
    assert "5 runs (4 ok, 1 failed)" in out
    assert "c001-r002" in out and "boom" in out
    assert "comparison with reduced_velocity=0.1: paired by seed" in out
    assert "reduced_velocity=0.3 - reduced_velocity=0.1 [95% CI, paired, n=2]" in out
    assert ".tmp-" not in out
    line = next(l for l in out.splitlines() if l.startswith("robot_cycles "))
    assert line.split()[1] == "2"  # n per config


def test_batch_formats_parse(batch_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["stats", str(batch_dir), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [c["id"] for c in report["configs"]] == ["c000", "c001"]
    assert [c["label"] for c in report["configs"]] == ["reduced_velocity=0.1", "reduced_velocity=0.3"]
    assert [(c["ok"], c["failed"]) for c in report["configs"]] == [(2, 0), (2, 1)]
    assert report["configs"][0]["metrics"]["zone_time_s.safe"]["n"] == 2
    assert "human_response_s" not in report["configs"][0]["metrics"]  # no calls: no values
    assert not any(r["metric"] == "wall_time_s" for r in report["comparison"])

    assert main(["stats", str(batch_dir), "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert {r["kind"] for r in rows} == {"summary", "difference", "seed_difference", "failed"}
    assert {r["method"] for r in rows if r["kind"] == "difference"} == {"paired"}
    assert {r["config"] for r in rows if r["kind"] == "summary"} == {"c000", "c001"}

    assert main(["stats", str(batch_dir), "--format", "markdown"]) == 0
    md = capsys.readouterr().out
    assert "| metric | n | mean |" in md and "|---|" in md


def test_bad_directories(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["stats", str(tmp_path / "missing")]) == 1
    assert main(["stats", str(tmp_path)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and "neither a run directory" in err[1]


@pytest.mark.parametrize("name, text, error", [
    ("stats.json", "[1, 2]", "stats.json: not a JSON object, as hri writes it"),
    ("trajectory.csv", "", "trajectory.csv: not a trajectory of hri: no column 't'"),
    ("trajectory.csv", "t,person_x\n0,1\n", "trajectory.csv: not a trajectory of hri: no column 'person_y'"),
    ("trajectory.csv", "CUT", "trajectory.csv:5: not a row of numbers as hri writes it (cut short?)"),
    ("trajectory.csv", b"\xa0\xff", "trajectory.csv: cannot read: 'utf-8' codec can't decode byte 0xa0"),
])
def test_a_damaged_run_file_gives_one_line_and_no_plots_folder(tmp_path, run_dir, capsys, name, text, error):
    run = tmp_path / "run"
    shutil.copytree(run_dir, run)
    if text == "CUT":  # four whole rows after the header, then half a row
        text = "".join((run / name).read_text().splitlines(keepends=True)[:5])[:-20]
    (run / name).write_bytes(text if isinstance(text, bytes) else text.encode())
    assert main(["stats", str(run), "--plots"]) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith(f"{run / error}"), err
    assert not (run / "plots").exists()


def test_a_damaged_batch_description_gives_one_line(tmp_path, capsys):
    (tmp_path / "batch.json").write_text('{"configs": 7, "runs": -3}')
    assert main(["stats", str(tmp_path)]) == 1
    assert capsys.readouterr().err == f"{tmp_path / 'batch.json'}: 'configs' is not a list, as hri writes it\n"


def test_a_batch_is_not_written_into_a_runs_folder(tmp_path, run_dir, capsys):
    run = tmp_path / "run"
    shutil.copytree(run_dir, run)
    before = sorted(p.name for p in run.iterdir())
    assert main(["batch", "coexistence", "--runs", "1", "--duration", "1", "--out", str(run)]) == 1
    assert capsys.readouterr().err.endswith(f"--out {run}: holds a run of hri run, not a batch: give another folder\n")
    assert sorted(p.name for p in run.iterdir()) == before


def _check_png(path: Path) -> None:
    import matplotlib.image as mpimg

    assert path.is_file() and path.stat().st_size > 0
    img = mpimg.imread(path)
    assert img.std() > 0.01  # not a uniform picture


def _check_run_figures_hold_the_run(figures: dict, traj: dict) -> None:
    """Each figure draws the run's data, not just empty axes."""
    rows = len(traj["t"])
    assert rows > 10
    layout_ax = figures["layout.png"].axes[0]
    assert len(layout_ax.patches) >= 1 + 2 + 2 * 2  # the room, furniture, zones outlined and filled
    path_ax = figures["path.png"].axes[0]
    (segments,) = [c for c in path_ax.collections if hasattr(c, "get_segments")]
    assert len(segments.get_segments()) == rows - 1
    velocity_ax, band_ax = figures["velocity.png"].axes
    assert [len(line.get_xdata()) for line in velocity_ax.lines] == [rows, rows]
    assert band_ax.collections  # the zone band
    separation_line = figures["separation.png"].axes[0].lines[0]
    assert np.allclose(separation_line.get_ydata(), traj["separation_m"], equal_nan=True)


def test_batch_plots(batch_dir: Path) -> None:
    batch = load(batch_dir)
    assert isinstance(batch, Batch)
    figures = plots.batch_figures(batch)
    expected_axes = {"zone_times.png": 3, "min_separation.png": 1, "throughput_safety.png": 2, "heatmap.png": 2}
    assert {n: len(f.axes) for n, f in figures.items()} == expected_axes
    assert all(isinstance(f, Figure) for f in figures.values())
    text = stats_command(batch_dir, "table", plots=True)
    for name in expected_axes:
        assert f"wrote {batch_dir / 'plots' / name}" in text
        _check_png(batch_dir / "plots" / name)


def test_throughput_plot_counts_the_stops_of_each_runs_safety_function(run_dir: Path, tmp_path: Path) -> None:
    """An SSM run's protective stops are its ``ssm_stops`` (its ``protective_stops``, the
    zones' count, stays 0): the plot shows them, and its axis says which count it is. On the
    laser scanner's reports the run has one at least: the robot waits for the first report."""
    ssm_dir = tmp_path / "ssm"
    _run(ssm_dir, 10, {"safety.mode": "ssm", "safety.sensor": "{preset: laser_scanner}"})
    zones, ssm = (json.loads((d / "stats.json").read_text()) for d in (run_dir, ssm_dir))
    assert ssm["ssm_stops"] > 0 and ssm["protective_stops"] == 0  # the case the plot got wrong
    assert zones["protective_stops"] != ssm["ssm_stops"]

    def stops_axis(runs: list[tuple[str, dict]]) -> tuple[list[float], str]:
        batch = Batch(tmp_path, {}, [RunDir(tmp_path / cid, stats, cid, cid) for cid, stats in runs])
        ax = plots.throughput_figure(batch).axes[1]
        return [float(x) for c in ax.collections for x, _ in c.get_offsets()], ax.get_xlabel()

    assert stops_axis([("c000", zones)]) == ([zones["protective_stops"]], "protective stops")
    assert stops_axis([("c000", ssm)]) == ([ssm["ssm_stops"]], "protective stops (SSM: ssm_stops)")
    assert stops_axis([("c000", zones), ("c001", ssm)]) == ([zones["protective_stops"], ssm["ssm_stops"]],
                                                           "protective stops (zones) or ssm_stops (SSM)")


def test_plots_where_a_file_is_in_the_way_are_one_line(run_dir: Path, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    copy = shutil.copytree(run_dir, tmp_path / "run", ignore=shutil.ignore_patterns("plots"))
    (copy / "plots").write_text("not a folder\n")
    assert main(["stats", str(copy), "--plots"]) == 1
    assert capsys.readouterr().err == f"--plots {copy / 'plots'}: is a file, not a folder\n"


def test_single_run_table_and_plots(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["stats", str(run_dir), "--plots"]) == 0
    out = capsys.readouterr().out
    assert "zone_time_s.safe" in out and "min_separation_m" in out and "robot_cycles" in out
    figures = plots.run_figures(load(run_dir))  # type: ignore[arg-type]
    assert {n: len(f.axes) for n, f in figures.items()} == {"layout.png": 1, "path.png": 2, "velocity.png": 2,
                                                                       "separation.png": 1}
    for name in figures:
        assert f"wrote {run_dir / 'plots' / name}" in out
        _check_png(run_dir / "plots" / name)
    _check_run_figures_hold_the_run(figures, plots.read_trajectory(run_dir / "trajectory.csv"))
    assert main(["stats", str(run_dir), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["stats"]["robot_cycles"] >= 0
