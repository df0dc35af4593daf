"""What the broker knows of a service: a :class:`ServiceRecord`, and how it matches a query.

A record names the service, its identifiers (specific to general), the endpoint that offers
it, its request kinds (``ops``) and its streams; it travels as a plain mapping
(:meth:`ServiceRecord.to_wire`, :meth:`ServiceRecord.from_wire`). :meth:`ServiceRecord.rank`
is the broker's AND/OR matching of one service.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from .errors import NetError


def names(values: Any, what: str) -> tuple[str, ...]:
    """``values`` (one name or several) as a tuple of non-empty strings; NetError naming ``what`` if not."""
    if isinstance(values, str):
        values = [values]
    try:
        checked = tuple(values)
    except TypeError:
        raise NetError(f"{what}: expected a list of strings, got {values!r}") from None
    for name in checked:
        if not isinstance(name, str) or not name:
            raise NetError(f"{what}: {name!r} is not a non-empty string")
    return checked


@dataclass(frozen=True)
class ServiceRecord:
    """Where a service is and what it offers."""

    name: str
    identifiers: tuple[str, ...]
    address: int
    ops: tuple[str, ...] = ()
    streams: tuple[str, ...] = ()

    def to_wire(self) -> dict[str, Any]:
        return {"name": self.name, "identifiers": list(self.identifiers), "address": self.address,
                "ops": list(self.ops), "streams": list(self.streams)}

    @classmethod
    def from_wire(cls, data: Any) -> "ServiceRecord":
        if not isinstance(data, dict):
            raise NetError(f"a service record must be a mapping, got {type(data).__name__}")
        try:
            address = data["address"]
            if isinstance(address, bool) or not isinstance(address, int):
                raise NetError(f"service record address {address!r} is not an endpoint id")
            return cls(names([data["name"]], "name")[0], names(data["identifiers"], "identifiers"),
                       address, names(data.get("ops", ()), "ops"), names(data.get("streams", ()), "streams"))
        except KeyError as missing:
            raise NetError(f"service record without {missing}") from None

    def rank(self, all_of: Sequence[str], any_of: Sequence[str]) -> int | None:
        """How specifically this service matches (lower is better), or None if it does not."""
        position = {identifier: i for i, identifier in enumerate(self.identifiers)}
        if any(term not in position for term in all_of):
            return None
        score = sum(position[term] for term in all_of)
        if any_of:
            hits = [position[term] for term in any_of if term in position]
            if not hits:
                return None
            score += min(hits)
        return score
