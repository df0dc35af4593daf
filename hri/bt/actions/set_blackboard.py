"""BehaviorTree.CPP ``SetBlackboard``: write a value (or copy an entry) to an entry."""

from __future__ import annotations

from typing import Any

from py_trees.common import Status

from hri.bt.blackboard import EMPTY, BlackboardError, Entry, converted
from hri.bt.node import BTNode
from hri.bt.ports import Port, reference_key
from hri.bt.value_types import AnyValue


class SetBlackboard(BTNode):
    """Writes ``value`` to the entry named by ``output_key``; SUCCESS.

    ``value`` is a text or ``{entry}`` (that entry's value is copied; FAILURE when it holds
    none). ``output_key`` names the entry (``{key}`` reads the name from the entry ``key``).
    A new entry takes the value's type (a text: a string entry). A text written to an
    existing entry that is not a string entry is parsed as the entry's type; as in
    BehaviorTree.CPP, an entry without a declared type (made by a script's ``:=`` or by a
    ``{port}``) then holds no value afterwards. Written in the entry's own scope, it also
    takes a text no more (it has become an entry of type
    :class:`~hri.bt.blackboard.AnyValue`); written from a subtree's scope through a remapping
    or ``_autoremap``, it keeps its type (``Blackboard::set`` retypes only an entry of its own
    storage, and ``createEntryImpl`` returns the parent's entry unchanged).
    """

    PORTS = (
        Port("value", "in", Any, None, "the value: a text or {entry}"),
        Port("output_key", "inout", Any, None, "the name of the entry to write"),
    )

    def update(self) -> Status:
        key = self._output_key()
        target = self.blackboard.get_entry(key)
        source_key = reference_key(self.raw_ports.get("value", ""), "value")
        if source_key is not None:
            source = self.blackboard.get_entry(source_key)
            if source is None:
                raise self._error(f"port 'value': no entry {source_key!r}")
            if target is None:
                target = self.blackboard.create_entry(key, source.type)
            value = source.value
        else:
            value = self.raw_ports.get("value", "")
        if value is EMPTY:
            return Status.FAILURE
        try:
            self._write(key, target, value)
        except BlackboardError as err:
            raise self._error(str(err)) from None
        return Status.SUCCESS

    def _output_key(self) -> str:
        raw = self.raw_ports.get("output_key")
        if raw is None:
            raise self._error("missing port 'output_key'")
        key = reference_key(raw, "output_key")
        return raw if key is None else str(self.get_input("output_key"))

    def _write(self, key: str, target: Entry | None, value: Any) -> None:
        if target is None:
            self.blackboard.create_entry(key, type(value)).write(value)
        elif target.type is None or target.type is AnyValue:
            if isinstance(value, str):
                value = converted(value, target.type, key) if target.type is AnyValue else EMPTY
            if target is self.blackboard.own_entry(key):  # an entry reached through a remapping keeps its type
                target.type = AnyValue
            target.write(value)
        else:
            self._write_typed(key, target, value)

    def _write_typed(self, key: str, target: Entry, value: Any) -> None:
        if isinstance(value, str) and target.type is not str:
            value = converted(value, target.type, key)
        elif type(value) is not target.type:
            raise BlackboardError(f"blackboard entry {key!r} has type {target.type.__name__}; "
                                  f"it cannot take {type(value).__name__} {value!r}")
        target.write(value)
