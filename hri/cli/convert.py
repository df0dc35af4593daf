"""``hri convert``: write a tree file as XML or as YAML, from either; the output's suffix picks.

XML -> YAML and YAML -> XML change the syntax; XML -> XML and YAML -> YAML normalise a file
(indentation, quoting, attributes one way). The nodes, ports, structure and comments are
kept: a comment stays before, or at the end of, the element it was at (see
:class:`~hri.bt.tree_files.Element` and docs/trees.md, "Converting"). Between formats,
includes are pointed at the other format's file of the same name and a header comment says
where the file comes from; written to another folder, relative includes are rewritten to name
the same files from there. XML is written as Groot2 writes it, with a ``<TreeNodesModel>`` of
the registered nodes the file uses (the project's, the ``hri.nodes`` entry points', the
``--plugin`` modules'), so Groot2 shows their ports.

The input is never written over (nor through a link or another spelling of its path), an
existing file only with ``force``; the output is written atomically, so a failure leaves no
half-written file.
"""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Sequence
from pathlib import Path

from hri.bt.tree_files import XML_SUFFIXES, YAML_SUFFIXES, Element
from hri.bt.xml_text import dump_xml, parse_xml
from hri.bt.yaml_format import dump_yaml, parse_yaml
from hri.base.errors import HriError
from hri.base.files import check_new_file, write_atomic

_HEADERS = {"yaml": 'The YAML form of {name} (the same tree; see docs/trees.md, "YAML trees").',
            "xml": "The XML form of {name} (the same tree; see docs/trees.md)."}
_OLD_HEADER = re.compile(r"The (?:YAML|XML) form of .+? \(the same tree; see docs/trees\.md[^)]*\)\.(?:\n\n|\Z)",
                         re.DOTALL)
_EXPLICIT = ("Action", "Condition", "Control", "Decorator")
_NOT_NODES = ("root", "include", "BehaviorTree", "TreeNodesModel", "SubTree")


def file_format(path: Path) -> str | None:
    """``"xml"`` or ``"yaml"`` by the suffix of ``path``; None for any other suffix."""
    suffix = path.suffix.lower()
    return "xml" if suffix in XML_SUFFIXES else "yaml" if suffix in YAML_SUFFIXES else None


def _read(source: Path, fmt: str) -> Element:
    try:
        data = source.read_bytes()
    except OSError as err:
        raise HriError(f"cannot read: {err.strerror or err}", str(source)) from None
    return parse_xml(data, str(source)) if fmt == "xml" else parse_yaml(data, str(source), comments=True)


def _check_target(source: Path, target: Path, force: bool) -> None:
    """HriError unless ``target`` may be written: never the source, an existing file only with force."""
    if not (target.exists() or target.is_symlink()):
        return
    if target.exists() and os.path.samefile(source, target):
        raise HriError(f"is the file being converted ({source}): write the output elsewhere with -o", str(target))
    check_new_file(target, force, "-o")


def _includes(root: Element) -> Iterator[tuple[Element, str]]:
    """``root``'s ``<include>`` elements with their paths."""
    for element in root.children:
        if element.tag == "include" and element.attrib.get("path"):
            yield element, element.attrib["path"]


def _point_includes(root: Element, suffixes: tuple[str, ...], suffix: str) -> None:
    """Include paths ending in one of ``suffixes`` end in ``suffix`` instead."""
    for element, path in _includes(root):
        stem, old = os.path.splitext(path)
        if old.lower() in suffixes:
            element.attrib["path"] = stem + suffix


def _check_depth(root: Element) -> None:
    """HriError at the first element nested deeper than a tree may be (the tree builder's
    ``MAX_DEPTH``): the writers would recurse too deep, and no run could load the output."""
    from hri.bt.tree_builder import MAX_DEPTH

    stack = [(child, 1) for child in root.children]
    while stack:
        element, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise HriError(f"tree nested deeper than {MAX_DEPTH} levels", element.file, element.line)
        stack.extend((child, depth + 1) for child in element.children)


def _check_yaml(text: str, source: Path) -> None:
    """The YAML written reads back (YAML nests three collections a tree level, and refuses
    deep nesting sooner than XML): else HriError, before anything is written."""
    try:
        parse_yaml(text, "the YAML form")
    except HriError as err:
        raise HriError(f"cannot be written as YAML: {err.message}", str(source)) from None


def _relocate_includes(root: Element, source_dir: Path, target_dir: Path) -> None:
    """Relative include paths, which count from the including file's folder, rewritten for a
    file written to another folder, so that they name the same files."""
    if source_dir.resolve() == target_dir.resolve():
        return
    for element, path in _includes(root):
        if not os.path.isabs(path):
            element.attrib["path"] = os.path.relpath(source_dir.resolve() / path, target_dir.resolve())


def _without_header(comments: list[str]) -> list[str]:
    """``comments`` without the header an earlier conversion wrote (it would pile up)."""
    match = _OLD_HEADER.match(comments[0]) if comments else None
    if match is None:
        return comments
    rest = comments[0][match.end():]
    return ([rest] if rest else []) + comments[1:]


def _nodes(root: Element) -> Iterator[Element]:
    """The node elements of every tree of ``root`` (not the ``<TreeNodesModel>``)."""
    stack = [child for child in reversed(root.children) if child.tag == "BehaviorTree"]
    while stack:
        element = stack.pop()
        if element.tag != "BehaviorTree":
            yield element
        stack.extend(reversed(element.children))


def _node_id(element: Element) -> str:
    return element.attrib.get("ID", "") if element.tag in _EXPLICIT else element.tag


def _models(root: Element, plugins: Sequence[str]) -> tuple[ET.Element, list[str]]:
    """The ``<TreeNodesModel>`` of the registered nodes ``root`` uses, and a warning line for
    each node it uses that is not registered (the model leaves it out)."""
    from hri.bt.catalogue import tree_nodes_model
    from hri.bt.plugins import plugin_registry

    registry = plugin_registry(plugins, Path.cwd())
    known = set(registry.ids())
    first_use: dict[str, Element] = {}
    for element in _nodes(root):
        first_use.setdefault(_node_id(element), element)
    used = {node_id for node_id in first_use if node_id and node_id not in _NOT_NODES}
    warnings = [str(HriError(f"warning: node {node_id!r} is not registered, so the <TreeNodesModel> leaves it "
                             "out (load its plug-in with --plugin)", first_use[node_id].file, first_use[node_id].line))
                for node_id in sorted(used - known)]
    return tree_nodes_model(registry, only=used).find("TreeNodesModel"), warnings


def convert_file(source: Path, target: Path | None = None, *, force: bool = False,
                 plugins: Sequence[str] = ()) -> tuple[Path, list[str]]:
    """Write the tree file ``source`` to ``target`` in the format its suffix names (default:
    beside ``source``, in the other format). Returns the path written and warning lines.

    ``plugins`` (module names or ``.py`` paths) add nodes to the ``<TreeNodesModel>`` of an
    XML output. HriError, before anything is written, for an output suffix that names no
    format, an unreadable or malformed source, a target that is the source, or that exists
    without ``force``.
    """
    source_format = file_format(source)
    if source_format is None:
        raise HriError("a tree file ends in .xml, .yaml or .yml", str(source))
    if target is None:
        target = source.with_suffix(".yaml" if source_format == "xml" else ".xml")
    target_format = file_format(target)
    if target_format is None:
        raise HriError(f"-o {target}: the output's suffix names its format: .xml, .yaml or .yml")
    root = _read(source, source_format)
    _check_depth(root)
    _check_target(source, target, force)
    header = None
    if target_format != source_format:
        _point_includes(root, XML_SUFFIXES if target_format == "yaml" else YAML_SUFFIXES, target.suffix)
        root.comments = _without_header(root.comments)
        header = _HEADERS[target_format].format(name=source.name)
    _relocate_includes(root, source.parent, target.parent)
    warnings: list[str] = []
    if target_format == "xml":
        models, warnings = _models(root, plugins)
        text = dump_xml(root, header=header, models=models)
    else:
        if plugins:  # YAML lists no models, but a plug-in that does not load is a mistake all the same
            from hri.bt.plugins import plugin_registry

            plugin_registry(plugins, Path.cwd())
        text = dump_yaml(root, header=header)
        _check_yaml(text, source)
    try:
        write_atomic(Path(os.path.realpath(target)), text)  # through a link: the file it names
    except OSError as err:
        raise HriError(f"cannot write: {err.strerror or err}", str(target)) from None
    return target, warnings
