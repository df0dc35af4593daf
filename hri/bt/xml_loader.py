"""The BehaviorTree.CPP v4 tree loader (Groot2's XML, or its YAML form), apart from the nodes.

Supported: ``<root BTCPP_format="4" main_tree_to_execute="...">``, several
``<BehaviorTree ID="...">``, nodes by registered ID as tag or in the explicit form
``<Action ID="...">`` (also ``Condition``, ``Control``, ``Decorator``), the ``name``
attribute, ``<SubTree ID="..." port="{parent_key}" _autoremap="true"/>`` (a child blackboard
scope; literal values are set in that scope), ``<include path="..."/>`` (relative to the
including file; cycles are errors) and ``<TreeNodesModel>`` (ignored).

The XML is parsed by :mod:`hri.bt.xml_text` into a small element tree that keeps every
element's line, so every user mistake becomes an :class:`~hri.base.errors.HriError`
``FILE:LINE: message``. A ``.yaml``/``.yml`` file (also as an include) is parsed by :mod:`hri.bt.yaml_format` into the same element tree
(:mod:`hri.bt.tree_files`); from there on both formats are loaded alike.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

from hri.bt.blackboard import Blackboard
from hri.bt.context import TreeContext
from hri.bt.factory import NodeRegistry
from hri.bt.tree import Tree
from hri.bt.tree_builder import TreeBuilder
from hri.bt.tree_files import Element, model_name_problem, port_name_problem, tree_format
from hri.bt.xml_text import parse_xml
from hri.bt.yaml_format import parse_yaml
from hri.base.untrusted import read_own
from hri.base.errors import HriError, shown_path

MAX_FILE_BYTES = 1024 * 1024
"""Tree files (and includes) larger than this (the presets' are 3 KB) are refused before they are
parsed: a megabyte of XML holds tens of thousands of nodes, beyond :data:`hri.bt.tree_builder.MAX_NODES`."""


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
    subtree_models: dict[str, dict[str, str | None]] = field(default_factory=dict)
    unnamed: int = 0


def _read(path: str, where: Element | None) -> bytes:
    file, line = (where.file, where.line) if where else (path, None)
    prefix = f"include file {shown_path(path)!r}: " if where else ""
    if not os.path.exists(path):
        raise HriError(f"{prefix}file not found", file if where else path, line)
    if not os.path.isfile(path):
        raise HriError(f"{prefix}not a regular file", file if where else path, line)
    try:
        data, problem = read_own(path, MAX_FILE_BYTES)
    except OSError as err:
        raise HriError(f"{prefix}cannot read: {err.strerror}", file if where else path, line) from None
    if problem is not None:
        raise HriError(f"{prefix}{problem}", file if where else path, line)
    return data


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
    _add_root(doc, root, path, where, stack, loaded)


def _add_root(doc: _Document, root: Element, path: str, where: Element | None, stack: list[str],
              loaded: set[str]) -> None:
    """Take the trees, includes and models of a parsed document into ``doc``."""
    real = os.path.realpath(path)
    if root.tag != "root":
        doc.errors.append(HriError(f"the document element must be <root>, not <{root.tag}>", path, root.line))
        return
    version = root.attrib.get("BTCPP_format")
    if version is not None and version.strip() != "4":
        doc.errors.append(HriError(f"BTCPP_format {version!r} is not supported (only 4)", path,
                                   root.line_of("BTCPP_format")))
    models = [element for element in root.children if element.tag == "TreeNodesModel"]
    if len(models) > 1:
        doc.errors.append(HriError("only one <TreeNodesModel> is allowed", path, models[1].line))
    for element in root.children:
        if element.tag == "BehaviorTree":
            _add_tree(doc, element, len(root.children), where is None)
        elif element.tag == "include":
            _include(doc, element, [*stack, real], loaded)
        elif element.tag == "TreeNodesModel":
            _read_subtree_models(doc, element)
        else:
            doc.errors.append(HriError(f"unexpected <{element.tag}> in <root> "
                                       "(expected BehaviorTree, include or TreeNodesModel)", path, element.line))


def _add_tree(doc: _Document, element: Element, siblings: int, top_level: bool) -> None:
    """Register a ``<BehaviorTree>``; one without an ID is allowed when it is the document's
    only element, as BehaviorTree.CPP allows it (named ``BehaviorTree_0``, ...)."""
    tree_id = element.attrib.get("ID", "").strip()
    if not tree_id:
        if siblings > 1:
            doc.errors.append(HriError("<BehaviorTree> needs an ID when the file has other elements",
                                       element.file, element.line))
            return
        tree_id = f"BehaviorTree_{doc.unnamed}"
        doc.unnamed += 1
    else:
        problem = model_name_problem(tree_id)
        if problem:
            doc.errors.append(HriError(f"tree ID: {problem}", element.file, element.line))
            return
    if tree_id in doc.trees:
        first = doc.trees[tree_id]
        doc.errors.append(HriError(f"tree {tree_id!r} is defined twice (first at {first.file}:{first.line})",
                                   element.file, element.line))
        return
    doc.trees[tree_id] = element
    if top_level:
        doc.top_level_trees.append(tree_id)


def _read_subtree_models(doc: _Document, model: Element) -> None:
    """The ports a ``<TreeNodesModel>`` declares for subtrees: ``{tree ID: {port: default}}``
    (None: no default, the port must be remapped)."""
    for element in model.children:
        if element.tag != "SubTree":
            continue
        tree_id = element.attrib.get("ID", "").strip()
        if not tree_id:
            doc.errors.append(HriError("<SubTree> in <TreeNodesModel> needs an ID", element.file, element.line))
            continue
        ports = doc.subtree_models.setdefault(tree_id, {})
        for port in element.children:
            if port.tag not in ("input_port", "output_port", "inout_port"):
                continue
            name = port.attrib.get("name")
            problem = "a port needs a name" if name is None else port_name_problem(name)
            if problem:
                doc.errors.append(HriError(f"<TreeNodesModel> SubTree {tree_id}: {problem}", port.file, port.line))
            else:
                ports[name] = port.attrib.get("default")


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


def subtree_models(path: str) -> dict[str, dict[str, str | None]]:
    """The ports the ``<TreeNodesModel>`` s of ``path`` and its includes declare for subtrees:
    ``{tree ID: {port: default or None}}``."""
    return _load_document(path).subtree_models


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
              tree_id: str | None = None) -> Tree:
    """Load the tree ``tree_id`` (else main_tree_to_execute, else the only tree) of ``path``.

    Its nodes share ``ctx`` and use ``blackboard`` (SubTrees get child scopes). Raises the
    first :class:`HriError` found (``validate_file`` lists all).
    """
    doc, selected = _document_and_tree(path, tree_id)
    return _build(doc, selected, registry, ctx, blackboard)


def load_tree_text(text: str, registry: NodeRegistry, ctx: TreeContext, blackboard: Blackboard,
                   file: str = "<text>") -> Tree:
    """A tree from XML text, as BehaviorTree.CPP's ``createTreeFromText`` (no includes)."""
    doc = _Document(file)
    try:
        root = parse_xml(text.encode("utf-8"), file)
    except HriError as err:
        doc.errors.append(err)
    else:
        doc.root = root
        _add_root(doc, root, file, None, [], set())
    if doc.errors:
        raise doc.errors[0]
    selected = _select_tree(doc, None)
    if isinstance(selected, HriError):
        raise selected
    return _build(doc, selected, registry, ctx, blackboard)


def _build(doc: _Document, tree_id: str, registry: NodeRegistry, ctx: TreeContext, blackboard: Blackboard) -> Tree:
    builder = TreeBuilder(doc.trees, doc.subtree_models, registry, ctx)
    root = builder.build_tree(tree_id, blackboard, ())
    if builder.errors:
        raise builder.errors[0]
    return Tree(root, blackboard, ctx, doc.path, tree_id)  # type: ignore[arg-type]


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
    builder = TreeBuilder(doc.trees, doc.subtree_models, registry, ctx)
    for tree_id in doc.trees:
        builder.build_tree(tree_id, Blackboard(), ())
        if builder.too_large:  # the others would be as large again: one line says it
            break
    errors.extend(builder.errors)
    unique: dict[tuple[str | None, int | None, str], HriError] = {}
    for err in errors:
        unique.setdefault((err.file, err.line, err.message), err)
    return list(unique.values())
