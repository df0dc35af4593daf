"""Blackboard key analysis: entries a tree reads that nothing writes.

Works on the parsed element tree (:func:`hri.bt.xml_loader.load_document`), no nodes are built.
The analysis follows the blackboard scopes of :mod:`hri.bt.blackboard` statically:

* every ``<SubTree>`` instance opens a scope of its own; a remapped port ``port="{outer}"``
  names the parent's entry ``outer``; with ``_autoremap="true"`` every other key is the
  parent's entry too (except the SubTree's literal ports, set in the child scope);
* ``{@key}`` names the root scope's entry ``key``.

An entry counts as written when an output (or in/out) port of any node names it, when a
script assigns it (``Script code="n := 0"``, ``_onSuccess="done = true"``, ...), when a
SubTree sets it as a literal (``<SubTree ID="X" speed="0.5"/>`` sets ``speed`` in X's
scope), or when it is in ``provided`` (entries of the root scope the caller puts there: the
scenario's). An input port ``{key}`` whose entry is never written gives a warning; the order
of reads and writes is not checked.

A literal the tree itself writes (``SetBlackboard value="wave_hello" output_key="clip"``, a
script's ``clip := 'wave_hello'``) is checked against every input port that reads its entry
and checks its values (``check_value``: a clip name, a speed, a fraction): a value the port
would refuse gives a warning at the write, naming the reader; the tree may still never let it
reach the reader, so it is no error.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from hri.bt.factory import NodeRegistry
from hri.bt.ports import PortError, reference_key
from hri.bt.tree_builder import CONDITION_ATTRIBUTES, EXPLICIT_KINDS, MAX_DEPTH
from hri.bt.tree_files import Element
from hri.bt.value_types import coerce
from hri.base.errors import HriError, one_line, shortened



def node_id_of(element: Element) -> str:
    """The node type an element names: its tag, or its ``ID`` in the explicit form ``<Action ID>``."""
    return element.attrib.get("ID", "").strip() if element.tag in EXPLICIT_KINDS else element.tag


class TreeWarning(HriError):
    """A problem that does not stop the tree from loading: ``FILE:LINE: warning: ...``, or
    ``FILE:LINE:COLUMN: warning: ...`` when the column is known (1-based, in characters)."""

    def __init__(self, message: str, file: str | None = None, line: int | None = None,
                 column: int | None = None):
        super().__init__(f"warning: {message}", file, line)
        self.column = column

    def __str__(self) -> str:
        if self.file and self.line and self.column:
            return one_line(shortened(f"{self.file}:{self.line}:{self.column}: {self.message}"))
        return super().__str__()


@dataclass
class _Scope:
    ident: int
    parent: "_Scope | None" = None
    remapping: dict[str, str] = field(default_factory=dict)
    autoremap: bool = False
    literals: set[str] = field(default_factory=set)

    def resolve(self, key: str) -> tuple[int, str]:
        """The entry ``(scope id, key)`` that ``key`` names as seen from this scope."""
        if key.startswith("@"):
            scope = self
            while scope.parent is not None:
                scope = scope.parent
            return scope.ident, key[1:]
        if key in self.remapping and self.parent is not None:
            return self.parent.resolve(self.remapping[key])
        if key in self.literals or self.parent is None or not self.autoremap or key.startswith("_"):
            return self.ident, key  # autoremap never takes private keys
        return self.parent.resolve(key)


@dataclass
class _Read:
    entry: tuple[int, str]
    key: str
    element: Element


class _Walker:
    def __init__(self, trees: dict[str, Element], registry: NodeRegistry):
        self.trees = trees
        self.registry = registry
        self.counter = itertools.count()
        self.writes: set[tuple[int, str]] = set()
        self.reads: list[_Read] = []
        self.models: dict[str, dict[str, str | None]] = {}  # the subtrees' <TreeNodesModel> ports

    def new_scope(self, **kwargs) -> _Scope:
        return _Scope(next(self.counter), **kwargs)

    def walk_tree(self, tree_id: str, scope: _Scope, stack: tuple[str, ...]) -> None:
        tree = self.trees.get(tree_id)
        if tree is None or tree_id in stack or len(stack) > MAX_DEPTH:
            return  # unknown IDs and recursion are errors the validator reports
        for node in tree.children:
            self.walk(node, scope, (*stack, tree_id), 0)

    def walk(self, element: Element, scope: _Scope, stack: tuple[str, ...], depth: int) -> None:
        if depth > MAX_DEPTH:
            return
        if element.tag == "SubTree":
            self.walk_subtree(element, scope, stack)
            return
        node_id = node_id_of(element)
        for key in script_assignments(element, node_id):
            self.writes.add(scope.resolve(key))
        if node_id in self.registry:
            cls = self.registry.get(node_id).cls
            for attr, text in element.attrib.items():
                port = cls.port(attr) if hasattr(cls, "port") else None
                if port is None:
                    continue
                try:
                    key = reference_key(text, attr)
                except PortError:
                    continue
                if port.direction == "in":
                    if key is not None:
                        self.reads.append(_Read(scope.resolve(key), key, element))
                else:
                    key = key if key is not None else text.strip()
                    if key:
                        self.writes.add(scope.resolve(key))
        for child in element.children:
            self.walk(child, scope, stack, depth + 1)

    def walk_subtree(self, element: Element, scope: _Scope, stack: tuple[str, ...]) -> None:
        for key in script_assignments(element, "SubTree"):  # its conditions run in the parent's scope
            self.writes.add(scope.resolve(key))
        self.walk_tree(element.attrib.get("ID", "").strip(), self.subtree_scope(element, scope), stack)

    def subtree_ports(self, element: Element, autoremap: bool) -> dict[str, str]:
        """A ``<SubTree>`` element's ports: its own attributes, and the defaults that
        :attr:`models` (a ``<TreeNodesModel>``'s) give the others (not with ``_autoremap``)."""
        ports = {attr: text for attr, text in element.attrib.items()
                 if attr not in ("ID", "name") and not attr.startswith("_")}
        for port, default in self.models.get(element.attrib.get("ID", "").strip(), {}).items():
            if port not in ports and not autoremap and default is not None:
                ports[port] = default
        return ports

    def subtree_scope(self, element: Element, scope: _Scope) -> _Scope:
        """The scope a ``<SubTree>`` element opens under ``scope``; its literals count as written."""
        remapping: dict[str, str] = {}
        literals: set[str] = set()
        autoremap = element.attrib.get("_autoremap", "").strip().lower() in ("true", "1")
        for attr, text in self.subtree_ports(element, autoremap).items():
            try:
                key = reference_key(text, attr)
            except PortError:
                continue
            if key is None:
                literals.add(attr)
            else:
                remapping[attr] = key
        child = self.new_scope(parent=scope, remapping=remapping, autoremap=autoremap, literals=literals)
        for attr in literals:
            self.writes.add((child.ident, attr))
        return child


SCRIPT_PORTS = {"Script": "code", "ScriptCondition": "code", "Precondition": "if"}
"""The nodes whose port holds a script (parsed when the tree loads, when it is a literal)."""


def element_script_attributes(element: Element, node_id: str) -> list[tuple[str, str]]:
    """``(attribute, code)`` of the element's scripts: its condition attributes, and the script
    port of a Script, ScriptCondition or Precondition when it is a literal (not ``{key}``)."""
    scripts = [(attr, text) for attr, text in element.attrib.items() if attr in CONDITION_ATTRIBUTES]
    port = SCRIPT_PORTS.get(node_id)
    if port is not None and port in element.attrib:
        text = element.attrib[port]
        try:
            literal = reference_key(text, port) is None
        except PortError:
            literal = False
        if literal and text.strip():
            scripts.append((port, text))
    return scripts


def element_scripts(element: Element, node_id: str) -> list[str]:
    """The element's scripts (:func:`element_script_attributes`), the code only."""
    return [code for _, code in element_script_attributes(element, node_id)]


def script_assignments(element: Element, node_id: str) -> list[str]:
    """The entries the element's scripts assign (a script that does not parse assigns none:
    the tree's validation reports it)."""
    from hri.bt.scripting import ScriptSyntaxError
    from hri.bt.scripting.names import script_names

    keys = []
    for code in element_scripts(element, node_id):
        try:
            keys.extend(assignment.target.text for assignment in script_names(code).assignments)
        except ScriptSyntaxError:
            continue
    return keys


def unwritten_reads(trees: dict[str, Element], roots: Iterable[str], registry: NodeRegistry,
                    provided: Iterable[str] = ()) -> list[TreeWarning]:
    """Warnings for ``{key}`` inputs of the trees ``roots`` (each run on a root blackboard
    holding ``provided``) whose entry nothing writes: one per key, at its first read, naming
    the other places that read it."""
    places: dict[str, set[tuple[str, int]]] = {}
    provided = list(provided)
    for tree_id in roots:
        walker = _Walker(trees, registry)
        root = walker.new_scope()
        walker.writes.update((root.ident, key) for key in provided)
        walker.walk_tree(tree_id, root, ())
        for read in walker.reads:
            if read.entry not in walker.writes:
                places.setdefault(read.key, set()).add((read.element.file, read.element.line))
    warnings = [_unwritten(key, sorted(where)) for key, where in places.items()]
    return sorted(warnings, key=lambda w: (w.file or "", w.line or 0, w.message))


def _unwritten(key: str, places: list[tuple[str, int]]) -> TreeWarning:
    (file, line), others = places[0], places[1:]
    also = ""
    if others:
        shown = ", ".join(str(l) if f == file else f"{f}:{l}" for f, l in others)
        also = f"; read at {len(places)} places, also line{'s' if len(others) > 1 else ''} {shown}"
    return TreeWarning(f"blackboard entry {key!r} is read but never written (it must come from the scenario){also}",
                       file, line)


# A statement of a script that assigns one literal: name := 'text', name = 2.5, name := true
_LITERAL_ASSIGNMENT = re.compile(
    r"(?:^|;)\s*(@?[A-Za-z_]\w*)\s*:?=\s*('[^']*'|-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false)\s*(?=;|$)")


def literal_writes(element: Element, node_id: str) -> list[tuple[str, str]]:
    """(key, literal text) of the values the element writes as literals: SetBlackboard's
    ``value`` (not a reference) and scripts' assignments of a single literal."""
    writes = []
    if node_id == "SetBlackboard":
        key_text, value = element.attrib.get("output_key", ""), element.attrib.get("value")
        try:
            key = reference_key(key_text, "output_key") or key_text.strip()
            literal = value is not None and reference_key(value, "value") is None
        except PortError:
            return []
        if key and literal:
            writes.append((key, value))
    for code in element_scripts(element, node_id):
        for key, literal in _LITERAL_ASSIGNMENT.findall(code):
            writes.append((key, literal[1:-1] if literal.startswith("'") else literal))
    return writes


class _LiteralWalker(_Walker):
    """The walker, also recording the literals written: (entry, text, element)."""

    def __init__(self, trees: dict[str, Element], registry: NodeRegistry):
        super().__init__(trees, registry)
        self.literals: list[tuple[tuple[int, str], str, Element]] = []

    def walk(self, element: Element, scope: _Scope, stack: tuple[str, ...], depth: int) -> None:
        if element.tag != "SubTree" and depth <= MAX_DEPTH:
            self.literals.extend((scope.resolve(key), text, element)
                                 for key, text in literal_writes(element, node_id_of(element)))
        super().walk(element, scope, stack, depth)


def port_refusal(element: Element, key: str, value: Any, registry: NodeRegistry) -> tuple[str, str] | None:
    """(port, message) when a port of ``element`` that reads the entry ``key`` refuses ``value``
    (its type or its ``check_value``: a range, a clip's name); None when every one takes it."""
    node_id = node_id_of(element)
    cls = registry.get(node_id).cls if node_id in registry else None
    for attr, text in element.attrib.items() if cls is not None else ():
        port = cls.port(attr)
        try:
            if port is None or port.direction == "out" or reference_key(text, attr) != key:
                continue
            message = cls.check_value(attr, coerce(value, port.type))
        except (PortError, ValueError) as err:
            message = str(err)
        if message:
            return attr, message.removeprefix(f"port '{attr}': ")
    return None


def refused_literals(trees: dict[str, Element], roots: Iterable[str], registry: NodeRegistry) -> list[TreeWarning]:
    """Warnings for literals the trees ``roots`` write to an entry that a port refuses to read
    (an unknown clip name, a speed out of range); one per (file, line, message)."""
    warnings: dict[tuple[str, int, str], TreeWarning] = {}
    for tree_id in roots:
        walker = _LiteralWalker(trees, registry)
        walker.walk_tree(tree_id, walker.new_scope(), ())
        for entry, text, writer in walker.literals:
            for read in (r for r in walker.reads if r.entry == entry):
                refused = port_refusal(read.element, read.key, text, registry)
                if refused is None:
                    continue
                reader = node_id_of(read.element)
                message = (f"{text!r} written to {entry[1]!r} here is read by {reader} port '{refused[0]}' "
                           f"({Path(read.element.file or '').name}:{read.element.line}): {refused[1]}")
                warnings.setdefault((writer.file or "", writer.line or 0, message),
                                    TreeWarning(message, writer.file, writer.line))
    return sorted(warnings.values(), key=lambda w: (w.file or "", w.line or 0, w.message))


def root_trees(root: Element | None, trees: dict[str, Element], path: str) -> list[str]:
    """The trees a file runs on its own: main_tree_to_execute, else the file's only tree,
    else every tree the file itself defines (a file of subtrees)."""
    main = root.attrib.get("main_tree_to_execute", "").strip() if root is not None else ""
    if main:
        return [main] if main in trees else []
    own = [tree_id for tree_id, element in trees.items() if element.file == path]
    return own if own else list(trees)
