"""The ``<TreeNodesModel>`` of BehaviorTree.CPP's tree XML: the model of every node type.

BehaviorTree.CPP's ``WriteTreeToXML(tree, true, true)`` (``src/xml_parsing.cpp``,
``addTreeToXML`` and ``addNodeModelToXML``), which its loggers and Groot2 publisher call,
ends the tree's XML with the model of every node type its factory has registered, built-in
ones included, sorted by ID (a ``std::map``)::

    <Decorator ID="RunOnce">
        <input_port name="then_skip" type="bool" default="true">If true, skip after ...</input_port>
    </Decorator>

The built-in models are BehaviorTree.CPP's own, as its 4.10.0 prints them
(``btcpp_models.xml``, captured from its ``FileLogger2``; the ports come in the order of the
``std::unordered_map`` that holds them). Every other node type of a registry (hri's own,
a scenario's plug-ins) is modelled from its class's ``PORTS`` as ``hri nodes --xml`` writes
them (:mod:`hri.bt.catalogue`): ``type`` is hri's name of the value type (left out for any
type), ``default`` the literal, the description the text.

A model also tells the tree writer each port's direction and default: BehaviorTree.CPP's
parser adds a port the XML leaves out with the default of its model to the node's ports
(``createNodeFromXML``), and the tree's XML shows it.
"""

from __future__ import annotations

import functools
import importlib.resources
import xml.etree.ElementTree as ET
from dataclasses import dataclass

from hri.bt.catalogue import MODEL_TAGS, PORT_TAGS, catalogue, port_default, port_type
from hri.bt.factory import NodeRegistry
from hri.bt.loggers.xml_printer import XmlElement

BUILTIN_MODELS_FILE = "btcpp_models.xml"
_DIRECTIONS = {tag: direction for direction, tag in PORT_TAGS.items()}


@dataclass(frozen=True)
class PortModel:
    """A port of a model: name, direction (``in``, ``out``, ``inout``), default text or None."""

    name: str
    direction: str
    default: str | None


@dataclass(frozen=True)
class NodeModel:
    """One node type's model: its ports and its ``<TreeNodesModel>`` element."""

    node_id: str
    ports: tuple[PortModel, ...]
    element: XmlElement

    def port(self, name: str) -> PortModel | None:
        for port in self.ports:
            if port.name == name:
                return port
        return None


def _from_xml(node: ET.Element) -> NodeModel:
    ports = []
    children = []
    for port in node:
        ports.append(PortModel(port.attrib["name"], _DIRECTIONS[port.tag], port.attrib.get("default")))
        children.append(XmlElement(port.tag, list(port.attrib.items()), text=port.text))
    return NodeModel(node.attrib["ID"], tuple(ports), XmlElement(node.tag, list(node.attrib.items()), children))


@functools.cache
def builtin_models() -> dict[str, NodeModel]:
    """BehaviorTree.CPP 4.10.0's built-in node models, by ID."""
    text = importlib.resources.files("hri.bt.loggers").joinpath(BUILTIN_MODELS_FILE).read_text(encoding="utf-8")
    section = ET.fromstring(text).find("TreeNodesModel")
    assert section is not None, BUILTIN_MODELS_FILE
    return {model.node_id: model for model in map(_from_xml, section)}


def registry_models(registry: NodeRegistry) -> dict[str, NodeModel]:
    """Every node type of ``registry`` that is not built into BehaviorTree.CPP, by ID."""
    builtin = builtin_models()
    models = {}
    for entry in catalogue(registry):
        if entry.node_id in builtin:
            continue
        ports, children = [], []
        for port in entry.ports:
            default = port_default(port)
            ports.append(PortModel(port.name, port.direction, default))
            element = XmlElement(PORT_TAGS[port.direction], [("name", port.name)], text=port.description or None)
            if port_type(port):
                element.set("type", port_type(port))
            if default is not None:
                element.set("default", default)
            children.append(element)
        models[entry.node_id] = NodeModel(entry.node_id, tuple(ports),
                                          XmlElement(MODEL_TAGS[entry.kind], [("ID", entry.node_id)], children))
    return models


def all_models(registry: NodeRegistry) -> dict[str, NodeModel]:
    """The models BehaviorTree.CPP's factory would hold with ``registry``'s nodes: its
    built-ins and the registry's others, sorted by ID as ``std::map`` sorts strings."""
    models = {**builtin_models(), **registry_models(registry)}
    return {node_id: models[node_id] for node_id in sorted(models, key=lambda i: i.encode("utf-8"))}


def tree_nodes_model(models: dict[str, NodeModel]) -> XmlElement:
    """The ``<TreeNodesModel>`` element of ``models`` (:func:`all_models`), in their order."""
    return XmlElement("TreeNodesModel", children=[model.element for model in models.values()])
