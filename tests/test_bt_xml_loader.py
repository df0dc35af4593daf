"""The BehaviorTree.CPP v4 XML loader: SubTrees, includes, tree selection and error reports."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from py_trees.common import Status

from hri.bt import Blackboard, TreeContext, default_registry, load_tree, validate_file
from hri.base.errors import HriError
from hri.base.geometry import Pose

REGISTRY = default_registry()


def write(folder, name: str, text: str) -> str:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"))
    return str(path)


def ctx() -> TreeContext:
    return TreeContext(rng=np.random.default_rng(0), now=lambda: 0.0)


def load(path: str, blackboard: Blackboard | None = None, tree_id: str | None = None):
    return load_tree(path, REGISTRY, ctx(), blackboard or Blackboard(), tree_id)


def test_subtree_remapping_and_literals(tmp_path):
    path = write(tmp_path, "t.xml", """
        <root BTCPP_format="4" main_tree_to_execute="Main">
          <BehaviorTree ID="Main">
            <Sequence>
              <SubTree ID="Shift" name="shift" from="{start}" to="{goal}" delta="1;0;0"/>
              <SubTree ID="Shift" from="{goal}" to="{goal2}" delta="{=}"/>
            </Sequence>
          </BehaviorTree>
          <BehaviorTree ID="Shift">
            <OffsetPose input="{from}" offset="{delta}" output="{to}"/>
          </BehaviorTree>
        </root>""")
    bb = Blackboard()
    bb.set("start", Pose(1, 1, 0))
    bb.set("delta", "0;2;0")
    root = load(path, bb)
    assert root.tick_once() == Status.SUCCESS
    assert bb.get("goal") == Pose(2, 1, 0)
    assert bb.get("goal2") == Pose(2, 3, 0)
    assert not bb.has("to") and not bb.has("from")  # subtree keys stay in their scope


def test_subtree_autoremap(tmp_path):
    path = write(tmp_path, "t.xml", """
        <root BTCPP_format="4" main_tree_to_execute="Main">
          <BehaviorTree ID="Main">
            <SubTree ID="Auto" _autoremap="true" delta="0;0;1"/>
          </BehaviorTree>
          <BehaviorTree ID="Isolated">
            <SubTree ID="Auto" _autoremap="false" delta="0;0;1"/>
          </BehaviorTree>
          <BehaviorTree ID="Auto">
            <Sequence>
              <OffsetPose input="{start}" offset="{delta}" output="{goal}"/>
            </Sequence>
          </BehaviorTree>
        </root>""")
    bb = Blackboard()
    bb.set("start", Pose(0, 0, 0))
    root = load(path, bb)
    # the autoremapped scope read 'start' and wrote 'goal' in the parent; 'delta' stayed local
    assert root.tick_once() == Status.SUCCESS
    assert bb.get("goal") == Pose(0, 0, 1) and not bb.has("delta")
    isolated = load(path, bb, tree_id="Isolated")
    with pytest.raises(HriError) as info:  # a missing entry is a located error, not a traceback
        isolated.tick_once()
    assert str(info.value) == (f"{path}:10: OffsetPose 'OffsetPose': input port 'input': "
                               "blackboard entry 'start' is not set")


def test_include_relative_path_and_tree_selection(tmp_path):
    write(tmp_path, "lib/common.xml", """
        <root BTCPP_format="4">
          <include path="more/deeper.xml"/>
          <BehaviorTree ID="Succeed"><SubTree ID="Deep"/></BehaviorTree>
        </root>""")
    write(tmp_path, "lib/more/deeper.xml", """
        <root BTCPP_format="4"><BehaviorTree ID="Deep"><AlwaysSuccess/></BehaviorTree></root>""")
    path = write(tmp_path, "main.xml", """
        <root BTCPP_format="4">
          <include path="lib/common.xml"/>
          <BehaviorTree ID="Main"><Inverter><SubTree ID="Succeed"/></Inverter></BehaviorTree>
        </root>""")
    root = load(path)  # the only tree of the top-level file
    assert root.tick_once() == Status.FAILURE
    deep = load(path, tree_id="Deep")
    assert deep.tick_once() == Status.SUCCESS
    assert validate_file(path, REGISTRY) == []


def test_explicit_form_names_and_tree_nodes_model(tmp_path):
    path = write(tmp_path, "t.xml", """
        <root BTCPP_format="4">
          <BehaviorTree ID="Main">
            <Control ID="Sequence" name="main sequence">
              <Condition ID="AlwaysSuccess" name="check"/>
              <Decorator ID="ForceSuccess"><Action ID="AlwaysFailure"/></Decorator>
            </Control>
          </BehaviorTree>
          <TreeNodesModel><Action ID="Whatever"><input_port name="x"/></Action></TreeNodesModel>
        </root>""")
    root = load(path)
    assert root.root.name == "main sequence" and root.root.children[0].name == "check"
    assert root.tick_once() == Status.SUCCESS


def errors_of(path: str) -> list[str]:
    errors = validate_file(path, REGISTRY)
    assert all(isinstance(e, HriError) for e in errors)
    return [str(e) for e in errors]


def test_error_reports_with_lines(tmp_path):
    path = write(tmp_path, "bad.xml", """
        <root BTCPP_format="4" main_tree_to_execute="Main">
          <BehaviorTree ID="Main">
            <Sequence>
              <Foo/>
              <SubTree ID="Nope"/>
              <AlwaysSuccess colour="red"/>
              <GenerateXYPose area="0,0;1,0;1,1"/>
              <RandomFailure
                  failure_chance="abc"/>
              <Inverter/>
              <Inverter><AlwaysSuccess/><AlwaysSuccess/></Inverter>
              <Fallback/>
              <WeightedRandom weights="1;2;3"><AlwaysSuccess/></WeightedRandom>
              <AlwaysSuccess><AlwaysFailure/></AlwaysSuccess>
              <IfThenElse><AlwaysSuccess/></IfThenElse>
              <RandomFailure failure_chance="1.5"/>
            </Sequence>
          </BehaviorTree>
        </root>""")
    assert errors_of(path) == [
        f"{path}:4: unknown node type 'Foo'"
        " (a node of your own? name its module in the scenario's plugins or give --plugin)",
        f"{path}:5: unknown SubTree ID 'Nope' (trees: Main)",
        f"{path}:6: AlwaysSuccess: unknown port 'colour' (ports: none)",
        f"{path}:8: RandomFailure: port 'failure_chance' (float): expected a number, got 'abc'",
        f"{path}:10: decorator 'Inverter' needs exactly 1 child, has 0",
        f"{path}:11: decorator 'Inverter' needs exactly 1 child, has 2",
        f"{path}:12: control 'Fallback' needs at least 1 child, has 0",
        f"{path}:13: WeightedRandom: port 'weights': 3 weights for 1 children",
        f"{path}:14: 'AlwaysSuccess' is an action node and cannot have children",
        f"{path}:15: control 'IfThenElse' needs 2 to 3 children, has 1",
        f"{path}:16: RandomFailure: port 'failure_chance': must be within 0..1, got 1.5",
    ]
    with pytest.raises(HriError) as info:
        load(path)
    assert str(info.value).startswith(f"{path}:4: unknown node type 'Foo' (a node of your own?")


def test_malformed_xml_reports_expat_line(tmp_path):
    path = write(tmp_path, "broken.xml", """
        <root BTCPP_format="4">
          <BehaviorTree ID="Main">
            <Sequence>
          </BehaviorTree>
        </root>""")
    [message] = errors_of(path)
    assert message.startswith(f"{path}:4: malformed XML: mismatched tag")
    with pytest.raises(HriError, match="mismatched tag"):
        load(path)


def test_entities_are_refused(tmp_path):
    path = write(tmp_path, "evil.xml", """
        <?xml version="1.0"?>
        <!DOCTYPE root [<!ENTITY x "boom">]>
        <root><BehaviorTree ID="T"><AlwaysSuccess name="&x;"/></BehaviorTree></root>""")
    [message] = errors_of(path)
    assert message.startswith(f"{path}:2: forbidden XML construct")


def test_include_cycle_and_missing_include(tmp_path):
    a = write(tmp_path, "a.xml", """
        <root BTCPP_format="4">
          <include path="sub/b.xml"/>
          <BehaviorTree ID="A"><AlwaysSuccess/></BehaviorTree>
        </root>""")
    b = write(tmp_path, "sub/b.xml", """
        <root BTCPP_format="4">

          <include path="../a.xml"/>
          <include path="missing.xml"/>
        </root>""")
    assert errors_of(a) == [
        f"{b}:3: include cycle: a.xml -> b.xml -> a.xml",
        f"{b}:4: include file {str(tmp_path / 'sub' / 'missing.xml')!r}: file not found",
    ]
    with pytest.raises(HriError, match="include cycle"):
        load(a)


def test_tree_selection_errors(tmp_path):
    path = write(tmp_path, "two.xml", """
        <root BTCPP_format="4">
          <BehaviorTree ID="A"><AlwaysSuccess/></BehaviorTree>
          <BehaviorTree ID="B"><SubTree ID="B"/></BehaviorTree>
        </root>""")
    with pytest.raises(HriError) as info:
        load(path)
    assert str(info.value) == f"{path}:1: 2 trees and no main_tree_to_execute"
    with pytest.raises(HriError, match="no tree 'C'"):
        load(path, tree_id="C")
    assert errors_of(path) == [f"{path}:3: SubTree recursion: B -> B"]
    empty = write(tmp_path, "empty.xml", "<root/>")
    assert errors_of(empty) == [f"{empty}:1: no <BehaviorTree> in the file"]
    missing = str(tmp_path / "absent.xml")
    assert errors_of(missing) == [f"{missing}: file not found"]
    wrong = write(tmp_path, "main.xml", """
        <root BTCPP_format="4" main_tree_to_execute="X">
          <BehaviorTree ID="A"><AlwaysSuccess/></BehaviorTree>
          <Tree/>
        </root>""")
    assert errors_of(wrong) == [
        f"{wrong}:3: unexpected <Tree> in <root> (expected BehaviorTree, include or TreeNodesModel)",
        f"{wrong}:1: main_tree_to_execute 'X' is not a tree (trees: A)",
    ]


def test_ports_with_wrong_direction_and_condition_scripts(tmp_path):
    path = write(tmp_path, "t.xml", """
        <root BTCPP_format="4">
          <BehaviorTree ID="Main">
            <Sequence _skipIf="x == 1" _post="y := (x + ">
              <GenerateXYPose area="{a}" pose="1;2;3"/>
            </Sequence>
          </BehaviorTree>
        </root>""")
    assert errors_of(path) == [
        f"{path}:3: Sequence: _post: expected an operand after '+', got the end of the script (column 11)",
        f"{path}:4: GenerateXYPose: output port 'pose' needs a blackboard key like {{key}}, got '1;2;3'",
    ]


XMLISH = st.lists(
    st.sampled_from([
        "<root>", "</root>", '<root BTCPP_format="4" main_tree_to_execute="M">', "<BehaviorTree ID=\"M\">",
        "</BehaviorTree>", "<Sequence>", "</Sequence>", "<AlwaysSuccess/>", '<SubTree ID="M"/>',
        '<SubTree ID="X" a="{b}" _autoremap="maybe"/>', '<include path="t.xml"/>', '<include path=""/>',
        '<include path="/"/>', '<WeightedRandom weights="a;b">', "</WeightedRandom>", "<Inverter>",
        "</Inverter>", '<RandomFailure failure_chance="{x}"/>', '<GenerateXYPose area="1,1" pose="{}"/>',
        "<!-- c -->", "&amp;", "&x;", "<!DOCTYPE r>", '<Action ID="">', "</Action>", "\n", " ", "<", ">",
        '<?xml version="1.0" encoding="utf-16"?>', '<?xml version="1.0" encoding="nope"?>',
    ]),
    max_size=30,
).map("".join)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.one_of(st.binary(max_size=200), XMLISH.map(str.encode)))
def test_validate_file_never_raises(tmp_path, data):
    path = tmp_path / "t.xml"
    path.write_bytes(data)
    errors = validate_file(str(path), REGISTRY)
    assert all(isinstance(e, HriError) for e in errors)
    for error in errors:
        assert str(error).startswith(str(path))


def test_a_tree_of_more_nodes_than_the_cap_is_refused_where_it_goes_past(tmp_path):
    """Every SubTree's nodes count each time it is used: 71 uses of a subtree of a Sequence
    and 70 leaves (72 nodes with the SubTree node) go past the cap at the 30th leaf of the
    70th use (1 + 69 * 72 + 2 + 30 = 5001), reported at its line."""
    from hri.bt.tree_builder import MAX_NODES

    leaves = "".join("<AlwaysSuccess/>" for _ in range(MAX_NODES - 2))
    fits = write(tmp_path, "fits.xml", f'<root BTCPP_format="4"><BehaviorTree ID="T"><Sequence>\n<AlwaysSuccess/>\n'
                                       f"{leaves}</Sequence></BehaviorTree></root>")
    assert load(fits).root is not None  # MAX_NODES - 1 nodes
    uses = "\n".join('<SubTree ID="Leaves"/>' for _ in range(71))
    path = write(tmp_path, "t.xml", f'<root BTCPP_format="4" main_tree_to_execute="Main">\n'
                                    f'<BehaviorTree ID="Main"><Sequence>\n{uses}\n</Sequence></BehaviorTree>\n'
                                    f'<BehaviorTree ID="Leaves"><Sequence>\n'
                                    + "\n".join("<AlwaysSuccess/>" for _ in range(70)) + "\n</Sequence></BehaviorTree>\n</root>")
    message = f"the tree has more than {MAX_NODES} nodes (a SubTree's counted each time it is used)"
    with pytest.raises(HriError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load(path)
    assert [str(e) for e in validate_file(path, REGISTRY)] == [f"{path}:{75 + 30}: {message}"]
