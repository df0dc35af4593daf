"""``hri convert``: the output's suffix picks the format (XML <-> YAML, and each to itself),
the input is never written over, an existing file only with --force, writes are atomic,
--plugin nodes reach the <TreeNodesModel>, comments are kept both ways, and every mistake is
one line."""

from __future__ import annotations

import errno
import os
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hri.base.errors import shown_path
from hri.bt.tree_files import Element, structure
from hri.bt.xml_text import dump_xml, parse_xml
from hri.bt.yaml_format import dump_yaml, parse_yaml
from hri.cli.main import main
from test_authoring import PLUGIN
from test_cli import hri

TREES = Path(__file__).resolve().parent.parent / "trees"

XML = """\
<?xml version="1.0" encoding="UTF-8"?>
<!-- A tree to convert. -->
<root BTCPP_format="4" main_tree_to_execute="Main">
  <!-- the subtrees -->
  <include path="sub.xml"/>
  <BehaviorTree ID="Main">
    <!-- before the root node -->
    <Sequence name="Work">
      <Script code="a := (b < 3) && c > 1"/>
      <!-- before the inverter,
           on two lines -->
      <Inverter>
        <AlwaysFailure _skipIf="x && y"/>
        <!-- end of the inverter -->
      </Inverter>
    </Sequence>
  </BehaviorTree>
</root>
<!-- the end -->
"""

YAML = """\
# A tree to convert.
BTCPP_format: 4
main_tree_to_execute: Main
include: [sub.yaml]
trees:
  Main:
    # before the root node
    Sequence:
      name: Work
      children:
        - Script: {code: "a := (b < 3) && c > 1"}
        - Inverter:
            children:
              - AlwaysFailure: {_skipIf: x && y}
"""


@pytest.fixture
def convert(capsys):
    """Runs ``hri convert ARGS`` in this process: (exit status, stdout, stderr lines)."""
    def run(*args: object) -> tuple[int, str, list[str]]:
        code = main(["convert", *map(str, args)])
        out, err = capsys.readouterr()
        return code, out, err.splitlines()
    return run


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text)
    return path


def comments(root: Element) -> list[tuple]:
    """Every element's comments, in document order, with the element's tag and ID (not those
    of the <TreeNodesModel>, which is written anew)."""
    def walk(element: Element):
        yield element.tag, element.attrib.get("ID"), element.comments, element.end_comments, element.tail_comments
        for child in element.children:
            if child.tag != "TreeNodesModel":
                yield from walk(child)
    return list(walk(root))


def read(path: Path) -> Element:
    data = path.read_bytes()
    return parse_yaml(data, str(path), comments=True) if path.suffix != ".xml" else parse_xml(data, str(path))


def trees_only(root: Element) -> tuple:
    """The structure without includes and <TreeNodesModel>."""
    return tuple(child for child in structure(root)[2] if child[0] == "BehaviorTree")


# --- the output's suffix picks the format -----------------------------------------------------

@pytest.mark.parametrize("source, target", [("in.xml", "out.xml"), ("in.xml", "out.yaml"), ("in.xml", "out.YML"),
                                            ("in.yaml", "out.xml"), ("in.yaml", "out.yaml"), ("in.yml", "out.xml")])
def test_the_output_suffix_picks_the_format(tmp_path, convert, source, target):
    path = write(tmp_path, source, XML if source.endswith(".xml") else YAML)
    code, out, err = convert(path, "-o", tmp_path / target)
    assert (code, out, err) == (0, f"{tmp_path / target}\n", [])
    written = (tmp_path / target).read_text()
    assert written.startswith("<?xml") == target.endswith(".xml")
    parsed = read(tmp_path / target)
    assert trees_only(parsed) == trees_only(read(path))
    includes = [c.attrib["path"] for c in parsed.children if c.tag == "include"]
    same_format = (source.endswith(".xml")) == (target.endswith(".xml"))
    assert includes == [("sub.xml" if source.endswith(".xml") else "sub.yaml") if same_format else
                        ("sub.xml" if target.endswith(".xml") else f"sub{Path(target).suffix}")]


@pytest.mark.parametrize("target", ["elsewhere/mine.yaml", "elsewhere/mine.xml"])
def test_written_to_another_folder_a_tree_still_finds_its_includes(tmp_path, target):
    """The preset person's tree includes person_subtrees.xml beside it: written elsewhere, the
    include names that same file (or its other format's, which the presets keep too), and
    the tree validates from there."""
    trees = Path(__file__).resolve().parent.parent / "trees"
    (tmp_path / "elsewhere").mkdir()
    assert main(["convert", str(trees / "coexistence_person.xml"), "-o", str(tmp_path / target)]) == 0
    (include,) = [c.attrib["path"] for c in read(tmp_path / target).children if c.tag == "include"]
    assert (tmp_path / "elsewhere" / include).resolve() == trees / f"person_subtrees{Path(target).suffix}"
    assert hri("validate", str(tmp_path / target)).returncode == 0


def test_xml_to_xml_normalises(tmp_path, convert):
    messy = write(tmp_path, "messy.xml", textwrap.dedent("""\
        <root   BTCPP_format='4'><BehaviorTree ID="T"><Sequence
              name='a "b"'   _skipIf="x && y"><AlwaysSuccess
        /></Sequence></BehaviorTree>
        </root>"""))
    assert convert(messy, "-o", tmp_path / "tidy.xml")[0] == 0
    assert (tmp_path / "tidy.xml").read_text() == textwrap.dedent("""\
        <?xml version="1.0" encoding="UTF-8"?>
        <root BTCPP_format="4">
          <BehaviorTree ID="T">
            <Sequence name="a &quot;b&quot;" _skipIf="x &amp;&amp; y">
              <AlwaysSuccess/>
            </Sequence>
          </BehaviorTree>
        </root>
        """)


def test_yaml_to_yaml_normalises(tmp_path, convert):
    messy = write(tmp_path, "messy.yaml", textwrap.dedent("""\
        BTCPP_format: 4
        trees:
            T:
                Sequence: {name: "s", children: [AlwaysSuccess, {Inverter: {children: [AlwaysFailure]}}]}
        """))
    assert convert(messy, "-o", tmp_path / "tidy.yaml")[0] == 0
    assert (tmp_path / "tidy.yaml").read_text() == textwrap.dedent("""\
        BTCPP_format: 4
        trees:
          T:
            Sequence:
              name: s
              children:
                - AlwaysSuccess
                - Inverter:
                    children:
                      - AlwaysFailure
        """)


def test_an_output_suffix_that_names_no_format_is_refused(tmp_path, convert):
    source = write(tmp_path, "t.xml", XML)
    assert convert(source, "-o", tmp_path / "t.json") == (
        1, "", [f"-o {tmp_path / 't.json'}: the output's suffix names its format: .xml, .yaml or .yml"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.xml"]


# --- never the input, an existing file only with --force, atomically ---------------------------

@pytest.mark.parametrize("how", ["same path", "other spelling", "symbolic link", "hard link"])
@pytest.mark.parametrize("force", [False, True])
def test_the_input_is_never_overwritten(tmp_path, convert, how, force):
    source = write(tmp_path, "t.xml", XML)
    target = {"same path": lambda: source, "other spelling": lambda: tmp_path / "." / ".." / tmp_path.name / "t.xml",
              "symbolic link": lambda: tmp_path / "link.xml", "hard link": lambda: tmp_path / "hard.xml"}[how]()
    if how == "symbolic link":
        target.symlink_to(source)
    elif how == "hard link":
        os.link(source, target)
    code, out, err = convert(source, "-o", target, *(["--force"] if force else []))
    assert (code, out) == (1, "")
    assert err == [f"{shown_path(target)}: is the file being converted ({source}): write the output elsewhere with -o"]
    assert source.read_text() == XML


def test_an_existing_output_is_overwritten_only_with_force(tmp_path, convert):
    source = write(tmp_path, "t.xml", XML)
    edited = write(tmp_path, "t.yaml", "# my edits\n")
    code, out, err = convert(source)  # the default output, beside it
    assert (code, out, err) == (1, "", [f"{edited}: exists: pass --force to overwrite it, or -o to write elsewhere"])
    assert edited.read_text() == "# my edits\n"
    assert convert(source, "--force") == (0, f"{edited}\n", [])
    assert structure(read(edited))[2][1:] == structure(read(source))[2][1:]


def test_through_a_link_the_linked_file_is_written(tmp_path, convert):
    source, real = write(tmp_path, "t.xml", XML), write(tmp_path, "real.yaml", "old\n")
    (tmp_path / "link.yaml").symlink_to(real)
    assert convert(source, "-o", tmp_path / "link.yaml", "--force")[0] == 0
    assert (tmp_path / "link.yaml").is_symlink() and "BTCPP_format: 4" in real.read_text()


def test_a_failed_write_leaves_the_old_file_and_nothing_else(tmp_path, convert, monkeypatch):
    source, old = write(tmp_path, "t.xml", XML), write(tmp_path, "t.yaml", "old\n")

    def full_disk(src, dst):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr("hri.base.files.os.replace", full_disk)
    assert convert(source, "--force") == (1, "", [f"{old}: cannot write: No space left on device"])
    assert old.read_text() == "old\n" and sorted(p.name for p in tmp_path.iterdir()) == ["t.xml", "t.yaml"]


def test_what_xml_cannot_hold_is_refused_before_writing(tmp_path, convert):
    source = write(tmp_path, "t.yaml", 'BTCPP_format: 4\ntrees:\n  T:\n    "Not a name":\n      x: "\\x01"\n')
    code, out, err = convert(source)
    assert (code, out) == (1, "")
    assert err == [f"{source}:4: cannot write as XML: 'Not a name' is not an XML element name"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.yaml"]


# --- --plugin -----------------------------------------------------------------------------------

def test_plugin_nodes_are_listed_in_the_tree_nodes_model(tmp_path, convert):
    plugin = write(tmp_path, "beep_nodes.py", PLUGIN)
    source = write(tmp_path, "t.yaml", "BTCPP_format: 4\ntrees:\n  T:\n    Sequence:\n      children:\n"
                                       "        - Beep: {volume: 0.5}\n        - GrabPart\n")
    code, out, err = convert(source, "--plugin", plugin)
    assert (code, err) == (0, [])
    model = ET.parse(tmp_path / "t.xml").getroot().find("TreeNodesModel")
    assert [e.get("ID") for e in model] == ["Beep", "GrabPart"]
    assert [(p.tag, p.get("name"), p.get("type")) for p in model[0]] == [
        ("input_port", "volume", "float"), ("output_port", "heard", "float")]

    code, out, err = convert(source, "--force")  # without it: written all the same, and said
    warning = (f"{source}:6: warning: node 'Beep' is not registered, so the <TreeNodesModel> leaves it out "
               "(load its plug-in with --plugin)")
    assert (code, err) == (0, [warning])
    assert [e.get("ID") for e in ET.parse(tmp_path / "t.xml").getroot().find("TreeNodesModel")] == ["GrabPart"]

    code, out, err = convert(source, "--force", "--plugin", tmp_path / "missing.py")
    assert (code, out) == (1, "") and len(err) == 1 and "plugin" in err[0] and "missing.py" in err[0]


# --- comments ---------------------------------------------------------------------------------

def test_xml_comments_become_yaml_comments_at_their_places(tmp_path, convert):
    source = write(tmp_path, "t.xml", XML)
    assert convert(source)[0] == 0
    assert (tmp_path / "t.yaml").read_text() == textwrap.dedent("""\
        # The YAML form of t.xml (the same tree; see docs/trees.md, "YAML trees").

        # A tree to convert.
        BTCPP_format: 4
        main_tree_to_execute: Main
        include:
          # the subtrees
          - sub.yaml
        trees:
          Main:
            # before the root node
            Sequence:
              name: Work
              children:
                - Script: {code: "a := (b < 3) && c > 1"}
                # before the inverter,
                # on two lines
                - Inverter:
                    children:
                      - AlwaysFailure: {_skipIf: x && y}
                      # end of the inverter
        # the end
        """)
    assert convert(tmp_path / "t.yaml", "-o", tmp_path / "back.xml")[0] == 0
    back, original = read(tmp_path / "back.xml"), read(source)
    assert back.comments == ["The XML form of t.yaml (the same tree; see docs/trees.md).", "A tree to convert."]
    back.comments = original.comments
    assert comments(back) == comments(original)


def test_yaml_comments_become_xml_comments(tmp_path, convert):
    source = write(tmp_path, "t.yaml", textwrap.dedent("""\
        # top
        BTCPP_format: 4  # the format
        trees:
          # before the tree
          T:
            Sequence:    # the sequence
              name: s    # its name
              children:
                - AlwaysSuccess  # first
                # before the second
                - AlwaysFailure
                # end of the sequence
        # bottom
        """))
    assert convert(source)[0] == 0
    assert (tmp_path / "t.xml").read_text() == textwrap.dedent("""\
        <?xml version="1.0" encoding="UTF-8"?>
        <!-- The XML form of t.yaml (the same tree; see docs/trees.md). -->
        <!-- top -->
        <!-- the format -->
        <root BTCPP_format="4">
          <!-- before the tree -->
          <BehaviorTree ID="T">
            <!-- the sequence -->
            <!-- its name -->
            <Sequence name="s">
              <!-- first -->
              <AlwaysSuccess/>
              <!-- before the second -->
              <AlwaysFailure/>
              <!-- end of the sequence -->
            </Sequence>
          </BehaviorTree>
        </root>
        <!-- bottom -->
        """)


def test_the_header_does_not_pile_up(tmp_path, convert):
    source = write(tmp_path, "t.xml", XML)
    for args in ([source], [tmp_path / "t.yaml", "-o", tmp_path / "t2.xml"],
                 [tmp_path / "t2.xml", "-o", tmp_path / "t2.yaml"]):
        assert convert(*args)[0] == 0
    header = 'The YAML form of t2.xml (the same tree; see docs/trees.md, "YAML trees").'
    assert read(tmp_path / "t2.yaml").comments == [header, "A tree to convert."]


@pytest.mark.parametrize("xml", sorted(TREES.glob("*.xml")), ids=lambda p: p.stem)
def test_the_shipped_trees_keep_their_comments_both_ways(tmp_path, convert, xml):
    source = write(tmp_path, xml.name, xml.read_text())
    assert convert(source)[0] == 0
    assert convert(source.with_suffix(".yaml"), "-o", tmp_path / "back.xml")[0] == 0
    back, original = read(tmp_path / "back.xml"), read(source)
    assert back.comments[1:] == original.comments
    back.comments = original.comments
    assert comments(back) == comments(original)
    assert trees_only(back) == trees_only(original)


TEXTS = st.lists(st.text(st.characters(blacklist_categories=("Cs", "Cc", "Cn", "Zl", "Zp")), min_size=1, max_size=12)
                 .map(str.strip).filter(lambda s: s and "--" not in s and not s.endswith("-")), min_size=1, max_size=3
                 ).map("\n".join)
NOTES = st.lists(TEXTS, max_size=2)
VALUES = st.text(st.characters(blacklist_categories=("Cs", "Cn")).filter(lambda c: c >= " " or c in "\t\n"), max_size=8)
NAMES = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True).filter(lambda s: s != "children")


@st.composite
def nodes(draw: st.DrawFn, depth: int = 0) -> Element:
    children = draw(st.lists(nodes(depth + 1), max_size=3)) if depth < 3 else []
    element = Element(draw(NAMES), draw(st.dictionaries(NAMES, VALUES, max_size=2)), "t", 1, children)
    element.comments, element.end_comments = draw(NOTES), draw(NOTES)
    return element


@settings(max_examples=40, deadline=None)
@given(roots=st.lists(nodes(), min_size=1, max_size=3), notes=st.lists(NOTES, min_size=5, max_size=5))
def test_comments_round_trip_through_both_writers(roots, notes):
    trees = [Element("BehaviorTree", {"ID": f"T{i}"}, "t", 1, [node]) for i, node in enumerate(roots)]
    for tree, tree_notes in zip(trees, notes):
        tree.comments = tree_notes
    root = Element("root", {"BTCPP_format": "4"}, "t", 1, trees)
    root.comments, root.end_comments, root.tail_comments = notes[-3:]
    for text, parse in ((dump_yaml(root), lambda t: parse_yaml(t, "t.yaml", comments=True)),
                        (dump_xml(root), lambda t: parse_xml(t.encode(), "t.xml"))):
        again = parse(text)
        assert structure(again) == structure(root), text
        assert comments(again) == comments(root), text


# --- one line per mistake ---------------------------------------------------------------------

def nested(levels: int) -> str:
    """A tree of ``levels`` Inverters around one leaf, on one line."""
    return ('<root BTCPP_format="4" main_tree_to_execute="T"><BehaviorTree ID="T">' + "<Inverter>" * levels
            + "<AlwaysSuccess/>" + "</Inverter>" * levels + "</BehaviorTree></root>")


@pytest.mark.parametrize("name, text, args, error", [
    ("t.xml", None, [], "{t}: cannot read: No such file or directory"),
    ("sub.yaml", None, [], "{t}: cannot read: Is a directory"),
    ("t.txt", "x", [], "{t}: a tree file ends in .xml, .yaml or .yml"),
    ("t.xml", "<root>\n<a x='1'>\n</root>", [], "{t}:3: malformed XML: mismatched tag"),
    ("t.yaml", "BTCPP_format: 4\ntrees: [\n", [], "{t}:3: malformed YAML: "),
    ("t.xml", XML, ["-o", "{d}/no/folder/t.yaml"], "{d}/no/folder/t.yaml: cannot write: No such file or directory"),
    ("t.xml", XML, ["-o", "{d}/sub.yaml", "--force"], "{d}/sub.yaml: is a folder: -o names the file to write"),
    ("t.xml", nested(1000), ["-o", "{d}/t.yaml"], "{t}:1: tree nested deeper than 256 levels"),
    ("t.xml", nested(150), ["-o", "{d}/t.yaml"], "{t}: cannot be written as YAML: nested deeper than"),
    ("t.xml", XML, ["-o", "{d}/t.yaml", "--plugin", "no_such_module"], "plugin 'no_such_module': cannot import"),
])
def test_mistakes_give_one_line(tmp_path, convert, name, text, args, error):
    (tmp_path / "sub.yaml").mkdir()
    source = tmp_path / name
    if text is not None:
        source.write_text(text)
    code, out, err = convert(source, *[a.replace("{d}", str(tmp_path)) for a in args])
    assert (code, out, len(err)) == (1, "", 1)
    assert err[0].startswith(error.format(t=source, d=tmp_path))


def test_the_command_gives_one_line_and_no_traceback(tmp_path):
    source = write(tmp_path, "t.xml", '<root>\n  <a x="1 && 2">\n</root>\n')
    result = hri("convert", str(source), "-o", str(tmp_path / "t.yml"))
    assert (result.returncode, result.stdout, result.stderr) == (1, "", f"{source}:3: malformed XML: mismatched tag\n")
