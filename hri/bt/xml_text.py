"""BehaviorTree.CPP v4 XML text to the element tree of :mod:`hri.bt.tree_files` and back.

:func:`parse_xml` reads a tree file as BehaviorTree.CPP's XML reader (tinyxml2) does, with
every element's line, so every mistake in a tree file becomes an
:class:`~hri.base.errors.HriError` ``FILE:LINE: message``. The XML itself is checked by
defusedxml's expat reader (no DTDs, no entities, no external references). tinyxml2 is more
lenient than expat inside attribute values: it takes a raw ``<`` or ``&`` (``code="a && b < 3"``),
keeps a ``&`` that starts no known entity, and keeps tabs and line breaks; it also takes
``--`` inside a comment. A pre-pass (:func:`tinyxml_attributes`) rewrites every attribute
value that holds one of these as the escaped form of tinyxml2's value, so expat reads exactly
what BehaviorTree.CPP reads. Still refused, though tinyxml2 takes them: a raw ``&`` in text
(outside attribute values), attributes without blanks between them, and attribute values
that decode to characters XML cannot hold (``&#1;``, invalid UTF-8).

:func:`dump_xml` writes an element tree (from either format) as BehaviorTree.CPP v4 XML;
comments travel with the elements both ways (:class:`~hri.bt.tree_files.Element`).
"""

from __future__ import annotations

import re
import textwrap
import xml.etree.ElementTree as ET
import xml.sax
import xml.sax.handler
from dataclasses import dataclass
from functools import partial
from xml.sax.expatreader import ExpatLocator

from defusedxml.common import DefusedXmlException
from defusedxml.expatreader import DefusedExpatParser

from hri.bt.tree_files import Element
from hri.base.errors import HriError

_FORBIDDEN = {"DTDForbidden": "a DTD (<!DOCTYPE ...>)", "EntitiesForbidden": "an entity declaration (<!ENTITY ...>)",
              "ExternalReferenceForbidden": "an external reference"}

# --- tinyxml2's attribute values --------------------------------------------------------

_TOKEN = re.compile(rb"""
      <!--(?P<comment>.*?)-->                  # a comment
    | <!--.*                                   # a comment that does not end
    | <!\[CDATA\[.*?(?:\]\]>|\Z)               # a CDATA section
    | <\?.*?(?:\?>|\Z)                         # a processing instruction (the XML declaration)
    | </[^<>]*>                                # an end tag
    | <[^\s<>/!?"'=][^\s<>/"'=]*               # a start tag: its name,
      (?P<attrs>(?:\s+[^\s<>/"'=]+\s*=\s*(?:"[^"]*"|'[^']*'))*)  # its attributes,
      \s*/?>
    | (?P<stop><)                              # anything else (a DTD, a mistake): expat judges the rest
""", re.DOTALL | re.VERBOSE)
_ATTRIBUTE = re.compile(rb"""(\s+[^\s<>/"'=]+\s*=\s*)(?:"([^"]*)"|'([^']*)')""")
_TINYXML_ONLY = re.compile(rb"[<\t\n\r]|&(?!(?:quot|amp|apos|lt|gt);)")
"""What tinyxml2 and expat read differently in a value; without it, they read the same."""
_LINE_BREAKS = re.compile(rb"\r\n?|\n")
_DOUBLE_DASH = re.compile(rb"-(?=-)")
_DECODED = re.compile(rb"[&\r\n]")
_DECLARED_ENCODING = re.compile(rb"""^(?:\xef\xbb\xbf)?<\?xml[^>]*?encoding\s*=\s*["']([^"']*)["']""")
_ENTITY = re.compile(rb"&(quot|amp|apos|lt|gt);")
_ENTITIES = {b"quot": b'"', b"amp": b"&", b"apos": b"'", b"lt": b"<", b"gt": b">"}
_DIGITS = {ord(c): int(c, 16) for c in "0123456789abcdefABCDEF"}
_MAX_CODE_POINT = 0x10FFFF
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
_ESCAPES = {ord("&"): "&amp;", ord("<"): "&lt;", ord('"'): "&quot;", ord("\t"): "&#9;", ord("\n"): "&#10;",
            ord("\r"): "&#13;"}
_HASH, _CR, _LF = b"#\r\n"


def _character_reference(raw: bytes, at: int) -> tuple[bytes, int] | None:
    """tinyxml2's reading of the ``&#`` at ``raw[at]``: its bytes and the index after it, or
    None when tinyxml2 keeps the ``&`` as written.

    Its quirks are kept: the digits are read back from the first ``;`` to the ``x`` or
    ``#`` (so ``&#x1x2;`` is U+0002), a value in ``&#;`` or ``&#x;`` is U+0000, a number of
    more digits than the range needs is clamped, and a ``&#`` that ends the value loses its ``&``.
    """
    if at + 2 >= len(raw):
        return b"", at + 1
    hexadecimal = raw[at + 2] == ord("x")
    start = at + 3 if hexadecimal else at + 2
    end = raw.find(b";", start)
    if start >= len(raw) or end < 0:
        return None
    terminator, radix = (ord("x"), 16) if hexadecimal else (_HASH, 10)
    code, weight = 0, 1
    for digit in reversed(raw[start - 1:end]):  # tinyxml2 reads right to left
        if digit == terminator:
            break
        value = _DIGITS.get(digit, radix)
        if value >= radix:
            return None
        code = (code + weight * value) & 0xFFFFFFFF  # its unsigned 32-bit sum
        weight = min(weight * radix, _MAX_CODE_POINT)
    if code > _MAX_CODE_POINT:
        return None
    return chr(code).encode("utf-8", "surrogatepass"), end + 1


def tinyxml_value(raw: bytes) -> bytes:
    """The value tinyxml2 gives for the bytes between an attribute's quotes.

    Line breaks (CR LF, LF CR, CR) become LF; the five entities and character references
    are decoded; a ``&`` that starts neither is skipped over without being written, which
    keeps it when nothing before it was shortened and otherwise leaves the byte that stood
    at the write position (``&lt; && b`` gives ``< t; b``): tinyxml2 decodes in place. The
    value ends at its first NUL (a C string).
    """
    out = bytearray(raw)  # in place, as tinyxml2: unwritten positions keep the raw bytes
    read = write = 0
    while True:
        special = _DECODED.search(raw, read)
        stop = special.start() if special else len(raw)
        out[write:write + stop - read] = raw[read:stop]
        write, read = write + stop - read, stop
        if special is None:
            break
        byte = raw[read]
        if byte in (_CR, _LF):
            pair = _LF if byte == _CR else _CR
            read += 2 if raw[read + 1:read + 2] == bytes([pair]) else 1
            decoded = b"\n"
        elif raw[read + 1:read + 2] == b"#":
            reference = _character_reference(raw, read)
            decoded, read = reference if reference else (b"&", read + 1)
        else:
            entity = _ENTITY.match(raw, read)
            if entity is None:
                read, write = read + 1, write + 1
                continue
            decoded, read = _ENTITIES[entity.group(1)], entity.end()
        out[write:write + len(decoded)] = decoded
        write += len(decoded)
    return bytes(out[:write]).split(b"\0", 1)[0]


def _expat_form(value: bytes) -> bytes:
    """``value`` escaped so that expat reads it back unchanged; ValueError when XML cannot hold it."""
    try:
        text = value.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("an attribute value is not UTF-8 text") from None
    bad = _NOT_XML.search(text)
    if bad:
        raise ValueError(f"an attribute value holds the character U+{ord(bad.group()):04X}, which XML does not allow")
    return text.translate(_ESCAPES).encode("utf-8")


def _is_utf8(data: bytes) -> bool:
    """True for UTF-8 text (what tinyxml2 reads); other encodings are left to expat alone."""
    if b"\0" in data:  # UTF-16/32, or a NUL, which expat refuses anyway
        return False
    declared = _DECLARED_ENCODING.match(data)
    return declared is None or declared.group(1).lower() in (b"utf-8", b"utf8")


def _attribute(attribute: re.Match[bytes], data: bytes, offset: int, file: str) -> bytes:
    """One ``name="value"`` of the start tag at ``data[offset:]`` as expat reads tinyxml2's value;
    the value's line breaks follow its closing quote."""
    raw = attribute.group(2) if attribute.group(2) is not None else attribute.group(3)
    if not _TINYXML_ONLY.search(raw):
        return attribute.group(0)
    try:
        value = _expat_form(tinyxml_value(raw))
    except ValueError as err:
        line = data.count(b"\n", 0, offset + attribute.end(1)) + 1
        raise HriError(f"malformed XML: {err}", file, line) from None
    return attribute.group(1) + b'"' + value + b'"' + b"".join(_LINE_BREAKS.findall(raw))


def _legal_comment(body: bytes) -> bytes:
    """A comment's text as XML can hold it: ``--`` written ``- -``, no ``-`` at its end."""
    return _DOUBLE_DASH.sub(b"- ", body) + b" " * body.endswith(b"-")


def tinyxml_attributes(data: bytes, file: str) -> bytes:
    """``data`` with every attribute value that tinyxml2 and expat would read differently
    rewritten as the escaped form of tinyxml2's value (:func:`tinyxml_value`), and every
    ``--`` inside a comment (tinyxml2 takes it, XML does not) written ``- -``.

    Only quoted values in start tags are escaped (never comments, CDATA, text or processing
    instructions); the line breaks of a value move right after its closing quote, so every
    later element keeps its line. The scan stops at anything it does not recognise (a DTD, a
    mistake), where expat then reports the error.
    """
    if not _is_utf8(data):
        return data
    chunks: list[bytes] = []
    done = 0
    for token in _TOKEN.finditer(data):
        if token.group("stop"):
            break
        comment, attrs = token.group("comment"), token.group("attrs")
        if comment is not None and (b"--" in comment or comment.endswith(b"-")):
            start, end = token.span("comment")
            chunks += [data[done:start], _legal_comment(comment)]
        elif attrs and _TINYXML_ONLY.search(attrs):
            start, end = token.span("attrs")
            chunks += [data[done:start], _ATTRIBUTE.sub(partial(_attribute, data=data, offset=start, file=file), attrs)]
        else:
            continue
        done = end
    return b"".join(chunks) + data[done:] if chunks else data


# --- where the attributes are -------------------------------------------------------------

_TAG_NAME = re.compile(rb"<([^\s<>/!?\"'=][^\s<>/\"'=]*)")
_RAW_CHARACTER = re.compile(rb"&(?:quot|amp|apos|lt|gt|#x?[0-9A-Fa-f]*);|\r\n|\n\r|[\x00-\x7f]|[\xc0-\xff][\x80-\xbf]*|.",
                            re.DOTALL)
"""One character of an attribute's value as written: an entity, a line break, a UTF-8 sequence."""


@dataclass(frozen=True)
class AttributeSpan:
    """Where an attribute of a start tag is in the file's bytes: its name, and its value
    between the quotes (``raw``, as written)."""

    name_offset: int
    value_offset: int
    raw: bytes

    def value_index(self, index: int) -> int:
        """The byte offset in the file of character ``index`` of the value as read
        (an entity such as ``&amp;`` is one character); the value's end past its last one."""
        offset = self.value_offset
        for _ in range(index):
            match = _RAW_CHARACTER.match(self.raw, offset - self.value_offset)
            if match is None:
                break
            offset += len(match.group())
        return offset


@dataclass(frozen=True)
class StartTag:
    """A start tag of an XML file: its element's name, where it starts, its attributes."""

    name: str
    offset: int
    attributes: dict[str, AttributeSpan]


def start_tags(data: bytes) -> list[StartTag]:
    """The start tags of the XML ``data`` in document order (those :func:`parse_xml` reads,
    one per element), with their attributes' places; the scan stops where
    :func:`tinyxml_attributes` stops (a DTD, a mistake)."""
    tags = []
    for token in _TOKEN.finditer(data):
        if token.group("stop"):
            break
        name = _TAG_NAME.match(data, token.start())
        if name is None:  # an end tag, a comment, a CDATA section, a processing instruction
            continue
        attributes = {}
        start = token.start("attrs")
        for attribute in _ATTRIBUTE.finditer(data, start, token.end("attrs")):
            written = attribute.group(1)
            key = written.split(b"=", 1)[0].strip().decode("utf-8", "replace")
            value = 2 if attribute.group(2) is not None else 3
            attributes[key] = AttributeSpan(attribute.start(1) + len(written) - len(written.lstrip()),
                                            attribute.start(value), attribute.group(value))
        tags.append(StartTag(name.group(1).decode("utf-8", "replace"), token.start(), attributes))
    return tags


# --- the reader ---------------------------------------------------------------------------

def comment_text(raw: str) -> str:
    """An XML comment's text without its frame: the first line stripped, the others
    dedented together, blank lines at either end dropped."""
    first, _, rest = raw.partition("\n")
    lines = [first.strip()] + textwrap.dedent(rest).splitlines()
    return "\n".join(line.rstrip() for line in lines).strip("\n")


class _Handler(xml.sax.handler.ContentHandler, xml.sax.handler.LexicalHandler):
    def __init__(self, file: str):
        super().__init__()
        self.file = file
        self.root: Element | None = None
        self.stack: list[Element] = []
        self.locator: xml.sax.xmlreader.Locator | None = None
        self.pending: list[str] = []  # comments not yet given to an element

    def setDocumentLocator(self, locator: xml.sax.xmlreader.Locator) -> None:
        self.locator = locator

    def line(self) -> int:
        return (self.locator.getLineNumber() if self.locator else None) or 1

    def startElement(self, name: str, attrs: xml.sax.xmlreader.AttributesImpl) -> None:
        element = Element(name, dict(attrs.items()), self.file, self.line())
        element.comments, self.pending = self.pending, []
        if self.stack:
            self.stack[-1].children.append(element)
        else:
            self.root = element
        self.stack.append(element)

    def endElement(self, name: str) -> None:
        element = self.stack.pop()
        element.end_comments, self.pending = self.pending, []

    def comment(self, content: str) -> None:
        text = comment_text(content)
        if text:
            self.pending.append(text)


def parse_xml(data: bytes, file: str) -> Element:
    """Parse XML as tinyxml2 reads it, safely, keeping lines and comments; HriError for
    malformed or forbidden XML."""
    data = tinyxml_attributes(data, file)
    handler = _Handler(file)
    parser = DefusedExpatParser(forbid_dtd=True, forbid_entities=True, forbid_external=True)
    parser.setFeature(xml.sax.handler.feature_namespaces, False)
    parser.setContentHandler(handler)
    parser.setProperty(xml.sax.handler.property_lexical_handler, handler)  # before feed(): keeps the DTD guard
    handler.setDocumentLocator(ExpatLocator(parser))  # feed() does not set one, parse() would
    try:
        parser.feed(data)
        parser.close()
    except xml.sax.SAXParseException as err:
        raise HriError(f"malformed XML: {err.getMessage()}", file, err.getLineNumber() or 1) from None
    except DefusedXmlException as err:
        what = _FORBIDDEN.get(type(err).__name__, type(err).__name__)
        raise HriError(f"forbidden XML construct: {what}; DTDs and entities are not allowed in tree files",
                       file, handler.line()) from None
    except Exception as err:  # expat on hostile input: encodings, ... never a traceback
        raise HriError(f"malformed XML: {err}", file, handler.line()) from None
    assert handler.root is not None
    handler.root.tail_comments = handler.pending
    return handler.root


# --- the writer ---------------------------------------------------------------------------

_INDENT = "  "
_NAME = re.compile(r"(?:[^\W\d]|:)[\w.:-]*")
_EMPTY_TAG_END = re.compile(r"(<!--.*?-->)| />", re.DOTALL)
"""ElementTree's `` />``, Groot2's ``/>`` (not inside comments)."""


def _comment_element(text: str, depth: int) -> ET.Element:
    """An XML comment of ``text``; its later lines line up under the first one's text.
    XML comments cannot hold ``--``: it is written ``- -``."""
    first, *rest = re.sub(r"-(?=-)", "- ", text).splitlines() or [""]
    pad = _INDENT * depth + " " * 5
    return ET.Comment(" " + first + "".join(f"\n{pad}{line}" if line else "\n" for line in rest) + " ")


def _fail(element: Element, message: str) -> HriError:
    return HriError(f"cannot write as XML: {message}", element.file, element.line)


def _check(element: Element) -> None:
    if not _NAME.fullmatch(element.tag):
        raise _fail(element, f"{element.tag!r} is not an XML element name")
    for name, value in element.attrib.items():
        if not _NAME.fullmatch(name):
            raise _fail(element, f"<{element.tag}>: {name!r} is not an XML attribute name")
        bad = _NOT_XML.search(value)
        if bad:
            raise _fail(element, f"<{element.tag}>: attribute {name!r} holds the character "
                                 f"U+{ord(bad.group()):04X}, which XML does not allow")


def _etree(element: Element, depth: int, children: list[Element] | None = None) -> ET.Element:
    _check(element)
    node = ET.Element(element.tag, element.attrib)
    for child in element.children if children is None else children:
        node.extend(_comment_element(text, depth + 1) for text in child.comments)
        node.append(_etree(child, depth + 1))
    node.extend(_comment_element(text, depth + 1) for text in element.end_comments)
    return node


def dump_xml(root: Element, *, header: str | None = None, models: ET.Element | None = None) -> str:
    """BehaviorTree.CPP v4 XML text for the element tree ``root`` (as :func:`parse_xml` or
    :func:`~hri.bt.yaml_format.parse_yaml` gives), comments included.

    ``header`` becomes the first comment. ``models`` (a ``<TreeNodesModel>``, written only
    when it lists a node) replaces any ``<TreeNodesModel>`` of ``root``: the comments before
    the old one stay, those inside it go with it. Raises :class:`HriError` for a name or a
    value XML cannot hold.
    """
    children = root.children if models is None else [c for c in root.children if c.tag != "TreeNodesModel"]
    document = _etree(root, 0, children)
    if models is not None:  # after the trees, before the comments that end <root>
        at = len(document) - len(root.end_comments)
        moved = [_comment_element(text, 1) for old in root.children if old.tag == "TreeNodesModel"
                 for text in old.comments]
        document[at:at] = moved + ([models] if len(models) else [])
    ET.indent(document, space=_INDENT)
    text = _EMPTY_TAG_END.sub(lambda m: m.group(1) or "/>", ET.tostring(document, encoding="unicode"))
    before = [_comment_text(comment) for comment in ([header] if header else []) + root.comments]
    after = [_comment_text(comment) for comment in root.tail_comments]
    return "\n".join(['<?xml version="1.0" encoding="UTF-8"?>', *before, text, *after]) + "\n"


def _comment_text(text: str) -> str:
    """A comment outside ``<root>``, as text."""
    return ET.tostring(_comment_element(text, 0), encoding="unicode")
