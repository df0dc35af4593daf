"""The warnings of ``hri validate`` about trees that load but go wrong (:mod:`hri.bt.lint`): a
script's unknown name, a misspelt condition attribute, SetBlackboard of a text into an entry
without a type, ``and``/``or``/``not`` in a script. Each is ``FILE:LINE:COLUMN: warning: ...``,
never an error, and the shipped trees give none."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import numpy as np
import pytest

from hri.bt import Blackboard, TreeContext, default_registry, load_tree
from hri.bt.blackboard import EMPTY
from hri.bt.keys import TreeWarning
from hri.bt.scripting.names import script_names
from hri.cli.convert import convert_file
from hri.cli.validate import validate_files, validate_tree
from test_cli import hri

ROOT = Path(__file__).resolve().parent.parent


def tree_file(folder: Path, body: str, name: str = "t.xml", extra: str = "") -> Path:
    """A tree file whose main tree ``Main`` is ``body``; its nodes start on line 3."""
    path = folder / name
    path.write_text('<root BTCPP_format="4" main_tree_to_execute="Main">\n  <BehaviorTree ID="Main">\n'
                    + textwrap.indent(textwrap.dedent(body).strip("\n"), "    ") + "\n  </BehaviorTree>\n"
                    + extra + "</root>\n")
    return path


def at(path: Path, needle: str, before: str = "") -> str:
    """``FILE:LINE:COLUMN`` of the first ``needle`` in ``path`` that follows ``before`` on its line
    (the place a warning must name, found in the file's text)."""
    for number, row in enumerate(path.read_text().splitlines(), 1):
        start = row.find(before)
        if start >= 0 and row.find(needle, start + len(before)) >= 0:
            return f"{path}:{number}:{row.find(needle, start + len(before)) + 1}"
    raise AssertionError(f"{needle!r} not in {path}")


def warnings(path: Path, registry=None, provided=()) -> list[str]:
    """The lint warnings of ``path`` (not the entries read but never written), as printed."""
    problems = validate_tree(str(path), registry or default_registry(), provided)
    assert all(isinstance(p, TreeWarning) for p in problems), [str(p) for p in problems]
    return [str(p) for p in problems if "is read but never written" not in p.message]


# --- the script's names, as the parser sees them ----------------------------------------------

def test_script_names_are_the_parsers():
    names = script_names("n := n + 1; done := n >= limit; x := 'a := b'")
    assert [(name.text, name.column) for name in names.reads] == [("n", 6), ("n", 21), ("limit", 26)]
    assert [(a.target.text, a.op) for a in names.assignments] == [("n", ":="), ("done", ":="), ("x", ":=")]
    assert [name.text for name in script_names("ready and done").lone_names] == ["ready", "and", "done"]
    assert [name.text for name in script_names("x += y").reads] == ["x", "y"]  # += needs an existing x


# --- a name nothing defines ------------------------------------------------------------------

def test_a_name_that_is_no_enum_and_no_written_entry_is_a_warning_at_its_column(tmp_path):
    path = tree_file(tmp_path, """
        <Sequence>
          <Script code="style := SMASH"/>
          <AlwaysSuccess _skipIf="style == NOSMASH"/>
        </Sequence>""")
    registry = default_registry()
    registry.register_enum("SMASH", 1)
    assert warnings(path, registry) == [
        f"{at(path, 'NOSMASH')}: warning: AlwaysSuccess _skipIf: 'NOSMASH' is neither an enum nor a blackboard entry that "
        "anything writes: the script fails when it reads it (did you mean 'SMASH'?)"]
    registry.register_enum("NOSMASH", 2)
    assert warnings(path, registry) == []


def test_what_the_tree_the_scenario_and_the_host_write_is_known(tmp_path):
    path = tree_file(tmp_path, """
        <Sequence>
          <GenerateXYPose area="{zone}" pose="{spot}"/>
          <SubTree ID="Sub" speed="0.5" out="{result}"/>
          <ScriptCondition code="spot != result &amp;&amp; from_scenario > 0 &amp;&amp; human_zone != 'stop'"/>
        </Sequence>""", extra="""  <BehaviorTree ID="Sub">
    <Script code="out := speed * 2 + fixed"/>
  </BehaviorTree>
  <TreeNodesModel>
    <SubTree ID="Sub"><input_port name="fixed" default="3"/></SubTree>
  </TreeNodesModel>
""")
    assert warnings(path, provided=["zone", "from_scenario", "human_zone"]) == []
    assert [w.split(": warning: ")[1].split(":")[0] for w in warnings(path)] == [
        "ScriptCondition code", "ScriptCondition code"]  # on its own: the scenario's entries are unknown


def test_a_name_written_in_another_scope_says_so(tmp_path):
    path = tree_file(tmp_path, """
        <Sequence>
          <SubTree ID="Sub"/>
          <AlwaysSuccess _skipIf="local"/>
        </Sequence>""", extra='  <BehaviorTree ID="Sub"><Script code="local := true"/></BehaviorTree>\n')
    [warning] = warnings(path)
    assert warning.startswith(f"{at(path, 'local', '_skipIf')}: warning: AlwaysSuccess _skipIf: 'local' is neither")
    assert warning.endswith("(an entry of this name is written in another blackboard scope: a SubTree's, "
                            "or its parent's without remapping)")


def test_the_column_counts_characters_of_the_file_entities_and_lines_included(tmp_path):
    path = tree_file(tmp_path, """
        <Sequence>
          <Script code="a := 1"/>
          <Precondition if="a &gt; 0 &amp;&amp;
            'é' != nothing"><AlwaysSuccess/></Precondition>
        </Sequence>""")
    [warning] = warnings(path, provided=["x"])
    assert warning.startswith(f"{at(path, 'nothing')}: warning: Precondition if: 'nothing' is neither")
    assert at(path, "nothing").split(":")[-2] == "6"  # the value's second line; 'é' is one column


def test_yaml_trees_have_columns_too(tmp_path):
    xml = tree_file(tmp_path, '<AlwaysSuccess _skipIf="x == NOSMASH"/>')
    yaml, _ = convert_file(xml, tmp_path / "t.yaml")
    text = Path(yaml).read_text().splitlines()
    line = next(i for i, row in enumerate(text, 1) if "NOSMASH" in row)
    [warning] = warnings(Path(yaml), provided=["x"])
    assert warning.startswith(f"{yaml}:{line}:{text[line - 1].index('NOSMASH') + 1}: warning: ")


def test_equal_elements_on_one_line_each_have_their_column(tmp_path):
    path = tree_file(tmp_path, '<Sequence><AlwaysSuccess _skipif="1"/><AlwaysSuccess _skipif="1"/></Sequence>')
    row = path.read_text().splitlines()[2]
    first = row.index("_skipif") + 1
    assert [w.split(": ")[0] for w in warnings(path)] == [f"{path}:3:{first}", f"{path}:3:{row.index('_skipif', first) + 1}"]
    yaml = tmp_path / "t.yaml"
    yaml.write_text("BTCPP_format: 4\ntrees:\n  Main: {Sequence: {children: "
                    "[{AlwaysSuccess: {_skipif: 1}}, {AlwaysSuccess: {_skipif: 1}}]}}\n")
    row = yaml.read_text().splitlines()[2]
    first = row.index("_skipif") + 1
    assert [w.split(": ")[0] for w in warnings(yaml)] == [f"{yaml}:3:{first}", f"{yaml}:3:{row.index('_skipif', first) + 1}"]


# --- misspelt conditions -----------------------------------------------------------------------

def test_a_misspelt_condition_is_a_warning_at_the_attribute(tmp_path):
    path = tree_file(tmp_path, """
        <Sequence>
          <Script code="n := 0"/>
          <AlwaysSuccess _skipif="n == 1" _Onsuccess="n += 1" _uid="3" _description="Groot2's" _mine="x"/>
          <AlwaysFailure _sucessIf="n > 0"/>
        </Sequence>""")
    assert warnings(path) == [
        f"{at(path, '_skipif')}: warning: attribute '_skipif' is no pre- or post-condition BehaviorTree.CPP knows, "
        "so it is ignored: did you mean '_skipIf'?",
        f"{at(path, '_Onsuccess')}: warning: attribute '_Onsuccess' is no pre- or post-condition BehaviorTree.CPP knows, "
        "so it is ignored: did you mean '_onSuccess'?",
        f"{at(path, '_sucessIf')}: warning: attribute '_sucessIf' is no pre- or post-condition BehaviorTree.CPP "
        "knows, so it is ignored: did you mean '_successIf'?"]


# --- SetBlackboard into an entry without a type ------------------------------------------------

SET_INTO_SCRIPT_ENTRY = """
    <Sequence>
      <Script code="n := 1"/>
      <SetBlackboard value="2" output_key="n"/>
    </Sequence>"""


def test_setblackboard_of_a_text_into_an_entry_without_a_type_is_a_warning(tmp_path):
    path = tree_file(tmp_path, SET_INTO_SCRIPT_ENTRY)
    assert warnings(path) == [
        f"{at(path, 'output_key')}: warning: SetBlackboard writes the text '2' to entry 'n', which nothing gives a type "
        "(a script's ':=', line 4, makes it without one): SetBlackboard converts a text to the entry's type, "
        "and an entry without one is left empty; assign it in a script instead"]
    blackboard = Blackboard()  # what the warning says: the entry is left empty
    tree = load_tree(str(path), default_registry(), TreeContext(np.random.default_rng(0), lambda: 0.0), blackboard)
    tree.tick_once()
    assert blackboard.get_entry("n").value is EMPTY


def test_a_port_of_any_type_makes_an_entry_without_one(tmp_path):
    path = tree_file(tmp_path, """
        <Sequence>
          <SetBlackboard value="{v}" output_key="w"/>
          <SetBlackboard value="hello" output_key="v"/>
        </Sequence>""")
    [warning] = warnings(path)
    assert warning.startswith(f"{at(path, 'output_key', 'hello')}: warning: SetBlackboard writes the text 'hello' to entry 'v'")
    assert "(SetBlackboard's port 'value', of any type, line 4, makes it without one)" in warning


@pytest.mark.parametrize("body", [
    '<SetBlackboard value="2" output_key="n"/>',  # a new entry: SetBlackboard makes it a string
    """<Sequence>
      <Script code="n := 1"/>
      <SetBlackboard value="2" output_key="n"/>
      <Repeat num_cycles="{n}"><AlwaysSuccess/></Repeat>
    </Sequence>""",  # a typed port declares n: the text is read as an int
])
def test_setblackboard_into_a_new_or_typed_entry_is_fine(tmp_path, body):
    assert warnings(tree_file(tmp_path, body)) == []


# --- and, or, not ------------------------------------------------------------------------------

def test_and_or_not_are_names_not_operators(tmp_path):
    path = tree_file(tmp_path, """
        <Sequence>
          <Script code="ready := true; done := false"/>
          <ScriptCondition code="ready and done"/>
          <Precondition if="ready || not done"><AlwaysSuccess/></Precondition>
          <AlwaysSuccess _skipIf="ready and not done or ready"/>
        </Sequence>""")
    assert warnings(path) == [
        f"{at(path, 'and', 'ready')}: warning: ScriptCondition code: 'and' is a name in a script, not an operator (write '&&'): "
        "'ready and done' is 3 statements; did you mean 'ready && done'?",
        f"{at(path, 'not')}: warning: Precondition if: 'not' is a name in a script, not an operator (write '!'): "
        "'ready || not done' is 2 statements; did you mean 'ready || !done'?",
        f"{at(path, 'and', '_skipIf')}: warning: AlwaysSuccess _skipIf: 'and' is a name in a script, not an operator "
        "(write '&&'): 'ready and not done or ready' is 6 statements; did you mean 'ready && !done || ready'?"]


# --- never an error; the shipped trees give none -----------------------------------------------

def test_warnings_change_neither_the_exit_status_nor_what_loads(tmp_path):
    path = tree_file(tmp_path, """
        <Sequence>
          <Script code="n := 1"/>
          <SetBlackboard value="2" output_key="n"/>
          <AlwaysSuccess _skipif="n == 1"/>
        </Sequence>""")
    result = hri("validate", str(path))
    assert result.returncode == 0 and result.stdout.strip() == "1 file OK (2 warnings)", result.stderr
    assert [line.split(": ")[0] for line in result.stderr.splitlines()] == [at(path, "output_key"), at(path, "_skipif")]
    load_tree(str(path), default_registry(), TreeContext(np.random.default_rng(0), lambda: 0.0), Blackboard())


def shipped_scenarios() -> list[Path]:
    """The presets and the scenarios of the docs' examples (the tutorial's trees)."""
    return [*sorted((ROOT / "scenarios").glob("*.yaml")), *sorted((ROOT / "docs" / "examples").rglob("*.yaml"))]


def test_the_shipped_trees_and_the_docs_trees_give_no_warning():
    scenarios = shipped_scenarios()
    assert len(scenarios) >= 4
    assert [str(p) for p in validate_files(scenarios)] == []
    result = hri("validate", *map(str, scenarios))
    assert result.returncode == 0 and result.stderr == ""
    assert result.stdout.strip() == f"{len(scenarios)} files OK"


def test_a_preset_tree_on_its_own_warns_only_of_what_the_scenario_provides():
    """Without its scenario, the robot's subtrees read ``safety_mode`` in a script: the warning
    says where it would come from."""
    found = warnings(ROOT / "trees" / "robot_subtrees.xml")
    assert len(found) == 1 and "'safety_mode'" in found[0] and "validate the scenario" in found[0]


def test_the_docs_example_prints_what_the_docs_show(tmp_path):
    section = (ROOT / "docs" / "trees.md").read_text().split("### Scripts, conditions and SetBlackboard")[1]
    tree = re.search(r"```xml\n(.*?)```", section, re.DOTALL).group(1)
    shown = re.search(r"\$ \.venv/bin/hri validate tree\.xml\n(.*?)```", section, re.DOTALL).group(1)
    (tmp_path / "tree.xml").write_text(tree)
    result = hri("validate", "tree.xml", cwd=tmp_path)
    assert result.returncode == 0
    assert result.stderr + result.stdout == shown
