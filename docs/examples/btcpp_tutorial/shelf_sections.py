"""The tutorial's scripting enums: the shelf's sections by name.

A plug-in that registers no node, only names a script may use for numbers, as
BehaviorTree.CPP's ``registerScriptingEnum`` does (docs/tutorial_btcpp.md).
"""

from hri.bt.factory import NodeRegistry

SECTIONS = {"SHELF_LEFT": 1, "SHELF_MIDDLE": 2, "SHELF_RIGHT": 3}


def register_nodes(registry: NodeRegistry) -> None:
    for name, value in SECTIONS.items():
        registry.register_enum(name, value)
