"""A scenario's YAML document as read: its values, the line of every key, the ``--set`` keys.

The typed scenario (:mod:`hri.scenario.model`) is built from it once; it stays behind for what
needs the document itself: messages that point at a key's line (or at the ``--set`` option
that gave it), the copy a run directory keeps, and a tree's own process building the scenario
again (:meth:`Document.to_json`).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hri.base.errors import HriError


@dataclass(frozen=True)
class Document:
    path: Path
    data: dict
    lines: dict[str, int] = field(default_factory=dict)
    overrides: list[str] = field(default_factory=list)
    """The dotted keys set by ``--set``: a problem in one is reported as that option."""

    def override_of(self, dotted: str) -> str | None:
        """The ``--set`` key that gave ``dotted`` (or a part of it, or a mapping holding it)."""
        for key in reversed(self.overrides):
            if dotted == key or dotted.startswith((f"{key}.", f"{key}[")) or key.startswith(f"{dotted}."):
                return key
        return None

    def error(self, message: str, file: str, dotted: str, *related: str) -> HriError:
        """``FILE:LINE: message`` at ``dotted``, or ``--set KEY: message`` when ``dotted`` or a
        ``related`` key (the other side of a check, e.g. the zone that must hold it) came from
        ``--set``: the file's line would point at a value that is not the one in use."""
        for key in (dotted, *related):
            option = self.override_of(key) if key else None
            if option:
                for prefix in (f"{option}: ", f"{option} ", f"'{option}' "):  # named once, by the option
                    message = message.removeprefix(prefix)
                return HriError(f"--set {option}: {message}")
        return HriError(message, file, self.line_of(dotted))

    def line_of(self, dotted: str) -> int | None:
        while dotted:
            if dotted in self.lines:
                return self.lines[dotted]
            dotted = dotted.rsplit(".", 1)[0] if "." in dotted else ""
        return None

    def with_faults(self, specs: list[Any]) -> "Document":
        """This document with ``specs`` added to its ``faults`` list."""
        data = dict(self.data)
        data["faults"] = list(self.data.get("faults") or []) + list(specs)
        return Document(self.path, data, self.lines, self.overrides)

    def for_run_directory(self, trees: dict[str, str], plugins: list[str] | None, model: str | None = None) -> dict:
        """A copy of the values with the tree files and (when given) the plug-ins and the arm's
        file (``robot.model``) replaced by the copies a run directory keeps."""
        data = copy.deepcopy(self.data)
        if model is not None:
            data["robot"]["model"] = model
        people = {person.get("name"): person for person in data.get("people") or [] if isinstance(person, dict)}
        for role, path in trees.items():  # a person of ``people`` names their tree in the entry
            if role in people and role not in data["trees"]:
                people[role]["tree"] = path
            else:
                data["trees"][role] = path
        if plugins is not None:
            data["plugins"] = plugins
        return data

    def to_json(self) -> dict[str, Any]:
        """What :func:`hri.scenario.load.scenario_from_json` builds the same scenario from."""
        return {"path": str(self.path), "data": self.data, "lines": self.lines, "overrides": self.overrides}
