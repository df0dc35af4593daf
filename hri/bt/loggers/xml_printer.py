"""XML text laid out as tinyxml2's ``XMLPrinter`` prints a document (BehaviorTree.CPP's XML).

BehaviorTree.CPP writes a tree for its loggers with tinyxml2 (``3rdparty/tinyxml2``,
``XMLPrinter``, as bundled with BehaviorTree.CPP 4.10): no declaration, each element on a
line of its own indented by four spaces a level, an element without children or text
closed as ``<tag attr="..."/>``, one with text kept on one line (``<tag>text</tag>``), and a
newline after the root's end tag. Attribute values escape ``"``, ``&``, ``'``, ``<`` and
``>`` (``&quot;``, ``&amp;``, ``&apos;``, ``&lt;``, ``&gt;``); text escapes ``&``, ``<``
and ``>`` only (``PrintString``, restricted or not). Attributes keep the order they were set in.
"""

from __future__ import annotations

from dataclasses import dataclass, field

INDENT = "    "  # XMLPrinter::PrintSpace: four spaces a level
_ATTRIBUTE_ESCAPES = str.maketrans({'"': "&quot;", "&": "&amp;", "'": "&apos;", "<": "&lt;", ">": "&gt;"})
_TEXT_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})


@dataclass
class XmlElement:
    """An element: tag, attributes in order, children, or text (an element has one or the other)."""

    tag: str
    attributes: list[tuple[str, str]] = field(default_factory=list)
    children: list["XmlElement"] = field(default_factory=list)
    text: str | None = None

    def set(self, name: str, value: str) -> None:
        """Set an attribute as tinyxml2's ``SetAttribute``: a name set before keeps its place."""
        for index, (existing, _) in enumerate(self.attributes):
            if existing == name:
                self.attributes[index] = (name, value)
                return
        self.attributes.append((name, value))


def element_lines(element: XmlElement, depth: int = 0) -> list[str]:
    """The lines of ``element`` at nesting ``depth``, each ending with a newline."""
    indent = INDENT * depth
    head = element.tag + "".join(f' {name}="{value.translate(_ATTRIBUTE_ESCAPES)}"'
                                 for name, value in element.attributes)
    if element.text is not None:
        return [f"{indent}<{head}>{element.text.translate(_TEXT_ESCAPES)}</{element.tag}>\n"]
    if not element.children:
        return [f"{indent}<{head}/>\n"]
    lines = [f"{indent}<{head}>\n"]
    for child in element.children:
        lines.extend(element_lines(child, depth + 1))
    lines.append(f"{indent}</{element.tag}>\n")
    return lines
