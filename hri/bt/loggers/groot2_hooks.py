"""Groot2's hooks on a tree's nodes: breakpoints and replaced ticks, as BehaviorTree.CPP 4.10 keeps them.

The source is BehaviorTree.CPP 4.10 (Davide Faconti, 2025): ``struct Hook`` with its
``to_json``/``from_json`` in ``include/behaviortree_cpp/loggers/groot2_protocol.h``, and
``insertHook``, ``runHook``, ``unlockBreakpoint``, ``removeHook``, ``removeAllHooks``,
``enableAllHooks`` and the hook requests of ``serverLoop`` in
``src/loggers/groot2_publisher.cpp``.

* **A hook** is on one node (``uid``) at one ``position``: 0 (PRE) runs before the node's tick,
  any other value (POST) after it. Its ``mode`` 0 (BREAKPOINT) stops the tree until Groot2
  unlocks it; any other mode (1 is REPLACE) does not wait. Either way the hook then returns
  its ``desired_status``: a SUCCESS or FAILURE replaces the node's tick (PRE) or its status
  (POST); any other leaves the node alone. A hook with ``once`` is removed after it ran; a
  disabled one (``enabled`` false) does nothing. Each node has at most one hook per position;
  inserting another updates it (and a BREAKPOINT turned REPLACE lets a waiting tree go).
* **Its JSON** is ``to_json``'s object, which ``nlohmann::json::dump`` writes with sorted keys
  and no spaces: ``{"desired_status":"SKIPPED","enabled":true,"mode":0,"once":false,
  "position":0,"uid":5}``. A hook request is read as ``from_json`` reads it, field by field in
  its order, and a field that is missing or of the wrong type is answered with the text of
  the ``nlohmann::json`` exception BehaviorTree.CPP's server replies with (:class:`JsonError`).
  Numbers are converted as ``get<uint16_t>``/``get<int>`` convert them (a boolean or a float
  is a number, the value wraps).
* **Reaching a breakpoint** (:meth:`Hooks.run`): an enabled hook first announces itself (the
  publisher sends ``BREAKPOINT_REACHED`` on its PUB socket), then, in BREAKPOINT mode, waits
  until Groot2 unlocks it, disables it or removes it. The waiting is not done here: the
  ``pause`` function the hooks are given waits, and answers Groot2 meanwhile.

hri differs in one respect: BehaviorTree.CPP's hook blocks the thread that ticks the tree; a
``pause`` function decides what waits with it (:mod:`hri.run.groot2` makes the whole
simulation wait).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from py_trees.common import Status

from hri.bt.node import TreeNode
from hri.bt.node_status import SKIPPED, TickResult

PRE, POST = 0, 1  # Hook::Position
BREAKPOINT, REPLACE = 0, 1  # Hook::Mode
STATUS_NAMES = ("IDLE", "RUNNING", "SUCCESS", "FAILURE", "SKIPPED")  # convertFromString<NodeStatus>
_RESULTS: dict[str, TickResult] = {"SUCCESS": Status.SUCCESS, "FAILURE": Status.FAILURE,
                                   "RUNNING": Status.RUNNING, "IDLE": Status.INVALID, "SKIPPED": SKIPPED}
_UINT64_END = 1 << 64
_INT64_START = -(1 << 63)

Pause = Callable[[Callable[[], bool]], None]
"""Waits until the predicate is true (serving Groot2 meanwhile)."""
Announce = Callable[[int], bool]
"""Tells Groot2 a hook on a UID was reached; False when that failed."""


class JsonError(ValueError):
    """A hook request BehaviorTree.CPP's server would answer with an ``nlohmann::json`` exception;
    the message is that exception's ``what()``."""


@dataclass
class Hook:
    """``Monitor::Hook``: what Groot2 asked to happen at one node's tick."""

    node_uid: int = 0
    position: int = PRE
    mode: int = BREAKPOINT
    enabled: bool = True
    remove_when_done: bool = False  # the JSON's "once"
    desired_status: str = "SKIPPED"
    ready: bool = False  # set by an unlock: the waiting tick may go on

    def to_json(self) -> dict[str, Any]:
        """``to_json(nlohmann::json&, const Hook&)``."""
        return {"enabled": self.enabled, "uid": self.node_uid, "mode": self.mode,
                "once": self.remove_when_done, "desired_status": self.desired_status,
                "position": self.position}

    def update(self, js: Any) -> None:
        """``from_json``: each field in its order; a bad one raises JsonError, the fields before it stay set."""
        self.enabled = get_bool(at(js, "enabled"))
        self.node_uid = get_int(at(js, "uid"), 16, signed=False)
        self.remove_when_done = get_bool(at(js, "once"))
        self.mode = get_int(at(js, "mode"), 32)
        self.position = get_int(at(js, "position"), 32)
        self.desired_status = node_status(get_str(at(js, "desired_status")))


# -- nlohmann::json, as BehaviorTree.CPP's server reads a request ---------------------------------

def type_name(value: Any) -> str:
    """``basic_json::type_name`` of a parsed value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return {dict: "object", list: "array", str: "string"}[type(value)]


def parse(data: bytes) -> Any:
    """``nlohmann::json::parse`` of a request part (strict JSON in UTF-8); JsonError when it fails.
    The message names the exception and the position as nlohmann does; its explanation is Python's."""
    try:
        return json.loads(data.decode("utf-8"), parse_constant=_not_json, parse_float=_finite)
    except UnicodeDecodeError as error:
        raise JsonError("[json.exception.parse_error.101] parse error: "
                        f"invalid UTF-8 byte at index {error.start}") from None
    except json.JSONDecodeError as error:
        raise JsonError(f"[json.exception.parse_error.101] parse error at line {error.lineno}, "
                        f"column {error.colno}: syntax error - {error.msg}") from None


def _not_json(word: str) -> Any:
    raise json.JSONDecodeError(f"invalid literal '{word}'", word, 0)


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise JsonError(f"[json.exception.out_of_range.406] number overflow parsing '{text}'")
    return value


def at(js: Any, key: str) -> Any:
    """``basic_json::at(key)``."""
    if not isinstance(js, dict):
        raise JsonError(f"[json.exception.type_error.304] cannot use at() with {type_name(js)}")
    if key not in js:
        raise JsonError(f"[json.exception.out_of_range.403] key '{key}' not found")
    return js[key]


def get_bool(value: Any) -> bool:
    if not isinstance(value, bool):
        raise JsonError(f"[json.exception.type_error.302] type must be boolean, but is {type_name(value)}")
    return value


def get_str(value: Any) -> str:
    if not isinstance(value, str):
        raise JsonError(f"[json.exception.type_error.302] type must be string, but is {type_name(value)}")
    return value


def get_int(value: Any, bits: int, signed: bool = True) -> int:
    """``get<uint16_t>()`` or ``get<int>()``: a number or a boolean, cast (truncated, wrapped) to ``bits``."""
    if not isinstance(value, (bool, int, float)):
        raise JsonError(f"[json.exception.type_error.302] type must be number, but is {type_name(value)}")
    if isinstance(value, int) and not _INT64_START <= value < _UINT64_END:
        value = float(value)  # nlohmann keeps an integer beyond 64 bits as a double
    number = math.trunc(value) % (1 << bits)
    return number - (1 << bits) if signed and number >= 1 << (bits - 1) else number


def node_status(name: str) -> str:
    """``convertFromString<NodeStatus>``: the name itself; JsonError (its RuntimeError's text) otherwise."""
    if name not in STATUS_NAMES:
        raise JsonError(f"Cannot convert this to NodeStatus: {name}")
    return name


def dump(values: Any) -> bytes:
    """``nlohmann::json::dump()``: keys sorted, no spaces."""
    return json.dumps(values, separators=(",", ":"), sort_keys=True).encode()


# -- the hooks of one tree ------------------------------------------------------------------------

class Hooks:
    """The hooks on one tree's nodes (``nodes[i]`` has UID ``first_uid + i``), as the publisher's
    ``pre_hooks`` and ``post_hooks`` hold them."""

    def __init__(self, nodes: Sequence[TreeNode], first_uid: int, announce: Announce, pause: Pause) -> None:
        self._nodes = {uid: node for uid, node in enumerate(nodes, first_uid)}
        self._hooks: tuple[dict[int, Hook], dict[int, Hook]] = ({}, {})
        self.announce = announce
        self.pause = pause

    def table(self, position: int) -> dict[int, Hook]:
        return self._hooks[PRE if position == PRE else POST]

    def get(self, position: int, uid: int) -> Hook | None:
        return self.table(position).get(uid)

    def dump(self) -> bytes:
        """HOOKS_DUMP: the PRE hooks, then the POST ones."""
        return dump([hook.to_json() for table in self._hooks for hook in table.values()])

    # -- requests --

    def insert_request(self, js: Any) -> None:
        """HOOK_INSERT: one hook's JSON or a list of them."""
        for item in js if isinstance(js, list) else [js]:
            uid = get_int(at(item, "uid"), 16, signed=False)
            position = get_int(at(item, "position"), 32)
            hook = self.get(position, uid)
            if hook is None:
                hook = Hook()
                hook.update(item)
                self.insert(hook)
                continue
            was_breakpoint = hook.mode == BREAKPOINT
            hook.update(item)
            if was_breakpoint and hook.mode == REPLACE:
                hook.ready = True

    def unlock_request(self, js: Any) -> bool:
        """BREAKPOINT_UNLOCK; False when there is no such hook ("Node ID not found")."""
        uid = get_int(at(js, "uid"), 16, signed=False)
        wanted = get_str(at(js, "desired_status"))
        position = get_int(at(js, "position"), 32)
        remove = get_bool(at(js, "remove_when_done"))
        hook = self.get(position, uid) if uid in self._nodes else None
        if hook is None:
            return False
        hook.desired_status = wanted if wanted in ("SUCCESS", "FAILURE") else "SKIPPED"
        hook.remove_when_done |= remove
        if hook.mode == BREAKPOINT:
            hook.ready = True
        return True

    def remove_request(self, js: Any) -> bool:
        """HOOK_REMOVE; False when there is no such hook ("Node ID not found")."""
        uid = get_int(at(js, "uid"), 16, signed=False)
        return self.remove(get_int(at(js, "position"), 32), uid)

    # -- the publisher's methods --

    def insert(self, hook: Hook) -> bool:
        """``insertHook``: put the hook on its node; False for a UID the tree does not have."""
        node = self._nodes.get(hook.node_uid)
        if node is None:
            return False
        self.table(hook.position)[hook.node_uid] = hook
        if hook.position == PRE:
            node.pre_tick = lambda n: self.run(hook)
        else:
            node.post_tick = lambda n, status: self.run(hook)
        return True

    def remove(self, position: int, uid: int) -> bool:
        """``removeHook``: disable the hook (a waiting breakpoint lets go) and take it off its node."""
        node = self._nodes.get(uid)
        hook = self.table(position).pop(uid, None) if node is not None else None
        if hook is None:
            return False
        hook.enabled = False
        if position == PRE:
            node.pre_tick = None
        else:
            node.post_tick = None
        return True

    def remove_all(self) -> None:
        """``removeAllHooks``."""
        for position in (PRE, POST):
            for uid in list(self.table(position)):
                self.remove(position, uid)

    def enable_all(self, enabled: bool) -> None:
        """``enableAllHooks``: DISABLE_ALL_HOOKS, and the heartbeat lost or found again."""
        for table in self._hooks:
            for hook in table.values():
                hook.enabled = enabled

    # -- at the node's tick --

    def run(self, hook: Hook) -> TickResult:
        """``runHook``: what the hook makes of the node's tick (SKIPPED: nothing)."""
        if not hook.enabled or not self.announce(hook.node_uid):
            return SKIPPED
        if hook.mode == BREAKPOINT:
            self.pause(lambda: hook.ready or not hook.enabled)
            hook.ready = False
        if not hook.enabled:
            return SKIPPED
        status = hook.desired_status
        if hook.remove_when_done:
            hook.enabled = False  # as BehaviorTree.CPP, for a copy of the callback still held
            if self.table(hook.position).get(hook.node_uid) is hook:
                self.remove(hook.position, hook.node_uid)
        return _RESULTS[status]
