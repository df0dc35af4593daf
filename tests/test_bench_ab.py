"""``hri bench --only ab --against PATH`` (hri/bench/ab_compare.py): this install and another
``hri`` run the same seeded runs, alternating, each in a process of its own; the figure has
both sides' real-time factors with their spreads and the ratio, and says whether the two gave
the same runs. No speed is asserted: the figure is measured, not tested."""

from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path

import pytest
from rich.console import Console

from hri.bench import BenchSettings, add_bench_parser, bench_command, run_benchmarks
from hri.bench import ab_compare
from hri.bench.report import print_report
from hri.base.errors import HriError

OWN_HRI = Path(sys.executable).parent / "hri"  # this install's own command, as another install's would be


def _parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="hri")
    add_bench_parser(parser.add_subparsers(dest="command"))
    return parser.parse_args(argv)


@pytest.mark.skipif(not OWN_HRI.exists(), reason="no hri command beside this interpreter")
def test_ab_figure_against_this_installs_own_hri() -> None:
    settings = BenchSettings(scenarios=("coexistence",), duration_s=0.5, repeat=1, against=str(OWN_HRI))
    document = run_benchmarks(settings, ["ab"])
    r = document["results"]["ab"]
    assert r["other"] == str(OWN_HRI) and r["sim_s"] == 0.5 and list(r["scenarios"]) == ["coexistence"]
    c = r["scenarios"]["coexistence"]
    for side in ("this", "other"):
        runs = c[side]["rtf"]["runs"]
        assert len(runs) == 1 and runs[0] > 0
        assert c[side]["spread"] == [min(runs), max(runs)]
        assert c[side]["robot_cycles"] == 0 and c[side]["safety_violations"] == 0
    assert c["ratio"] > 0 and len(c["paired_ratios"]["runs"]) == 1 and isinstance(c["within_spread"], bool)
    assert c["same_stats"] is True and c["differing"] == []
    out = io.StringIO()
    print_report(document, Console(file=out, width=160))
    assert "This install against" in out.getvalue() and "same statistics" in out.getvalue()


def test_sides_alternate_and_runs_that_differ_are_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """The two sides take turns, the first of a pair swapped every other repeat; the other
    side's runs differ in one statistic: the figure names it (and only it)."""
    order: list[str] = []

    def run_once(command, scenario, settings):
        other = command is not ab_compare.THIS
        order.append("other" if other else "this")
        return {"sim_time_s": 10.0, "wall_time_s": 0.5 if other else 0.25, "real_time_factor": 1.0,
                "robot_cycles": 3 + other, "safety_violations": 0}

    monkeypatch.setattr(ab_compare, "run_once", run_once)
    c = ab_compare.measure_scenario("coexistence", BenchSettings(repeat=4), ["other-hri"], lambda _: None)
    assert order == ["this", "other", "other", "this"] * 2
    assert c["same_stats"] is False and c["differing"] == ["robot_cycles"]
    assert c["this"]["rtf"]["median"] == 40.0 and c["other"]["rtf"]["median"] == 20.0 and c["ratio"] == 2.0
    assert c["within_spread"] is True
    assert ab_compare.differing([{"a": 1, "wall_time_s": 1.0}, {"a": 1, "wall_time_s": 2.0}]) == []
    assert ab_compare.differing([{"a": 1}, {"a": 1, "b": 2}]) == ["b"]
    people = [{"people": {"ann": {"actions": 4, "zone_time_s": {"safe": 1.0}}}},
              {"people": {"ann": {"actions": 4, "zone_time_s": {"safe": 1.5}}}}]
    assert ab_compare.differing(people) == ["people.ann.zone_time_s.safe"]


def _script(path: Path, text: str, mode: int = 0o755) -> str:
    path.write_text(text)
    path.chmod(mode)
    return str(path)


def test_against_mistakes_are_one_line_errors(tmp_path: Path) -> None:
    cases = [
        (["--only", "ab"], "--against: the ab benchmark needs the hri executable"),
        (["--only", "ab", "--against", str(tmp_path / "nowhere")], "--against: no such file: "),
        (["--only", "ab", "--against", _script(tmp_path / "plain", "hri 0.1.0\n", 0o644)],
         "--against: not an executable file: "),
        (["--only", "ab", "--against", _script(tmp_path / "other", "#!/bin/sh\necho hello\n")],
         r"--against: .*/other is not an hri command \(--version said: hello\)"),
        (["--only", "xml", "--against", str(OWN_HRI)], r"--against: only the ab benchmark uses it \(--only ab\)"),
    ]
    for argv, message in cases:
        with pytest.raises(HriError, match=message):
            bench_command(_parse(["bench", *argv]))
