"""The node catalogue: every registered node type with its kind, ports and description.

* :func:`catalogue` lists :class:`NodeEntry` s of a registry (sorted by ID);
* :func:`format_catalogue` prints them as a readable text table (``hri nodes``);
* :func:`tree_nodes_model_xml` writes BehaviorTree.CPP v4's ``<TreeNodesModel>`` as Groot2
  loads it (``hri nodes --xml``), the format of BehaviorTree.CPP's
  ``writeTreeNodesModelXML``::

      <root BTCPP_format="4">
        <TreeNodesModel>
          <Action ID="RobotMove">
            <input_port name="target" type="Pose">tool pose (x;y;z;qx;qy;qz;qw)</input_port>
          </Action>
          ...
        </TreeNodesModel>
      </root>

  One ``<Action|Condition|Control|Decorator ID="...">`` per node; one ``<input_port>``,
  ``<output_port>`` or ``<inout_port>`` per port with ``name``, ``type`` (the port's value
  type; left out for ``Any``), ``default`` (for an optional port with a default) and the
  description as text. Nodes BehaviorTree.CPP itself provides (:data:`BTCPP_BUILTIN_IDS`,
  known to Groot2) are left out unless ``include_builtin``.
"""

from __future__ import annotations

import inspect
import textwrap
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from typing import Any

from py_trees.common import Status

from hri.bt.factory import NodeRegistry
from hri.bt.node_status import Skipped, status_name
from hri.bt.ports import REQUIRED, Port
from hri.bt.value_types import type_name
from hri.base.geometry import Area, Pose

BTCPP_BUILTIN_IDS = frozenset({
    # BehaviorTree.CPP 4.x BehaviorTreeFactory::builtinNodes() (bt_factory.cpp)
    "Fallback", "AsyncFallback", "Sequence", "AsyncSequence", "SequenceWithMemory", "Parallel",
    "ParallelAll", "ReactiveSequence", "ReactiveFallback", "IfThenElse", "WhileDoElse", "TryCatch",
    "Inverter", "RetryUntilSuccessful", "KeepRunningUntilFailure", "Repeat", "Timeout", "Delay",
    "RunOnce", "ForceSuccess", "ForceFailure", "AlwaysSuccess", "AlwaysFailure", "Script",
    "ScriptCondition", "SetBlackboard", "Sleep", "UnsetBlackboard", "SubTree", "Precondition",
    "Switch2", "Switch3", "Switch4", "Switch5", "Switch6", "LoopInt", "LoopBool", "LoopDouble",
    "LoopString", "WasEntryUpdated", "SkipUnlessUpdated", "WaitValueUpdate",
})
"""Node IDs every BehaviorTree.CPP v4 factory (and so Groot2) knows without a model."""

MODEL_TAGS = {"action": "Action", "condition": "Condition", "control": "Control", "decorator": "Decorator"}
PORT_TAGS = {"in": "input_port", "out": "output_port", "inout": "inout_port"}


@dataclass(frozen=True)
class NodeEntry:
    """One node type of the catalogue."""

    node_id: str
    kind: str
    ports: tuple[Port, ...]
    description: str
    builtin: bool


def first_paragraph(doc: str | None) -> str:
    """The first paragraph of a docstring, on one line."""
    if not doc:
        return ""
    text = inspect.cleandoc(doc)
    return " ".join(text.split("\n\n", 1)[0].split())


def port_type(port: Port) -> str:
    """The port's value type as written in the catalogue (``""`` for Any; BehaviorTree.CPP's
    ``NodeStatus`` for a status)."""
    if port.type is Status:
        return "NodeStatus"
    return "" if port.type is Any else type_name(port.type)


def format_value(value: Any) -> str:
    """A typed value as the literal a tree file would hold (``0.5``, ``true``, ``1;0;0;0``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (Status, Skipped)):
        return status_name(value)
    if isinstance(value, Pose):
        return ";".join(format_value(v) for v in (*value.position, *value.orientation))
    if isinstance(value, Area):
        return ";".join(f"{format_value(x)},{format_value(y)}" for x, y in value.points)
    if isinstance(value, (tuple, list)):
        return ";".join(format_value(v) for v in value)
    if isinstance(value, float):
        return repr(value)
    return str(value)


def port_default(port: Port) -> str | None:
    """The default as literal text; None for a required port or one without a default."""
    if port.default is REQUIRED or port.default is None:
        return None
    return format_value(port.default)


def catalogue(registry: NodeRegistry) -> list[NodeEntry]:
    """Every node type of ``registry``, sorted by ID."""
    entries = []
    for node_id in registry.ids():
        node_type = registry.get(node_id)
        ports = tuple(getattr(node_type.cls, "PORTS", ()))
        entries.append(NodeEntry(node_id, node_type.kind, ports, first_paragraph(node_type.cls.__doc__),
                                 node_id in BTCPP_BUILTIN_IDS))
    return entries


def _port_line(port: Port) -> str:
    parts = [port.direction]
    if port_type(port):
        parts.append(port_type(port))
    default = port_default(port)
    if port.required:
        parts.append("required")
    elif default is not None:
        parts.append(f"default {default}")
    else:
        parts.append("optional")
    text = f"{port.name} ({', '.join(parts)})"
    return f"{text}: {port.description}" if port.description else text


def format_catalogue(registry: NodeRegistry, width: int = 100) -> str:
    """The catalogue as text: a summary table, then every node with its ports."""
    entries = catalogue(registry)
    id_width = max((len(e.node_id) for e in entries), default=2)
    lines = [f"{'ID':<{id_width}}  {'kind':<9}  ports", f"{'-' * id_width}  {'-' * 9}  {'-' * 20}"]
    for entry in entries:
        ports = ", ".join(f"{p.name}({p.direction})" for p in entry.ports) or "-"
        lines.append(f"{entry.node_id:<{id_width}}  {entry.kind:<9}  {ports}")
    lines.append("")
    for entry in entries:
        marker = "  [BehaviorTree.CPP built-in]" if entry.builtin else ""
        lines.append(f"{entry.node_id} ({entry.kind}){marker}")
        if entry.description:
            lines.extend(textwrap.wrap(entry.description, width, initial_indent="    ", subsequent_indent="    "))
        for port in entry.ports:
            lines.extend(textwrap.wrap(_port_line(port), width, initial_indent="    - ",
                                       subsequent_indent="      "))
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def tree_nodes_model(registry: NodeRegistry, include_builtin: bool = False,
                     only: set[str] | None = None) -> ET.Element:
    """``<root BTCPP_format="4"><TreeNodesModel>...`` as an ElementTree element (``only``: just
    these node IDs)."""
    root = ET.Element("root", {"BTCPP_format": "4"})
    model = ET.SubElement(root, "TreeNodesModel")
    for entry in catalogue(registry):
        if (entry.builtin and not include_builtin) or (only is not None and entry.node_id not in only):
            continue
        node = ET.SubElement(model, MODEL_TAGS[entry.kind], {"ID": entry.node_id})
        for port in entry.ports:
            attrs = {"name": port.name}
            if port_type(port):
                attrs["type"] = port_type(port)
            default = port_default(port)
            if default is not None:
                attrs["default"] = default
            element = ET.SubElement(node, PORT_TAGS[port.direction], attrs)
            if port.description:
                element.text = port.description
    return root


def tree_nodes_model_xml(registry: NodeRegistry, include_builtin: bool = False) -> str:
    """The TreeNodesModel document as text (UTF-8 XML with a declaration)."""
    root = tree_nodes_model(registry, include_builtin)
    ET.indent(root, space="  ")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
