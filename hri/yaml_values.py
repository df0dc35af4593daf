"""Values from YAML nodes that keep their lines: one clear line for any text YAML cannot make
a value of.

The scenario and clip readers walk PyYAML's composed nodes (for the line of every key) and
make each scalar's value with the safe constructor. That can fail on a tag safe YAML does not
know (``!seconds 600``) or a text it reads as a date that is none (``2026-13-01``, a
ValueError): :func:`scalar_value` turns both into ``HriError`` ``FILE:LINE: malformed YAML``.
The readers build mappings and lists themselves, so :func:`check_collections` refuses a
tag there (``!box [...]``, ``!!set``), which they would otherwise ignore, and an alias inside
what it names.
"""

from __future__ import annotations

from typing import Any

import yaml

from hri.errors import HriError

#: what making a value from YAML text may raise (also with ``yaml.safe_load``)
YAML_VALUE_ERRORS = (yaml.YAMLError, ValueError)
_CONSTRUCTOR = yaml.constructor.SafeConstructor()
_PLAIN_COLLECTIONS = ("tag:yaml.org,2002:map", "tag:yaml.org,2002:seq")


def yaml_problem(err: Exception) -> str:
    """What went wrong, in one line, from PyYAML's error (or any other)."""
    return (getattr(err, "problem", None) or str(err)).strip().splitlines()[0]


def scalar_value(node: yaml.Node, file: str) -> Any:
    """The value of ``node`` as ``yaml.safe_load`` makes it, or HriError at its line."""
    try:
        return _CONSTRUCTOR.construct_object(node, deep=True)
    except YAML_VALUE_ERRORS as err:
        problem = yaml_problem(err)
        if not isinstance(err, yaml.YAMLError):  # e.g. read as a date, and no date: say which text
            problem = f"cannot read {node.value!r}: {problem}"
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
            raise HriError("malformed YAML: an alias inside what it names (endless)", file, where)
        if n.tag not in _PLAIN_COLLECTIONS:
            raise HriError(f"malformed YAML: a tag on a mapping or list ({n.tag}): none is taken here", file, where)
        path.add(id(n))
        stack.append((n, True))
        items = n.value if isinstance(n, yaml.SequenceNode) else [v for pair in n.value for v in pair]
        stack.extend((item, False) for item in reversed(items))
