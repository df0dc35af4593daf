"""The broker: services register with identifier lists and are discovered by AND/OR matching.

As in seed ``000``, a service registers with identifiers ordered from specific to general,
e.g. ``["lbr-iisy-1", "lbr-iisy", "industrial-robot", "robot"]`` for one robot's motion
service or ``["inverse-kinematics", "lbr-iisy", "service"]`` for a kinematics service, plus
the request kinds (``ops``) and streams it offers. A query asks for services that carry
**all** of some identifiers (AND) and/or **any** of others (OR), optionally offering an op or
a stream. Matches are ranked by how specific the matching identifiers are (their positions
in the service's list, summed; lower is better), then by registration order.

:meth:`Broker.discover` returns the single best match; no match, or two equally good
matches, is a :class:`~hri.net.errors.DiscoveryError` (an ambiguous query is a mistake to be
told about, not a coin to flip). :meth:`Broker.find` returns all matches, ranked.

After discovery, clients talk to the service directly: the broker is not on the data path,
so losing it (seed ``000``'s single point of failure) stops new discoveries only. It can be
used directly (one process) or offered on the network as the service ``broker``
(:func:`broker_service`) and reached through a :class:`BrokerClient`. A registration over
the network may only name the registering endpoint as the service's address.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from .errors import DiscoveryError, NetError
from .future import Future
from .node import Node
from .record import ServiceRecord, names
from .rpc import Request, Service

BROKER_SERVICE = "broker"


class Broker:
    """The registry of services."""

    def __init__(self) -> None:
        self._records: dict[str, ServiceRecord] = {}

    def __len__(self) -> int:
        return len(self._records)

    @property
    def records(self) -> list[ServiceRecord]:
        return list(self._records.values())

    def register(self, record: ServiceRecord) -> None:
        """Add a service; registering the same name from the same address again replaces it."""
        identifiers = names(record.identifiers, f"service {record.name}: identifiers")
        if not identifiers:
            raise NetError(f"service {record.name}: needs at least one identifier")
        if len(set(identifiers)) != len(identifiers):
            raise NetError(f"service {record.name}: identifiers repeat: {list(identifiers)}")
        known = self._records.get(record.name)
        if known is not None and known.address != record.address:
            raise NetError(f"service {record.name} is already offered by endpoint {known.address}")
        self._records[record.name] = record

    def unregister(self, name: str) -> bool:
        return self._records.pop(name, None) is not None

    def unregister_address(self, address: int) -> list[str]:
        """Remove every service of one endpoint (its process ended); return their names."""
        gone = [name for name, record in self._records.items() if record.address == address]
        for name in gone:
            del self._records[name]
        return gone

    def get(self, name: str) -> ServiceRecord | None:
        return self._records.get(name)

    def lookup(self, name: str) -> ServiceRecord:
        try:
            return self._records[name]
        except KeyError:
            raise DiscoveryError(f"no service named {name!r}") from None

    def find(self, all_of: Iterable[str] | str = (), any_of: Iterable[str] | str = (),
             op: str | None = None, stream: str | None = None) -> list[ServiceRecord]:
        """Every matching service, best first."""
        all_of, any_of = names(all_of, "all_of"), names(any_of, "any_of")
        if not all_of and not any_of:
            raise DiscoveryError("a discovery query needs all_of and/or any_of identifiers")
        ranked = []
        for order, record in enumerate(self._records.values()):
            if (op is not None and op not in record.ops) or (stream is not None and stream not in record.streams):
                continue
            score = record.rank(all_of, any_of)
            if score is not None:
                ranked.append((score, order, record))
        return [record for _score, _order, record in sorted(ranked, key=lambda r: r[:2])]

    def discover(self, all_of: Iterable[str] | str = (), any_of: Iterable[str] | str = (),
                 op: str | None = None, stream: str | None = None) -> ServiceRecord:
        """The one best matching service; DiscoveryError when there is none or a tie."""
        matches = self.find(all_of, any_of, op, stream)
        query = _describe(all_of, any_of, op, stream)
        if not matches:
            known = "; ".join(f"{r.name} {list(r.identifiers)}" for r in self._records.values())
            raise DiscoveryError(f"no service matches {query} (registered: {known or 'none'})")
        if len(matches) > 1:
            all_t, any_t = names(all_of, "all_of"), names(any_of, "any_of")
            best = matches[0].rank(all_t, any_t)
            tied = [r.name for r in matches if r.rank(all_t, any_t) == best]
            if len(tied) > 1:
                raise DiscoveryError(f"{len(tied)} services match {query} equally well: "
                                     f"{', '.join(tied)}; ask with a more specific identifier")
        return matches[0]


def _describe(all_of: Any, any_of: Any, op: str | None, stream: str | None) -> str:
    parts = []
    if all_of:
        parts.append(f"all of {list(names(all_of, 'all_of'))}")
    if any_of:
        parts.append(f"any of {list(names(any_of, 'any_of'))}")
    if op:
        parts.append(f"offering {op!r}")
    if stream:
        parts.append(f"streaming {stream!r}")
    return " and ".join(parts)


# --------------------------------------------------------------------------------------------
# The broker on the network


def _query(payload: Any) -> dict[str, Any]:
    if not isinstance(payload, dict):
        raise NetError("a discovery query must be a mapping")
    return {key: payload.get(key, default) for key, default in
            (("all_of", ()), ("any_of", ()), ("op", None), ("stream", None))}


def broker_service(broker: Broker, identifiers: Sequence[str] = ("broker", "registry")) -> Service:
    """``broker`` as a service: ops register, unregister, discover (one record), find (a list)."""

    def register(request: Request) -> bool:
        record = ServiceRecord.from_wire(request.payload)
        if record.address != request.sender:
            raise NetError(f"endpoint {request.sender} cannot register a service at endpoint {record.address}")
        broker.register(record)
        return True

    def unregister(request: Request) -> bool:
        name = str(request.payload)
        known = broker.get(name)
        if known is not None and known.address != request.sender:
            raise NetError(f"endpoint {request.sender} cannot unregister {name}, offered by {known.address}")
        return broker.unregister(name)

    handlers = {
        "register": register,
        "unregister": unregister,
        "discover": lambda request: broker.discover(**_query(request.payload)).to_wire(),
        "find": lambda request: [r.to_wire() for r in broker.find(**_query(request.payload))],
    }
    return Service(BROKER_SERVICE, identifiers, handlers)


class BrokerClient:
    """Registers and discovers through a broker service at ``address``."""

    def __init__(self, node: "Node", address: int, timeout: float | None = None):
        self.node = node
        self.address = address
        self.timeout = timeout

    def _call(self, op: str, payload: Any, transform=None) -> Future:
        return self.node.call(self.address, BROKER_SERVICE, op, payload, timeout=self.timeout,
                              transform=transform)

    def register(self, record: ServiceRecord) -> Future:
        return self._call("register", record.to_wire())

    def unregister(self, name: str) -> Future:
        return self._call("unregister", name)

    def discover(self, all_of: Iterable[str] | str = (), any_of: Iterable[str] | str = (),
                 op: str | None = None, stream: str | None = None) -> Future:
        """A future whose value is the :class:`ServiceRecord` found."""
        query = {"all_of": list(names(all_of, "all_of")), "any_of": list(names(any_of, "any_of")),
                 "op": op, "stream": stream}
        return self._call("discover", query, ServiceRecord.from_wire)

    def find(self, all_of: Iterable[str] | str = (), any_of: Iterable[str] | str = (),
             op: str | None = None, stream: str | None = None) -> Future:
        query = {"all_of": list(names(all_of, "all_of")), "any_of": list(names(any_of, "any_of")),
                 "op": op, "stream": stream}
        return self._call("find", query, lambda records: [ServiceRecord.from_wire(r) for r in records])
