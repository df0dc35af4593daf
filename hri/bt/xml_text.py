"""BehaviorTree.CPP v4 XML text to the element tree of :mod:`hri.bt.tree_files`, line by line.

The XML is parsed with defusedxml's expat reader (no DTDs, no entities, no external
references) into a small element tree that keeps every element's line, so every mistake in
a tree file becomes an :class:`~hri.errors.HriError` ``FILE:LINE: message``.
"""

from __future__ import annotations

import xml.sax
import xml.sax.handler
from xml.sax.expatreader import ExpatLocator

from defusedxml.common import DefusedXmlException
from defusedxml.expatreader import DefusedExpatParser

from hri.bt.tree_files import Element
from hri.errors import HriError

_FORBIDDEN = {"DTDForbidden": "a DTD (<!DOCTYPE ...>)", "EntitiesForbidden": "an entity declaration (<!ENTITY ...>)",
              "ExternalReferenceForbidden": "an external reference"}


class _Handler(xml.sax.handler.ContentHandler):
    def __init__(self, file: str):
        super().__init__()
        self.file = file
        self.root: Element | None = None
        self.stack: list[Element] = []
        self.locator: xml.sax.xmlreader.Locator | None = None

    def setDocumentLocator(self, locator: xml.sax.xmlreader.Locator) -> None:
        self.locator = locator

    def line(self) -> int:
        return (self.locator.getLineNumber() if self.locator else None) or 1

    def startElement(self, name: str, attrs: xml.sax.xmlreader.AttributesImpl) -> None:
        element = Element(name, dict(attrs.items()), self.file, self.line())
        if self.stack:
            self.stack[-1].children.append(element)
        else:
            self.root = element
        self.stack.append(element)

    def endElement(self, name: str) -> None:
        self.stack.pop()


def parse_xml(data: bytes, file: str) -> Element:
    """Parse XML safely, keeping line numbers; HriError for malformed or forbidden XML."""
    handler = _Handler(file)
    parser = DefusedExpatParser(forbid_dtd=True, forbid_entities=True, forbid_external=True)
    parser.setFeature(xml.sax.handler.feature_namespaces, False)
    parser.setContentHandler(handler)
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
    return handler.root
