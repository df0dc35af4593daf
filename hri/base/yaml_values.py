"""Reading YAML: the one composer every reader uses, and values from its nodes that keep their
lines; one clear line for any text YAML cannot make a value of.

:func:`compose` turns YAML text (a scenario, a tree file, a clip) into PyYAML's node graph,
:func:`load` a file and :func:`load_value` a short text (a ``--set`` value) into a value, as
``yaml.safe_load`` would. All go through :class:`_Composer`, which counts the nodes the
document holds once every alias is expanded: aliases may add at most :data:`MAX_ALIAS_NODES`. A few lines of nested aliases
(nine levels of nine, the "billion laughs") compose in microseconds into a graph that anything
walking it (building a scenario's values, validation, key checks, conversion, JSON) expands
exponentially, so such text is refused while it is composed, before anything walks it: one line
``FILE:LINE: YAML aliases expand to more than 100000 nodes``. Files without aliases are not
bounded (their size is what they hold), and the count costs a dictionary entry per node.
A number with an exponent is a float also without a dot or a sign in it (``1e-3``: YAML 1.2,
where PyYAML's YAML 1.1 reads text). An integer may have at most
:data:`hri.base.numbers.MAX_INT_DIGITS` digits (``FILE:LINE: an integer of 100000 digits: at
most 100 are taken``, not Python's own message past 4300).

The scenario and clip readers walk the composed nodes (for the line of every key) and make each
scalar's value with the safe constructor. That can fail on a tag safe YAML does not know
(``!seconds 600``) or a text it reads as a date that is none (``2026-13-01``, a ValueError):
:func:`scalar_value` turns both into ``HriError`` ``FILE:LINE: malformed YAML``. The readers
build mappings and lists themselves, so :func:`check_collections` refuses a tag there
(``!box [...]``, ``!!set``), which they would otherwise ignore, and an alias inside what it
names.
"""

from __future__ import annotations

import re
from typing import Any

import yaml
from yaml.nodes import Node

from hri.base.errors import HriError
from hri.base.numbers import brief, int_digits_problem

#: what making a value from YAML text may raise (also with ``yaml.safe_load``)
YAML_VALUE_ERRORS = (yaml.YAMLError, ValueError)
MAX_ALIAS_NODES = 100_000
"""The most nodes a document's aliases may add when expanded: far above any file written by
hand (the shipped ones use none), far below what takes a noticeable time or memory to walk."""
_PLAIN_COLLECTIONS = ("tag:yaml.org,2002:map", "tag:yaml.org,2002:seq")
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
_ENDLESS = "malformed YAML: an alias inside what it names (endless)"


class _Refused(Exception):
    """Text the composer will not take, at ``mark``."""

    def __init__(self, message: str, mark: yaml.Mark):
        super().__init__(message)
        self.message = message
        self.mark = mark


def _bounded_int(constructor: yaml.constructor.SafeConstructor, node: yaml.ScalarNode) -> int:
    """An integer as the safe constructor makes it, refused when it has more digits than
    :data:`hri.base.numbers.MAX_INT_DIGITS` (Python itself refuses above 4300, in its words)."""
    problem = int_digits_problem(str(node.value))
    if problem is not None:
        raise _Refused(problem, node.start_mark)
    return yaml.constructor.SafeConstructor.construct_yaml_int(constructor, node)


class _Constructor(yaml.constructor.SafeConstructor):
    """The safe constructor with integers of a bounded length."""


_Constructor.add_constructor("tag:yaml.org,2002:int", _bounded_int)
_CONSTRUCTOR = _Constructor()


class _Composer(yaml.SafeLoader):
    """PyYAML's safe loader, counting the nodes as its aliases expand them (at most
    :data:`MAX_ALIAS_NODES` added); with ``aliases=False`` refusing any alias, with
    ``max_depth`` collections nested deeper."""

    def __init__(self, stream: str, *, aliases: bool = True, max_depth: int | None = None):
        super().__init__(stream)
        self._aliases = aliases
        self._max_depth = max_depth
        self._depth = 0
        self._expanded = 0  # nodes so far, each alias counted as the nodes it stands for
        self._added = 0  # of which by aliases
        self._sizes: dict[int, int] = {}  # id of a finished node -> its expanded size

    def compose_node(self, parent: Node | None, index: object) -> Node:
        if self.check_event(yaml.AliasEvent):
            return self._alias(parent, index)
        if self._max_depth is not None and self._depth >= self._max_depth:
            raise _Refused(f"nested deeper than {self._max_depth} levels", self.peek_event().start_mark)
        start = self._expanded
        self._expanded += 1
        self._depth += 1
        try:
            node = super().compose_node(parent, index)
        finally:
            self._depth -= 1
        self._sizes[id(node)] = self._expanded - start
        return node

    def _alias(self, parent: Node | None, index: object) -> Node:
        mark = self.peek_event().start_mark
        if not self._aliases:
            raise _Refused("anchors and aliases are not supported", mark)
        node = super().compose_node(parent, index)  # PyYAML's error for an undefined alias
        size = self._sizes.get(id(node))
        if size is None:  # still being composed: the alias is inside what it names
            raise _Refused(_ENDLESS, node.start_mark)
        self._expanded += size
        self._added += size
        if self._added > MAX_ALIAS_NODES:
            raise _Refused(f"YAML aliases expand to more than {MAX_ALIAS_NODES} nodes", mark)
        return node


_Composer.add_constructor("tag:yaml.org,2002:int", _bounded_int)
#: a number with an exponent is a float, as in YAML 1.2 and JSON (``1e-3``, ``2.5e3``, ``1E+9``):
#: PyYAML follows YAML 1.1, whose floats need a dot and a signed exponent, and reads these as text
_EXPONENT_FLOAT = re.compile(r"^[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9_]+)[eE][-+]?[0-9]+$")
_Composer.add_implicit_resolver("tag:yaml.org,2002:float", _EXPONENT_FLOAT, list("-+0123456789."))


def decode(data: bytes | str, file: str) -> str:
    """The text of a YAML file's bytes (UTF-8, or UTF-16 with its BOM); HriError else."""
    if isinstance(data, str):
        return data
    try:
        if data.startswith(_UTF16_BOMS):
            return data.decode("utf-16")
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = data[:err.start].count(b"\n") + 1
        raise HriError("malformed YAML: not UTF-8 text", file, line) from None


def compose(data: bytes | str, file: str, *, aliases: bool = True, max_depth: int | None = None) -> Node | None:
    """The YAML node graph of ``data`` (None when empty), its aliases within the bound; else
    HriError ``FILE:LINE: message``. ``aliases=False`` refuses any, ``max_depth`` deeper nesting."""
    text = decode(data, file)
    loader: _Composer | None = None
    try:
        loader = _Composer(text, aliases=aliases, max_depth=max_depth)  # checks the characters already
        return loader.get_single_node()
    except Exception as err:  # noqa: BLE001 - hostile input must never give a traceback
        raise _error(err, text, file) from None
    finally:
        if loader is not None:
            loader.dispose()


def load(data: bytes | str, file: str, *, aliases: bool = True) -> Any:
    """What ``yaml.safe_load`` makes of a file's text, composed by :func:`compose`; else
    HriError ``FILE:LINE: message``."""
    node = compose(data, file, aliases=aliases)
    try:
        return _Constructor().construct_document(node) if node is not None else None
    except Exception as err:  # noqa: BLE001 - hostile input must never give a traceback
        raise _error(err, "", file) from None


def load_value(text: str, where: str) -> Any:
    """What ``yaml.safe_load(text)`` makes of a value given on the command line, its aliases
    within the bound; else HriError ``WHERE: message`` (``where``: the option, ``--set KEY``)."""
    loader: _Composer | None = None
    try:
        loader = _Composer(text)  # checks the characters already
        return loader.get_single_data()
    except _Refused as err:
        raise HriError(f"{where}: {err.message}") from None
    except Exception:  # noqa: BLE001 - hostile input must never give a traceback
        raise HriError(f"{where}: cannot parse value {brief(text)}") from None
    finally:
        if loader is not None:
            loader.dispose()


def _error(err: Exception, text: str, file: str) -> HriError:
    """The one line for what composing ``text`` raised."""
    if isinstance(err, _Refused):
        return HriError(err.message, file, err.mark.line + 1)
    if isinstance(err, yaml.MarkedYAMLError):
        mark = err.problem_mark or err.context_mark
        detail = err.problem or err.context or "syntax error"
        if err.problem and err.context:
            detail = f"{err.problem} ({err.context})"
        return HriError(f"malformed YAML: {detail}", file, mark.line + 1 if mark else 1)
    if isinstance(err, yaml.reader.ReaderError):
        line = text[:err.position].count("\n") + 1 if isinstance(err.position, int) else 1
        return HriError(f"malformed YAML: {err.reason} (character #x{err.character:04X})", file, line)
    if isinstance(err, RecursionError):
        return HriError("malformed YAML: nested too deeply", file, 1)
    return HriError(f"malformed YAML: {err}", file, 1)


def yaml_problem(err: Exception) -> str:
    """What went wrong, in one line, from PyYAML's error (or any other)."""
    return (getattr(err, "problem", None) or str(err)).strip().splitlines()[0]


def scalar_value(node: yaml.Node, file: str) -> Any:
    """The value of ``node`` as ``yaml.safe_load`` makes it, or HriError at its line."""
    try:
        return _CONSTRUCTOR.construct_object(node, deep=True)
    except _Refused as err:
        raise HriError(err.message, file, err.mark.line + 1) from None
    except YAML_VALUE_ERRORS as err:
        problem = yaml_problem(err)
        if not isinstance(err, yaml.YAMLError):  # e.g. read as a date, and no date: say which text
            problem = f"cannot read {brief(node.value)}: {problem}"
        raise HriError(f"malformed YAML: {problem}", file, node.start_mark.line + 1) from None


def check_collections(node: yaml.Node | None, file: str) -> None:
    """HriError at the first mapping or list below ``node`` (itself included) with a tag, or
    inside itself by an alias (``&a [*a]``: endless to build)."""
    stack: list[tuple[yaml.Node, bool]] = [(node, False)] if node is not None else []
    path: set[int] = set()  # the collections being walked, root to here
    done: set[int] = set()  # an alias repeats a node: walked once
    while stack:
        n, leaving = stack.pop()
        if leaving:
            path.discard(id(n))
            done.add(id(n))
            continue
        if not isinstance(n, yaml.CollectionNode) or id(n) in done:
            continue
        where = n.start_mark.line + 1
        if id(n) in path:
            raise HriError(_ENDLESS, file, where)
        if n.tag not in _PLAIN_COLLECTIONS:
            raise HriError(f"malformed YAML: a tag on a mapping or list ({n.tag}): none is taken here", file, where)
        path.add(id(n))
        stack.append((n, True))
        items = n.value if isinstance(n, yaml.SequenceNode) else [v for pair in n.value for v in pair]
        stack.extend((item, False) for item in reversed(items))
