"""The command line: statistics as JSON, and one clear line for every user mistake."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hri.run.stats import WALL_CLOCK_KEYS

HRI = shutil.which("hri") or str(Path(sys.executable).parent / "hri")
STAT_KEYS = {"scenario", "seed", "sim_time_s", "wall_time_s", "real_time_factor", "zone_time_s", "zone_entries",
             "robot_time_s", "protective_stops", "min_separation_m", "robot_cycles", "human_calls",
             "human_response_s", "safety_violations"}


def hri(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([HRI, *args], capture_output=True, text=True, cwd=cwd, timeout=900,
                          env={**os.environ, "PYTHONWARNINGS": "ignore"})


def _one_error_line(result: subprocess.CompletedProcess) -> str:
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    return lines[0]


def test_run_json_has_every_statistic_and_writes_files(tmp_path):
    result = hri("run", "coexistence", "--duration", "60", "--seed", "2", "--json", "--out", str(tmp_path / "run"))
    assert result.returncode == 0, result.stderr
    stats = json.loads(result.stdout)
    assert STAT_KEYS <= set(stats)
    assert stats["sim_time_s"] == pytest.approx(60.0)
    assert set(stats["zone_time_s"]) == {"safe", "warning", "stop"}
    assert sum(stats["zone_time_s"].values()) == pytest.approx(60.0, abs=0.01)
    assert json.loads((tmp_path / "run" / "stats.json").read_text())["seed"] == 2
    events = [json.loads(line) for line in (tmp_path / "run" / "events.jsonl").read_text().splitlines()]
    assert events[0]["event"] == "run_started" and all("t" in e and "event" in e for e in events)
    assert any(e["event"] == "person_action_finished" for e in events)
    trajectory = (tmp_path / "run" / "trajectory.csv").read_text().splitlines()
    assert trajectory[0].startswith("t,person_x,person_y") and len(trajectory) == 1 + 600  # 10 Hz
    assert {line.split(",")[4] for line in trajectory[1:]} <= {"safe", "warning", "stop"}


TREES = {
    "unknown_node.xml": ('<root BTCPP_format="4">\n  <BehaviorTree ID="T">\n    <Sequence>\n'
                         '      <Teleport target="1;2;0"/>\n    </Sequence>\n  </BehaviorTree>\n</root>\n', 4, "Teleport"),
    "missing_port.xml": ('<root BTCPP_format="4">\n  <BehaviorTree ID="T">\n'
                         '    <ActorAnimation animation_speed="1.0"/>\n  </BehaviorTree>\n</root>\n', 3, "animation_name"),
    "malformed.xml": ('<root BTCPP_format="4">\n  <BehaviorTree ID="T">\n    <Sequence>\n'
                      '  </BehaviorTree>\n</root>\n', 4, ""),
    # the parent types {spot} before its child, as BehaviorTree.CPP creates them: int, then str
    "entry_type_order.xml": ('<root BTCPP_format="4">\n  <BehaviorTree ID="T">\n'
                             '    <LoopInt name="Spots" queue="1;2" value="{spot}">\n'
                             '      <UnsetBlackboard key="{spot}"/>\n    </LoopInt>\n  </BehaviorTree>\n</root>\n', 4,
                             "UnsetBlackboard: port 'key': the port [spot] was initially created with type [int] "
                             "and, later type [str] was used here (typed by LoopInt port 'value' at "),
}


@pytest.mark.parametrize("name", sorted(TREES))
def test_validate_bad_trees_gives_file_line_message(tmp_path, name):
    text, line, word = TREES[name]
    path = tmp_path / name
    path.write_text(text)
    error = _one_error_line(hri("validate", str(path)))
    assert error.startswith(f"{path}:{line}: ") and word in error


@pytest.mark.parametrize("name", sorted(TREES))
def test_run_with_bad_person_tree_gives_file_line_message(tmp_path, name):
    text, line, word = TREES[name]
    path = tmp_path / name
    path.write_text(text)
    error = _one_error_line(hri("run", "coexistence", "--duration", "1", "--set", f"trees.person={path}"))
    assert error.startswith(f"{path}:{line}: ") and word in error


def test_validate_accepts_the_shipped_files():
    root = Path(__file__).parent.parent
    files = [*sorted((root / "trees").glob("*.xml")), root / "scenarios" / "coexistence.yaml"]
    result = hri("validate", *map(str, files))
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("args,start", [
    (("run", "nowhere"), "unknown scenario 'nowhere'"),
    (("run", "coexistence", "--set", "robot.colour=red"), "--set robot.colour: unknown key"),
    (("run", "coexistence", "--duration", "-5"), "--duration: must be positive"),
    (("run", "coexistence", "--duration", "abc"), "hri: argument --duration"),
])
def test_option_mistakes_give_one_line(args, start):
    assert _one_error_line(hri(*args)).startswith(start)


def test_coexistence_half_hour_is_safe_fast_and_reproducible():
    """The issue's acceptance run: 1800 s, seed 1."""
    args = ("run", "coexistence", "--duration", "1800", "--seed", "1", "--json")
    runs = [subprocess.Popen([HRI, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for _ in range(2)]  # the same command twice, side by side
    outputs = [run.communicate(timeout=900) for run in runs]
    assert all(run.returncode == 0 for run in runs), outputs
    stats, second = (json.loads(out) for out, _ in outputs)
    print("\ncoexistence 1800 s seed 1:", json.dumps(stats))
    assert stats["real_time_factor"] > 1.0
    assert stats["robot_cycles"] > 0
    assert stats["zone_entries"]["stop"] >= 1 and stats["protective_stops"] >= 1
    assert stats["safety_violations"] == 0
    assert stats["min_separation_m"] > 0
    for key in WALL_CLOCK_KEYS:
        stats.pop(key), second.pop(key)
    assert stats == second


@pytest.mark.parametrize("argv, scenario, port", [
    (["run", "--groot2", "coexistence"], "coexistence", 1667),
    (["run", "coexistence", "--groot2"], "coexistence", 1667),
    (["run", "--groot2", "2000", "coexistence"], "coexistence", 2000),
    (["run", "coexistence", "--groot2", "--duration", "5"], "coexistence", 1667),
    (["run", "coexistence"], "coexistence", None),
    (["run", "--groot2=1667", "coexistence"], "coexistence", 1667),
    (["run", "--groot2=2000", "coexistence"], "coexistence", 2000),
    (["run", "--groot2", "1667", "coexistence"], "coexistence", 1667),
    (["run", "coexistence", "--groot2", "2000"], "coexistence", 2000),
    (["run", "--groot2", "scenarios/my.yaml"], "scenarios/my.yaml", 1667),
    (["run", "--groot2", "--seed", "3", "coexistence"], "coexistence", 1667),
])
def test_groot2_port_is_optional_before_the_scenario(argv, scenario, port):
    """``--groot2`` without a port may come first: the scenario after it is not read as the port."""
    from hri.cli.main import _build_parser, _port_given

    args = _build_parser().parse_args(_port_given(argv))
    assert (args.scenario, args.groot2) == (scenario, port)


@pytest.mark.parametrize("argv, run_dir, port", [
    (["replay", "--groot2", "runs/a"], "runs/a", 1667),
    (["replay", "runs/a", "--groot2"], "runs/a", 1667),
    (["replay", "--groot2", "5000", "runs/a"], "runs/a", 5000),
    (["replay", "--groot2=5000", "runs/a"], "runs/a", 5000),
    (["replay", "--groot2", "--speed", "10", "runs/a"], "runs/a", 1667),
])
def test_replay_groot2_port_is_optional_before_the_run_dir(argv, run_dir, port):
    from hri.cli.main import _build_parser, _port_given

    args = _build_parser().parse_args(_port_given(argv))
    assert (str(args.run_dir), args.groot2) == (run_dir, port)


@pytest.mark.parametrize("where", ["the corpus's folder", "its parent", "elsewhere"])
def test_validate_and_run_name_a_file_alike(tmp_path, where):
    """A tree's mistake is named the same way by `validate TREE`, `validate SCENARIO` and `run
    SCENARIO` (which reach the tree through the scenario, resolved): relative to the current
    folder when the file lies inside it, else by its absolute path."""
    corpus = Path(__file__).parent.resolve() / "bad_inputs"
    cwd = {"the corpus's folder": corpus, "its parent": corpus.parent, "elsewhere": tmp_path}[where]
    shown = {"the corpus's folder": "", "its parent": "bad_inputs/", "elsewhere": f"{corpus}/"}[where]
    given = os.path.relpath(corpus, cwd) if where != "elsewhere" else str(corpus)
    expected = f"{shown}tree_unknown_node.xml:8: unknown node type 'Slep' (did you mean 'Sleep'?)"
    for args in (["validate", f"{given}/tree_unknown_node.xml"], ["validate", f"{given}/scenario_bad_person_tree.yaml"],
                 ["run", f"{given}/scenario_bad_person_tree.yaml", "--duration", "0.1"]):
        assert _one_error_line(hri(*args, cwd=cwd)) == expected, args
