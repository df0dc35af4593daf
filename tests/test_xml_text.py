"""The XML reader reads tree files as BehaviorTree.CPP's tinyxml2 does: raw ``&&``, ``<`` and
``>`` in attribute values, tinyxml2's values (line breaks, unknown entities and their
quirks), lines of every element, comments; DTDs and malformed XML still refused."""

from __future__ import annotations

import gc
import random
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hri.bench.xml_read import tree_file
from hri.bt.xml_text import parse_xml, tinyxml_attributes, tinyxml_value
from hri.base.errors import HriError


def value_of(raw: str, quote: str = '"') -> str:
    """The ``value`` attribute of a one-node tree whose value is written ``raw``."""
    doc = (f'<root BTCPP_format="4"><BehaviorTree ID="M">'
           f'<SetBlackboard output_key="k" value={quote}{raw}{quote}/></BehaviorTree></root>')
    return parse_xml(doc.encode(), "t.xml").children[0].children[0].attrib["value"]


def elements(root):
    yield root
    for child in root.children:
        yield from elements(child)


def one_line_error(data: bytes) -> str:
    with pytest.raises(HriError) as info:
        parse_xml(data, "t.xml")
    assert "\n" not in str(info.value)
    return str(info.value)


# --- what tinyxml2 accepts in attribute values ----------------------------------------------

def test_raw_ampersands_and_angle_brackets_in_attribute_values():
    root = parse_xml(b"""<root BTCPP_format="4">
  <BehaviorTree ID="M">
    <Sequence>
      <Script code="a := (b < 3) && c > 1"/>
      <AlwaysSuccess _skipIf="x && y" _post='z := "<&>"'/>
      <AlwaysSuccess _skipIf="x &amp;&amp; y"/>
    </Sequence>
  </BehaviorTree>
</root>""", "t.xml")
    script, raw, escaped = root.children[0].children[0].children
    assert script.attrib == {"code": "a := (b < 3) && c > 1"}
    assert raw.attrib == {"_skipIf": "x && y", "_post": 'z := "<&>"'}
    assert escaped.attrib == {"_skipIf": "x && y"}
    assert [e.line for e in (script, raw, escaped)] == [4, 5, 6]


# Written raw between the quotes -> what BehaviorTree.CPP 4.8.2 and 4.10 read (their blackboard
# after <SetBlackboard value="..."/>), including tinyxml2's in-place decoding: an unknown "&"
# after a shortening leaves the byte that stood at the write position.
TINYXML_VALUES = [
    ("a && b", "a && b"),
    ("x < 3 > 2", "x < 3 > 2"),
    ("&amp;&amp; x & y", "&& x & y"),
    ("&lt; && b", "< t; b"),
    ("&foo; &lt;&foo;", "&foo; <lfoo;"),
    ("&lt;&", "<l"),
    ("&AMP; &amp &ampx;", "&AMP; &amp &ampx;"),
    ("&amp;lt; &#38;lt; &#60;b&#62;", "&lt; &lt; <b>"),
    ("&#65;&#x41;&#0065;&#X41;", "AAA&#X41;"),
    ("&#65", "&#65"),
    ("a&#", "a#"),
    ("&#x1x2;", "\x02"),
    ("&#10000000;", "\U0010FFFF"),
    ("&#1114112;", "&#1114112;"),
    ("&lt;&#12a;", "<&#12a;"),
    ("cut&#;here", "cut"),
    ("&#x;z", ""),
    ("a\nb\tc\r\nd\re\n\rf", "a\nb\tc\nd\ne\nf"),
    ("&lt;\r\n&", "<\nt"),
    ("&gt;\r\t&amp;&b\r\nx", ">\n\t&\rb\nx"),
    ("it's", "it's"),
    ("&#10;&#9;", "\n\t"),
]


@pytest.mark.parametrize("raw, expected", TINYXML_VALUES)
def test_attribute_values_are_what_tinyxml2_reads(raw, expected):
    if "\x02" in expected:  # tinyxml2 keeps it; XML cannot hold it: refused with its line
        assert one_line_error(f'<root a="{raw}"/>'.encode()).startswith("t.xml:1: malformed XML: ")
        assert tinyxml_value(raw.encode()) == expected.encode()
        return
    assert value_of(raw) == expected
    if '"' not in raw:
        assert value_of(raw.replace("'", '"'), "'") == expected.replace("'", '"')


def test_both_quote_kinds_hold_the_other_quote():
    assert value_of("say 'a && b'") == "say 'a && b'"
    assert value_of('say "a && b"', "'") == 'say "a && b"'
    assert value_of("&quot;&apos; && <", "'") == "\"' ot <"  # tinyxml2's in-place decoding, as above


def test_the_values_are_behaviortree_cpps():
    """Random values read by BehaviorTree.CPP itself (the Python bindings) and by us."""
    bt = pytest.importorskip("behaviortreepy")
    pieces = ["&", "&amp;", "&lt;", "&gt;", "&quot;", "&apos;", "&#", "&#x", "&#65;", "&#x41;", "&#;", "&#10;",
              "&#9;", "&#99999999;", ";", "#", "x", "a", " ", "<", ">", "\n", "\r", "\r\n", "\t", "'", "é", "&#233;",
              "&am", "lt;", "1"]
    rng = random.Random(28)
    compared = 0
    for _ in range(300):
        raw = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 8)))
        factory = bt.BehaviorTreeFactory()
        tree = factory.create_tree_from_text(
            f'<root BTCPP_format="4"><BehaviorTree ID="M"><SetBlackboard output_key="k" value="{raw}"/>'
            f'</BehaviorTree></root>')
        tree.tick_once()
        try:
            theirs = tree.root_blackboard().get_string("k")
        except UnicodeDecodeError:  # a quirk cut a UTF-8 sequence: we refuse such a value
            with pytest.raises(HriError, match="not UTF-8"):
                value_of(raw)
            continue
        assert value_of(raw) == theirs, raw
        compared += 1
    assert compared > 250


def test_multi_line_values_keep_later_lines_right():
    text = ('<root BTCPP_format="4">\n'
            '  <BehaviorTree ID="M">\n'
            '    <Sequence>\n'
            '      <Script code="a := 1;\n'
            '                    b := a && 2 < 3;\r\n'
            '                    c := 3"\n'
            '              name="three lines"/>\n'
            "      <AlwaysSuccess _skipIf='\n"
            "x && y'/>\n"
            '      <AlwaysFailure name="&amp;"/>\n'
            '    </Sequence>\n'
            '  </BehaviorTree>\n'
            '</root>\n')
    root = parse_xml(text.encode(), "t.xml")
    script, success, failure = root.children[0].children[0].children
    assert script.attrib["code"] == "a := 1;\n                    b := a && 2 < 3;\n                    c := 3"
    assert success.attrib["_skipIf"] == "\nx && y"
    lines = text.splitlines()
    for element in elements(root):
        assert lines[element.line - 1].lstrip().startswith(f"<{element.tag}"), element.tag
    assert [script.line, success.line, failure.line] == [4, 8, 10]


def test_a_mistake_after_a_multi_line_value_has_its_own_line():
    text = b'<root>\n  <A code="1 &&\n2 &&\n3"/>\n  <B x="1" x="2"/>\n</root>\n'
    assert one_line_error(text) == "t.xml:5: malformed XML: duplicate attribute"
    assert one_line_error(b'<root>\n  <A code="1 &&\n2"/>\n  <B x="1></root>\n').startswith("t.xml:4: malformed XML")


def test_greater_than_in_text_and_comments_and_cdata_are_left_alone():
    text = b"""<?xml version="1.0" encoding="UTF-8"?>
<!-- a < b && c, <Fake x="&&"/>, 'quotes" -->
<root BTCPP_format="4">
  <BehaviorTree ID="M">
    <Sequence>a > b<![CDATA[ <Fake x="&&"/> & ]]><?pi x="<&"?>
      <!-- <Fake y='&&'/> -->
      <AlwaysSuccess/>
    </Sequence>
  </BehaviorTree>
</root>
"""
    root = parse_xml(text, "t.xml")
    assert [e.tag for e in elements(root)] == ["root", "BehaviorTree", "Sequence", "AlwaysSuccess"]
    assert root.comments == ["""a < b && c, <Fake x="&&"/>, 'quotes\""""]
    assert root.children[0].children[0].children[0].comments == ["<Fake y='&&'/>"]
    assert root.children[0].children[0].children[0].line == 7


def test_the_pre_pass_touches_only_what_tinyxml2_reads_differently():
    plain = b'<root a="1 &amp; 2" b=\'x\'>\n<!-- a && b --><c d="&lt;"/>text > here</root>'
    assert tinyxml_attributes(plain, "t.xml") is plain
    raw = b'<root a="1 && 2"\n b="x\ny">\n<!-- c && d --></root>'
    assert tinyxml_attributes(raw, "t.xml") == b'<root a="1 &amp;&amp; 2"\n b="x&#10;y"\n>\n<!-- c && d --></root>'


def test_comments_keep_their_places():
    root = parse_xml(b"""<!-- first -->
<root BTCPP_format="4">
  <!-- before the tree,
       on two lines -->
  <BehaviorTree ID="M">
    <Inverter><AlwaysSuccess/><!-- end of the inverter --></Inverter>
  </BehaviorTree>
  <!-- end of root -- with dashes --->
</root>
<!-- last -->
""", "t.xml")
    tree = root.children[0]
    assert root.comments == ["first"] and root.tail_comments == ["last"]
    assert tree.comments == ["before the tree,\non two lines"]
    assert tree.children[0].end_comments == ["end of the inverter"]
    assert root.end_comments == ["end of root - - with dashes -"]  # tinyxml2 takes "--" in a comment, XML not


# --- what stays refused -----------------------------------------------------------------------

@pytest.mark.parametrize("text, error", [
    (b'<!DOCTYPE root [<!ENTITY x "y">]>\n<root a="&&"/>', "t.xml:1: forbidden XML construct: a DTD"),
    (b'<root>\n<a x="&&"/>\n&ext;\n</root>', "t.xml:3: malformed XML: undefined entity"),
    (b'<root>\n  <a x="1 && 2">\n</root>', "t.xml:3: malformed XML: mismatched tag"),
    (b'<root>\n  <a x="1 && 2/>\n</root>', "t.xml:2: malformed XML: not well-formed (invalid token)"),
    (b'<root>\n  <a x=1/>\n</root>', "t.xml:2: malformed XML: not well-formed (invalid token)"),
    (b'<root>\n  <a x="&#1; &&"/>\n</root>',
     "t.xml:2: malformed XML: an attribute value holds the character U+0001, which XML does not allow"),
    (b'<root>\n  <a\n x="&#xD800; &&"/>\n</root>', "t.xml:3: malformed XML: an attribute value is not UTF-8 text"),
    (b'<root>a && b</root>', "t.xml:1: malformed XML: not well-formed (invalid token)"),
])
def test_forbidden_and_malformed_xml_give_one_line(text, error):
    assert one_line_error(text).startswith(error)


PIECES = ['<root BTCPP_format="4">', "</root>", '<A x="', "<B y='", '"', "'", "/>", ">", "</A>", "<!--", "-->", "--",
          "<![CDATA[", "]]>", "<?pi ", "?>", "&&", "&amp;", "&lt;", "&#", "&#x41;", "<", "\n", "\r\n", "\t", " ", "a",
          "<!DOCTYPE r>", "&e;", "é", "\x00", "=", '<A z="1"/>']


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=25).map("".join))
def test_any_text_gives_elements_on_their_lines_or_one_line(text):
    try:
        root = parse_xml(text.encode(), "t.xml")
    except HriError as err:
        assert "\n" not in str(err) and str(err).startswith("t.xml:")
        return
    lines = text.replace("\r\n", "\n").split("\n")
    for element in elements(root):
        assert f"<{element.tag}" in lines[element.line - 1]


def test_other_encodings_are_read_by_expat_alone():
    latin = '<?xml version="1.0" encoding="ISO-8859-1"?><root a="é &amp; b"/>'.encode("latin-1")
    assert parse_xml(latin, "t.xml").attrib == {"a": "é & b"}
    utf16 = '<root a="x &amp; y"/>'.encode("utf-16")
    assert parse_xml(utf16, "t.xml").attrib == {"a": "x & y"}


def _python_lines(data: bytes) -> int:
    """The Python lines ``tinyxml_attributes`` executes on ``data``: the work done in Python,
    a count that does not depend on the machine (what regular expressions do in C is not in it).
    The garbage collector is held meanwhile: a collection that the allocations happen to set off
    runs finalisers of objects earlier tests left, whose lines would count too."""
    count = 0

    def trace(frame, event, arg):
        nonlocal count
        count += event == "line"
        return trace

    gc.collect()
    gc.disable()
    sys.settrace(trace)
    try:
        tinyxml_attributes(data, "t.xml")
    finally:
        sys.settrace(None)
        gc.enable()
    return count


def test_the_pre_pass_works_per_tag_and_value_not_per_byte():
    """The pre-pass is a few regular expressions over the bytes, not a loop over characters:
    the Python it runs grows with the tags and the values to rewrite, not with the bytes (its
    time beside expat's is in hri bench --only xml)."""
    plain, padded = tree_file(500, rewrite=False), tree_file(500, padding=2000, rewrite=False)
    assert len(padded) > 10 * len(plain)
    tags = 2 * 500 + 3
    assert _python_lines(padded) == _python_lines(plain) < 12 * tags  # about 10 lines a tag
    base, small, large = (_python_lines(tree_file(n)) for n in (0, 500, 1000))
    assert small - base < 80 * 500  # about 60 lines an element: two tags, three values rewritten
    assert large - base == 2 * (small - base)  # the same work for every element: linear


def test_a_large_file_reads_whole():
    data = tree_file(5000)
    nodes = parse_xml(data, "t.xml").children[0].children[0].children
    assert len(nodes) == 10000 and nodes[-1].attrib["_skipIf"] == "x && y" and nodes[-1].line == 5 + 3 * 4999