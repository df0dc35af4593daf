"""A live Groot2 publisher of one tree, as BehaviorTree.CPP 4.10's ``Groot2Publisher`` serves it.

The protocol is BehaviorTree.CPP's (``include/behaviortree_cpp/loggers/groot2_protocol.h``,
``src/loggers/groot2_publisher.cpp``, BehaviorTree.CPP 4.10, Davide Faconti, 2025):

* **Sockets.** A ZeroMQ REP server on ``PORT`` answers Groot2's requests; a PUB socket on
  ``PORT + 1`` announces a reached breakpoint: the two parts ``SerializeHeader`` of a
  ``BREAKPOINT_REACHED`` (``N``) request with a random id, then the node's UID in decimal.
  Both sockets have ``linger`` 0. BehaviorTree.CPP binds them on every interface
  (``tcp://*:PORT``); hri binds them on the address of :attr:`Access.host`, 127.0.0.1 unless
  told otherwise, so that only this machine reaches them.
* **Request.** Multipart; its first part is the 6-byte header ``SerializeHeader`` writes:
  protocol (``uint8``, 2), request type (one character), a unique id (``uint32``,
  little-endian, ``memcpy``). The server does not check the protocol byte.
* **Reply.** The request's header with protocol 2, then the publisher's 16-byte tree id (a
  random version-4 UUID, ``CreateRandomUUID``): 22 bytes; then the answer:

  - ``FULLTREE`` (``T``): the tree's XML with UIDs (:func:`~hri.bt.loggers.tree_xml.tree_xml`);
  - ``STATUS`` (``S``): 3 bytes per node, its UID (``uint16``, little-endian) and its status:
    IDLE 0, RUNNING 1, SUCCESS 2, FAILURE 3, or 10 + the status it had before it was reset to
    IDLE; the nodes subtree by subtree in the order they were created, each subtree's own
    nodes in UID order (:func:`status_layout`);
  - ``BLACKBOARD`` (``B``, 2 parts, the second ``NAME;NAME...``): ``nlohmann::json::to_msgpack``
    of ``{NAME: {key: value}}`` for each known subtree name (the main tree's ID, or a
    subtree's ``_fullpath``), plus ``ROOT``, the root blackboard, when a named subtree's
    blackboard is not its own root (``generateBlackboardsDump``). Values are exported as
    ``JsonExporter::toJson`` exports them: strings, integers, floats, lists of those; any other
    type it has no converter for is ``null``;
  - the hooks (:mod:`~hri.bt.loggers.groot2_hooks`): ``HOOK_INSERT`` (``I``, 2 parts: a hook's
    JSON or a list of them), ``HOOK_REMOVE`` (``R``, 2 parts: ``uid``, ``position``),
    ``BREAKPOINT_UNLOCK`` (``U``, 2 parts: ``uid``, ``position``, ``desired_status``,
    ``remove_when_done``), ``REMOVE_ALL_HOOKS`` (``A``) and ``DISABLE_ALL_HOOKS`` (``X``) get
    the header alone; ``HOOKS_DUMP`` (``D``) gets the JSON list of the hooks;
  - ``TOGGLE_RECORDING`` (``r``, 2 parts): ``start`` empties the recording, starts it and
    gets the time it started (microseconds since the Unix epoch, in decimal); ``stop`` or
    anything else gets the header alone. While recording, every status transition is kept
    (the last 1000) as the 9 bytes of a ``.btlog`` record, its time counted from the start;
    ``GET_TRANSITIONS`` (``t``) gets them and forgets them.
* **Errors.** A first part that is not 6 bytes gets the two parts ``error``, ``wrong request
  header``; a request type it does not know, ``error``, ``Request not recognized``; a request
  of the 2-part kinds without exactly 2 parts, ``error``, ``must be 2 parts message``; an
  unlock or removal of a hook that is not there, ``error``, ``Node ID not found``; any other
  failure, ``error`` and the exception's text.
* **Limits (hri's, not BehaviorTree.CPP's).** A request part larger than
  :func:`request_cap` bytes is not read: ZeroMQ (``ZMQ_MAXMSGSIZE``) drops the connection of a
  peer whose frame header announces it, before buffering any of it. And the requests that
  change a run (:data:`HOOK_REQUESTS`: inserting, removing, unlocking, disabling hooks) are
  answered ``error`` when they come from another host (:func:`is_loopback` of the peer's
  address), unless :attr:`Access.remote_hooks` lets them in.
* **Heartbeat.** Every request counts as a sign of life. When none has come for
  :attr:`Groot2Publisher.max_heartbeat_delay_s` (5 s, ``max_heartbeat_delay``), every hook is
  disabled, so a breakpoint a vanished client left does not hold the tree; they are enabled
  again when requests come again (``heartbeatLoop``, which looks every 10 ms).

hri's publisher has no thread: :meth:`Groot2Publisher.poll` answers the requests waiting on
the server without blocking (a ``zmq.Poller`` with timeout 0), so a simulation loop calls it
once per step and pays one system call when nobody is connected. The statuses come from the
tree's transitions as :class:`~hri.bt.loggers.transitions.TransitionRecorder` records them
(:meth:`Groot2Publisher.apply`), so a tree ticked in another process is served alike; a
recording's times are those of the records (simulated time), counted from the ``clock`` when
it started. Hooks need the tree's nodes: a publisher told to refuse them answers
``HOOK_INSERT`` with the reason it is given. A breakpoint waits in the ``pause`` function the publisher is given,
by default one that polls this publisher until the breakpoint is let go.
Nothing a client sends raises out of :meth:`poll`.
"""

from __future__ import annotations

import ipaddress
import os
import struct
import time
from collections import deque
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import msgpack
import numpy as np
import zmq

from hri.bt.blackboard import EMPTY, Blackboard
from hri.bt.decorators import SubTreeNode
from hri.bt.loggers.file_logger import EPOCH_US
from hri.bt.loggers.groot2_hooks import Hooks, Pause, parse
from hri.bt.loggers.transitions import RECORD_SIZE, TIMESTAMP_BYTES
from hri.bt.loggers.tree_xml import FIRST_UID, nodes_by_uid, subtree_paths
from hri.bt.node import TreeNode
from hri.bt.status import preorder
from hri.bt.tree import Tree

PROTOCOL_ID = 2  # kProtocolID
REQUEST_HEADER = struct.Struct("<BBI")  # protocol, type, unique_id: SerializeHeader's 6 bytes
TREE_ID_BYTES = 16
FULLTREE, STATUS, BLACKBOARD = ord("T"), ord("S"), ord("B")
HOOK_INSERT, HOOK_REMOVE, BREAKPOINT_REACHED, BREAKPOINT_UNLOCK = ord("I"), ord("R"), ord("N"), ord("U")
HOOKS_DUMP, REMOVE_ALL_HOOKS, DISABLE_ALL_HOOKS = ord("D"), ord("A"), ord("X")
TOGGLE_RECORDING, GET_TRANSITIONS = ord("r"), ord("t")
TWO_PART_REQUESTS = frozenset((BLACKBOARD, HOOK_INSERT, BREAKPOINT_UNLOCK, HOOK_REMOVE, TOGGLE_RECORDING))
#: the requests that change the run: taken from this machine only, unless Access.remote_hooks
HOOK_REQUESTS = frozenset((HOOK_INSERT, HOOK_REMOVE, BREAKPOINT_UNLOCK, REMOVE_ALL_HOOKS, DISABLE_ALL_HOOKS))
LOOPBACK_HOST = "127.0.0.1"
#: a hook's JSON as Groot2 writes it (nlohmann's dump, no spaces) is under 100 bytes:
#: {"desired_status":"SKIPPED","enabled":false,"mode":0,"once":false,"position":0,"uid":65535}
HOOK_JSON_BYTES = 256
MIN_REQUEST_CAP = 64 * 1024  # what any tree's requests may take, however small the tree
IDLE_FROM = 10  # IDLE_FROM_SUCCESS = 10 + SUCCESS, ...
ROOT_BLACKBOARD = "ROOT"  # kRootBlackboardName
DEFAULT_PORT = 1667  # Groot2Publisher's default server_port
MAX_REQUESTS_PER_POLL = 64  # a flooding client cannot stall a simulation step
#: a FileLogger2 transition record: 6 bytes of microseconds, the node's UID, its new status
RECORD_DTYPE = np.dtype([("stamp", "V6"), ("uid", "<u2"), ("code", "u1")])
PENDING_BYTES = 1 << 20  # transition records kept unfolded at most (about 116,000)
MAX_HEARTBEAT_DELAY_S = 5.0  # max_heartbeat_delay: 5000 ms
MAX_RECORDED_TRANSITIONS = 1000  # the callback keeps transitions_buffer at 1000
PAUSE_POLL_S = 0.01  # heartbeatLoop looks every 10 ms; a waiting breakpoint polls as often
NODE_NOT_FOUND = "Node ID not found"
_STAMP_WRAP = 1 << (8 * TIMESTAMP_BYTES)  # the low 6 bytes of a uint64_t

BlackboardScopes = Callable[[], Mapping[str, Blackboard]]


def status_layout(root: Any) -> list[int]:
    """The UIDs in the order of BehaviorTree.CPP's status buffer: the subtrees in the order
    they are created (the main tree first), each one's own nodes (its SubTree nodes, not
    their subtree's nodes) in UID order."""
    subtree_of_uid: list[tuple[int, int]] = []
    next_subtree = 1
    stack: list[tuple[Any, int]] = [(root, 0)]
    uids = {id(node): uid for uid, node in enumerate(nodes_by_uid(root), FIRST_UID)}
    while stack:
        node, subtree = stack.pop()
        subtree_of_uid.append((subtree, uids[id(node)]))
        if isinstance(node, SubTreeNode):
            stack.append((node.child, next_subtree))
            next_subtree += 1
            continue
        stack.extend((child, subtree) for child in reversed(node.children))
    return [uid for _, uid in sorted(subtree_of_uid)]


def blackboard_scopes(tree: Tree) -> dict[str, Blackboard]:
    """The tree's blackboard scopes by the names Groot2 asks for them: the main tree's ID,
    then each subtree instance's path (BehaviorTree.CPP's ``Subtree::instance_name``)."""
    scopes = {tree.tree_id: tree.blackboard}
    paths = subtree_paths(tree)
    scopes.update((paths[id(node)], node.scope) for _, node in preorder(tree.root)
                  if isinstance(node, SubTreeNode))
    return scopes


def random_tree_id() -> bytes:
    """A random version-4 UUID, as ``CreateRandomUUID`` makes the publisher's tree id."""
    out = bytearray(os.urandom(TREE_ID_BYTES))
    out[8] = (out[8] & 0xBF) | 0x80
    out[6] = (out[6] & 0x4F) | 0x40
    return bytes(out)


def json_value(value: Any) -> Any:
    """A blackboard value as ``JsonExporter::toJson`` exports it (None: it has no converter)."""
    if isinstance(value, (str, float)) or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    if isinstance(value, (list, tuple)) and all(isinstance(v, (str, int, float)) for v in value):
        return list(value)
    return None


def export_blackboard(scope: Blackboard) -> dict[str, Any] | None:
    """``ExportBlackboardToJSON``: a scope's own entries (empty ones are left out); None (JSON
    ``null``) for a scope with none, as an ``nlohmann::json`` no key was added to."""
    out = {key: json_value(entry.value) for key, entry in scope.local_entries().items()
           if entry.value is not EMPTY}
    return out or None


def blackboards_dump(names: str, scopes: Mapping[str, Blackboard]) -> bytes:
    """``generateBlackboardsDump``: msgpack of the named scopes (``;``-separated); a
    ValueError with BehaviorTree.CPP's message when the request cannot be answered."""
    out: dict[str, Any] = {}
    exported_root: Blackboard | None = None
    for name in names.split(";"):
        local = scopes.get(name)
        if local is None:
            continue
        root = local.root
        needs_root = root is not local
        if name == ROOT_BLACKBOARD and (needs_root or exported_root is not None):
            raise ValueError("blackboard dump request uses reserved name [ROOT] together with an "
                             "external root blackboard export")
        out[name] = export_blackboard(local)
        if not needs_root or root is exported_root:
            continue
        if exported_root is not None:
            raise ValueError("blackboard dump request spans multiple external root blackboards")
        if ROOT_BLACKBOARD in out:
            raise ValueError("blackboard dump request would overwrite subtree [ROOT] with an "
                             "external root blackboard export")
        out[ROOT_BLACKBOARD] = export_blackboard(root)
        exported_root = root
    return msgpack.packb(out if out else None)


@dataclass(frozen=True)
class Access:
    """Who reaches a publisher: ``host``, the address its sockets listen on (an IP address of
    this machine; 0.0.0.0 or ``::`` for every interface), and ``remote_hooks``, whether the
    requests that change a run are taken from other hosts too."""

    host: str = LOOPBACK_HOST
    remote_hooks: bool = False

    def endpoint(self, port: int) -> str:
        """ZeroMQ's name for ``host:port`` (an IPv6 address in brackets)."""
        return f"tcp://[{self.host}]:{port}" if ":" in self.host else f"tcp://{self.host}:{port}"

    def takes_hooks_from(self, peer: str) -> bool:
        """Whether a hook request from the address ``peer`` is taken."""
        return self.remote_hooks or is_loopback(peer)


def is_loopback(peer: str) -> bool:
    """Whether ``peer`` (an IP address as ZeroMQ's ``Peer-Address`` gives it) is this machine's
    loopback: 127.0.0.0/8, ``::1``, or 127.x mapped into IPv6 (a dual-stack socket's IPv4
    peer). Anything else, an address that does not parse included, is another host."""
    try:
        address = ipaddress.ip_address(peer)
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)
    return (mapped or address).is_loopback


def request_cap(node_count: int, scope_names: Sequence[str]) -> int:
    """The largest request part a tree of ``node_count`` nodes and these blackboard scopes is
    sent, with room to spare: a HOOK_INSERT listing a hook at both positions of every node
    (:data:`HOOK_JSON_BYTES`, more than twice the longest hook's JSON, each), a BLACKBOARD
    naming every scope twice over, and at least :data:`MIN_REQUEST_CAP`."""
    hooks = 2 * node_count * HOOK_JSON_BYTES
    names = 2 * sum(len(name.encode()) + 1 for name in scope_names)
    return max(MIN_REQUEST_CAP, hooks, names)


class RequestError(Exception):
    """A request answered with ``error`` and this message."""


class Groot2Publisher:
    """Serves one tree to Groot2 on ``port`` (REP) and ``port + 1`` (PUB), polled, not threaded.

    ``nodes``: the tree's nodes in UID order, for hooks; ``refuse_hooks``: hooks are refused,
    with the message it returns (it may tell the user too); ``clock``: simulated seconds now,
    where a recording starts; ``pause``: where a breakpoint waits (by default, polling this
    publisher); ``access``: the address it listens on and who may send hooks."""

    def __init__(self, xml: str, layout: Sequence[int], port: int = DEFAULT_PORT,
                 scopes: BlackboardScopes | None = None, context: zmq.Context | None = None,
                 nodes: Sequence[TreeNode] = (), refuse_hooks: Callable[[], str] | None = None,
                 clock: Callable[[], float] = lambda: 0.0, pause: Pause | None = None,
                 access: Access = Access()) -> None:
        self.port = port
        self.access = access
        self._xml = xml.encode()
        self._scopes = scopes
        self._tree_id = random_tree_id()
        self._status = bytearray(b"".join(struct.pack("<HB", uid, 0) for uid in layout))
        self._pending: list[bytes] = []  # transition records not yet in the status buffer
        self._pending_bytes = 0
        self._offset = {uid: 3 * i + 2 for i, uid in enumerate(layout)}
        self.hooks = Hooks(nodes, FIRST_UID, self._announce, pause or self.wait_polling)
        self._context = context or zmq.Context.instance()
        self.server = self._context.socket(zmq.REP)
        self.publisher = self._context.socket(zmq.PUB)
        self.max_request_bytes = request_cap(len(layout), list(scopes()) if scopes is not None else [])
        try:
            for socket in (self.server, self.publisher):
                socket.setsockopt(zmq.LINGER, 0)
                socket.setsockopt(zmq.IPV6, ":" in access.host)
            # libzmq drops a peer whose frame header announces more, before reading the frame
            self.server.setsockopt(zmq.MAXMSGSIZE, self.max_request_bytes)
            self.server.bind(access.endpoint(port))
            self.publisher.bind(access.endpoint(port + 1))
        except zmq.ZMQError:
            self.close()
            raise
        self._poller = zmq.Poller()
        self._poller.register(self.server, zmq.POLLIN)
        self.answered = 0
        self._refuse_hooks = refuse_hooks
        self.max_heartbeat_delay_s = MAX_HEARTBEAT_DELAY_S
        self._last_request = time.monotonic()
        self._heartbeat = True
        self._clock = clock
        self._recording = False
        self._recording_start_us = 0
        self._recorded: deque[bytes] = deque(maxlen=MAX_RECORDED_TRANSITIONS)
        self._handlers: dict[int, Callable[[Sequence[bytes]], list[bytes]]] = {
            FULLTREE: lambda parts: [self._xml], STATUS: lambda parts: [self.status_buffer()],
            BLACKBOARD: self._blackboard, HOOK_INSERT: self._insert_hooks,
            BREAKPOINT_UNLOCK: self._unlock, HOOK_REMOVE: self._remove_hook,
            REMOVE_ALL_HOOKS: self._remove_all_hooks, DISABLE_ALL_HOOKS: self._disable_all_hooks,
            HOOKS_DUMP: lambda parts: [self.hooks.dump()], TOGGLE_RECORDING: self._toggle_recording,
            GET_TRANSITIONS: self._take_recorded}

    # -- statuses ----------------------------------------------------------------------

    def apply(self, records: bytes) -> None:
        """Take FileLogger2 transition records (9 bytes each) for the status buffer. They are
        kept and folded in when the buffer is asked for (or ``PENDING_BYTES`` have gathered):
        a run nobody watches pays for a list append per tick, not for every transition."""
        if records:
            self._pending.append(records)
            self._pending_bytes += len(records)
            if self._pending_bytes >= PENDING_BYTES:
                self._fold_pending()
        if self._recording:
            self._record(records)

    def reset_statuses(self) -> None:
        """Every node IDLE, as in a tree not yet ticked; records not yet folded are dropped."""
        self._pending.clear()
        self._pending_bytes = 0
        for offset in self._offset.values():
            self._status[offset] = 0

    def status_buffer(self) -> bytes:
        """What a STATUS request gets after the reply header."""
        self._fold_pending()
        return bytes(self._status)

    def _fold_pending(self) -> None:
        """The status buffer after the pending records, as BehaviorTree.CPP's callback leaves
        it after each of them in turn: a node's last status, or for a reset to IDLE 10 + the
        status it had before (a reset of an IDLE node keeps that), from the node's last
        non-IDLE record, else from the buffer."""
        if not self._pending:
            return
        data = b"".join(self._pending)
        records = np.frombuffer(data, dtype=RECORD_DTYPE, count=len(data) // RECORD_SIZE)
        self._pending.clear()
        self._pending_bytes = 0
        uids, codes = records["uid"][::-1], records["code"][::-1]  # the latest first
        latest = dict(zip(*(array.tolist() for array in np.unique(uids, return_index=True))))
        running = codes != 0
        running_codes = codes[running]
        before = dict(zip(*(array.tolist() for array in np.unique(uids[running], return_index=True))))
        status = self._status
        for uid, index in latest.items():
            offset = self._offset.get(uid)
            if offset is None:
                continue
            code = int(codes[index])
            if code:
                status[offset] = code
            else:
                known = before.get(uid)
                status[offset] = IDLE_FROM + (int(running_codes[known]) if known is not None
                                              else status[offset] % IDLE_FROM)

    def _record(self, records: bytes) -> None:
        """Keep the records of a recording, their times counted from its start."""
        for start in range(0, len(records) - RECORD_SIZE + 1, RECORD_SIZE):
            stamp = int.from_bytes(records[start:start + TIMESTAMP_BYTES], "little")
            since = (stamp - self._recording_start_us) % _STAMP_WRAP
            self._recorded.append(since.to_bytes(TIMESTAMP_BYTES, "little")
                                  + records[start + TIMESTAMP_BYTES:start + RECORD_SIZE])

    # -- requests ----------------------------------------------------------------------

    def poll(self, timeout_s: float = 0.0) -> int:
        """Answer the requests waiting now (waiting up to ``timeout_s`` for a first one), then
        see whether the client still lives; how many were answered."""
        count = 0
        wait_ms = round(timeout_s * 1000)
        try:
            while count < MAX_REQUESTS_PER_POLL and self._poller.poll(0 if count else wait_ms):
                frames = self.server.recv_multipart(zmq.NOBLOCK, copy=False)
                self._last_request = time.monotonic()
                parts = [frame.bytes for frame in frames]
                self.server.send_multipart(self.reply(parts, _peer(frames[0])), zmq.NOBLOCK)
                count += 1
        except zmq.ZMQError:
            # a vanished client or a closed socket: the run goes on, the next poll starts afresh
            pass
        self.answered += count
        self.check_heartbeat()
        return count

    def check_heartbeat(self) -> None:
        """``heartbeatLoop``: disable the hooks when requests stopped coming, enable them when they come again."""
        alive = time.monotonic() - self._last_request < self.max_heartbeat_delay_s
        if alive != self._heartbeat:
            self._heartbeat = alive
            self.hooks.enable_all(alive)

    def wait_polling(self, until: Callable[[], bool]) -> None:
        """Poll this publisher until ``until()`` is true (a breakpoint's default pause)."""
        while not until():
            self.poll(PAUSE_POLL_S)

    def reply(self, parts: Sequence[bytes], peer: str = LOOPBACK_HOST) -> list[bytes]:
        """The reply BehaviorTree.CPP's server loop sends to the request ``parts``, sent from
        the address ``peer`` (hri refuses hooks from other hosts, unless let in)."""
        if not parts or len(parts[0]) != REQUEST_HEADER.size:
            return _error("wrong request header")
        _, kind, unique_id = REQUEST_HEADER.unpack(parts[0])
        handler = self._handlers.get(kind)
        if handler is None:
            return _error("Request not recognized")
        if kind in TWO_PART_REQUESTS and len(parts) != 2:
            return _error("must be 2 parts message")
        if kind in HOOK_REQUESTS and not self.access.takes_hooks_from(peer):
            return _error(f"hook refused: hri takes hooks from this machine only, not from {peer} "
                          "(hri run --groot2-allow-remote-hooks takes them from other hosts)")
        try:
            answer = handler(parts)
        except Exception as error:  # the server loop answers any exception with its text
            return _error(str(error))
        return [REQUEST_HEADER.pack(PROTOCOL_ID, kind, unique_id) + self._tree_id, *answer]

    def _blackboard(self, parts: Sequence[bytes]) -> list[bytes]:
        scopes = self._scopes() if self._scopes is not None else {}
        return [blackboards_dump(parts[1].decode("utf-8", "replace"), scopes)]

    def _insert_hooks(self, parts: Sequence[bytes]) -> list[bytes]:
        if self._refuse_hooks is not None:
            raise RequestError(self._refuse_hooks())
        self.hooks.insert_request(parse(parts[1]))
        return []

    def _unlock(self, parts: Sequence[bytes]) -> list[bytes]:
        if not self.hooks.unlock_request(parse(parts[1])):
            raise RequestError(NODE_NOT_FOUND)
        return []

    def _remove_hook(self, parts: Sequence[bytes]) -> list[bytes]:
        if not self.hooks.remove_request(parse(parts[1])):
            raise RequestError(NODE_NOT_FOUND)
        return []

    def _remove_all_hooks(self, parts: Sequence[bytes]) -> list[bytes]:
        self.hooks.remove_all()
        return []

    def _disable_all_hooks(self, parts: Sequence[bytes]) -> list[bytes]:
        self.hooks.enable_all(False)
        return []

    def _toggle_recording(self, parts: Sequence[bytes]) -> list[bytes]:
        if parts[1] == b"stop":
            self._recording = False
        if parts[1] != b"start":
            return []
        self._recording_start_us = round(self._clock() * 1e6)
        self._recorded.clear()
        self._recording = True
        return [str(EPOCH_US + self._recording_start_us).encode()]

    def _take_recorded(self, parts: Sequence[bytes]) -> list[bytes]:
        records = b"".join(self._recorded)
        self._recorded.clear()
        return [records]

    # -- breakpoints -------------------------------------------------------------------

    def _announce(self, uid: int) -> bool:
        """Publish ``BREAKPOINT_REACHED`` for ``uid``; False when the socket failed."""
        header = REQUEST_HEADER.pack(PROTOCOL_ID, BREAKPOINT_REACHED, int.from_bytes(os.urandom(4), "little"))
        try:
            self.publisher.send_multipart([header, str(uid).encode()], zmq.NOBLOCK)
        except zmq.ZMQError:
            return False
        return True

    def close(self) -> None:
        """Take the hooks off the tree, close both sockets (at once: linger 0)."""
        self.hooks.remove_all()
        self.server.close(0)
        self.publisher.close(0)

    def __enter__(self) -> "Groot2Publisher":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _peer(frame: zmq.Frame) -> str:
    """The address a request came from ("" when ZeroMQ does not know it)."""
    try:
        return frame.get("Peer-Address")
    except zmq.ZMQError:
        return ""


def _error(message: str) -> list[bytes]:
    return [b"error", message.encode()]
