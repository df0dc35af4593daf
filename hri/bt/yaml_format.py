"""The YAML form of BehaviorTree.CPP v4 trees: a parser and a writer.

The same nodes, ports and structure as the XML (``hri.bt.xml_loader``), another syntax::

    BTCPP_format: 4
    main_tree_to_execute: Main            # optional
    include: [subtrees.yaml]              # optional; a path or a list; .xml or .yaml files
    trees:
      Main:                               # one entry per <BehaviorTree ID="Main">
        Sequence:                         # the tree's single root node
          name: Work                      # attributes: the XML attributes, as written
          children:
            - SubTree: {ID: Walk, _autoremap: true}
            - AlwaysSuccess               # a node without attributes: a bare string

A node is a mapping with one key, the node ID (the XML tag), whose value is a mapping of
attributes plus an optional ``children`` list, or nothing; or a bare string. An attribute is
the scalar's text exactly as written (``1.0`` stays ``"1.0"``, ``true`` stays ``"true"``),
read from PyYAML's composed node graph, never constructed. ``{key}`` references must be
quoted (``"{key}"``), as YAML reads ``{key}`` as a mapping.

:func:`parse_yaml` turns a file into the :class:`~hri.bt.tree_files.Element` tree the XML
parser produces (with lines), so the loader builds both formats alike; :func:`dump_yaml`
writes such an element tree (e.g. parsed from XML) as YAML text. Only PyYAML's safe
composer is used (:mod:`hri.base.yaml_values`); anchors and aliases are refused (no alias bombs).
"""

from __future__ import annotations

import bisect
import io
import re
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import pairwise

import yaml
from yaml.emitter import Emitter
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from hri.bt.tree_files import Element
from hri.base.errors import HriError
from hri.base.yaml_values import compose as compose_yaml
from hri.base.yaml_values import decode

TOP_LEVEL_KEYS = ("BTCPP_format", "main_tree_to_execute", "include", "trees")
CHILDREN = "children"
MAX_NESTING = 200
"""YAML collections nested deeper than this are refused (a tree level takes three)."""

_NULL_TAG = "tag:yaml.org,2002:null"
_SHAPE = "`NodeID: {attributes}` or a bare node ID"
_KEEP = re.compile("[\x20-\x7E\xA0-\u2027\u202A-\uD7FF\uE000-\uFEFE\uFF00-\uFFFD\U00010000-\U0010FFFF]")
_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r"}
_TREE_KEY = re.compile(r"^BTCPP_format[ \t]*:", re.MULTILINE)
_EOL = 1 << 30
"""A column past the end of any line."""
_COMMENT = re.compile("#[^\r\n\x85\u2028\u2029]*")
_BREAK = re.compile("\r\n|[\r\n\x85\u2028\u2029]")
_UNPRINTABLE = yaml.reader.Reader.NON_PRINTABLE


def compose(data: bytes | str, file: str) -> Node | None:
    """The YAML node graph of ``data`` (None when empty); HriError ``FILE:LINE: message`` else:
    the one composer of :mod:`hri.base.yaml_values`, refusing anchors and aliases (a tree has no use
    for them) and nesting deeper than :data:`MAX_NESTING`."""
    return compose_yaml(data, file, aliases=False, max_depth=MAX_NESTING)


def _line(node: Node) -> int:
    return node.start_mark.line + 1


def _position(mark: yaml.Mark) -> tuple[int, int]:
    return mark.line, mark.column


def _line_end(mark: yaml.Mark) -> tuple[int, int]:
    return mark.line, _EOL


def _header_end(body: Node) -> tuple[int, int]:
    """The end of a node's header without ``children``: the end of the line where its last
    attribute ends (not the body's end mark: a block mapping's is the next token's start)."""
    last = body.value[-1][1] if isinstance(body, MappingNode) and not body.flow_style and body.value else body
    return _line_end(last.end_mark)


def _is_null(node: Node) -> bool:
    return isinstance(node, ScalarNode) and node.tag == _NULL_TAG and node.style is None


def _kind(node: Node) -> str:
    if isinstance(node, MappingNode):
        return "a mapping"
    if isinstance(node, SequenceNode):
        return "a list"
    return "nothing" if _is_null(node) else f"{node.value!r}"


@dataclass
class _Place:
    """Where an element is in the YAML text, for placing comments: the start of its key (or
    item), the end of its header (the attributes before ``children``; a position on the header's
    last line with column :data:`_EOL` takes the rest of the line), the column from which a
    comment after its children still belongs inside it (None: it has no children)."""

    start: tuple[int, int]
    header_end: tuple[int, int]
    item_column: int | None = None


class _Parser:
    """Walks the composed YAML into elements; the first structural mistake is raised."""

    def __init__(self, file: str):
        self.file = file
        self.places: dict[int, _Place] = {}  # by id() of the element
        self.header_end: tuple[int, int] = (_EOL, _EOL)  # of the document: the include or trees key

    def place(self, element: Element, start: Node, header_end: tuple[int, int], item_column: int | None = None) -> None:
        self.places[id(element)] = _Place(_position(start.start_mark), header_end, item_column)

    def fail(self, node: Node, message: str) -> HriError:
        return HriError(message, self.file, _line(node))

    def element(self, tag: str, node: Node) -> Element:
        return Element(tag, {}, self.file, _line(node))

    def key(self, node: Node, what: str) -> str:
        if not isinstance(node, ScalarNode):
            raise self.fail(node, f"{what} must be a plain name, not {_kind(node)}")
        if not node.value.strip():
            raise self.fail(node, f"empty {what}")
        return node.value

    def scalar(self, node: Node, what: str) -> str:
        if isinstance(node, ScalarNode):
            return node.value
        hint = ""
        if isinstance(node, MappingNode) and node.flow_style and len(node.value) == 1 and _is_null(node.value[0][1]):
            hint = f'; quote blackboard references: "{{{node.value[0][0].value}}}"'
        raise self.fail(node, f"{what} must be a single value, not {_kind(node)}{hint}")

    def document(self, node: Node | None) -> Element:
        if not isinstance(node, MappingNode):
            message = ("a YAML tree file is a mapping with the keys BTCPP_format and trees "
                       "(optionally main_tree_to_execute, include)")
            if node is None:
                raise HriError(f"{message}; the file is empty", self.file, 1)
            raise self.fail(node, f"{message}, not {_kind(node)}")
        root = self.element("root", node)
        seen: dict[str, int] = {}
        for key_node, value in node.value:
            key = self.key(key_node, "top-level key")
            if key in seen:
                raise self.fail(key_node, f"duplicate key {key!r} (first on line {seen[key]})")
            seen[key] = _line(key_node)
            if key in ("BTCPP_format", "main_tree_to_execute"):
                root.attrib[key] = self.scalar(value, key)
                root.attr_lines[key] = _line(key_node)
            elif key == "include":
                self.header_end = min(self.header_end, _position(key_node.start_mark))
                root.children.extend(self.includes(value))
            elif key == "trees":
                self.header_end = min(self.header_end, _position(key_node.start_mark))
                root.children.extend(self.trees(value))
            else:
                raise self.fail(key_node, f"unknown top-level key {key!r} (expected {', '.join(TOP_LEVEL_KEYS)})")
        if "BTCPP_format" not in root.attrib:
            raise self.fail(node, "missing 'BTCPP_format: 4' (it marks a YAML file as a tree file)")
        return root

    def includes(self, node: Node) -> list[Element]:
        items = node.value if isinstance(node, SequenceNode) else [node]
        elements = []
        for item in items:
            if not isinstance(item, ScalarNode) or _is_null(item):
                raise self.fail(item, f"include: expected a file path or a list of paths, not {_kind(item)}")
            element = self.element("include", item)
            element.attrib["path"] = item.value
            self.place(element, item, _line_end(item.end_mark))
            elements.append(element)
        return elements

    def trees(self, node: Node) -> list[Element]:
        if _is_null(node):
            return []
        if not isinstance(node, MappingNode):
            raise self.fail(node, f"trees: expected a mapping of tree IDs to root nodes, not {_kind(node)}")
        elements = []
        for key_node, value in node.value:
            tree_id = self.key(key_node, "tree ID")
            tree = self.element("BehaviorTree", key_node)
            tree.attrib["ID"] = tree_id
            self.place(tree, key_node, _line_end(key_node.end_mark), key_node.start_mark.column + 1)
            if isinstance(value, SequenceNode):
                raise self.fail(value, f"tree {tree_id!r}: write the root node as `NodeID: ...` under the tree ID, "
                                       "not as a list item")
            if isinstance(value, MappingNode) and len(value.value) > 1:
                names = ", ".join(repr(getattr(k, "value", "?")) for k, _ in value.value)
                raise self.fail(value.value[1][0], f"tree {tree_id!r} must have exactly one root node, has "
                                                   f"{len(value.value)} ({names}); indent attributes under the node ID")
            if not _is_null(value) and not (isinstance(value, MappingNode) and not value.value):
                tree.children.append(self.node(value))
            elements.append(tree)
        return elements

    def node(self, node: Node) -> Element:
        if isinstance(node, ScalarNode):
            if _is_null(node) or not node.value.strip():
                raise self.fail(node, f"empty node: expected {_SHAPE}")
            element = self.element(node.value, node)
            self.place(element, node, _line_end(node.end_mark))
            return element
        if isinstance(node, SequenceNode) or not node.value:
            raise self.fail(node, f"expected a node ({_SHAPE}), not {_kind(node) if node.value else 'an empty mapping'}")
        if len(node.value) > 1:
            names = ", ".join(repr(getattr(k, "value", "?")) for k, _ in node.value)
            raise self.fail(node.value[1][0], f"a node is a mapping with exactly one key, the node ID; found "
                                              f"{len(node.value)} ({names}): indent attributes under the node ID")
        key_node, body = node.value[0]
        tag = self.key(key_node, "node ID")
        element = self.element(tag, key_node)
        self.place(element, key_node, _header_end(body))
        if _is_null(body):
            return element
        if not isinstance(body, MappingNode):
            raise self.fail(body, f"node {tag!r}: expected a mapping of attributes and children (or nothing), "
                                  f"not {_kind(body)}")
        has_children = False
        for name_node, value in body.value:
            name = self.key(name_node, f"node {tag!r}: attribute name")
            if name in element.attrib or (name == CHILDREN and has_children):
                raise self.fail(name_node, f"node {tag!r}: duplicate attribute {name!r}")
            if name != CHILDREN:
                element.attrib[name] = self.scalar(value, f"node {tag!r}: attribute {name!r}")
                continue
            has_children = True
            place = self.places[id(element)]  # the header ends at `children`, comments under it are inside
            place.header_end, place.item_column = _position(name_node.start_mark), name_node.start_mark.column
            if _is_null(value):
                continue
            if not isinstance(value, SequenceNode):
                raise self.fail(name_node, f"node {tag!r}: 'children' must be a list of nodes, not {_kind(value)}")
            element.children = [self.node(child) for child in value.value]
        return element


@dataclass
class _Comment:
    """A comment of the YAML text: where its ``#`` is, its lines (after the ``#``), whether
    it has a line of its own."""

    line: int
    column: int
    lines: list[str]
    own_line: bool

    def text(self) -> str:
        return "\n".join(line.rstrip() for line in textwrap.dedent("\n".join(self.lines)).splitlines()).strip("\n")


def _scan_comments(text: str) -> list[_Comment]:
    """The comments of ``text`` (YAML that composes): what lies between two tokens is blanks,
    line breaks and comments only. Comments on consecutive lines of their own at one column
    are one comment; a blank line separates two."""
    tokens = list(yaml.scan(text, Loader=yaml.SafeLoader))
    comments: list[_Comment] = []
    for before, after in pairwise(tokens):
        gap = text[before.end_mark.index:after.start_mark.index]
        for match in _COMMENT.finditer(gap):
            breaks = list(_BREAK.finditer(gap, 0, match.start()))
            line = before.end_mark.line + len(breaks)
            column = match.start() - breaks[-1].end() if breaks else before.end_mark.column + match.start()
            own_line = bool(breaks) or isinstance(before, yaml.StreamStartToken)
            last = comments[-1] if comments else None
            if (last and own_line and last.own_line and last.column == column
                    and last.line + len(last.lines) == line):
                last.lines.append(match.group()[1:])
            else:
                comments.append(_Comment(line, column, [match.group()[1:]], own_line))
    return comments


def _walk(element: Element) -> Iterator[Element]:
    yield element
    for child in element.children:
        yield from _walk(child)


def _attach_comments(root: Element, parser: _Parser, comments: list[_Comment]) -> None:
    """Give each comment to the element it belongs to, as the XML would hold it.

    Before the ``include``/``trees`` keys: before ``<root>``. On an element's header (its
    key, attributes, the rest of their last line): before the element. After the last child
    of an element, indented at least as far as its ``children`` key (for a tree: deeper than
    its ID; for the document: at all): inside it, at its end. Anything else: before the next
    element, or after ``<root>`` at the end of the file.
    """
    parents = {id(child): parent for parent in _walk(root) for child in parent.children}
    elements = sorted((e for e in _walk(root) if e is not root), key=lambda e: parser.places[id(e)].start)
    starts = [parser.places[id(e)].start for e in elements]
    item_column = {id(root): 1} | {key: place.item_column for key, place in parser.places.items()}
    for comment in comments:
        text, position = comment.text(), (comment.line, comment.column)
        if not text:
            continue
        if position < parser.header_end:
            root.comments.append(text)
            continue
        index = bisect.bisect_right(starts, position)
        before = elements[index - 1] if index else root
        after = elements[index] if index < len(elements) else None
        if before is not root and position < parser.places[id(before)].header_end:
            before.comments.append(text)
            continue
        still_open = {id(e) for e in _ancestors(after, parents)} if after else set()
        target = after.comments if after else root.tail_comments
        for container in _ancestors(before, parents):  # the elements that end before the comment
            if id(container) in still_open:
                break
            column = item_column[id(container)]
            if column is not None and column <= comment.column:
                target = container.end_comments
                break
        target.append(text)


def _ancestors(element: Element, parents: dict[int, Element]) -> Iterator[Element]:
    """``element``, its parent, ..., the document element."""
    while element is not None:
        yield element
        element = parents.get(id(element))


def parse_yaml(data: bytes | str, file: str, *, comments: bool = False) -> Element:
    """Parse a YAML tree file into the element tree the XML parser gives (``root`` element).

    Every element has the line of its YAML key (of the item for bare node IDs and include
    paths). Raises :class:`HriError` ``FILE:LINE: message`` for malformed YAML and for
    structural mistakes; node types and ports are checked later by the loader. With
    ``comments``, the YAML comments are placed on the elements as the XML holds comments
    (:func:`_attach_comments`).
    """
    text = decode(data, file)
    parser = _Parser(file)
    try:
        root = parser.document(compose(text, file))
    except RecursionError:
        raise HriError("malformed YAML: nested too deeply", file, 1) from None
    if comments:
        _attach_comments(root, parser, _scan_comments(text))
    return root


def looks_like_tree_file(data: bytes | str) -> bool:
    """True when a YAML document's top level has the key ``BTCPP_format`` (a tree file)."""
    try:
        node = compose(data, "<yaml>")
    except HriError:
        text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
        return _TREE_KEY.search(text) is not None
    return isinstance(node, MappingNode) and any(
        isinstance(key, ScalarNode) and key.value == "BTCPP_format" for key, _ in node.value)


# --- the writer -------------------------------------------------------------------------

_ANALYZER = Emitter(io.StringIO(), allow_unicode=True)
_RESOLVER = yaml.resolver.Resolver()


def _quoted(text: str) -> str:
    parts = ['"']
    for char in text:
        if char in _ESCAPES:
            parts.append(_ESCAPES[char])
        elif _KEEP.match(char):
            parts.append(char)
        else:
            code = ord(char)
            parts.append(f"\\x{code:02X}" if code <= 0xFF else f"\\u{code:04X}" if code <= 0xFFFF else f"\\U{code:08X}")
    parts.append('"')
    return "".join(parts)


def _scalar(text: str, flow: bool) -> str:
    """``text`` as a plain scalar when YAML reads it back as the same text, else quoted.

    A plain ``1.0`` or ``true`` is fine (the parser keeps the text); ``~`` and ``null`` are
    quoted, as a bare node ID or tree root must not read as nothing.
    """
    analysis = _ANALYZER.analyze_scalar(text)
    plain = analysis.allow_flow_plain if flow else analysis.allow_block_plain
    if (plain and not analysis.empty and not analysis.multiline and text.strip() == text
            and _RESOLVER.resolve(ScalarNode, text, (True, False)) != _NULL_TAG):
        return text
    return _quoted(text)


def _fail(element: Element, message: str) -> HriError:
    return HriError(f"cannot write as YAML: {message}", element.file, element.line)


def _comment_lines(texts: list[str], pad: str, out: list[str]) -> None:
    """Append ``texts`` as ``#`` lines at ``pad``, a blank line between two comments (so that
    they are read back as two). A character YAML cannot hold is written as an escape."""
    for index, text in enumerate(texts):
        if index:
            out.append("")
        for line in text.splitlines():
            line = _UNPRINTABLE.sub(lambda m: m.group().encode("unicode_escape").decode(), line)
            out.append(f"{pad}# {line}" if line else f"{pad}#")


def _node_lines(element: Element, indent: int, lead: str, width: int, out: list[str]) -> None:
    """Append ``element`` (``lead`` is ``"- "`` for a list item) starting at column ``indent``,
    after its comments (at ``indent``); its end comments follow its children."""
    if CHILDREN in element.attrib:
        raise _fail(element, f"<{element.tag}> has an attribute named {CHILDREN!r}")
    pad, column = " " * indent, indent + len(lead)
    _comment_lines(element.comments, pad, out)
    key = _scalar(element.tag, flow=True)
    has_children = bool(element.children or element.end_comments)
    if not element.attrib and not has_children:
        out.append(f"{pad}{lead}{key}")
        return
    if not has_children:
        pairs = ", ".join(f"{_scalar(k, True)}: {_scalar(v, True)}" for k, v in element.attrib.items())
        line = f"{pad}{lead}{key}: {{{pairs}}}"
        if len(line) <= width:
            out.append(line)
            return
    out.append(f"{pad}{lead}{key}:")
    inner = " " * (column + 2)
    for name, value in element.attrib.items():
        out.append(f"{inner}{_scalar(name, True)}: {_scalar(value, False)}")
    if has_children:
        out.append(f"{inner}{CHILDREN}:")
        for child in element.children:
            _node_lines(child, column + 4, "- ", width, out)
        _comment_lines(element.end_comments, " " * (column + 4), out)


def _root_children(root: Element, include_suffix: str | None) -> tuple[list, list, list[str]]:
    """The include paths and the trees of ``root``, each with the comments before it, and the
    comments left over (before a final ``<TreeNodesModel>``, which is dropped)."""
    includes: list[tuple[list[str], str]] = []
    trees: list[tuple[list[str], Element]] = []
    carried: list[str] = []
    for element in root.children:
        comments, carried = carried + element.comments, []
        if element.tag == "include":
            if "path" not in element.attrib or "ros_pkg" in element.attrib:
                raise _fail(element, "<include> needs a path (ros_pkg is not supported)")
            path = element.attrib["path"]
            if include_suffix and path.lower().endswith(".xml"):
                path = path[:-4] + include_suffix
            includes.append((comments, _scalar(path, True)))
        elif element.tag == "BehaviorTree":
            trees.append((comments, element))
        elif element.tag == "TreeNodesModel":
            carried = comments  # to the next element: they were not about the model alone
        else:
            raise _fail(element, f"unexpected <{element.tag}> in <root>")
    return includes, trees, carried


def _include_lines(includes: list[tuple[list[str], str]], out: list[str]) -> None:
    """``include:`` as a flow list, or a block list when an include has comments."""
    if any(comments for comments, _ in includes):
        out.append("include:")
        for comments, path in includes:
            _comment_lines(comments, "  ", out)
            out.append(f"  - {path}")
    elif includes:
        out.append(f"include: [{', '.join(path for _, path in includes)}]")


def _tree_lines(comments: list[str], tree: Element, width: int, out: list[str]) -> None:
    if not tree.attrib.get("ID", "").strip():
        raise _fail(tree, "<BehaviorTree> needs an ID")
    if len(tree.children) > 1:
        raise _fail(tree, f"tree {tree.attrib['ID']!r} has {len(tree.children)} root nodes")
    _comment_lines(comments, "  ", out)
    out.append(f"  {_scalar(tree.attrib['ID'], True)}:")
    for node in tree.children:
        _node_lines(node, 4, "", width, out)
    _comment_lines(tree.end_comments, "    ", out)


def dump_yaml(root: Element, *, header: str | None = None, include_suffix: str | None = None,
              width: int = 110) -> str:
    """YAML text for the element tree ``root`` (as :func:`~hri.bt.xml_text.parse_xml` gives).

    ``header`` becomes the first comment. With ``include_suffix`` (``".yaml"``), an include
    path ending in ``.xml`` gets that suffix instead (the converted file). Attribute order is
    kept; ``<TreeNodesModel>`` (with the comments inside it) and other root attributes are
    dropped. A leaf with attributes is written as a flow mapping when its line fits in
    ``width``. Comments are written where :func:`parse_yaml` reads them back to the same
    elements (a comment inside a leaf gives it an empty ``children:`` to stand under).
    Raises :class:`HriError` for what YAML trees cannot hold (a tree with two root nodes, ...).
    """
    if root.tag != "root":
        raise _fail(root, f"the document element must be <root>, not <{root.tag}>")
    includes, trees, leftover = _root_children(root, include_suffix)
    out: list[str] = []
    _comment_lines(([header] if header else []) + root.comments, "", out)
    out.append(f"BTCPP_format: {_scalar(root.attrib.get('BTCPP_format', '4'), False)}")
    if "main_tree_to_execute" in root.attrib:
        out.append(f"main_tree_to_execute: {_scalar(root.attrib['main_tree_to_execute'], False)}")
    _include_lines(includes, out)
    out.append("trees:" if trees else "trees: {}")
    for comments, tree in trees:
        _tree_lines(comments, tree, width, out)
    _comment_lines(leftover + root.end_comments, "  ", out)
    _comment_lines(root.tail_comments, "", out)
    return "\n".join(out) + "\n"
