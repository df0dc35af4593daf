"""The BehaviorTree.CPP tutorial (``docs/tutorial_btcpp.md``) as a user follows it, so that it
cannot rot.

Its console commands and their outputs are checked with every document's by
``tests/test_docs_examples.py``. Here: the tree excerpts must be the files' lines, the typo must
give the line shown, the first run must do what the tutorial says, and BehaviorTree.CPP itself
(``behaviortreepy``) must tick the tutorial's trees as hri does.
"""

from __future__ import annotations

import importlib.util
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import btcpp_oracle
import docs_examples
import hri_runner
from hri.cli.main import main

ROOT = Path(__file__).resolve().parent.parent
TUTORIAL = (ROOT / "docs" / "tutorial_btcpp.md").read_text()
EXAMPLE = ROOT / "docs" / "examples" / "btcpp_tutorial"
FILES = ("person.xml", "robot.xml", "shelf_sections.py", "scripted_shift.yaml")


COMMANDS = docs_examples.console_examples("docs/tutorial_btcpp.md")


def test_the_tutorial_shows_its_commands():
    """Its commands and their outputs are checked by tests/test_docs_examples.py."""
    assert [example.command.split()[1] for example in COMMANDS] == ["validate", "run", "render", "run"]


def _events(run: Path, kind: str) -> list[dict]:
    lines = (run / "events.jsonl").read_text().splitlines()
    return [event for event in map(json.loads, lines) if event["event"] == kind]


@pytest.fixture(scope="module")
def tutorial_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder of the tutorial's first run (``--out runs/tutorial``), run as the tutorial says."""
    (run,) = [example for example in COMMANDS if "--out runs/tutorial" in example.command]
    folder = tmp_path_factory.mktemp("tutorial")
    assert docs_examples.run(run, folder, {}).exit_status == 0
    return folder / "runs" / "tutorial"


def test_the_person_works_two_rounds_then_kneels_at_the_middle_section(tutorial_run):
    first_shift = [(e["node"], e["animation"]) for e in _events(tutorial_run, "person_action_started")][:9]
    assert first_shift == [
        ("WalkToBench", "walk"),
        ("Reach", "standing_extend_arm"), ("PullBack", "standing_retract_arm"),
        ("Reach", "standing_extend_arm"), ("PullBack", "standing_retract_arm"),
        ("WalkToSection2", "walk"),
        ("ActorAnimation", "standing_to_low"), ("ActorAnimation", "low_put"), ("ActorAnimation", "low_to_standing"),
    ]


def test_the_robot_pauses_three_simulated_seconds_after_every_third_move(tutorial_run):
    arrivals = [e["t"] for e in _events(tutorial_run, "robot_move_finished") if e["node"] == "MoveToPlace"]
    next_starts = [e["t"] for e in _events(tutorial_run, "robot_move_started") if e["node"] == "MoveToPick"]
    gaps = [round(start - arrival, 2) for arrival, start in zip(arrivals, next_starts[1:])]
    assert gaps[:6] == [0.05, 0.05, 3.05, 0.05, 0.05, 3.05]  # 3 s of Sleep, then the next tick


def test_the_excerpts_are_the_files_lines():
    """Every line of the tutorial's excerpts of its files (but the elided ones) is a line of them."""
    lines = {line.strip() for name in FILES for line in (EXAMPLE / name).read_text().splitlines()}
    own = TUTORIAL.split("## 1.", 1)[1].split("## 5.", 1)[0]
    for block in re.findall(r"```(?:xml|python|yaml)\n(.*?)```", own, re.DOTALL):
        for line in block.splitlines():
            if "..." not in line:
                assert line.strip() in lines, line


TYPO = ('_while="bench_rounds > rounds"', '_while="bench_rounds => rounds"')


def test_the_typo_gives_the_line_the_tutorial_shows(tmp_path, capsys):
    assert TYPO[1] in TUTORIAL
    shown = re.search(r"^docs/examples/btcpp_tutorial/person\.xml:(\d+): (.*)$", TUTORIAL, re.MULTILINE)
    assert shown is not None
    person = tmp_path / "person.xml"
    person.write_text((EXAMPLE / "person.xml").read_text().replace(*TYPO))
    assert main(["validate", str(person)]) == 1
    assert capsys.readouterr().err.strip() == f"{person}:{shown.group(1)}: {shown.group(2)}"


# -- the same trees in BehaviorTree.CPP ---------------------------------------------------------

WORKCELL_NODES = ("ActorMovement", "ActorAnimation", "RobotMove", "GenerateXYPose", "OffsetPose")


def _enums() -> dict[str, int]:
    spec = importlib.util.spec_from_file_location("shelf_sections", EXAMPLE / "shelf_sections.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.SECTIONS


def _test_tree(path: Path) -> tuple[str, dict[str, list[str]]]:
    """The tree of ``path`` with every workcell node a TestAction (its name, its conditions)
    that runs one tick, InterruptableSequence as SequenceWithMemory, a SubTree of another file
    an AlwaysSuccess, and the enums numbers; and the scripts of the test leaves."""
    enums = _enums()
    names = re.compile(r"\b(" + "|".join(enums) + r")\b")
    root = ET.parse(path).getroot()
    for include in root.findall("include"):
        root.remove(include)
    defined = {tree.get("ID") for tree in root.iter("BehaviorTree")}
    leaves: dict[str, list[str]] = {}
    for parent in list(root.iter()):
        for index, child in enumerate(list(parent)):
            if child.tag in WORKCELL_NODES:
                name = child.get("name") or child.get("animation_name") or child.tag
                attributes = {k: v for k, v in child.attrib.items() if k.startswith("_")}
                parent[index] = ET.Element("TestAction", {"name": name, **attributes})
                leaves[name] = ["RUNNING", "SUCCESS"] * 100
            elif child.tag == "InterruptableSequence":  # the thesis's name: not in BehaviorTree.CPP
                child.tag = "SequenceWithMemory"
            elif child.tag == "SubTree" and child.get("ID") not in defined:
                parent[index] = ET.Element("AlwaysSuccess", {"name": child.get("ID", "")})
    for element in root.iter():
        for key, value in element.attrib.items():
            element.set(key, names.sub(lambda m: str(enums[m.group(1)]), value))
    return ET.tostring(root, encoding="unicode"), leaves


@pytest.mark.parametrize("tree, bench_rounds", [("person.xml", 0), ("person.xml", 2), ("person.xml", 3),
                                                ("robot.xml", 2)])
def test_behaviortree_cpp_ticks_the_tutorial_trees_as_hri_does(tree, bench_rounds):
    pytest.importorskip("behaviortreepy")
    xml, leaves = _test_tree(EXAMPLE / tree)
    case = {"xml": xml, "leaves": leaves, "ticks": 40,
            "blackboard": {"bench_rounds": bench_rounds, "moves_per_pause": 3}}
    ours = hri_runner.run_case(case)
    assert not ours["load_error"] and ours["tick_error"] is None
    assert ours == btcpp_oracle.run_case(case)
