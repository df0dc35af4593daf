"""A loaded tree as XML with node UIDs, as BehaviorTree.CPP's loggers write it.

BehaviorTree.CPP's ``FileLogger2``, ``Groot2Publisher`` and ``SqliteLogger`` describe the tree
they log with ``WriteTreeToXML(tree, add_metadata=true, add_builtin_models=true)``
(``src/xml_parsing.cpp``, BehaviorTree.CPP 4.10); :func:`tree_xml` writes the same text for
a tree hri loaded:

* **UIDs.** BehaviorTree.CPP's ``Tree::getUID`` numbers the nodes as the parser creates
  them, from 1: a node before its children, a ``SubTree`` node before the nodes of its
  subtree, which are created at once (``recursivelyCreateSubtree``). That is the pre-order of
  the tree with its subtrees expanded (:func:`nodes_by_uid`).
* **One ``<BehaviorTree>`` per subtree instance**, in the order they were created, the main
  tree first: ``ID`` and ``_fullpath`` (the main tree's is empty; a subtree's is its
  parent's, a ``/``, then the SubTree's ``name``, or ``ID::UID`` without one).
* **A node** is an element named by its registration ID with ``name`` and ``_uid``; a
  ``SubTree`` node is ``<SubTree ID=... _fullpath=... _uid=...>`` with no children (its
  subtree is its own ``<BehaviorTree>``). Then its ports: those the XML gives (names that
  ``IsAllowedPortName`` accepts), then the model's defaults for input ports it leaves out
  (and output ports whose default is a ``{key}``), inputs before outputs; then the
  pre-condition scripts (``_failureIf``, ``_successIf``, ``_skipIf``, ``_while``) and the
  post-condition scripts (``_onHalted``, ``_onFailure``, ``_onSuccess``, ``_post``).
* **``<TreeNodesModel>``** last (:mod:`hri.bt.loggers.node_models`).

BehaviorTree.CPP keeps a node's ports in a ``std::unordered_map``, so its attribute order
follows libstdc++'s string hash; hri writes them in the order of the tree file. XML gives
attribute order no meaning, and Groot2 reads either.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hri.bt.decorators import SubTreeNode
from hri.bt.factory import NodeRegistry
from hri.bt.loggers.btlog_reader import FIRST_UID
from hri.bt.loggers.node_models import NodeModel, all_models, tree_nodes_model
from hri.bt.loggers.xml_printer import XmlElement, element_lines
from hri.bt.node import POST_CONDITIONS, PRE_CONDITIONS, Conditions, TreeNode
from hri.bt.status import preorder
from hri.bt.tree import Tree

BTCPP_FORMAT = "4"
# findForbiddenChar (basic_types.cpp): characters a port name may not hold
_FORBIDDEN_IN_PORT_NAMES = frozenset(" \t\n\r<>&\"'/\\:*?|.")
_RESERVED_ATTRIBUTES = frozenset((*PRE_CONDITIONS, *POST_CONDITIONS, "name", "ID", "_autoremap"))


def nodes_by_uid(root: Any) -> list[TreeNode]:
    """The tree's nodes in the order of their UIDs: ``nodes[i]`` has UID ``i + FIRST_UID``."""
    return [node for _, node in preorder(root)]


def is_allowed_port_name(name: str) -> bool:
    """BehaviorTree.CPP's ``IsAllowedPortName``: starts with a letter, no forbidden character,
    not a reserved attribute (``name``, ``ID``, ``_autoremap``, the condition scripts)."""
    return (bool(name) and (name[0].isascii() and name[0].isalpha())
            and not any(c in _FORBIDDEN_IN_PORT_NAMES for c in name) and name not in _RESERVED_ATTRIBUTES)


def is_blackboard_pointer(text: str) -> bool:
    """BehaviorTree.CPP's ``TreeNode::isBlackboardPointer``: ``{...}``, spaces around allowed."""
    stripped = text.strip(" ")
    return len(stripped) >= 3 and stripped[0] == "{" and stripped[-1] == "}"


@dataclass(frozen=True)
class _Subtree:
    """One ``<BehaviorTree>`` of the XML: a subtree instance and where it sits."""

    tree_id: str
    path: str
    root: TreeNode


def tree_xml(tree: Tree, registry: NodeRegistry) -> str:
    """The tree's XML as BehaviorTree.CPP's ``WriteTreeToXML(tree, true, true)`` writes it."""
    uids = {id(node): uid for uid, node in enumerate(nodes_by_uid(tree.root), FIRST_UID)}
    models = all_models(registry)
    subtrees, paths = _subtrees(tree, uids)
    root = XmlElement("root", [("BTCPP_format", BTCPP_FORMAT)])
    for subtree in subtrees:
        element = XmlElement("BehaviorTree", [("ID", subtree.tree_id), ("_fullpath", subtree.path)])
        element.children.append(_node_element(subtree.root, uids, paths, models))
        root.children.append(element)
    root.children.append(tree_nodes_model(models))
    return "".join(element_lines(root))


def subtree_paths(tree: Tree) -> dict[int, str]:
    """Each SubTree node's path (``_fullpath``, the name its subtree goes by), by ``id``."""
    uids = {id(node): uid for uid, node in enumerate(nodes_by_uid(tree.root), FIRST_UID)}
    return _subtrees(tree, uids)[1]


def _subtrees(tree: Tree, uids: dict[int, int]) -> tuple[list[_Subtree], dict[int, str]]:
    """The subtree instances in the order BehaviorTree.CPP creates them, and each SubTree
    node's path (by ``id``)."""
    subtrees = [_Subtree(tree.tree_id, "", tree.root)]
    paths: dict[int, str] = {}
    stack: list[tuple[Any, str]] = [(tree.root, "")]
    while stack:
        node, parent_path = stack.pop()
        if isinstance(node, SubTreeNode):
            own = node.given_name if node.given_name is not None else f"{node.tree_id}::{uids[id(node)]}"
            path = f"{parent_path}/{own}" if parent_path else own
            paths[id(node)] = path
            subtrees.append(_Subtree(node.tree_id, path, node.child))
            stack.append((node.child, path))
            continue
        stack.extend((child, parent_path) for child in reversed(node.children))
    return subtrees, paths


def _node_element(node: TreeNode, uids: dict[int, int], paths: dict[int, str],
                  models: dict[str, NodeModel]) -> XmlElement:
    if isinstance(node, SubTreeNode):
        element = XmlElement("SubTree", [("ID", node.tree_id), ("_fullpath", paths[id(node)])])
        element.set("_uid", str(uids[id(node)]))
        for name, value in node.remapping.items():
            if is_allowed_port_name(name):
                element.set(name, value)
    else:
        element = XmlElement(node.type_id, [("name", node.name), ("_uid", str(uids[id(node)]))])
        for name, value in _ports(node, models.get(node.type_id)):
            element.set(name, value)
        element.children = [_node_element(child, uids, paths, models) for child in node.children]
    for name, code in _condition_scripts(node.conditions):
        element.set(name, code)
    return element


def _ports(node: TreeNode, model: NodeModel | None) -> list[tuple[str, str]]:
    """The node's ports as BehaviorTree.CPP's ``input_ports`` then ``output_ports`` hold them."""
    given = {name: value for name, value in getattr(node, "raw_ports", {}).items() if is_allowed_port_name(name)}
    model_ports = model.ports if model is not None else ()
    outward = {name for name in given if _direction(node, model, name) == "out"}
    inputs = [(name, value) for name, value in given.items() if name not in outward]
    inputs += [(port.name, port.default) for port in model_ports
               if port.direction != "out" and port.default and port.name not in given]
    outputs = [(name, value) for name, value in given.items() if name in outward]
    outputs += [(port.name, port.default) for port in model_ports
                if port.direction == "out" and port.default and is_blackboard_pointer(port.default)
                and port.name not in given]
    return inputs + outputs  # type: ignore[return-value]


def _direction(node: TreeNode, model: NodeModel | None, name: str) -> str:
    """A port's direction by BehaviorTree.CPP's model of the node, else by hri's class."""
    port = model.port(name) if model is not None else None
    if port is not None:
        return port.direction
    declared = node.port(name)
    return declared.direction if declared is not None else "in"


def _condition_scripts(conditions: Conditions | None) -> list[tuple[str, str]]:
    """The node's condition scripts as written, pre-conditions then post-conditions, each in
    BehaviorTree.CPP's order of its ``PreCond`` and ``PostCond`` enums."""
    if conditions is None:
        return []
    post = {"_onHalted": conditions.on_halted, "_onFailure": conditions.on_failure,
            "_onSuccess": conditions.on_success, "_post": conditions.post}
    return ([(name, script.code) for name, script in conditions.pre]
            + [(name, post[name].code) for name in POST_CONDITIONS if post[name] is not None])
