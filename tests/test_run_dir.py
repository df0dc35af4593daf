"""A run directory keeps what ran (hri.run.run_dir): plots from it, ``hri run --from``, refusals."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from hri.batch import plots
from hri.cli.main import main
from hri.cli.stats import stats_command
from hri.run.run_dir import MANIFEST, SCENARIO, load_kept_run
from hri.scenario.load import load_scenario
from hri.run.stats import WALL_CLOCK_KEYS

REPO = Path(__file__).resolve().parents[1]
ZONE = [[0, 0], [6, 0], [6, 5], [0, 5]]
PLUGIN = '''"""A plug-in node for the tests."""
from py_trees.common import Status

from hri.bt import BTNode


class Beep(BTNode):
    """Always SUCCESS."""

    def update(self) -> Status:
        return Status.SUCCESS


def register_nodes(registry) -> None:
    registry.register("Beep", Beep, "action")
'''


def _own_scenario(folder: Path) -> Path:
    """The coexistence preset as a user's own: scenario, trees (with includes) and a plug-in
    node that the person's tree uses, in three folders."""
    (folder / "scen").mkdir(parents=True)
    (folder / "trees").mkdir()
    (folder / "nodes").mkdir()
    for name in ("coexistence_person.xml", "coexistence_robot.xml", "person_subtrees.xml", "robot_subtrees.xml"):
        shutil.copy(REPO / "trees" / name, folder / "trees" / name)
    person = folder / "trees" / "coexistence_person.xml"
    person.write_text(person.read_text().replace(
        '<SubTree ID="WorkOrInspect" _autoremap="true"/>',
        '<Sequence><Beep/><SubTree ID="WorkOrInspect" _autoremap="true"/></Sequence>'))
    (folder / "nodes" / "beep_nodes.py").write_text(PLUGIN)
    data = yaml.safe_load((REPO / "scenarios" / "coexistence.yaml").read_text())
    data["name"] = "my_patrol"
    data["trees"] = {"person": "../trees/coexistence_person.xml", "robot": "../trees/coexistence_robot.xml"}
    data["plugins"] = ["../nodes/beep_nodes.py"]
    scenario = folder / "scen" / "my_patrol.yaml"
    scenario.write_text(yaml.safe_dump(data, sort_keys=False))
    return scenario


def _run(capsys: pytest.CaptureFixture, *argv: str) -> dict:
    capsys.readouterr()
    assert main(["run", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _without_wall_clock(stats: dict) -> dict:
    return {k: v for k, v in stats.items() if k not in WALL_CLOCK_KEYS}


def test_out_keeps_the_scenario_trees_includes_and_plugins(tmp_path: Path, capsys) -> None:
    run = tmp_path / "run"
    _run(capsys, str(_own_scenario(tmp_path / "mine")), "--duration", "2", "--seed", "3",
         "--set", "robot.reduced_velocity=0.2", "--out", str(run))
    manifest = json.loads((run / MANIFEST).read_text())
    assert (manifest["source"], manifest["seed"], manifest["duration_s"]) == (
        str(tmp_path / "mine" / "scen" / "my_patrol.yaml"), 3, 2.0)
    assert manifest["overrides"] == ["robot.reduced_velocity=0.2"]
    kept = sorted(manifest["files"])
    assert kept == ["inputs/plugins/0/beep_nodes.py", "inputs/trees/coexistence_person.xml",
                    "inputs/trees/coexistence_robot.xml", "inputs/trees/person_subtrees.xml",
                    "inputs/trees/robot_subtrees.xml", SCENARIO]
    for relative, entry in manifest["files"].items():
        if relative != SCENARIO:
            assert (run / relative).read_bytes() == Path(entry["source"]).read_bytes()
    scenario = load_scenario(str(run / SCENARIO))  # hri run can load it again, trees and plug-in included
    assert scenario.robot.reduced_velocity == 0.2
    assert scenario.plugins == ("inputs/plugins/0/beep_nodes.py",)


def test_plots_of_a_run_whose_scenario_folder_was_deleted(tmp_path: Path, capsys) -> None:
    scenario = _own_scenario(tmp_path / "mine")
    zones = {n: list(a.points) for n, a in load_scenario(str(scenario)).zones.items()}
    run = tmp_path / "run"
    _run(capsys, str(scenario), "--duration", "2", "--out", str(run))
    shutil.rmtree(tmp_path / "mine")
    capsys.readouterr()
    stats_command(run, plots=True)
    assert "not found" not in capsys.readouterr().err
    layout = plots.run_layout(run, "my_patrol")
    assert layout is not None and layout["zones"] == zones
    assert all((run / "plots" / f"{name}.png").is_file() for name in ("layout", "path", "velocity", "separation"))


def test_plots_draw_the_zones_set_on_the_command_line(tmp_path: Path, capsys) -> None:
    run = tmp_path / "run"
    _run(capsys, "coexistence", "--duration", "2", "--set", f"zones.warning={json.dumps(ZONE)}", "--out", str(run))
    layout = plots.run_layout(run, "coexistence")
    assert layout is not None
    assert [list(p) for p in layout["zones"]["warning"]] == ZONE


def test_from_reproduces_the_run_bit_for_bit(tmp_path: Path, capsys) -> None:
    scenario = _own_scenario(tmp_path / "mine")
    first, again = tmp_path / "first", tmp_path / "again"
    stats = _run(capsys, str(scenario), "--duration", "3", "--seed", "7",
                 "--set", f"zones.warning={json.dumps(ZONE)}", "--fault", "corrupt_feedback@1", "--out", str(first))
    shutil.rmtree(tmp_path / "mine")  # the rerun needs only the copies
    before = {p.name: p.read_bytes() for p in first.iterdir() if p.is_file()}
    rerun = _run(capsys, "--from", str(first), "--trust-plugins", "--out", str(again))
    assert _without_wall_clock(rerun) == _without_wall_clock(stats)
    assert _without_wall_clock(json.loads((again / "stats.json").read_text())) == _without_wall_clock(stats)
    assert {p.name: p.read_bytes() for p in first.iterdir() if p.is_file()} == before  # the old run untouched
    kept = load_kept_run(again, trust_plugins=True)
    assert kept.record.rerun_of == str(first.resolve())
    assert (kept.record.seed, kept.record.duration_s, kept.record.faults) == (7, 3.0, ["corrupt_feedback@1"])


@pytest.mark.parametrize("args, message", [
    (["--from", "{tmp}"], "not a run directory"),
    (["--from", "{run}", "--out", "{run}"], "is the run directory of --from"),
    (["--from", "{run}", "--seed", "2"], "not with --seed"),
    (["coexistence", "--from", "{run}"], "not with a scenario"),
    ([], "give a scenario"),
    (["coexistence", "--trust-plugins"], "--trust-plugins: only with --from"),
])
def test_from_refuses_in_one_line(tmp_path: Path, capsys, args: list[str], message: str) -> None:
    run = tmp_path / "run"
    _run(capsys, "coexistence", "--duration", "1", "--out", str(run))
    code = main(["run", *(a.format(tmp=tmp_path, run=run) for a in args)])
    err = capsys.readouterr().err
    assert code != 0 and message in err and len(err.strip().splitlines()) == 1


def test_from_refuses_an_edited_copy(tmp_path: Path, capsys) -> None:
    run = tmp_path / "run"
    _run(capsys, "coexistence", "--duration", "1", "--out", str(run))
    tree = run / "inputs" / "trees" / "robot_subtrees.xml"
    tree.write_text(tree.read_text() + "<!-- edited -->\n")
    assert main(["run", "--from", str(run)]) == 1
    err = capsys.readouterr().err.strip()
    assert err == f"--from {run}: {tree} was changed after the run (its SHA-256 differs from {MANIFEST})"


def test_a_batch_run_keeps_what_ran_and_runs_again(tmp_path: Path, capsys) -> None:
    batch = tmp_path / "batch"
    assert main(["batch", "coexistence", "--runs", "1", "--duration", "2", "--workers", "1",
                 "--set", f"zones.warning={json.dumps(ZONE)}", "--out", str(batch)]) == 0
    run = batch / "runs" / "c000-r0000"
    assert [list(p) for p in plots.run_layout(run, "coexistence")["zones"]["warning"]] == ZONE
    stats = json.loads((run / "stats.json").read_text())
    rerun = _run(capsys, "--from", str(run))
    assert _without_wall_clock(rerun) == _without_wall_clock(stats)


def test_out_never_replaces_a_users_own_scenario_or_inputs(tmp_path: Path, capsys) -> None:
    mine = tmp_path / "project"
    (mine / "inputs").mkdir(parents=True)
    (mine / "inputs" / "notes.txt").write_text("mine")
    (mine / SCENARIO).write_text("name: mine\n")
    assert main(["run", "coexistence", "--duration", "1", "--out", str(mine)]) == 1
    assert "that no run wrote" in capsys.readouterr().err
    assert (mine / "inputs" / "notes.txt").read_text() == "mine" and (mine / SCENARIO).read_text() == "name: mine\n"
    run = tmp_path / "run"  # an earlier run's folder is written over with --force, its inputs replaced
    _run(capsys, "coexistence", "--duration", "1", "--out", str(run))
    _run(capsys, str(_own_scenario(tmp_path / "own")), "--duration", "1", "--out", str(run), "--force")
    assert (run / "inputs" / "plugins").is_dir() and load_kept_run(run, trust_plugins=True).scenario.name == "my_patrol"
