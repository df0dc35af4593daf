"""``hri convert``: write a tree file in the other format (XML <-> YAML).

Both directions keep the nodes, ports and structure; includes are pointed at the other
format's file of the same name. XML -> YAML keeps the XML's leading comments. YAML -> XML
writes BehaviorTree.CPP v4 XML as Groot2 writes it, with a ``<TreeNodesModel>`` of the
project's own nodes the file uses, so Groot2 shows their ports.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import xml.etree.ElementTree as ET

from hri.bt.tree_files import Element
from hri.bt.xml_text import parse_xml
from hri.bt.yaml_format import dump_yaml, parse_yaml
from hri.errors import HriError
from hri.files import write_atomic


def xml_to_yaml(source: Path) -> str:
    try:
        data = source.read_bytes()
    except OSError as err:
        raise HriError(f"cannot read: {err.strerror}", str(source)) from None
    head = data.decode("utf-8", errors="replace").split("<root", 1)[0]
    comments = [textwrap.dedent(" " * 5 + c.strip()).strip() for c in re.findall(r"<!--(.*?)-->", head, re.S)]
    header = f"The YAML form of {source.name} (the same tree; see docs/trees.md, \"YAML trees\")."
    if comments:
        header += "\n\n" + "\n".join(line.strip() for c in comments for line in c.splitlines())
    return dump_yaml(parse_xml(data, str(source)), header=header, include_suffix=".yaml")


def yaml_to_xml(source: Path) -> str:
    from hri.bt.catalogue import tree_nodes_model
    from hri.bt.factory import default_registry

    try:
        data = source.read_bytes()
    except OSError as err:
        raise HriError(f"cannot read: {err.strerror}", str(source)) from None
    parsed = parse_yaml(data, str(source))
    root = _to_etree(parsed)
    used = {e.tag for e in _walk(parsed)}
    model = tree_nodes_model(default_registry(), only=used).find("TreeNodesModel")
    if len(model):
        root.append(model)
    ET.indent(root, space="  ")
    comment = f"<!-- The XML form of {source.name} (the same tree; see docs/trees.md). -->"
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + comment + "\n" + ET.tostring(root, encoding="unicode") + "\n"


def _to_etree(element: Element) -> ET.Element:
    attrib = dict(element.attrib)
    if element.tag == "include" and "path" in attrib:
        attrib["path"] = str(Path(attrib["path"]).with_suffix(".xml"))
    node = ET.Element(element.tag, attrib)
    node.extend(_to_etree(child) for child in element.children)
    return node


def _walk(element: Element):
    yield element
    for child in element.children:
        yield from _walk(child)


def convert_file(source: Path, target: Path | None) -> Path:
    """Convert ``source`` to the other format at ``target`` (default: beside it)."""
    suffix = source.suffix.lower()
    if suffix == ".xml":
        target, text = target or source.with_suffix(".yaml"), xml_to_yaml(source)
    elif suffix in (".yaml", ".yml"):
        target, text = target or source.with_suffix(".xml"), yaml_to_xml(source)
    else:
        raise HriError("a tree file ends in .xml, .yaml or .yml", str(source))
    try:
        write_atomic(target, text)
    except OSError as err:
        raise HriError(f"cannot write: {err.strerror or err}", str(target)) from None
    return target
