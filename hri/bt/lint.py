"""Warnings of ``hri validate`` about what a tree gets wrong without being refused: BehaviorTree.CPP
loads such a tree as it is, and so does hri; the mistake shows only when a branch runs, or never.

Each warning is a :class:`~hri.bt.keys.TreeWarning` ``FILE:LINE:COLUMN: warning: ...``; the
column (1-based, in characters) is the attribute's, or that of the name inside a script:

* **a name in a script that nothing defines**: neither a registered enum (a plug-in's, a
  scenario's plug-in's) nor a blackboard entry that anything writes (:mod:`hri.bt.keys`: an
  output port, a script's assignment, a SubTree's literal, an entry the scenario and the tree's
  host put on the blackboard). ``style == NOSMASH`` fails with "variable 'NOSMASH' not found"
  only when that script runs;
* **a misspelt pre- or post-condition** (``_skipif``, ``_Onsuccess``): an attribute starting
  with ``_`` that is not one BehaviorTree.CPP knows but is close to one; BehaviorTree.CPP takes
  no attribute starting with ``_`` as a port, and ignores it;
* **SetBlackboard of a text into an entry without a type**: SetBlackboard converts a text to the
  type of the entry it writes, and an entry that exists without a type (made by a script's
  ``:=``, by a port of any type, by a SubTree's or the scenario's text) has no conversion, so
  the entry is left empty (:mod:`hri.bt.actions.set_blackboard`);
* **``and``, ``or``, ``not`` in a script**: the scripting language writes ``&&``, ``||``, ``!``;
  ``and`` is a name, and statements need no separator, so ``ready and done`` is three
  statements (``ready``, ``and``, ``done``), whose last one alone decides a condition.

The checks read the parsed elements (:func:`hri.bt.xml_loader.load_document`), never build
nodes, and never change what loads. Scripts are parsed by the grammar that runs them
(:mod:`hri.bt.scripting.names`).
"""

from __future__ import annotations

import bisect
import difflib
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable

from hri.bt.blackboard import strongly_typed
from hri.bt.factory import NodeRegistry
from hri.bt.keys import TreeWarning, _Scope, _Walker, element_script_attributes, node_id_of
from hri.bt.ports import PortError, reference_key
from hri.bt.tree_builder import CONDITION_ATTRIBUTES, MAX_DEPTH, subtree_literal
from hri.bt.tree_files import Element, tree_format
from hri.base.errors import HriError
from hri.base.numbers import cut

if TYPE_CHECKING:
    from hri.bt.scripting.names import Name, ScriptNames

KNOWN_UNDERSCORED = (*CONDITION_ATTRIBUTES, "_autoremap", "_description", "_uid", "_fullpath")
"""Attributes starting with ``_`` that are no mistake: the conditions, ``_autoremap``, and what
Groot2 and BehaviorTree.CPP's loggers write (``_description``, ``_uid``, ``_fullpath``)."""
MISSPELT_CUTOFF = 0.75
"""How close (difflib's ratio, letters compared in lower case) an unknown ``_attribute`` must be
to a known one to be taken for a misspelling of it."""
WORD_OPERATORS = {"and": "&&", "or": "||", "not": "!"}
"""Python's and C's operator words, which BehaviorTree.CPP's scripts read as names."""

Entry = tuple[int, str]


def lint_trees(trees: dict[str, Element], roots: Iterable[str], registry: NodeRegistry,
               provided: Iterable[str] = (), models: dict[str, dict[str, str | None]] | None = None
               ) -> list[TreeWarning]:
    """The warnings of the trees ``roots`` (each run on a root blackboard holding ``provided``)
    and of every element of ``trees``, sorted by place; one per place and message. ``models``:
    the ports a ``<TreeNodesModel>`` declares for subtrees, with their defaults."""
    positions = _Positions(trees)
    warnings: dict[tuple, TreeWarning] = {}
    for warning in _misspelt_attributes(trees, positions):
        warnings.setdefault(_place(warning), warning)
    provided = list(provided)
    for tree_id in roots:
        walker = _LintWalker(trees, registry)
        walker.models = models or {}
        root = walker.new_scope()
        walker.writes.update((root.ident, key) for key in provided)
        walker.typed.update((root.ident, key) for key in provided)  # their type is unknown: no claim
        walker.walk_tree(tree_id, root, ())
        for warning in [*_script_names(walker, registry, positions, bool(provided)),
                        *_untyped_writes(walker, positions)]:
            warnings.setdefault(_place(warning), warning)
    return sorted(warnings.values(), key=_place)


def _place(warning: TreeWarning) -> tuple:
    return warning.file or "", warning.line or 0, warning.column or 0, warning.message


# -- the walk -------------------------------------------------------------------------------------

@dataclass
class _ScriptSite:
    element: Element
    node_id: str
    attribute: str
    code: str
    scope: _Scope


class _LintWalker(_Walker):
    """The key walker of :mod:`hri.bt.keys`, also recording each script with its scope, which
    entries get a type when the tree loads, which are made without one, and the SetBlackboards
    that write a text."""

    def __init__(self, trees: dict[str, Element], registry: NodeRegistry):
        super().__init__(trees, registry)
        self.scripts: list[_ScriptSite] = []
        self.typed: set[Entry] = set()
        self.untyped: dict[Entry, tuple[Element, str]] = {}  # entry -> (first maker, how)
        self.set_texts: list[tuple[Element, Entry, str]] = []  # (SetBlackboard, entry, text)

    def walk(self, element: Element, scope: _Scope, stack: tuple[str, ...], depth: int) -> None:
        if depth <= MAX_DEPTH:
            node_id = node_id_of(element)
            for attribute, code in element_script_attributes(element, node_id):
                self.scripts.append(_ScriptSite(element, node_id, attribute, code, scope))
                self._script_entries(element, code, scope)
            if element.tag != "SubTree":
                self._port_types(element, node_id, scope)
            if node_id == "SetBlackboard":
                self._set_text(element, scope)
        super().walk(element, scope, stack, depth)

    def subtree_scope(self, element: Element, scope: _Scope) -> _Scope:
        child = super().subtree_scope(element, scope)
        ports = self.subtree_ports(element, child.autoremap)
        for attribute in child.literals:
            made = (child.ident, attribute)
            if isinstance(subtree_literal(ports[attribute]), str):
                self._untyped(made, element, f"the SubTree's text {attribute}=")
            else:
                self.typed.add(made)
        return child

    def _untyped(self, entry: Entry, element: Element, how: str) -> None:
        self.untyped.setdefault(entry, (element, how))

    def _script_entries(self, element: Element, code: str, scope: _Scope) -> None:
        names = _names(code)
        for assignment in names.assignments if names is not None else ():
            if assignment.op == ":=":
                self._untyped(scope.resolve(assignment.target.text), element, "a script's ':='")

    def _port_types(self, element: Element, node_id: str, scope: _Scope) -> None:
        cls = self.registry.get(node_id).cls if node_id in self.registry else None
        for attribute, text in element.attrib.items() if cls is not None else ():
            port = cls.port(attribute)
            try:
                key = reference_key(text, attribute) if port is not None else None
            except PortError:
                continue
            if key is None:
                continue
            declared = None if port.type is Any else port.type
            if strongly_typed(declared):
                self.typed.add(scope.resolve(key))
            elif declared is None:
                self._untyped(scope.resolve(key), element, f"{node_id}'s port {attribute!r}, of any type")

    def _set_text(self, element: Element, scope: _Scope) -> None:
        value, target = element.attrib.get("value"), element.attrib.get("output_key", "")
        try:
            literal = value is not None and reference_key(value, "value") is None
            named = reference_key(target, "output_key") is None and target.strip()
        except PortError:
            return
        if literal and named:
            self.set_texts.append((element, scope.resolve(target.strip()), value))


def _names(code: str) -> "ScriptNames | None":
    """The names of ``code``; None when it does not parse."""
    from hri.bt.scripting import ScriptSyntaxError
    from hri.bt.scripting.names import script_names

    try:
        return script_names(code)
    except ScriptSyntaxError:
        return None  # the tree's validation reports it


# -- the checks -----------------------------------------------------------------------------------

def _misspelt_attributes(trees: dict[str, Element], positions: "_Positions") -> list[TreeWarning]:
    warnings = []
    lowered = {known.lower(): known for known in KNOWN_UNDERSCORED}
    for element in _elements(trees):
        for attribute in element.attrib:
            if not attribute.startswith("_") or attribute in KNOWN_UNDERSCORED:
                continue
            close = difflib.get_close_matches(attribute.lower(), lowered, n=1, cutoff=MISSPELT_CUTOFF)
            if not close:
                continue  # another tool's attribute: BehaviorTree.CPP ignores it, so do we
            right = lowered[close[0]]
            what = "pre- or post-condition" if right in CONDITION_ATTRIBUTES else "attribute"
            warnings.append(_warning(
                f"attribute {attribute!r} is no {what} BehaviorTree.CPP knows, so it is ignored: "
                f"did you mean {right!r}?", element, positions.attribute(element, attribute)))
    return warnings


def _elements(trees: dict[str, Element]) -> list[Element]:
    return [element for tree in trees.values() for element in _preorder(tree)]


def _script_names(walker: _LintWalker, registry: NodeRegistry, positions: "_Positions",
                  scenario: bool) -> list[TreeWarning]:
    warnings = []
    written = {key for _, key in walker.writes}
    known = sorted({*registry.enums, *written})
    for site in walker.scripts:
        names = _names(site.code)
        what = f"{site.node_id} {site.attribute}"
        unknown = [name for name in (names.reads if names is not None else ())
                   if name.text not in registry.enums and site.scope.resolve(name.text) not in walker.writes]
        words = [name for name in unknown if name.text in WORD_OPERATORS]
        if words:  # one warning for the script, at its first word, with the script as meant
            where = positions.attribute(site.element, site.attribute, words[0].column - 1)
            warnings.append(_warning(_word_operator(what, site.code, words, len(names.statements)), site.element, where))
        for name in unknown:
            if name.text in WORD_OPERATORS:
                continue
            where = positions.attribute(site.element, site.attribute, name.column - 1)
            warnings.append(_warning(
                f"{what}: {name.text!r} is neither an enum nor a blackboard entry that anything writes: "
                f"the script fails when it reads it{_hint(name.text, written, known, scenario)}",
                site.element, where))
    return warnings


def _hint(name: str, written: set[str], known: list[str], scenario: bool) -> str:
    """What the user may have meant by an unknown ``name``."""
    if name in written:  # written, but in a scope this script does not see
        return (" (an entry of this name is written in another blackboard scope: a SubTree's, "
                "or its parent's without remapping)")
    close = difflib.get_close_matches(name, known, n=1)
    if close:
        return f" (did you mean {close[0]!r}?)"
    if not scenario:
        return " (unless the scenario provides it, as an entry or a plug-in's enum: validate the scenario)"
    return ""


def _word_operator(what: str, code: str, words: list["Name"], statements: int) -> str:
    """The warning for ``words`` (and, or, not) read as names: the script as it parses, and as
    it is meant, each of them written as its operator."""
    pieces, end = [], len(code)
    for name in reversed(words):  # from the end, so that the columns before stay right
        at = name.column - 1
        rest = code[at + len(name.text):end]
        pieces.append((rest.lstrip(" \t\r\n") if name.text == "not" else rest))
        pieces.append(WORD_OPERATORS[name.text])
        end = at
    fixed = code[:end] + "".join(reversed(pieces))
    word = words[0].text
    return (f"{what}: {word!r} is a name in a script, not an operator (write '{WORD_OPERATORS[word]}'): "
            f"{cut(code.strip())!r} is {statements} statement{'s' if statements != 1 else ''}; "
            f"did you mean {cut(fixed.strip())!r}?")


def _untyped_writes(walker: _LintWalker, positions: "_Positions") -> list[TreeWarning]:
    warnings = []
    for element, entry, text in walker.set_texts:
        if entry in walker.typed or entry not in walker.untyped:
            continue
        maker, how = walker.untyped[entry]
        at = f"line {maker.line}" if maker.file == element.file else f"{maker.file}:{maker.line}"
        warnings.append(_warning(
            f"SetBlackboard writes the text {cut(text)!r} to entry {entry[1]!r}, which nothing gives a type "
            f"({how}, {at}, makes it without one): SetBlackboard converts a text to the entry's type, "
            f"and an entry without one is left empty; assign it in a script instead",
            element, positions.attribute(element, "output_key")))
    return warnings


def _warning(message: str, element: Element, where: tuple[int, int] | None) -> TreeWarning:
    line, column = where if where is not None else (element.line, None)
    return TreeWarning(message, element.file, line, column)


# -- columns --------------------------------------------------------------------------------------

class _Positions:
    """``(line, column)`` of an element's attribute in its file, or of a character of its value.

    Each file is read and parsed again once; its elements, in document order, are paired with
    those of ``trees`` from that file (the same order: the loader keeps it), so that two equal
    elements on one line each get their own column. None where a file cannot be paired (it
    changed since it was validated)."""

    def __init__(self, trees: dict[str, Element]) -> None:
        self._trees = trees
        self._files: dict[str, dict[int, Any]] = {}

    def attribute(self, element: Element, attribute: str, index: int | None = None) -> tuple[int, int] | None:
        if element.file not in self._files:
            self._files[element.file] = self._pair(element.file)
        place = self._files[element.file].get(id(element))
        return place(attribute, index) if place is not None else None

    def _pair(self, file: str) -> dict[int, Any]:
        """``{id(element): locate(attribute, index)}`` for the elements of ``trees`` in ``file``."""
        from hri.bt.xml_loader import MAX_FILE_BYTES
        from hri.base.untrusted import read_own

        elements = [element for tree in self._trees.values() if tree.file == file for element in _preorder(tree)]
        try:
            data, problem = read_own(file, MAX_FILE_BYTES)
            if problem is not None:
                return {}
            places = _yaml_places(data, file) if tree_format(file) == "yaml" else _xml_places(data, file)
        except (OSError, HriError):
            return {}
        if tree_format(file) == "yaml":
            elements = [element for element in elements if element.tag != "BehaviorTree"]
        if [tag for tag, _ in places] != [element.tag for element in elements]:
            return {}  # not the file that was validated
        return {id(element): locate for element, (_, locate) in zip(elements, places)}


def _preorder(element: Element) -> list[Element]:
    found, stack = [], [element]
    while stack:
        element = stack.pop()
        found.append(element)
        stack.extend(reversed(element.children))
    return found


def _xml_places(data: bytes, file: str) -> list[tuple[str, Any]]:
    """``(tag, locate)`` of the elements of the file's ``<BehaviorTree>`` s, in document order."""
    from hri.bt.xml_text import parse_xml, start_tags

    root = parse_xml(data, file)
    elements, tags = _preorder(root), start_tags(data)
    if [element.tag for element in elements] != [tag.name for tag in tags]:
        return []
    line_starts = [0, *(match.end() for match in re.finditer(rb"\n", data))]

    def line_column(offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(line_starts, offset)
        start = line_starts[line - 1]
        return line, len(data[start:offset].decode("utf-8", "replace")) + 1

    def locator(tag: Any) -> Any:
        def locate(attribute: str, index: int | None) -> tuple[int, int] | None:
            span = tag.attributes.get(attribute)
            if span is None:
                return None
            return line_column(span.name_offset if index is None else span.value_index(index))
        return locate

    in_trees = {id(element) for tree in root.children if tree.tag == "BehaviorTree" for element in _preorder(tree)}
    return [(element.tag, locator(tag)) for element, tag in zip(elements, tags) if id(element) in in_trees]


def _yaml_places(data: bytes, file: str) -> list[tuple[str, Any]]:
    """``(tag, locate)`` of the nodes of the file's trees, in document order (as
    :mod:`hri.bt.yaml_format` reads them: ``trees: {ID: node}``, a node ``Tag: {attributes,
    children: [nodes]}`` or a bare ``Tag``)."""
    from yaml.nodes import MappingNode, ScalarNode, SequenceNode

    from hri.bt.yaml_format import CHILDREN, compose

    places: list[tuple[str, Any]] = []

    def walk(node: Any) -> None:
        if isinstance(node, ScalarNode):
            places.append((node.value, lambda attribute, index: None))
            return
        if not isinstance(node, MappingNode) or not node.value:
            return
        key, body = node.value[0]
        pairs = {name.value: (name, value) for name, value in getattr(body, "value", None) or ()
                 if isinstance(body, MappingNode) and isinstance(name, ScalarNode)}
        places.append((key.value, lambda attribute, index: _yaml_locate(pairs.get(attribute), index)))
        children = pairs.get(CHILDREN, (None, None))[1]
        for child in children.value if isinstance(children, SequenceNode) else ():
            walk(child)

    document = compose(data, file)
    for key, value in document.value if isinstance(document, MappingNode) else ():
        if isinstance(key, ScalarNode) and key.value == "trees" and isinstance(value, MappingNode):
            for _, tree in value.value:
                walk(tree)
    return places


def _yaml_locate(pair: Any, index: int | None) -> tuple[int, int] | None:
    """The place of an attribute's key, or of character ``index`` of its value: exact in a
    one-line plain or quoted scalar without escapes, else the value's start."""
    if pair is None:
        return None
    key, value = pair
    if index is None:
        return key.start_mark.line + 1, key.start_mark.column + 1
    mark = value.start_mark
    one_line = mark.line == value.end_mark.line
    plain = value.style is None and one_line
    quoted = one_line and (value.style == '"' and not {"\\", '"'} & set(value.value)
                           or value.style == "'" and "'" not in value.value)
    if plain or quoted:
        return mark.line + 1, mark.column + 1 + index + (1 if quoted else 0)
    return mark.line + 1, mark.column + 1
