"""scripts/safety_experiment.py at a tiny size: it runs a batch per preset in the five safety
modes, tabulates them paired by seed (worst cases with their runs, violations with their rate
bound) and draws the figure; run again, it runs nothing new."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import safety_experiment  # noqa: E402


def test_the_experiment_tabulates_five_modes_per_preset(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture) -> None:
    monkeypatch.setattr(safety_experiment, "PRESETS", ("coexistence",))
    argv = ["--out", str(tmp_path / "runs"), "--runs", "2", "--duration", "2", "--workers", "2",
            "--plot", str(tmp_path / "plot.png")]
    assert safety_experiment.main(argv) == 0
    table = capsys.readouterr().out.strip().splitlines()
    assert table[0].startswith("| preset | safety function | runs |")
    rows = [line.split(" | ") for line in table[2:]]
    assert [row[1] for row in rows] == [mode.label for mode in safety_experiment.MODES]
    assert all(row[0] == "| coexistence" and row[2] == "2" for row in rows)
    margins = [row[6] for row in rows]  # the SSM margin: SSM modes only
    assert margins[0] == margins[3] == margins[4] == "–" and "–" not in (margins[1], margins[2])
    assert all(row[5].endswith(")") and "(r000" in row[5] for row in rows)  # the worst separation's run
    # 0 violations in 2 runs of 2 s: the rate bound is -ln(0.05) / (4 / 3600 h)
    assert all(row[9].startswith("0 + 0 PFL; rate ≤ 2.7e+03/h") for row in rows)
    assert (tmp_path / "plot.png").stat().st_size > 10_000
    stats = sorted((tmp_path / "runs" / "coexistence" / "runs").glob("*/stats.json"))
    assert len(stats) == 10  # 5 configurations x 2 seeds
    written = [path.stat().st_mtime_ns for path in stats]
    assert safety_experiment.main(argv) == 0
    assert [path.stat().st_mtime_ns for path in stats] == written
