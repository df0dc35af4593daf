"""The BehaviorTree.CPP v4 tree loader (Groot2's XML, or its YAML form), apart from the nodes.

Supported: ``<root BTCPP_format="4" main_tree_to_execute="...">``, several
``<BehaviorTree ID="...">``, nodes by registered ID as tag or in the explicit form
``<Action ID="...">`` (also ``Condition``, ``Control``, ``Decorator``), the ``name``
attribute, ``<SubTree ID="..." port="{parent_key}" _autoremap="true"/>`` (a child blackboard
scope; literal values are set in that scope), ``<include path="..."/>`` (relative to the
including file; cycles are errors) and ``<TreeNodesModel>`` (ignored).

The XML is parsed by :mod:`hri.bt.xml_text` into a small element tree that keeps every
element's line, so every user mistake becomes an :class:`~hri.errors.HriError`
``FILE:LINE: message``. A ``.yaml``/``.yml`` file (also as an include) is parsed by :mod:`hri.bt.yaml_format` into the same element tree
(:mod:`hri.bt.tree_files`); from there on both formats are loaded alike.
"""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass, field

import numpy as np
import py_trees
from py_trees.behaviour import Behaviour

from hri.bt.blackboard import Blackboard
from hri.bt.context import TreeContext
from hri.bt.decorators import SubTreeNode
from hri.bt.factory import NodeRegistry
from hri.bt.ports import PortError, reference_key, to_bool
from hri.bt.tree_files import Element, tree_format
from hri.bt.xml_text import parse_xml
from hri.bt.yaml_format import parse_yaml
from hri.errors import HriError

EXPLICIT_KINDS = {"Action": "action", "Condition": "condition", "Control": "control", "Decorator": "decorator"}
MAX_DEPTH = 200
MAX_FILE_BYTES = 5 * 1024 * 1024
"""Tree files (and includes) larger than this are refused before they are parsed."""


def parse_tree_file(data: bytes, file: str) -> Element:
    """Parse a tree file by its suffix: YAML for ``.yaml``/``.yml``, else XML."""
    return parse_yaml(data, file) if tree_format(file) == "yaml" else parse_xml(data, file)


@dataclass
class _Document:
    """All trees of a file and its includes."""

    path: str
    root: Element | None = None
    trees: dict[str, Element] = field(default_factory=dict)
    top_level_trees: list[str] = field(default_factory=list)
    errors: list[HriError] = field(default_factory=list)


def _read(path: str, where: Element | None) -> bytes:
    file, line = (where.file, where.line) if where else (path, None)
    prefix = f"include file {path!r}: " if where else ""
    if not os.path.exists(path):
        raise HriError(f"{prefix}file not found", file if where else path, line)
    if not os.path.isfile(path):
        raise HriError(f"{prefix}not a regular file", file if where else path, line)
    try:
        with open(path, "rb") as stream:
            data = stream.read(MAX_FILE_BYTES + 1)  # never more than the limit, whatever getsize says
            if len(data) > MAX_FILE_BYTES:
                size = max(os.fstat(stream.fileno()).st_size, len(data)) / (1024 * 1024)
                raise HriError(f"{prefix}file too large ({size:.1f} MB, limit {MAX_FILE_BYTES // (1024 * 1024)} MB)",
                               file if where else path, line)
            return data
    except OSError as err:
        raise HriError(f"{prefix}cannot read: {err.strerror}", file if where else path, line) from None


def _collect(doc: _Document, path: str, where: Element | None, stack: list[str], loaded: set[str]) -> None:
    """Parse ``path`` and (recursively) its includes into ``doc``; errors go to doc.errors."""
    real = os.path.realpath(path)
    if real in stack:
        chain = " -> ".join(os.path.basename(p) for p in [*stack[stack.index(real):], real])
        assert where is not None
        doc.errors.append(HriError(f"include cycle: {chain}", where.file, where.line))
        return
    if real in loaded:
        return
    loaded.add(real)
    try:
        root = parse_tree_file(_read(path, where), path)
    except HriError as err:
        doc.errors.append(err)
        return
    if where is None:
        doc.root = root
    if root.tag != "root":
        doc.errors.append(HriError(f"the document element must be <root>, not <{root.tag}>", path, root.line))
        return
    version = root.attrib.get("BTCPP_format")
    if version is not None and version.strip() != "4":
        doc.errors.append(HriError(f"BTCPP_format {version!r} is not supported (only 4)", path,
                                   root.line_of("BTCPP_format")))
    for element in root.children:
        if element.tag == "BehaviorTree":
            tree_id = element.attrib.get("ID", "").strip()
            if not tree_id:
                doc.errors.append(HriError("<BehaviorTree> needs an ID", path, element.line))
            elif tree_id in doc.trees:
                first = doc.trees[tree_id]
                doc.errors.append(HriError(f"tree {tree_id!r} is defined twice (first at {first.file}:{first.line})",
                                           path, element.line))
            else:
                doc.trees[tree_id] = element
                if where is None:
                    doc.top_level_trees.append(tree_id)
        elif element.tag == "include":
            _include(doc, element, [*stack, real], loaded)
        elif element.tag != "TreeNodesModel":
            doc.errors.append(HriError(f"unexpected <{element.tag}> in <root> "
                                       "(expected BehaviorTree, include or TreeNodesModel)", path, element.line))


def _include(doc: _Document, element: Element, stack: list[str], loaded: set[str]) -> None:
    if "ros_pkg" in element.attrib:
        doc.errors.append(HriError("<include ros_pkg=...> is not supported", element.file, element.line))
        return
    relative = element.attrib.get("path", "").strip()
    if not relative:
        doc.errors.append(HriError("<include> needs a path", element.file, element.line))
        return
    path = os.path.join(os.path.dirname(element.file), relative)
    _collect(doc, path, element, stack, loaded)


def _load_document(path: str) -> _Document:
    doc = _Document(path)
    _collect(doc, path, None, [], set())
    return doc


def load_document(path: str) -> tuple[Element | None, dict[str, Element], list[HriError]]:
    """Parse ``path`` and its includes, building no nodes: ``(root, {tree ID: element}, errors)``."""
    doc = _load_document(path)
    return doc.root, doc.trees, doc.errors


def select_tree(path: str, tree_id: str | None = None) -> tuple[str, dict[str, Element]]:
    """The tree to use in ``path`` (``tree_id``, else main_tree_to_execute, else the only one)
    and all trees of the file and its includes; raises the first :class:`HriError`."""
    doc, selected = _document_and_tree(path, tree_id)
    return selected, doc.trees


def _document_and_tree(path: str, tree_id: str | None) -> tuple["_Document", str]:
    doc = _load_document(path)
    if doc.errors:
        raise doc.errors[0]
    selected = _select_tree(doc, tree_id)
    if isinstance(selected, HriError):
        raise selected
    return doc, selected


class _Builder:
    """Builds py_trees behaviours from elements; collects errors and keeps going."""

    def __init__(self, doc: _Document, registry: NodeRegistry, ctx: TreeContext):
        self.doc = doc
        self.registry = registry
        self.ctx = ctx
        self.errors: list[HriError] = []

    def error(self, element: Element, message: str) -> None:
        self.errors.append(HriError(message, element.file, element.line))

    def build_tree(self, tree_id: str, blackboard: Blackboard, stack: tuple[str, ...]) -> Behaviour:
        tree = self.doc.trees[tree_id]
        nodes = tree.children
        if len(nodes) != 1:
            self.error(tree, f"tree {tree_id!r} must have exactly one root node, has {len(nodes)}")
            if not nodes:
                return _placeholder()
        return self.build(nodes[0], blackboard, (*stack, tree_id), 1)

    def build(self, element: Element, blackboard: Blackboard, stack: tuple[str, ...], depth: int) -> Behaviour:
        if depth > MAX_DEPTH:
            self.error(element, f"tree nested deeper than {MAX_DEPTH} levels")
            return _placeholder()
        if element.tag == "SubTree":
            return self.build_subtree(element, blackboard, stack, depth)
        attrs = dict(element.attrib)
        node_id = element.tag
        explicit = EXPLICIT_KINDS.get(element.tag)
        if explicit is not None:
            node_id = attrs.pop("ID", "").strip()
            if not node_id:
                self.error(element, f"<{element.tag}> needs an ID")
        name = attrs.pop("name", None) or node_id or element.tag
        node_type = None
        if node_id:
            if node_id in self.registry:
                node_type = self.registry.get(node_id)
            else:
                close = difflib.get_close_matches(node_id, self.registry.ids(), n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                self.error(element, f"unknown node type {node_id!r}{hint}")
        children = [self.build(child, blackboard, stack, depth + 1) for child in element.children]
        if node_type is None:
            return _placeholder()
        own = len(self.errors)
        cls, kind = node_type.cls, node_type.kind
        leaf = kind in ("action", "condition")
        if explicit is not None and (explicit in ("action", "condition")) != leaf:
            self.error(element, f"{node_id!r} is {_article(kind)} {kind} node, not {_article(explicit)} {explicit} node")
        if leaf and children:
            self.error(element, f"{node_id!r} is {_article(kind)} {kind} node and cannot have children")
        elif not leaf:
            message = cls.children_count_error(len(children))
            if message:
                self.error(element, f"{kind} {node_id!r} {message}")
        for message in cls.parse_ports(attrs)[1]:
            self.error(element, f"{node_id}: {message}")
        if len(self.errors) > own:
            return _placeholder()
        try:
            if leaf:
                node = cls(name, attrs, self.ctx, blackboard)
            else:
                node = cls(name, attrs, self.ctx, blackboard, children)
        except (PortError, ValueError) as err:
            self.error(element, f"{node_id}: {getattr(err, 'message', err)}")
            return _placeholder()
        node.location = (element.file, element.line)
        node.type_id = node_id  # as written: an alias (AmICalled) is not its class's name
        return node

    def build_subtree(self, element: Element, blackboard: Blackboard, stack: tuple[str, ...],
                      depth: int) -> Behaviour:
        attrs = dict(element.attrib)
        tree_id = attrs.pop("ID", "").strip()
        name = attrs.pop("name", None) or tree_id or "SubTree"
        attrs.pop("_description", None)
        ok = True
        autoremap = False
        if "_autoremap" in attrs:
            try:
                autoremap = to_bool(attrs.pop("_autoremap"))
            except ValueError as err:
                self.error(element, f"SubTree: attribute '_autoremap': {err}")
                ok = False
        if element.children:
            self.error(element, "<SubTree> cannot have child elements")
            ok = False
        remapping: dict[str, str] = {}
        literals: dict[str, str] = {}
        for port, value in attrs.items():
            if port.startswith("_"):
                self.error(element, f"SubTree: attribute {port!r} (BehaviorTree.CPP scripting) is not supported")
                ok = False
                continue
            try:
                key = reference_key(value, port)
            except PortError as err:
                self.error(element, f"SubTree: {err.message}")
                ok = False
                continue
            if key is None:
                literals[port] = value
            else:
                remapping[port] = key
        if not tree_id:
            self.error(element, "<SubTree> needs an ID")
            return _placeholder()
        if tree_id not in self.doc.trees:
            known = ", ".join(sorted(self.doc.trees)) or "none"
            self.error(element, f"unknown SubTree ID {tree_id!r} (trees: {known})")
            return _placeholder()
        if tree_id in stack:
            chain = " -> ".join([*stack[stack.index(tree_id):], tree_id])
            self.error(element, f"SubTree recursion: {chain}")
            return _placeholder()
        scope = Blackboard(blackboard, remapping, autoremap)
        for port, value in literals.items():
            scope.set_local(port, value)
        root = self.build_tree(tree_id, scope, stack)
        if not ok:
            return _placeholder()
        node = SubTreeNode(name, {}, self.ctx, scope, [root])
        node.tree_id = tree_id
        node.location = (element.file, element.line)
        return node


def _article(word: str) -> str:
    return "an" if word[0] in "aeiou" else "a"


def _placeholder() -> Behaviour:
    """Stands in for a node that could not be built, so the checks can go on."""
    return py_trees.behaviours.Dummy("<invalid>")


def _select_tree(doc: _Document, tree_id: str | None) -> str | HriError:
    root = doc.root
    line = root.line if root else None
    if tree_id is not None:
        if tree_id not in doc.trees:
            return HriError(f"no tree {tree_id!r} (trees: {', '.join(sorted(doc.trees)) or 'none'})", doc.path)
        return tree_id
    main = root.attrib.get("main_tree_to_execute", "").strip() if root else ""
    if main and root:
        line = root.line_of("main_tree_to_execute")
        if main not in doc.trees:
            known = ", ".join(sorted(doc.trees)) or "none"
            return HriError(f"main_tree_to_execute {main!r} is not a tree (trees: {known})", doc.path, line)
        return main
    candidates = doc.top_level_trees or list(doc.trees)
    if len(candidates) == 1:
        return candidates[0]
    if not candidates:
        return HriError("no <BehaviorTree> in the file", doc.path, line)
    return HriError(f"{len(candidates)} trees and no main_tree_to_execute", doc.path, line)


def load_tree(path: str, registry: NodeRegistry, ctx: TreeContext, blackboard: Blackboard,
              tree_id: str | None = None) -> Behaviour:
    """Load the tree ``tree_id`` (else main_tree_to_execute, else the only tree) of ``path``.

    Returns the root behaviour; its nodes share ``ctx`` and use ``blackboard`` (SubTrees get
    child scopes). Raises the first :class:`HriError` found (``validate_file`` lists all).
    """
    doc, selected = _document_and_tree(path, tree_id)
    builder = _Builder(doc, registry, ctx)
    root = builder.build_tree(selected, blackboard, ())
    if builder.errors:
        raise builder.errors[0]
    return root


def validate_file(path: str, registry: NodeRegistry) -> list[HriError]:
    """All problems of ``path`` and its includes (every tree is checked); [] when fine."""
    doc = _load_document(path)
    errors = list(doc.errors)
    if not doc.errors and not doc.trees:
        errors.append(HriError("no <BehaviorTree> in the file", path, doc.root.line if doc.root else None))
    if doc.root is not None and doc.root.tag == "root" and doc.root.attrib.get("main_tree_to_execute"):
        selected = _select_tree(doc, None)
        if isinstance(selected, HriError):
            errors.append(selected)
    ctx = TreeContext(rng=np.random.default_rng(0), now=lambda: 0.0)
    builder = _Builder(doc, registry, ctx)
    for tree_id in doc.trees:
        builder.build_tree(tree_id, Blackboard(), ())
    errors.extend(builder.errors)
    unique: dict[tuple[str | None, int | None, str], HriError] = {}
    for err in errors:
        unique.setdefault((err.file, err.line, err.message), err)
    return list(unique.values())
