"""The YAML tree format: same trees as the XML, errors with FILE:LINE, writer round trips."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from py_trees.behaviour import Behaviour
from py_trees.common import Status

from hri.bt import Blackboard, Tree, TreeContext, default_registry, load_tree, validate_file
from hri.bt.decorators import SubTreeNode
from hri.bt.tree_files import Element, structure
from hri.bt.xml_text import parse_xml
from hri.bt.yaml_format import dump_yaml, looks_like_tree_file, parse_yaml
from hri.base.errors import HriError
from hri.base.geometry import Pose

REGISTRY = default_registry()
ROOT = Path(__file__).parent.parent
TREES = ROOT / "trees"
PAIRS = sorted(xml.stem for xml in TREES.glob("*.xml") if xml.with_suffix(".yaml").is_file())
HRI = shutil.which("hri") or str(Path(sys.executable).parent / "hri")


def write(folder: Path, name: str, text: str) -> str:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"))
    return str(path)


def ctx() -> TreeContext:
    fake = object()  # nodes use their services only when ticked
    return TreeContext(rng=np.random.default_rng(0), now=lambda: 0.0,
                       services={"actor": fake, "robot": fake, "called": fake, "parts": fake})


def load(path: str, tree_id: str | None = None, blackboard: Blackboard | None = None) -> Behaviour:
    return load_tree(path, REGISTRY, ctx(), blackboard or Blackboard(), tree_id)


def built(node: Behaviour) -> tuple:
    """A built tree, node by node: class, name, raw ports, SubTree id/remapping, children."""
    extra: tuple = ()
    if isinstance(node, Tree):
        node = node.root
    if isinstance(node, SubTreeNode):
        scope = node.scope
        extra = (node.tree_id, scope.remapping, scope.autoremap,
                 {k: scope.get_entry(k).value for k in scope.local_keys()})
    return (type(node).__qualname__, node.name, getattr(node, "raw_ports", None), extra,
            len(node.children), tuple(built(child) for child in node.children))


def tree_ids(path: Path) -> list[str]:
    return [e.attrib["ID"] for e in parse_xml(path.read_bytes(), str(path)).children if e.tag == "BehaviorTree"]


# --- the shipped YAML trees are the XML trees ----------------------------------------------

def test_every_shipped_xml_tree_has_a_yaml_form():
    assert PAIRS and sorted(x.stem for x in TREES.glob("*.xml")) == PAIRS


@pytest.mark.parametrize("stem", PAIRS)
def test_yaml_tree_builds_the_same_tree_as_the_xml(stem):
    xml, yaml = TREES / f"{stem}.xml", TREES / f"{stem}.yaml"
    assert yaml.read_text().startswith(f"# The YAML form of {stem}.xml")
    for tree_id in tree_ids(xml):
        from_xml, from_yaml = load(str(xml), tree_id), load(str(yaml), tree_id)
        assert built(from_yaml) == built(from_xml)
        assert from_yaml.root.location[0] == str(yaml)  # the nodes come from the YAML file
    try:  # the tree picked without an ID (main_tree_to_execute, or the only tree)
        main = built(load(str(xml)))
    except HriError as err:
        with pytest.raises(HriError, match=f": {err.message}$"):
            load(str(yaml))
    else:
        assert built(load(str(yaml))) == main
    assert validate_file(str(yaml), REGISTRY) == []


@pytest.mark.parametrize("stem", PAIRS)
def test_yaml_tree_parses_to_the_xml_elements(stem):
    xml, yaml = TREES / f"{stem}.xml", TREES / f"{stem}.yaml"
    from_xml = parse_xml(xml.read_bytes(), str(xml))
    for include in from_xml.children:
        if include.tag == "include":
            include.attrib["path"] = include.attrib["path"].removesuffix(".xml") + ".yaml"
    from_xml.children = [e for e in from_xml.children if e.tag != "TreeNodesModel"]
    assert structure(parse_yaml(yaml.read_bytes(), str(yaml))) == structure(from_xml)


def test_the_example_of_the_docs_runs(tmp_path):
    path = write(tmp_path, "t.yaml", """
        # comments allowed
        BTCPP_format: 4
        main_tree_to_execute: Main
        trees:
          Main:
            Sequence:
              name: Main
              children:
                - SubTree: {ID: Shift, _autoremap: true, delta: 0;2;0}
                - AlwaysSuccess
          Shift:
            OffsetPose: {input: "{start}", offset: "{delta}", output: "{goal}"}
        """)
    bb = Blackboard()
    bb.set("start", "1;1;0")
    root = load(path, blackboard=bb)
    assert root.tick_once() == Status.SUCCESS
    assert bb.get("goal") == Pose(1, 3, 0)
    assert root.root.location == (path, 6)  # the line of the root node's key


# --- scalars are the text as written ------------------------------------------------------

def test_attribute_strings_are_the_text_as_written(tmp_path):
    root = parse_yaml(textwrap.dedent("""
        BTCPP_format: 4
        trees:
          T:
            N: {a: 1.0, b: 10, c: true, d: 0.95;0.05, e: "{key}", f: '1.50', g: 1e3, h: 0x1F, i: , j: ~, k: no}
        """).lstrip(), "t.yaml")
    node = root.children[0].children[0]
    assert node.attrib == {"a": "1.0", "b": "10", "c": "true", "d": "0.95;0.05", "e": "{key}", "f": "1.50",
                           "g": "1e3", "h": "0x1F", "i": "", "j": "~", "k": "no"}
    assert list(node.attrib) == list("abcdefghijk")


def test_lines_of_nodes_and_includes():
    root = parse_yaml(textwrap.dedent("""
        # header
        BTCPP_format: 4
        main_tree_to_execute: T
        include:
          - a.xml
          - b.yaml
        trees:
          T:
            Sequence:
              children:
                - AlwaysSuccess
                - Inverter:
                    children: [AlwaysFailure]
        """).lstrip(), "t.yaml")
    assert root.line == 2 and root.line_of("main_tree_to_execute") == 3
    include_a, include_b, tree = root.children
    assert (include_a.tag, include_a.attrib, include_a.line) == ("include", {"path": "a.xml"}, 5)
    assert include_b.line == 6 and (tree.tag, tree.attrib, tree.line) == ("BehaviorTree", {"ID": "T"}, 8)
    sequence = tree.children[0]
    assert sequence.line == 9 and [c.line for c in sequence.children] == [11, 12]
    assert sequence.children[1].children[0].line == 13


# --- errors: FILE:LINE: message ----------------------------------------------------------

ERRORS = {
    "malformed": ("""
        BTCPP_format: 4
        trees:
          T:
            Sequence: name: x
        """, 4, "malformed YAML: mapping values are not allowed here"),
    "unclosed": ("""
        BTCPP_format: 4
        trees:
          T: {Sequence: {name: x}
        """, 4, "malformed YAML"),
    "two_keys": ("""
        BTCPP_format: 4
        trees:
          T:
            Sequence:
              children:
                - Inverter:
                  name: x
                - AlwaysSuccess
        """, 7, "a node is a mapping with exactly one key, the node ID; found 2 ('Inverter', 'name')"),
    "children_not_a_list": ("""
        BTCPP_format: 4
        trees:
          T:
            Sequence:
              name: S
              children: AlwaysSuccess
        """, 6, "node 'Sequence': 'children' must be a list of nodes"),
    "two_roots": ("""
        BTCPP_format: 4
        trees:
          T:
            Sequence:
              children: [AlwaysSuccess]
            Fallback:
              children: [AlwaysSuccess]
        """, 6, "tree 'T' must have exactly one root node, has 2 ('Sequence', 'Fallback')"),
    "unknown_top_level_key": ("""
        BTCPP_format: 4
        tree:
          T: AlwaysSuccess
        """, 2, "unknown top-level key 'tree' (expected BTCPP_format, main_tree_to_execute, include, trees)"),
    "unquoted_reference": ("""
        BTCPP_format: 4
        trees:
          T:
            RobotMove: {target: {pick}}
        """, 4, """node 'RobotMove': attribute 'target' must be a single value, not a mapping; quote blackboard references: "{pick}\""""),
    "missing_format": ("""
        # a tree
        trees:
          T: AlwaysSuccess
        """, 2, "missing 'BTCPP_format: 4'"),
    "wrong_format": ("""
        main_tree_to_execute: T
        BTCPP_format: 3
        trees:
          T: AlwaysSuccess
        """, 2, "BTCPP_format '3' is not supported (only 4)"),
    "unknown_main_tree": ("""
        BTCPP_format: 4

        main_tree_to_execute: Mian
        trees:
          Main: AlwaysSuccess
        """, 3, "main_tree_to_execute 'Mian' is not a tree (trees: Main)"),
    "alias": ("""
        BTCPP_format: 4
        trees:
          T: &a
            AlwaysSuccess
          U: *a
        """, 5, "anchors and aliases are not supported"),
    "duplicate_attribute": ("""
        BTCPP_format: 4
        trees:
          T:
            SetRobotVelocity:
              velocity: 1
              velocity: 0.5
        """, 6, "node 'SetRobotVelocity': duplicate attribute 'velocity'"),
    "list_as_tree": ("""
        BTCPP_format: 4
        trees:
          T:
            - AlwaysSuccess
        """, 4, "tree 'T': write the root node as `NodeID: ...` under the tree ID"),
    "empty_child": ("""
        BTCPP_format: 4
        trees:
          T:
            Sequence:
              children:
                -
        """, 6, "empty node"),
    "unknown_node": ("""
        BTCPP_format: 4
        trees:
          T:
            Sequence:
              children:
                - AlwaysSucess
        """, 6, "unknown node type 'AlwaysSucess' (did you mean 'AlwaysSuccess'?)"),
    "missing_port": ("""
        BTCPP_format: 4
        trees:
          T:
            Sequence:
              children:
                - ActorAnimation:
                    animation_speed: 1.0
        """, 6, "ActorAnimation: missing required port 'animation_name'"),
    "subtree_unknown_id": ("""
        BTCPP_format: 4
        trees:
          T:
            SubTree: {ID: Nope}
        """, 4, "unknown SubTree ID 'Nope' (trees: T)"),
    "defined_twice": ("""
        BTCPP_format: 4
        trees:
          T: AlwaysSuccess
          T: AlwaysFailure
        """, 4, "tree 'T' is defined twice (first at {path}:3)"),
    "not_a_mapping": ("""
        - BTCPP_format: 4
        """, 1, "a YAML tree file is a mapping with the keys BTCPP_format and trees"),
    "empty": ("\n# nothing\n", 1, "a YAML tree file is a mapping with the keys BTCPP_format and trees "
                                   "(optionally main_tree_to_execute, include); the file is empty"),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors_give_file_line_message(tmp_path, case):
    text, line, message = ERRORS[case]
    path = write(tmp_path, "t.yaml", text)
    message = message.replace("{path}", path)
    with pytest.raises(HriError) as raised:
        load(path)
    assert str(raised.value).startswith(f"{path}:{line}: {message}"), str(raised.value)
    errors = [str(e) for e in validate_file(path, REGISTRY)]
    assert errors and errors[0].startswith(f"{path}:{line}: {message}"), errors


def test_not_utf8_and_control_characters(tmp_path):
    path = tmp_path / "t.yaml"
    path.write_bytes(b"BTCPP_format: 4\ntrees:\n  T: \xff\n")
    with pytest.raises(HriError, match=r"t\.yaml:3: malformed YAML: not UTF-8"):
        load(str(path))
    path.write_bytes(b"BTCPP_format: 4\ntrees:\n  T: A\x01\n")
    with pytest.raises(HriError, match=r"t\.yaml:3: malformed YAML: special characters are not allowed"):
        load(str(path))


# --- includes across formats --------------------------------------------------------------

def test_yaml_and_xml_include_each_other(tmp_path):
    write(tmp_path, "lib/sub.xml", """
        <root BTCPP_format="4"><include path="leaf.yaml"/>
          <BehaviorTree ID="Sub"><Inverter><SubTree ID="Leaf"/></Inverter></BehaviorTree></root>""")
    write(tmp_path, "lib/leaf.yaml", """
        BTCPP_format: 4
        trees:
          Leaf: AlwaysFailure
        """)
    path = write(tmp_path, "main.yml", """
        BTCPP_format: 4
        include: lib/sub.xml
        trees:
          Main:
            SubTree: {ID: Sub}
        """)
    root = load(path)
    assert root.tick_once() == Status.SUCCESS
    assert validate_file(path, REGISTRY) == []


def test_include_cycle_across_formats(tmp_path):
    write(tmp_path, "a.yaml", "BTCPP_format: 4\ninclude: [b.xml]\ntrees:\n  A: AlwaysSuccess\n")
    write(tmp_path, "b.xml", '<root BTCPP_format="4">\n<include path="a.yaml"/>\n</root>\n')
    errors = [str(e) for e in validate_file(str(tmp_path / "a.yaml"), REGISTRY)]
    assert errors == [f"{tmp_path / 'b.xml'}:2: include cycle: a.yaml -> b.xml -> a.yaml"]


def test_looks_like_tree_file():
    assert looks_like_tree_file(b"BTCPP_format: 4\ntrees: {}\n")
    assert looks_like_tree_file(b"BTCPP_format: 4\ntrees: [\n")  # malformed, still a tree file
    assert not looks_like_tree_file((ROOT / "scenarios" / "coexistence.yaml").read_bytes())
    assert not looks_like_tree_file(b"name: x\nnested:\n  BTCPP_format: 4\n")


# --- hri validate -------------------------------------------------------------------------

def hri(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([HRI, *args], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONWARNINGS": "ignore"})


def test_validate_accepts_the_shipped_yaml_trees_and_scenarios():
    files = [*sorted(TREES.glob("*.yaml")), *sorted((ROOT / "scenarios").glob("*.yaml"))]
    result = hri("validate", *map(str, files))
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("case", ["unknown_node", "missing_port", "two_keys"])
def test_validate_bad_yaml_tree_gives_one_file_line_message(tmp_path, case):
    text, line, message = ERRORS[case]
    path = write(tmp_path, "bad.yaml", text)
    result = hri("validate", path)
    assert result.returncode != 0 and "Traceback" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"{path}:{line}: {message}")


# --- the writer ---------------------------------------------------------------------------

@pytest.mark.parametrize("stem", sorted(x.stem for x in TREES.glob("*.xml")))
def test_dump_yaml_round_trips_the_shipped_xml(stem):
    xml = TREES / f"{stem}.xml"
    elements = parse_xml(xml.read_bytes(), str(xml))
    text = dump_yaml(elements, header=f"from {stem}.xml")
    assert text.startswith(f"# from {stem}.xml\n\n# {elements.comments[0].splitlines()[0]}\n")  # then the XML's
    again = parse_yaml(text, "t.yaml", comments=True)
    assert structure(again) == structure(elements)
    assert again.comments == [f"from {stem}.xml", *elements.comments]
    assert [e.comments for e in elements.children] == [e.comments for e in again.children]


def test_dump_yaml_of_tricky_xml(tmp_path):
    xml = """<root BTCPP_format="4" main_tree_to_execute="~">
      <include path="sub.xml"/>
      <BehaviorTree ID="~">
        <Control ID="Sequence" name="a: b #c">
          <Action ID="SetBlackboard" value="" output_key="{k}"/>
          <Action ID="SetBlackboard" value="  spaced &amp; &quot;quoted&quot; 'single'  " output_key="k"/>
          <Action ID="SetBlackboard" value="line&#10;break&#9;tab" output_key="- x"/>
          <Action ID="SetBlackboard" value="[1, 2]" output_key="null"/>
          <Action ID="SetBlackboard" value="*alias &amp;anchor !tag %x @x `x |x &gt;x ?x ü €" output_key="yes"/>
          <AlwaysSuccess/>
        </Control>
      </BehaviorTree>
      <BehaviorTree ID="Empty"/>
      <TreeNodesModel><Action ID="X"/></TreeNodesModel>
    </root>"""
    elements = parse_xml(xml.encode(), "t.xml")
    text = dump_yaml(elements, include_suffix=".yaml", width=40)
    parsed = parse_yaml(text, "t.yaml")
    elements.children[0].attrib["path"] = "sub.yaml"
    elements.children.pop()  # TreeNodesModel is dropped
    assert structure(parsed) == structure(elements)


def test_dump_yaml_refuses_what_yaml_cannot_hold():
    node = Element("Sequence", {"children": "x"}, "t.xml", 3)
    root = Element("root", {}, "t.xml", 1, [Element("BehaviorTree", {"ID": "T"}, "t.xml", 2, [node])])
    with pytest.raises(HriError, match=r"^t\.xml:3: cannot write as YAML"):
        dump_yaml(root)
    root.children[0].children.append(Element("AlwaysSuccess", {}, "t.xml", 4))
    with pytest.raises(HriError, match=r"^t\.xml:2: cannot write as YAML: tree 'T' has 2 root nodes"):
        dump_yaml(root)


NAMES = st.text(min_size=1, max_size=20).filter(lambda s: s.strip() and s != "children")


@st.composite
def nodes(draw: st.DrawFn, depth: int = 0) -> Element:
    attrib = draw(st.dictionaries(NAMES, st.text(max_size=30), max_size=4))
    children = draw(st.lists(nodes(depth + 1), max_size=3)) if depth < 3 else []
    return Element(draw(NAMES), attrib, "t.xml", 1, children)


@settings(max_examples=150, deadline=None)
@given(trees=st.dictionaries(NAMES, nodes(), min_size=1, max_size=3), main=st.text(max_size=10))
def test_dump_yaml_round_trips_any_element_tree(trees, main):
    root = Element("root", {"BTCPP_format": "4", "main_tree_to_execute": main}, "t.xml", 1,
                   [Element("BehaviorTree", {"ID": tree_id}, "t.xml", 1, [node]) for tree_id, node in trees.items()])
    assert structure(parse_yaml(dump_yaml(root), "t.yaml")) == structure(root)


# --- hostile input never gives anything but HriError ---------------------------------------

YAMLISH = st.lists(
    st.sampled_from([
        "BTCPP_format: 4\n", "BTCPP_format: [4]\n", "main_tree_to_execute: M\n", "trees:\n", "include:\n",
        "include: [t.yaml, '']\n", "  M:\n", "    Sequence:\n", "      children:\n", "        - AlwaysSuccess\n",
        "        - SubTree: {ID: M, _autoremap: maybe}\n", "- ", "  ", "\n", ": ", "{", "}", "[", "]", ",", "&a ",
        "*a ", "!!python/object:os.system ", "? ", "'", '"', "#", "|\n", "---\n", "...\n", "%YAML 1.1\n", "\t",
        "WeightedRandom: {weights: a;b, children: [Inverter]}\n", "children: x\n", "~", "\x00", "\ufeff",
    ]),
    max_size=30,
).map("".join)


@settings(max_examples=400, deadline=None)
@given(text=st.one_of(st.text(max_size=200), YAMLISH))
def test_parse_yaml_raises_only_hri_error(text):
    try:
        parse_yaml(text, "t.yaml")
    except HriError as err:
        assert str(err).startswith("t.yaml")


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.one_of(st.binary(max_size=200), YAMLISH.map(str.encode)))
def test_validate_yaml_file_never_raises(tmp_path, data):
    path = tmp_path / "t.yaml"
    path.write_bytes(data)
    errors = validate_file(str(path), REGISTRY)
    assert all(isinstance(e, HriError) and str(e).startswith(str(path)) for e in errors)


def test_deep_nesting_is_an_error_not_a_crash():
    text = "BTCPP_format: 4\ntrees:\n  T: " + "[" * 5000 + "]" * 5000 + "\n"
    with pytest.raises(HriError, match=r"^t\.yaml:3: nested deeper than"):
        parse_yaml(text, "t.yaml")
