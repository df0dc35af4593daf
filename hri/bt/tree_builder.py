"""Builds nodes from the element tree of a tree file, as BehaviorTree.CPP's parser instantiates them.

For every element: the node type from the registry (by tag, or ``ID`` in the explicit form
``<Action ID="...">``), the ``name``, the ports (checked by the node class), the pre- and
post-condition scripts (``_skipIf`` ... ``_onHalted``, parsed here), and the blackboard
entries its ``{key}`` ports name, created with the port's type so that a later port of
another type is refused (an entry first typed as a string takes any port). "Later" is in
BehaviorTree.CPP's order: a node's entries are created before its children are built, the
children in order, a subtree's nodes where its ``<SubTree>`` stands.

A ``<SubTree>`` gets a child blackboard scope: ``port="{key}"`` remaps to the parent's
entry, ``{=}`` to the entry of the same name, a literal is set in the scope (an integer, a
number or a string, as BehaviorTree.CPP types it), ``_autoremap`` remaps the rest; ports a
``<TreeNodesModel>`` declares for the subtree take their defaults.

Mistakes are collected as :class:`~hri.base.errors.HriError` ``FILE:LINE: message`` and building
goes on, so ``hri validate`` lists them all. A node class whose constructor raises (a plug-in's
bug) is one of them too: the node, its element's line and the exception, the traceback kept
with the error (:func:`constructor_error`).
"""

from __future__ import annotations

import difflib
import traceback
from typing import Any

import py_trees
from py_trees.behaviour import Behaviour

from hri.bt.blackboard import Blackboard, strongly_typed
from hri.bt.context import TreeContext
from hri.bt.decorators import SubTreeNode
from hri.bt.factory import NodeRegistry
from hri.bt.node import POST_CONDITIONS, PRE_CONDITIONS, Conditions, NodeConfig
from hri.bt.ports import Port, PortError, reference_key
from hri.bt.script_port import parse_or_error
from hri.bt.tree_files import Element, model_name_problem
from hri.bt.value_types import cpp_float, cpp_int, to_bool
from hri.base.errors import STOPS, HriError, exception_line, shown_path

EXPLICIT_KINDS = {"Action": "action", "Condition": "condition", "Control": "control", "Decorator": "decorator"}
MAX_DEPTH = 256
"""Deepest nesting of nodes in a tree, as BehaviorTree.CPP allows."""
MAX_NODES = 5_000
"""The most nodes a tree may have, each SubTree's counted every time it is used (the presets'
trees have at most 55): a tree file is a few MB at most, but a subtree used ten times in a
subtree used ten times ... builds ten times more nodes at each level, and every node costs
time at every tick."""
CONDITION_ATTRIBUTES = PRE_CONDITIONS + POST_CONDITIONS


class TreeBuilder:
    """Builds py_trees behaviours from elements; collects errors and keeps going."""

    def __init__(self, trees: dict[str, Element], subtree_models: dict[str, dict[str, str | None]],
                 registry: NodeRegistry, ctx: TreeContext):
        self.trees = trees
        self.subtree_models = subtree_models
        self.registry = registry
        self.ctx = ctx
        ctx.enums = registry.enums
        self.errors: list[HriError] = []
        self._subtree_path: list[str] = []
        self._subtree_paths: set[str] = set()
        self._nodes = 0  # built so far in the tree being built
        self._beyond: Behaviour | None = None  # what stands for every node past MAX_NODES
        # where each entry got its type from a port, to name it when a later port disagrees
        # (keyed by the entry's id: entries live as long as the builder's trees)
        self._typed_at: dict[int, tuple[str, str, int]] = {}

    @property
    def too_large(self) -> bool:
        """The tree being built has more than :data:`MAX_NODES` nodes (and an error says so)."""
        return self._nodes > MAX_NODES

    def error(self, element: Element, message: str) -> None:
        self.errors.append(HriError(message, element.file, element.line))

    def build_tree(self, tree_id: str, blackboard: Blackboard, stack: tuple[str, ...]) -> Behaviour:
        """The root node of tree ``tree_id`` on ``blackboard``."""
        if not stack:  # a tree of its own, not a subtree: its nodes are counted from here
            self._nodes = 0
        tree = self.trees[tree_id]
        if tree_id in self.registry:
            self.error(tree, f"tree ID {tree_id!r} is the name of a node type")
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
        self._nodes += 1
        if self._nodes > MAX_NODES:  # said once; the rest is not built, not even as placeholders
            if self._nodes == MAX_NODES + 1:
                self.error(element, f"the tree has more than {MAX_NODES} nodes (a SubTree's counted each time it is used)")
                self._beyond = _placeholder()
            return self._beyond
        if element.tag == "SubTree":
            return self.build_subtree(element, blackboard, stack, depth)
        attrs = dict(element.attrib)
        node_id = self._node_id(element, attrs)
        name = attrs.pop("name", None) or node_id or element.tag
        conditions = self._conditions(element, node_id or element.tag, attrs)
        node_type = self._node_type(element, node_id)
        ports = None if node_type is None else node_type.cls.parse_ports(attrs)
        if ports is not None and not ports[1]:  # BehaviorTree.CPP types the entries before the children
            self._declare_entries(element, node_id, node_type.cls, ports[0], blackboard)
        children = [self.build(child, blackboard, stack, depth + 1) for child in element.children]
        if node_type is None or ports is None or self.too_large:
            return _placeholder()
        own = len(self.errors)
        self._check_shape(element, node_id, node_type.kind, node_type.cls, len(children))
        for message in ports[1]:
            self.error(element, f"{node_id}: {message}")
        if len(self.errors) > own:
            return _placeholder()
        config = NodeConfig(name, attrs, self.ctx, blackboard, tuple(children), type_id=node_id,
                            location=(element.file, element.line), conditions=conditions)
        try:
            node = node_type.cls(config)
        except (PortError, ValueError) as err:
            self.error(element, f"{node_id}: {getattr(err, 'message', err)}")
            return _placeholder()
        except STOPS:
            raise
        except BaseException as err:  # a plug-in's bug (or its own HriError): one line, never a traceback
            self.errors.append(constructor_error(element, node_id, name, err))
            return _placeholder()
        return node

    def _node_id(self, element: Element, attrs: dict[str, str]) -> str:
        if element.tag not in EXPLICIT_KINDS:
            if "ID" in attrs:
                self.error(element, f"attribute 'ID' is not allowed in <{element.tag}>")
            return element.tag
        node_id = attrs.pop("ID", "").strip()
        if not node_id:
            self.error(element, f"<{element.tag}> needs an ID")
        return node_id

    def _node_type(self, element: Element, node_id: str):
        if not node_id:
            return None
        if node_id in self.registry:
            return self.registry.get(node_id)
        close = difflib.get_close_matches(node_id, self.registry.ids(), n=1)
        hint = (f" (did you mean {close[0]!r}?)" if close else
                " (a node of your own? name its module in the scenario's plugins or give --plugin)")
        self.error(element, f"unknown node type {node_id!r}{hint}")
        return None

    def _check_shape(self, element: Element, node_id: str, kind: str, cls: Any, children: int) -> None:
        explicit = EXPLICIT_KINDS.get(element.tag)
        leaf = kind in ("action", "condition")
        if explicit is not None and (explicit in ("action", "condition")) != leaf:
            self.error(element, f"{node_id!r} is {_article(kind)} {kind} node, not {_article(explicit)} {explicit} node")
        if leaf and children:
            self.error(element, f"{node_id!r} is {_article(kind)} {kind} node and cannot have children")
        elif not leaf:
            message = cls.children_count_error(children)
            if message:
                self.error(element, f"{kind} {node_id!r} {message}")
        if node_id == "ReactiveSequence" and sum(c.tag == "AsyncSequence" for c in element.children) > 1:
            self.error(element, "a ReactiveSequence cannot have more than one AsyncSequence child")

    def _conditions(self, element: Element, what: str, attrs: dict[str, str]) -> Conditions | None:
        """The pre-/post-condition scripts among ``attrs`` (taken out of them), parsed."""
        scripts = {}
        for attr in CONDITION_ATTRIBUTES:
            code = attrs.pop(attr, None)
            if code is None:
                continue
            try:
                scripts[attr] = parse_or_error(code, f"{what}: {attr}")
            except PortError as err:
                self.error(element, err.message)
        return Conditions(scripts) if scripts else None

    def _declare_entries(self, element: Element, node_id: str, cls: Any, ports: dict[str, tuple[str, Any]],
                         blackboard: Blackboard) -> None:
        """Create the entries the node's ``{key}`` ports name (``ports``: as ``parse_ports``
        gives them), typed by the port; refuse a port whose type differs from the entry's (a
        string entry may feed any port). Called before the node's children are built, as
        BehaviorTree.CPP's ``createNodeFromXML`` creates a node's entries before it recurses
        into the children: the first port in that order fixes an entry's type."""
        for port in cls.PORTS:
            kind, key = ports.get(port.name, ("lit", None))
            if kind != "ref":
                continue
            message = declare_entry(blackboard, key, port)
            entry = blackboard.get_entry(key)
            if message:
                first = self._typed_at.get(id(entry))
                where = f" (typed by {first[0]} at {shown_path(first[1])}:{first[2]})" if first else ""
                self.error(element, f"{node_id}: port {port.name!r}: {message}{where}")
            elif entry is not None and strongly_typed(entry.type):
                self._typed_at.setdefault(id(entry), (f"{node_id} port {port.name!r}", element.file, element.line))

    def build_subtree(self, element: Element, blackboard: Blackboard, stack: tuple[str, ...],
                      depth: int) -> Behaviour:
        attrs = dict(element.attrib)
        tree_id = attrs.pop("ID", "").strip()
        name = attrs.pop("name", None) or tree_id or "SubTree"
        conditions = self._conditions(element, f"SubTree {tree_id}", attrs)
        if element.children:
            self.error(element, "<SubTree> cannot have child elements")
        problem = self._subtree_problem(tree_id, stack) or self._path_problem(element)
        if problem:
            self.error(element, problem)
            return _placeholder()
        scope = self._subtree_scope(element, tree_id, attrs, blackboard)
        self._subtree_path.append(element.attrib.get("name") or f"{tree_id}@{element.file}:{element.line}")
        root = self.build_tree(tree_id, scope, stack)
        self._subtree_path.pop()
        if scope is None:
            return _placeholder()
        config = NodeConfig(name, {}, self.ctx, blackboard, (root,), type_id="SubTree",
                            location=(element.file, element.line), conditions=conditions)
        return SubTreeNode(config, tree_id, scope, element.attrib.get("name"), attrs)

    def _path_problem(self, element: Element) -> str | None:
        """Two SubTrees of one name under one parent tree: Groot2 could not tell them apart,
        and BehaviorTree.CPP refuses them."""
        name = element.attrib.get("name")
        if name is None:
            return None
        path = "/".join([*self._subtree_path, name])
        if path in self._subtree_paths:
            return f"another SubTree in this tree is named {name!r} too"
        self._subtree_paths.add(path)
        return None

    def _subtree_problem(self, tree_id: str, stack: tuple[str, ...]) -> str | None:
        problem = model_name_problem(tree_id)
        if problem:
            return f"SubTree ID: {problem}"
        if tree_id not in self.trees:
            known = ", ".join(sorted(self.trees)) or "none"
            return f"unknown SubTree ID {tree_id!r} (trees: {known})"
        if tree_id in self.registry:
            return f"SubTree ID {tree_id!r} is the name of a node type"
        if tree_id in stack:
            chain = " -> ".join([*stack[stack.index(tree_id):], tree_id])
            return f"SubTree recursion: {chain}"
        return None

    def _subtree_scope(self, element: Element, tree_id: str, attrs: dict[str, str],
                       blackboard: Blackboard) -> Blackboard | None:
        """The subtree's blackboard scope (None after an error)."""
        autoremap = False
        if "_autoremap" in attrs:
            try:
                autoremap = to_bool(attrs["_autoremap"])
            except ValueError as err:
                self.error(element, f"SubTree: attribute '_autoremap': {err}")
                return None
        ports = {attr: value for attr, value in attrs.items() if not attr.startswith("_")}
        for port, default in self.subtree_models.get(tree_id, {}).items():
            if port in ports or autoremap:
                continue
            if default is None:
                self.error(element, f"SubTree {tree_id}: port {port!r} has no default in <TreeNodesModel> "
                                    "and is not given here")
                return None
            ports[port] = default
        remapping: dict[str, str] = {}
        literals: dict[str, Any] = {}
        for port, value in ports.items():
            try:
                key = reference_key(value, port)
            except PortError as err:
                self.error(element, f"SubTree: {err.message}")
                return None
            if key is None:
                literals[port] = subtree_literal(value)
            else:
                remapping[port] = key
        scope = Blackboard(blackboard, remapping, autoremap)
        for port, value in literals.items():
            scope.set_local(port, value)
        return scope


def constructor_error(element: Element, node_id: str, name: str, err: BaseException) -> HriError:
    """The error of a node class whose constructor raised: the node's type and name at its
    element's ``FILE:LINE``, and the exception's type and message; its traceback goes with
    it, to be saved where the command keeps one (:func:`hri.base.files.keep_traceback`). An
    :class:`HriError` the constructor raised is a message of its own: said as it is."""
    if isinstance(err, HriError):
        return err if err.file else HriError(f"{node_id} {name!r}: {err.message}", element.file, element.line)
    error = HriError(f"{node_id} {name!r}: constructor raised {exception_line(err)}", element.file, element.line)
    error.traceback = "".join(traceback.format_exception(err))
    return error


def subtree_literal(text: str) -> int | float | str:
    """A SubTree port's literal as BehaviorTree.CPP stores it: an integer (without ``.``,
    ``e``, ``E``), else a number, else the text."""
    if not any(c in text for c in ".eE"):
        number = cpp_int(text)
        if number is not None:
            return number
    real = cpp_float(text)
    return real if real is not None else text


def declare_entry(blackboard: Blackboard, key: str, port: Port) -> str | None:
    """Create the entry ``key`` typed by ``port`` if missing; a message when it exists with a
    different declared type (BehaviorTree.CPP allows a string entry to feed any port)."""
    declared = None if port.type is Any else port.type
    entry = blackboard.get_entry(key)
    if entry is None:
        try:
            blackboard.create_entry(key, declared)
        except ValueError as err:
            return str(err)
        return None
    if (strongly_typed(entry.type) and strongly_typed(declared) and entry.type is not declared
            and entry.type is not str):
        return (f"the port [{key}] was initially created with type [{_type_name(entry.type)}] and, "
                f"later type [{_type_name(declared)}] was used here")
    return None


def _type_name(type_: Any) -> str:
    return getattr(type_, "__name__", str(type_))


def _article(word: str) -> str:
    return "an" if word[0] in "aeiou" else "a"


def _placeholder() -> Behaviour:
    """Stands in for a node that could not be built, so the checks can go on."""
    return py_trees.behaviours.Dummy("<invalid>")
