"""``hri stats`` of a batch: the risk figures (``hri/batch/risk.py``): the worst case and its
run, the order-statistic bound on a tail quantile, and the Poisson bound on a count's rate.

The batches are synthetic (``stats.json`` and ``run.json`` as ``hri batch`` writes them), so
every figure is known by hand."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from hri.batch import risk
from hri.batch.report import batch_report, flatten, load
from hri.cli.main import main
from test_stats_paired import _stats, _write_batch

HOURS_10 = 36000.0  # a run of 10 simulated hours


def _risk(batch: Path, config: int = 0) -> dict:
    return batch_report(load(batch))["configs"][config]["risk"]  # type: ignore[arg-type]


# --- order statistics and Poisson bounds, by hand ---------------------------------------------

def test_the_bound_rank_is_the_binomial_hand_computation() -> None:
    """P(Binomial(n, 0.05) >= k) >= 0.95: 1 - 0.95^59 = 0.9515 (k = 1), 1 - 0.95^58 = 0.9490
    (none); n = 100: P(>= 2) = 1 - 0.95^100 - 100 * 0.05 * 0.95^99 = 0.9629, P(>= 3) = 0.8817."""
    assert 1 - 0.95 ** 59 >= 0.95 > 1 - 0.95 ** 58
    assert risk.min_runs() == 59
    assert risk.bound_rank(58) is None and risk.bound_rank(59) == 1
    p2 = 1 - 0.95 ** 100 - 100 * 0.05 * 0.95 ** 99
    p3 = p2 - 4950 * 0.05 ** 2 * 0.95 ** 98
    assert p2 >= 0.95 > p3 and risk.bound_rank(100) == 2
    assert [risk.quantile_rank(n) for n in (1, 20, 21, 59, 100)] == [1, 1, 2, 3, 5]


def test_the_poisson_bound_is_3_per_t_for_0_and_the_table_for_3() -> None:
    assert risk.poisson_upper(0) == pytest.approx(-math.log(0.05)) == pytest.approx(2.9957, abs=1e-4)
    assert risk.poisson_upper(3) == pytest.approx(7.7537, abs=1e-4)  # Garwood's table


# --- on a batch -------------------------------------------------------------------------------

def test_the_worst_case_names_the_run_it_came_from(tmp_path: Path) -> None:
    seps = {101: 0.8, 102: 0.31, 103: 0.05, 104: 0.6}
    batch = _write_batch(tmp_path / "b", [{}], [list(seps)], lambda i, seed, o: _stats(
        seed, min_separation_m=seps[seed], max_stop_intrusion_m=seps[seed], ssm_margin_min_m=seps[seed] - 0.2,
        safety_violations=[0, 4, 0, 7][seed - 101]))
    figures = _risk(batch)["figures"]
    sep, intrusion = figures["min_separation_m"], figures["max_stop_intrusion_m"]
    assert (sep["worse"], sep["worst"], sep["worst_run"], sep["worst_seed"]) == ("lower", 0.05, "c000-r0002", 103)
    assert (intrusion["worst"], intrusion["worst_run"]) == (0.8, "c000-r0000")  # deeper is worse
    assert figures["ssm_margin_min_m"]["worst"] == pytest.approx(-0.15)
    assert (figures["safety_violations"]["worst"], figures["safety_violations"]["worst_run"]) == (7, "c000-r0003")
    assert sep["quantile"] == 0.05 and sep["bound"] is None and sep["bound_min_n"] == 59  # n too small
    assert list(figures) == ["min_separation_m", "max_stop_intrusion_m", "ssm_margin_min_m", "protective_stops",
                             "safety_violations"]  # the measures, then the counts


def test_each_persons_figures_and_a_head_contact_are_risk_figures(tmp_path: Path) -> None:
    def stats(i: int, seed: int, o: dict) -> dict:
        people = {name: {"min_separation_m": 1.0 + seed % 3 + k, "safety_violations": 0}
                  for k, name in enumerate(("anna", "ben"))}
        return _stats(seed, people=people, pfl_worst_ratio=None if seed == 103 else 0.5)
    batch = _write_batch(tmp_path / "b", [{}], [[101, 102, 103]], stats)
    figures = _risk(batch)["figures"]
    assert figures["people.anna.min_separation_m"]["worst"] == 1.0
    assert figures["people.anna.min_separation_m"]["worst_run"] == "c000-r0001"  # seed 102
    assert figures["people.ben.safety_violations"]["count"] is True
    ratio = figures["pfl_worst_ratio"]  # null: beside a head region, where no contact is permitted
    assert (ratio["worst"], ratio["worst_run"], ratio["n"]) == ("inf", "c000-r0002", 3)


def test_the_bound_is_the_second_worst_of_100_runs(tmp_path: Path) -> None:
    seeds = list(range(1000, 1100))
    sep = {s: 0.01 * (1 + (s * 37) % 100) for s in seeds}  # 0.01 .. 1.00, each once, shuffled
    batch = _write_batch(tmp_path / "b", [{}], [seeds], lambda i, seed, o: _stats(seed, min_separation_m=sep[seed]))
    f = _risk(batch)["figures"]["min_separation_m"]
    assert f["worst"] == pytest.approx(0.01) and f["bound"] == pytest.approx(0.02) and f["bound_rank"] == 2
    assert f["quantile"] == pytest.approx(0.05)  # the 5th worst
    assert f["worst_run"] == f"c000-r{seeds.index(next(s for s in seeds if sep[s] == 0.01)):04d}"


def test_a_count_that_stayed_0_in_100_hours_is_below_0_02996_per_hour(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    batch = _write_batch(tmp_path / "b", [{}, {"x": 1}], [list(range(10)), list(range(10))], lambda i, seed, o: _stats(
        seed, sim_time_s=HOURS_10, pfl_violations=(1 if i == 1 and seed < 3 else 0)))
    zero, three = (_risk(batch, c)["figures"] for c in (0, 1))
    assert zero["safety_violations"]["hours"] == pytest.approx(100.0)
    assert zero["safety_violations"]["rate_upper_per_h"] == pytest.approx(0.029957, abs=1e-6)
    assert zero["safety_violations"]["worst_ties"] == 10
    assert three["pfl_violations"]["total"] == 3
    assert three["pfl_violations"]["rate_per_h"] == pytest.approx(0.03)
    assert three["pfl_violations"]["rate_upper_per_h"] == pytest.approx(0.077537, abs=1e-6)

    assert main(["stats", str(batch)]) == 0
    out = capsys.readouterr().out
    hidden = next(line for line in out.splitlines() if line.startswith("0 in every run"))
    assert "safety_violations" not in hidden and "zone_time_s.warning" in hidden  # the bound replaces it
    row = next(line for line in out.splitlines() if line.startswith("safety_violations "))
    assert "every run" in row and row.split()[-1] == "0.02996"
    assert "risk, config x=1 (c001): 10 ok runs, 100 simulated hours" in out
    assert "a count that stayed 0 in 100 h: its rate is below -ln(0.05)/T = 0.02996 per hour" in out

    assert main(["stats", str(batch), "--format", "markdown"]) == 0
    md = capsys.readouterr().out
    assert "### risk, config" in md and "| safety figure | worse | n | worst |" in md
    lines = md.splitlines()
    assert all(after.startswith("|") or not after for line, after in zip(lines, lines[1:]) if line.startswith("|")), \
        "a note right under a Markdown table would be read as a row of it"
    assert main(["stats", str(batch), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["configs"][1]["risk"]["figures"]["pfl_violations"]["worst_run"] == "c001-r0000"


def test_every_safety_figure_is_a_statistic_the_runs_write() -> None:
    """A safety figure renamed in stats.json would silently leave the risk section."""
    from hri.run.stats import PersonStats, RunStats

    one = RunStats("x", 1)
    one.people = {"anna": PersonStats()}
    written = set(one.as_dict())
    assert set(risk.FIGURES) <= written
    assert {f"people.anna.{key}" for key in risk.PERSON_FIGURES} <= set(flatten(one.as_dict()))
    assert all(risk.figure(f"people.anna.{key}") for key in risk.PERSON_FIGURES)
    assert risk.figure("people.anna.person_distance_m") is None and risk.figure("zone_entries.stop") is None
