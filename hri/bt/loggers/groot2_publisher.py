"""A live Groot2 publisher of one tree, as BehaviorTree.CPP 4.10's ``Groot2Publisher`` serves it.

The protocol is BehaviorTree.CPP's (``include/behaviortree_cpp/loggers/groot2_protocol.h``,
``src/loggers/groot2_publisher.cpp``, BehaviorTree.CPP 4.10, Davide Faconti, 2025):

* **Sockets.** A ZeroMQ REP server bound on ``tcp://*:PORT`` answers Groot2's requests; a PUB
  socket on ``PORT + 1`` is where BehaviorTree.CPP announces a reached breakpoint (hri binds
  it, so Groot2 finds both, and publishes nothing on it yet). Both have ``linger`` 0.
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
    type it has no converter for is ``null``.
* **Errors.** A first part that is not 6 bytes gets the two parts ``error``, ``wrong request
  header``; a request type it does not know, ``error``, ``Request not recognized``; a
  ``BLACKBOARD`` request without exactly 2 parts, ``error``, ``must be 2 parts message``.

The hooks, breakpoints and recording requests (``I R N U D A X r t``) are answered as unknown
requests: hri does not pause its trees from here.

hri's publisher has no thread: :meth:`Groot2Publisher.poll` answers the requests waiting on
the server without blocking (a ``zmq.Poller`` with timeout 0), so a simulation loop calls it
once per step and pays one system call when nobody is connected. The statuses come from the
tree's transitions as :class:`~hri.bt.loggers.transitions.TransitionRecorder` records them
(:meth:`Groot2Publisher.apply`), so a tree ticked in another process is served alike.
Nothing a client sends raises out of :meth:`poll`.
"""

from __future__ import annotations

import os
import struct
from typing import Any, Callable, Mapping, Sequence

import msgpack
import zmq

from hri.bt.blackboard import EMPTY, Blackboard
from hri.bt.decorators import SubTreeNode
from hri.bt.loggers.transitions import RECORD_SIZE, TIMESTAMP_BYTES
from hri.bt.loggers.tree_xml import FIRST_UID, nodes_by_uid, subtree_paths
from hri.bt.status import preorder
from hri.bt.tree import Tree

PROTOCOL_ID = 2  # kProtocolID
REQUEST_HEADER = struct.Struct("<BBI")  # protocol, type, unique_id: SerializeHeader's 6 bytes
TREE_ID_BYTES = 16
FULLTREE, STATUS, BLACKBOARD = ord("T"), ord("S"), ord("B")
IDLE_FROM = 10  # IDLE_FROM_SUCCESS = 10 + SUCCESS, ...
ROOT_BLACKBOARD = "ROOT"  # kRootBlackboardName
DEFAULT_PORT = 1667  # Groot2Publisher's default server_port
MAX_REQUESTS_PER_POLL = 64  # a flooding client cannot stall a simulation step

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


class Groot2Publisher:
    """Serves one tree to Groot2 on ``port`` (REP) and ``port + 1`` (PUB), polled, not threaded."""

    def __init__(self, xml: str, layout: Sequence[int], port: int = DEFAULT_PORT,
                 scopes: BlackboardScopes | None = None, context: zmq.Context | None = None) -> None:
        self.port = port
        self._xml = xml.encode()
        self._scopes = scopes
        self._tree_id = random_tree_id()
        self._status = bytearray(b"".join(struct.pack("<HB", uid, 0) for uid in layout))
        self._offset = {uid: 3 * i + 2 for i, uid in enumerate(layout)}
        self._context = context or zmq.Context.instance()
        self.server = self._context.socket(zmq.REP)
        self.publisher = self._context.socket(zmq.PUB)
        try:
            for socket in (self.server, self.publisher):
                socket.setsockopt(zmq.LINGER, 0)
            self.server.bind(f"tcp://*:{port}")
            self.publisher.bind(f"tcp://*:{port + 1}")
        except zmq.ZMQError:
            self.close()
            raise
        self._poller = zmq.Poller()
        self._poller.register(self.server, zmq.POLLIN)
        self.answered = 0

    # -- statuses ----------------------------------------------------------------------

    def apply(self, records: bytes) -> None:
        """Take FileLogger2 transition records (9 bytes each) into the status buffer."""
        status = self._status
        for start in range(0, len(records) - RECORD_SIZE + 1, RECORD_SIZE):
            uid, code = struct.unpack_from("<HB", records, start + TIMESTAMP_BYTES)
            offset = self._offset.get(uid)
            if offset is None:
                continue
            # the callback writes 10 + the previous status for a reset to IDLE
            status[offset] = IDLE_FROM + (status[offset] % IDLE_FROM) if code == 0 else code

    def status_buffer(self) -> bytes:
        """What a STATUS request gets after the reply header."""
        return bytes(self._status)

    # -- requests ----------------------------------------------------------------------

    def poll(self) -> int:
        """Answer the requests waiting now, without blocking; how many were answered."""
        count = 0
        try:
            while count < MAX_REQUESTS_PER_POLL and self._poller.poll(0):
                parts = self.server.recv_multipart(zmq.NOBLOCK)
                self.server.send_multipart(self.reply(parts), zmq.NOBLOCK)
                count += 1
        except zmq.ZMQError:
            # a vanished client or a closed socket: the run goes on, the next poll starts afresh
            pass
        self.answered += count
        return count

    def reply(self, parts: Sequence[bytes]) -> list[bytes]:
        """The reply BehaviorTree.CPP's server loop sends to the request ``parts``."""
        if not parts or len(parts[0]) != REQUEST_HEADER.size:
            return _error("wrong request header")
        _, kind, unique_id = REQUEST_HEADER.unpack(parts[0])
        header = REQUEST_HEADER.pack(PROTOCOL_ID, kind, unique_id) + self._tree_id
        if kind == FULLTREE:
            return [header, self._xml]
        if kind == STATUS:
            return [header, bytes(self._status)]
        if kind != BLACKBOARD:
            return _error("Request not recognized")
        if len(parts) != 2:
            return _error("must be 2 parts message")
        try:
            scopes = self._scopes() if self._scopes is not None else {}
            return [header, blackboards_dump(parts[1].decode("utf-8", "replace"), scopes)]
        except Exception as error:  # the server loop answers any exception with its text
            return _error(str(error))

    def close(self) -> None:
        """Close both sockets (at once: linger 0)."""
        self.server.close(0)
        self.publisher.close(0)

    def __enter__(self) -> "Groot2Publisher":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _error(message: str) -> list[bytes]:
    return [b"error", message.encode()]
