"""Tree-authoring tools: node catalogue (``hri nodes``), ``hri render``, blackboard-key
warnings in ``hri validate``, file limits, and user node plug-ins."""

import textwrap
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from py_trees.common import Status

from hri.bt import Blackboard, TreeContext, default_registry, load_tree
from hri.bt.catalogue import BTCPP_BUILTIN_IDS, tree_nodes_model_xml
from hri.bt.keys import TreeWarning
from hri.bt.plugins import load_entry_point_plugins, load_plugins
from hri.bt.render import build_draw_tree, layout, render_file
from hri.base.errors import HriError
from hri.cli.validate import validate_files, validate_tree
from test_cli import _one_error_line as one_error_line
from test_cli import hri

ROOT = Path(__file__).resolve().parent.parent
TREES = ROOT / "trees"


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(text).lstrip())
    return path


PLUGIN = '''
"""A user node module."""
from py_trees.common import Status
from hri.bt import BTNode, Port


class Beep(BTNode):
    """Always SUCCESS; writes how loud it beeped.

    Second paragraph, not in the catalogue.
    """

    PORTS = (Port("volume", "in", float, 1.0, "how loud"), Port("heard", "out", float, description="the volume"))

    def update(self):
        self.set_output("heard", self.get_input("volume"))
        return Status.SUCCESS


def register_nodes(registry):
    registry.register("Beep", Beep, "action")
'''

BEEP_TREE = """
<root BTCPP_format="4" main_tree_to_execute="T">
  <BehaviorTree ID="T">
    <Sequence>
      <Beep volume="0.5" heard="{loudness}"/>
      <SetBlackboard value="{loudness}" output_key="copy"/>
    </Sequence>
  </BehaviorTree>
</root>
"""


# --- hri nodes ---------------------------------------------------------------------------------

def test_nodes_lists_every_node_with_ports_and_description():
    result = hri("nodes")
    assert result.returncode == 0, result.stderr
    for node_id in default_registry().ids():
        assert f"\n{node_id} (" in result.stdout
    assert "target (in, Pose, required): tool pose" in result.stdout
    assert "animation_speed (in, float, default 1.0)" in result.stdout
    assert "Move the tool to" in result.stdout  # RobotMove's docstring


def test_nodes_xml_is_a_tree_nodes_model_of_every_custom_node():
    result = hri("nodes", "--xml")
    assert result.returncode == 0, result.stderr
    root = ET.fromstring(result.stdout)
    assert root.tag == "root" and root.attrib == {"BTCPP_format": "4"}
    [model] = list(root)
    assert model.tag == "TreeNodesModel"
    models = {element.get("ID"): element for element in model}
    registry = default_registry()
    custom = {i for i in registry.ids() if i not in BTCPP_BUILTIN_IDS}
    assert set(models) == custom
    tags = {"action": "Action", "condition": "Condition", "control": "Control", "decorator": "Decorator"}
    directions = {"in": "input_port", "out": "output_port", "inout": "inout_port"}
    for node_id in custom:
        element, cls = models[node_id], registry.get(node_id).cls
        assert element.tag == tags[registry.get(node_id).kind]
        ports = {p.get("name"): p for p in element}
        assert set(ports) == {p.name for p in cls.PORTS}
        for port in cls.PORTS:
            assert ports[port.name].tag == directions[port.direction]
            assert (ports[port.name].text or "") == port.description
    assert models["RobotMove"][0].attrib == {"name": "target", "type": "Pose"}
    assert models["OffsetPose"].find("output_port").get("name") == "output"
    assert "Sequence" not in models and "Inverter" not in models


def test_nodes_xml_all_includes_builtins_and_defaults():
    root = ET.fromstring(tree_nodes_model_xml(default_registry(), include_builtin=True))
    ids = {element.get("ID") for element in root.find("TreeNodesModel")}
    assert {"Sequence", "Fallback", "Inverter", "SetBlackboard"} <= ids
    assert set(default_registry().ids()) == ids
    speed = root.find(".//Action[@ID='ActorAnimation']/input_port[@name='animation_speed']")
    assert speed.get("default") == "1.0" and speed.get("type") == "float"
    assert one_error_line(hri("nodes", "--all")).startswith("--all: only with --xml")


# --- hri render --------------------------------------------------------------------------------

def test_render_text_expanded_and_collapsed():
    result = hri("render", str(TREES / "coexistence_robot.xml"))
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert out.startswith("CoexistenceRobot")
    assert '[C] ReactiveSequence "SafetyZones"' in out
    assert "[S] SubTree AdaptToPerson" in out and "[D] Inverter" in out  # the subtree's nodes
    assert '[A] RobotMove "MoveToPick"  target={pick}' in out
    collapsed = hri("render", str(TREES / "coexistence_robot.xml"), "--collapse-subtrees").stdout
    assert "[S] SubTree AdaptToPerson" in collapsed and "Inverter" not in collapsed


@pytest.mark.parametrize("suffix", [".svg", ".dot"])
def test_a_render_that_cannot_be_written_whole_leaves_the_old_file(tmp_path, suffix):
    """A file size limit of 1 KB (below any of these pictures): one line, and the old file as
    it was, with no temporary file beside it."""
    import resource
    import subprocess

    from test_cli import HRI

    out = tmp_path / f"tree{suffix}"
    out.write_text("old")
    limit = lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (1024, 1024))  # noqa: E731
    result = subprocess.run([HRI, "render", str(TREES / "coexistence_robot.xml"), "-o", str(out), "--force"],
                            capture_output=True, text=True, preexec_fn=limit, timeout=120)
    assert result.returncode == 1
    assert result.stderr == f"{out}: cannot write: File too large\n"
    assert out.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == [out.name]


def test_render_yaml_and_tree_choice():
    _, root = build_draw_tree(str(TREES / "robot_subtrees.yaml"), default_registry(), "PickPart")
    assert root.node_id == "InterruptableSequence" and len(root.children) == 6
    error = one_error_line(hri("render", str(TREES / "robot_subtrees.xml")))
    assert "no main_tree_to_execute" in error and "--tree" in error


def test_layout_centres_parents_over_children():
    _, root = build_draw_tree(str(TREES / "coexistence_robot.xml"), default_registry())
    positions = layout(root)
    xs = sorted(positions[id(n)][0] for n in _leaves(root))
    assert xs == [float(i) for i in range(len(xs))]
    move_object = root.children[1]
    children = [positions[id(c)][0] for c in move_object.children]
    assert positions[id(move_object)] == ((children[0] + children[-1]) / 2, 1.0)


def _leaves(node):
    return [node] if not node.children else [leaf for c in node.children for leaf in _leaves(c)]


def test_render_dot_svg_png(tmp_path):
    tree = str(TREES / "coexistence_robot.xml")
    for suffix in (".dot", ".svg", ".png"):
        out = tmp_path / f"tree{suffix}"
        result = hri("render", tree, "-o", str(out))
        assert result.returncode == 0, result.stderr
        assert out.stat().st_size > 100
    dot = (tmp_path / "tree.dot").read_text()
    assert dot.startswith('digraph "CoexistenceRobot" {') and dot.rstrip().endswith("}")
    assert dot.count("->") == 15  # 16 nodes, expanded
    assert (tmp_path / "tree.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "<svg" in (tmp_path / "tree.svg").read_text()
    render_file(tree, default_registry(), str(tmp_path / "c.dot"), expand=False)
    assert (tmp_path / "c.dot").read_text().count("->") == 8


def test_render_errors_are_one_line(tmp_path):
    tree = str(TREES / "coexistence_robot.xml")
    assert one_error_line(hri("render", str(tmp_path / "none.xml"))).endswith("file not found")
    assert "unknown output format '.jpg'" in one_error_line(hri("render", tree, "-o", str(tmp_path / "t.jpg")))
    bad = write(tmp_path, "bad.xml", '<root BTCPP_format="4">\n  <BehaviorTree ID="T">\n')
    assert one_error_line(hri("render", str(bad))).startswith(f"{bad}:")
    assert "no tree 'Nope'" in one_error_line(hri("render", tree, "--tree", "Nope"))
    text = write(tmp_path, "t.txt", "hello")
    assert "unknown file type" in one_error_line(hri("render", str(text)))


def test_shipped_picture_exists():
    assert (ROOT / "docs" / "images" / "tree_coexistence_robot.png").is_file()
    assert "images/tree_coexistence_robot.png" in (ROOT / "docs" / "trees.md").read_text()


# --- blackboard-key warnings -------------------------------------------------------------------

KEYS_TREE = """
<root BTCPP_format="4" main_tree_to_execute="Main">
  <BehaviorTree ID="Main">
    <Sequence>
      <GenerateXYPose area="{work_area}" pose="{target}"/>
      <SubTree ID="Move" goal="{target}" speed="0.5"/>
      <SubTree ID="Auto" _autoremap="true"/>
      <RobotMove target="{never_written}"/>
      <RobotMove target="{lifted}"/>
    </Sequence>
  </BehaviorTree>
  <BehaviorTree ID="Move">
    <Sequence>
      <SetRobotVelocity velocity="{speed}"/>
      <RobotMove target="{goal}"/>
      <RobotMove target="{target}"/>
    </Sequence>
  </BehaviorTree>
  <BehaviorTree ID="Auto">
    <OffsetPose input="{target}" output="{lifted}"/>
  </BehaviorTree>
</root>
"""


def test_unwritten_blackboard_entries_warn(tmp_path):
    path = write(tmp_path, "keys.xml", KEYS_TREE)
    problems = [str(p) for p in validate_tree(str(path), default_registry())]
    message = "warning: blackboard entry {!r} is read but never written (it must come from the scenario)"
    assert problems == [
        f"{path}:4: " + message.format("work_area"),     # nothing writes it
        f"{path}:7: " + message.format("never_written"),
        f"{path}:15: " + message.format("target"),       # Move's own scope: not remapped
    ]
    # goal (remapped to target), speed (SubTree literal), lifted (autoremapped output) are fine
    assert [str(p) for p in validate_tree(str(path), default_registry(), {"work_area", "never_written"})] == [
        f"{path}:15: " + message.format("target")]


def test_warnings_do_not_fail_validate(tmp_path):
    path = write(tmp_path, "keys.xml", KEYS_TREE)
    result = hri("validate", str(path))
    assert result.returncode == 0
    lines = result.stderr.splitlines()
    assert len(lines) == 3 and all(": warning: blackboard entry" in line for line in lines)
    assert "Traceback" not in result.stderr


def test_shipped_scenarios_give_no_warnings():
    scenarios = sorted((ROOT / "scenarios").glob("*.yaml"))
    assert scenarios
    assert validate_files(scenarios) == []
    result = hri("validate", *map(str, scenarios))
    assert result.returncode == 0 and result.stderr == ""


def test_tree_on_its_own_warns_about_scenario_entries():
    problems = validate_files([TREES / "coexistence_robot.xml"])
    assert problems and all(isinstance(p, TreeWarning) for p in problems)
    assert any("'human_pose'" in str(p) for p in problems)


def test_errors_still_fail_with_warnings(tmp_path):
    bad = write(tmp_path, "bad.xml", '<root BTCPP_format="4">\n<BehaviorTree ID="T"><Teleport/></BehaviorTree>\n</root>\n')
    keys = write(tmp_path, "keys.xml", KEYS_TREE)
    result = hri("validate", str(keys), str(bad))
    assert result.returncode == 1 and "unknown node type 'Teleport'" in result.stderr


# --- limits ------------------------------------------------------------------------------------

def test_large_file_is_refused_quickly(tmp_path):
    path = tmp_path / "big.xml"
    with open(path, "wb") as stream:
        stream.write(b'<root BTCPP_format="4"><BehaviorTree ID="T"><Sequence>')
        stream.write(b"<AlwaysSuccess/>" * (10 * 1024 * 1024 // 16))
        stream.write(b"</Sequence></BehaviorTree></root>")
    start = time.perf_counter()
    problems = [str(p) for p in validate_files([path])]
    assert time.perf_counter() - start < 1.0
    assert problems == [f"{path}: file too large (10.0 MB, limit 1 MB)"]
    include = write(tmp_path, "inc.xml", '<root BTCPP_format="4">\n  <include path="big.xml"/>\n'
                                         '  <BehaviorTree ID="T"><AlwaysSuccess/></BehaviorTree>\n</root>\n')
    assert [str(p) for p in validate_files([include])] == [
        f"{include}:2: include file '{path}': file too large (10.0 MB, limit 1 MB)"]
    assert one_error_line(hri("validate", str(path))).endswith("file too large (10.0 MB, limit 1 MB)")


BILLION_LAUGHS = """<?xml version="1.0"?>
<!DOCTYPE lolz [
  <!ENTITY lol "lol">
""" + "".join(f'  <!ENTITY lol{i} "{("&lol" + str(i - 1) + ";") * 10 if i > 1 else "&lol;" * 10}">\n'
              for i in range(1, 10)) + """]>
<root BTCPP_format="4"><BehaviorTree ID="T"><AlwaysSuccess name="&lol9;"/></BehaviorTree></root>
"""


@pytest.mark.parametrize("suffix", [".xml"])
def test_billion_laughs_is_refused_quickly(tmp_path, suffix):
    path = tmp_path / f"lol{suffix}"
    path.write_text(BILLION_LAUGHS)
    start = time.perf_counter()
    problems = [str(p) for p in validate_files([path])]
    assert time.perf_counter() - start < 1.0
    assert problems == [f"{path}:2: forbidden XML construct: a DTD (<!DOCTYPE ...>); "
                        "DTDs and entities are not allowed in tree files"]
    assert "forbidden XML construct" in one_error_line(hri("render", str(path)))


def test_include_cycle_is_an_error(tmp_path):
    a = write(tmp_path, "a.xml", '<root BTCPP_format="4">\n  <include path="b.xml"/>\n'
                                 '  <BehaviorTree ID="A"><AlwaysSuccess/></BehaviorTree>\n</root>\n')
    write(tmp_path, "b.xml", '<root BTCPP_format="4">\n  <include path="a.xml"/>\n</root>\n')
    error = one_error_line(hri("validate", str(a)))
    assert error == f"{tmp_path / 'b.xml'}:2: include cycle: a.xml -> b.xml -> a.xml"
    assert "include cycle" in one_error_line(hri("render", str(a)))


# --- plug-ins ----------------------------------------------------------------------------------

def test_plugin_file_registers_a_node_used_by_a_tree(tmp_path):
    write(tmp_path, "beep_nodes.py", PLUGIN)
    tree = write(tmp_path, "beep.xml", BEEP_TREE)
    registry = default_registry()
    assert load_plugins(registry, ["beep_nodes.py"], tmp_path) == ["Beep"]
    assert validate_tree(str(tree), registry) == []
    blackboard = Blackboard()
    root = load_tree(str(tree), registry, TreeContext(rng=None, now=lambda: 0.0), blackboard)
    root.tick_once()
    assert blackboard.get("copy") == 0.5
    # without the plug-in the tree does not validate; with --plugin it does, and nodes lists it
    assert "unknown node type 'Beep'" in one_error_line(hri("validate", str(tree)))
    assert hri("validate", "--plugin", str(tmp_path / "beep_nodes.py"), str(tree)).returncode == 0
    listed = hri("nodes", "--plugin", "beep_nodes.py", cwd=tmp_path)
    assert "Beep (action)\n    Always SUCCESS; writes how loud it beeped.\n" in listed.stdout
    model = ET.fromstring(hri("nodes", "--xml", "--plugin", "beep_nodes.py", cwd=tmp_path).stdout)
    beep = model.find(".//Action[@ID='Beep']")
    assert [(p.tag, p.get("name"), p.get("default")) for p in beep] == [
        ("input_port", "volume", "1.0"), ("output_port", "heard", None)]
    assert "[A] Beep" in hri("render", "--plugin", "beep_nodes.py", str(tree), cwd=tmp_path).stdout


STATEFUL_PLUGIN = '''
from py_trees.common import Status
from hri.bt import BTNode, NodeConfig, Port


class Tally(BTNode):
    """SUCCESS; writes how often it has run."""

    PORTS = (Port("count", "out", int, description="runs so far"),)

    def __init__(self, config: NodeConfig) -> None:
        super().__init__(config)
        self.runs = 0

    def update(self) -> Status:
        self.runs += 1
        self.set_output("count", self.runs)
        return Status.SUCCESS


def register_nodes(registry):
    registry.register("Tally", Tally, "action")
'''


def test_plugin_node_with_state_of_its_own(tmp_path):
    """docs/trees.md's node that sets up its own state in __init__(config)."""
    write(tmp_path, "tally_nodes.py", STATEFUL_PLUGIN)
    tree = write(tmp_path, "tally.xml", """
        <root BTCPP_format="4">
          <BehaviorTree ID="T">
            <Repeat num_cycles="3"><Tally name="t" count="{n}"/></Repeat>
          </BehaviorTree>
        </root>
        """)
    registry = default_registry()
    load_plugins(registry, ["tally_nodes.py"], tmp_path)
    blackboard = Blackboard()
    root = load_tree(str(tree), registry, TreeContext(rng=None, now=lambda: 0.0), blackboard)
    for runs in (3, 6):  # the node keeps its count from one run of the tree to the next
        for _ in range(10):
            if root.tick_once() is Status.SUCCESS:
                break
        assert blackboard.get("n") == runs


def test_plugin_by_module_name(tmp_path, monkeypatch):
    write(tmp_path, "beep_module.py", PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    registry = default_registry()
    assert load_plugins(registry, ["beep_module"]) == ["Beep"]


@pytest.mark.parametrize("source,spec,message", [
    (None, "no_such_plugin_module", "plugin 'no_such_plugin_module': cannot import: ModuleNotFoundError: "),
    ("x = 1\n", "empty.py", "plugin 'empty.py': has no register_nodes(registry) function"),
    ("raise RuntimeError('oops')\n", "broken.py", "plugin 'broken.py': cannot import: RuntimeError: oops"),
    ("def register_nodes(r):\n    r.register('Sequence', object, 'action')\n", "dup.py",
     "plugin 'dup.py': register_nodes failed: TypeError: "),
    (None, "missing.py", "plugin 'missing.py': no such file"),
])
def test_plugin_failures_are_one_clear_line(tmp_path, source, spec, message):
    if source is not None:
        (tmp_path / spec).write_text(source)
    with pytest.raises(HriError) as info:
        load_plugins(default_registry(), [spec], tmp_path)
    assert str(info.value).startswith(message)
    error = one_error_line(hri("nodes", "--plugin", spec, cwd=tmp_path))
    assert error.startswith(message)


def test_entry_point_plugins_load_once(tmp_path, monkeypatch):
    write(tmp_path, "ep_beep.py", PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    from importlib.metadata import EntryPoint

    import hri.bt.plugins as plugins
    from hri.bt.factory import NodeRegistry

    monkeypatch.setattr(plugins, "_entry_points",
                        lambda group: [EntryPoint("beep", "ep_beep", group)] if group == "hri.nodes" else [])
    registry = default_registry()  # loads the entry points itself
    assert "Beep" in registry.ids()
    assert load_entry_point_plugins(registry) == []  # idempotent: safe to call from several places
    fresh = NodeRegistry()
    assert load_entry_point_plugins(fresh) == ["Beep"]
    monkeypatch.setattr(plugins, "_entry_points", lambda group: [EntryPoint("bad", "no_such_ep_module", group)])
    with pytest.raises(HriError, match="plugin entry point 'bad' .*cannot import"):
        load_entry_point_plugins(default_registry())


def test_convert_yaml_to_xml_gives_the_same_tree_with_node_models(tmp_path):
    """`hri convert x.yaml` writes BehaviorTree.CPP XML (what Groot2 opens) with the same
    structure as the shipped XML, and a <TreeNodesModel> of the project's nodes it uses."""
    from hri.bt.tree_files import structure
    from hri.bt.xml_text import parse_xml

    trees = Path(__file__).parent.parent / "trees"
    for source in sorted(trees.glob("*.yaml")):
        copy = tmp_path / source.name
        copy.write_text(source.read_text())
        result = hri("convert", str(copy))
        assert result.returncode == 0, result.stderr
        written = copy.with_suffix(".xml")
        document = ET.parse(written).getroot()
        models = {e.get("ID") for e in document.iter() if e.tag in ("Action", "Condition", "Control", "Decorator")}
        used = {e.tag for e in document.iter()} - {"root", "include", "BehaviorTree", "SubTree", "TreeNodesModel",
                                                   "Action", "Condition", "Control", "Decorator", "input_port",
                                                   "output_port", "inout_port"}
        custom = {"GenerateXYPose", "InAreaTest", "OffsetPose", "InterruptableSequence", "WeightedRandom",
                  "ActorAnimation", "ActorMovement", "RobotMove", "SetRobotVelocity", "SetGripper", "FindPart",
                  "GrabPart", "ReleasePart", "AmICalled", "SetCalledTo", "RandomFailure"}
        assert used & custom <= models, source.name
        assert ("TreeNodesModel" in {e.tag for e in document}) == bool(used & custom)
        ours = parse_xml(written.read_bytes(), str(written))
        original = parse_xml((trees / source.with_suffix(".xml").name).read_bytes(), "x")
        strip = lambda s: tuple(c for c in s[2] if c[0] != "TreeNodesModel")  # noqa: E731
        assert strip(structure(ours)) == strip(structure(original)), source.name
