"""Behaviour-tree runtime on py_trees: BehaviorTree.CPP v4 XML trees with typed ports.

Typical use::

    registry = default_registry()
    tree = load_tree("trees/person.xml", registry, ctx, Blackboard())
    tree.tick_once()
"""

from hri.bt.blackboard import Blackboard
from hri.bt.context import TreeContext
from hri.bt.factory import NodeRegistry
from hri.bt.node import BTControl, BTDecorator, BTNode, NodeConfig, ServiceCallNode
from hri.bt.node_status import SKIPPED
from hri.bt.plugins import default_registry
from hri.bt.ports import REQUIRED, Port, PortError
from hri.bt.tree import Tree
from hri.bt.value_types import Quaternion, Weights
from hri.bt.xml_loader import load_tree, load_tree_text, validate_file

__all__ = [
    "REQUIRED",
    "SKIPPED",
    "BTControl",
    "BTDecorator",
    "BTNode",
    "Blackboard",
    "NodeConfig",
    "NodeRegistry",
    "Port",
    "PortError",
    "Quaternion",
    "ServiceCallNode",
    "Tree",
    "TreeContext",
    "Weights",
    "default_registry",
    "load_tree",
    "load_tree_text",
    "validate_file",
]
