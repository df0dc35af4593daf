"""BehaviorTree.CPP-style scoped blackboards.

Unlike py_trees' process-global blackboard, every :class:`Blackboard` is an independent
object: the person's and the robot's trees (and any number of tests) never share entries.
A SubTree gets a child scope whose ``remapping`` maps its own keys to keys of the parent
scope; reads and writes of a remapped key go to the parent's entry. With ``autoremap``,
keys the child scope does not hold locally go to the parent as well. A key starting with
``@`` always names an entry of the root scope (BehaviorTree.CPP v4).
"""

from __future__ import annotations

from typing import Any, Iterator


class Blackboard:
    """One scope of key/value entries, optionally chained to a parent scope."""

    def __init__(
        self,
        parent: "Blackboard | None" = None,
        remapping: dict[str, str] | None = None,
        autoremap: bool = False,
    ):
        self.parent = parent
        self.remapping: dict[str, str] = dict(remapping or {})
        self.autoremap = autoremap
        self._entries: dict[str, Any] = {}
        if self.remapping and parent is None:
            raise ValueError("a blackboard with remapping needs a parent")

    @property
    def root(self) -> "Blackboard":
        scope = self
        while scope.parent is not None:
            scope = scope.parent
        return scope

    def _resolve(self, key: str, for_write: bool) -> tuple["Blackboard", str]:
        """The scope and key that hold ``key`` as seen from this scope."""
        if key.startswith("@"):
            return self.root, key[1:]
        if key in self.remapping:
            assert self.parent is not None
            return self.parent._resolve(self.remapping[key], for_write)
        if key in self._entries or self.parent is None or not self.autoremap:
            return self, key
        if not for_write and not self.parent.has(key):
            return self, key
        return self.parent._resolve(key, for_write)

    def get(self, key: str) -> Any:
        """The value of ``key``; :class:`KeyError` when no scope in the chain holds it."""
        scope, local = self._resolve(key, for_write=False)
        try:
            return scope._entries[local]
        except KeyError:
            where = f" (remapped to {local!r})" if local != key else ""
            raise KeyError(f"blackboard entry {key!r}{where} is not set") from None

    def set(self, key: str, value: Any) -> None:
        """Set ``key`` (in the parent's entry when remapped or autoremapped)."""
        scope, local = self._resolve(key, for_write=True)
        scope._entries[local] = value

    def set_local(self, key: str, value: Any) -> None:
        """Set ``key`` in this scope itself, ignoring remapping and autoremap."""
        self._entries[key] = value

    def has(self, key: str) -> bool:
        scope, local = self._resolve(key, for_write=False)
        return local in scope._entries

    def unset(self, key: str) -> None:
        scope, local = self._resolve(key, for_write=True)
        scope._entries.pop(local, None)

    def local_keys(self) -> Iterator[str]:
        """The keys held in this scope itself (not remapped ones)."""
        return iter(list(self._entries))

    def __repr__(self) -> str:
        return f"Blackboard({self._entries!r}, remapping={self.remapping!r}, autoremap={self.autoremap})"
