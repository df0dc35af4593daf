"""What the tree file formats share: the element structure and the choice of format.

Both BehaviorTree.CPP v4 XML (``hri.bt.xml_loader``) and the YAML form of the same trees
(``hri.bt.yaml_format``) are parsed into one small element tree of :class:`Element` s, shaped
like the XML: a ``root`` element (attributes ``BTCPP_format``, ``main_tree_to_execute``) whose
children are ``include`` elements (attribute ``path``) and ``BehaviorTree`` elements
(attribute ``ID``, one child: the tree's root node); a node is an element named by its node
ID whose attributes are the raw port strings. Every element keeps its file and line, so the
loader reports every mistake as ``FILE:LINE: message`` whatever the format.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

XML_SUFFIXES = (".xml",)
YAML_SUFFIXES = (".yaml", ".yml")
TREE_FORMATS = ("xml", "yaml")


@dataclass
class Element:
    """A node of the parsed tree file with the file and line where it starts.

    ``attr_lines`` optionally gives the line of an attribute when it differs from the
    element's (the YAML parser records where top-level keys such as ``main_tree_to_execute``
    are); :meth:`line_of` falls back to :attr:`line`.

    Comments, each the text of one XML ``<!-- -->`` or of a block of YAML ``#`` lines:
    ``comments`` stand just before the element, ``end_comments`` inside it after its last
    child, ``tail_comments`` after it (only the document element has these).
    """

    tag: str
    attrib: dict[str, str]
    file: str
    line: int
    children: list["Element"] = field(default_factory=list)
    attr_lines: dict[str, int] = field(default_factory=dict, compare=False, repr=False)
    comments: list[str] = field(default_factory=list, compare=False, repr=False)
    end_comments: list[str] = field(default_factory=list, compare=False, repr=False)
    tail_comments: list[str] = field(default_factory=list, compare=False, repr=False)

    def line_of(self, attribute: str) -> int:
        """The line of ``attribute`` if known, else the element's line."""
        return self.attr_lines.get(attribute, self.line)


_FORBIDDEN_IN_NAMES = frozenset(' \t\n\r<>&"\'/\\:*?|.')
RESERVED_ATTRIBUTES = frozenset({"name", "ID", "_autoremap", "_failureIf", "_successIf", "_skipIf", "_while",
                                 "_onHalted", "_onFailure", "_onSuccess", "_post"})


def _forbidden_char(name: str) -> str | None:
    for char in name:
        if char in _FORBIDDEN_IN_NAMES or ord(char) < 32 or ord(char) == 127:
            return repr(char) if char.isprintable() else f"control character {ord(char)}"
    return None


def model_name_problem(name: str) -> str | None:
    """Why ``name`` cannot name a tree or a node type, as BehaviorTree.CPP checks it; else None."""
    if not name:
        return "the name is empty"
    if name in ("Root", "root"):
        return f"{name!r} is reserved"
    char = _forbidden_char(name)
    return f"{name!r} contains the character {char}" if char else None


def port_name_problem(name: str) -> str | None:
    """Why ``name`` cannot name a port, as BehaviorTree.CPP checks it; else None."""
    if not name:
        return "the port name is empty"
    if name[0].isdigit():
        return f"port name {name!r} starts with a digit"
    if name in RESERVED_ATTRIBUTES:
        return f"port name {name!r} is a reserved attribute"
    char = _forbidden_char(name)
    return f"port name {name!r} contains the character {char}" if char else None


def tree_format(path: str | os.PathLike[str]) -> str:
    """``"yaml"`` for a ``.yaml``/``.yml`` path, else ``"xml"`` (the suffix decides)."""
    suffix = os.path.splitext(os.fspath(path))[1].lower()
    return "yaml" if suffix in YAML_SUFFIXES else "xml"


def structure(element: Element) -> tuple:
    """``element`` without files and lines: ``(tag, ((name, value), ...), (children...))``.

    Attribute order counts. Handy to compare trees parsed from different formats.
    """
    return (element.tag, tuple(element.attrib.items()), tuple(structure(child) for child in element.children))
