"""Scoped, typed blackboards as BehaviorTree.CPP v4 has them.

Unlike py_trees' process-global blackboard, every :class:`Blackboard` is an independent
object: the person's and the robot's trees (and any number of tests) never share entries.

A blackboard holds :class:`Entry` s. An entry has a value (:data:`EMPTY` until set), a
declared type and a sequence number that counts its writes (``WasEntryUpdated`` and
``SkipUnlessUpdated`` compare it). The type is fixed by the first port that names the entry
when the tree is built (``Port.type``), or by the first value set; ``None`` means any type
is allowed (entries made by a script's ``:=``, or by a string value). Once an entry has a
type, a write of another type is converted when that is safe (a string parsed as the type,
``2.0`` into an ``int``) and refused otherwise (:class:`BlackboardError`), as
BehaviorTree.CPP refuses it. Only a write in the entry's own scope (or through ``@``) gives
an entry without a type one; a subtree writing through a remapping leaves the type as it is,
as ``Blackboard::set`` looks in its own storage only.

A SubTree gets a child scope: ``remapping`` maps its own keys to keys of the parent scope;
with ``autoremap``, keys it does not hold go to the parent too, except private keys (a
leading ``_``). A key starting with ``@`` names an entry of the root scope. Lookups try the
scope's own entries first, then the remapping, then autoremap, as BehaviorTree.CPP does.
"""

from __future__ import annotations

from typing import Any, Iterator

from hri.bt.value_types import AnyValue, coerce, type_name


class _Empty:
    def __repr__(self) -> str:
        return "EMPTY"


EMPTY: Any = _Empty()
"""The value of an entry that a port declared but nothing has set yet."""


def strongly_typed(type_: Any) -> bool:
    """True for a declared type; False for None (any type allowed) and :class:`AnyValue`."""
    return type_ is not None and type_ is not AnyValue


class BlackboardError(ValueError):
    """A write that BehaviorTree.CPP refuses: a value of another type than the entry's."""


class Entry:
    """One blackboard entry: value, declared type (None: any), number of writes."""

    __slots__ = ("value", "type", "sequence_id")

    def __init__(self, type_: Any = None, value: Any = EMPTY) -> None:
        self.value = value
        self.type = type_
        self.sequence_id = 0

    def write(self, value: Any) -> None:
        """Store ``value`` (already of the right type) and count the write."""
        self.value = value
        self.sequence_id += 1

    def __repr__(self) -> str:
        kind = getattr(self.type, "__name__", self.type)
        return f"Entry({self.value!r}, type={kind}, sequence_id={self.sequence_id})"


def value_type(value: Any) -> Any:
    """The type an entry takes from its first value: None (any) for a string, else its class."""
    return None if isinstance(value, str) else type(value)


def is_private(key: str) -> bool:
    return key.startswith("_")


class Blackboard:
    """One scope of entries, optionally chained to a parent scope."""

    def __init__(
        self,
        parent: "Blackboard | None" = None,
        remapping: dict[str, str] | None = None,
        autoremap: bool = False,
    ):
        self.parent = parent
        self.remapping: dict[str, str] = dict(remapping or {})
        self.autoremap = autoremap
        self._entries: dict[str, Entry] = {}
        if self.remapping and parent is None:
            raise ValueError("a blackboard with remapping needs a parent")

    @property
    def root(self) -> "Blackboard":
        scope = self
        while scope.parent is not None:
            scope = scope.parent
        return scope

    # -- entries -------------------------------------------------------------------------

    def get_entry(self, key: str) -> Entry | None:
        """The entry ``key`` names from this scope, or None."""
        if key.startswith("@"):
            return self.root.get_entry(key[1:])
        entry = self._entries.get(key)
        if entry is not None or self.parent is None:
            return entry
        if key in self.remapping:
            return self.parent.get_entry(self.remapping[key])
        if self.autoremap and not is_private(key):
            return self.parent.get_entry(key)
        return None

    def create_entry(self, key: str, type_: Any = None) -> Entry:
        """The entry ``key`` names, created (empty, with ``type_``) in the scope it belongs to
        when it does not exist; BlackboardError when it exists with another declared type."""
        if key.startswith("@"):
            if "@" in key[1:]:
                raise BlackboardError(f"key {key!r}: '@' used more than once")
            return self.root._create(key[1:], type_)
        return self._create(key, type_)

    def _create(self, key: str, type_: Any) -> Entry:
        entry = self._entries.get(key)
        if entry is not None:
            if strongly_typed(entry.type) and strongly_typed(type_) and entry.type is not type_:
                raise BlackboardError(
                    f"blackboard entry {key!r} has type {type_name(entry.type)}; it cannot be used as {type_name(type_)}")
            return entry
        if self.parent is not None:
            if key in self.remapping:
                return self.parent._create(self.remapping[key], type_)
            if self.autoremap and not is_private(key):
                return self.parent._create(key, type_)
        entry = self._entries[key] = Entry(type_)
        return entry

    # -- values --------------------------------------------------------------------------

    def get(self, key: str) -> Any:
        """The value of ``key``; :class:`KeyError` when no entry holds a value."""
        entry = self.get_entry(key)
        if entry is None or entry.value is EMPTY:
            resolved = self._resolved_name(key)
            where = f" (remapped to {resolved!r})" if resolved != key else ""
            raise KeyError(f"blackboard entry {key!r}{where} is not set")
        return entry.value

    def _resolved_name(self, key: str) -> str:
        if key in self.remapping and key not in self._entries:
            return self.remapping[key]
        return key

    def set(self, key: str, value: Any) -> None:
        """Write ``value`` to ``key``, creating the entry (typed by the value) if needed.

        An entry of this scope with a declared type takes only values of that type, or
        values safely converted to it (:func:`converted`); BlackboardError otherwise.
        """
        if key.startswith("@"):
            self.root.set(key[1:], value)
            return
        entry = self._entries.get(key)
        if entry is None:  # not this scope's own: created, or the remapped entry written as it is, never retyped
            self.create_entry(key, value_type(value)).write(value)
        elif entry.type is None or entry.type is AnyValue:
            entry.type = type(value)
            entry.write(value)
        else:
            entry.write(converted(value, entry.type, key))

    def set_local(self, key: str, value: Any) -> None:
        """Set ``key`` in this scope itself, ignoring remapping and autoremap."""
        entry = self._entries.get(key)
        if entry is None:
            entry = self._entries[key] = Entry(value_type(value))
        entry.write(value)

    def own_entry(self, key: str) -> Entry | None:
        """The entry ``key`` names in this scope's own storage (``@key``: the root's), not
        through a remapping: the one that :meth:`set` and BehaviorTree.CPP's ``Blackboard::set``
        may retype; an entry reached through a remapping keeps its type."""
        if key.startswith("@"):
            return self.root._entries.get(key[1:])
        return self._entries.get(key)

    def has(self, key: str) -> bool:
        entry = self.get_entry(key)
        return entry is not None and entry.value is not EMPTY

    def unset(self, key: str) -> None:
        """Remove ``key`` from this scope's own entries (BehaviorTree.CPP's ``unset``: a
        remapped or ``@`` key is not followed)."""
        self._entries.pop(key, None)

    def local_keys(self) -> Iterator[str]:
        """The keys held in this scope itself (not remapped ones)."""
        return iter(list(self._entries))

    def local_entries(self) -> dict[str, Entry]:
        """This scope's own entries by key (a copy of the mapping)."""
        return dict(self._entries)

    def __repr__(self) -> str:
        return f"Blackboard({self._entries!r}, remapping={self.remapping!r}, autoremap={self.autoremap})"


def converted(value: Any, type_: Any, key: str = "") -> Any:
    """``value`` as an entry of ``type_`` holds it: unchanged when it has that type, parsed
    when it is a string (:func:`hri.bt.value_types.coerce`), cast when it is a
    number that the type represents exactly; BlackboardError otherwise (a number is not
    turned into a string entry's text)."""
    if type(value) is type_:
        return value
    if type_ is AnyValue:
        if isinstance(value, str):
            raise BlackboardError(f"blackboard entry {key!r} was last written by SetBlackboard without a type; "
                                  f"the text {value!r} cannot be converted for it")
        return value
    if type_ is str:
        raise BlackboardError(f"blackboard entry {key!r} has type str; it cannot take {type(value).__name__} {value!r}")
    try:
        return coerce(value, type_)
    except ValueError as err:
        raise BlackboardError(f"blackboard entry {key!r} ({type_name(type_)}): {err}") from None
