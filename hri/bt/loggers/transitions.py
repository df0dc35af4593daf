"""Every status transition of a tree's nodes, as BehaviorTree.CPP's loggers receive them.

BehaviorTree.CPP tells a ``StatusChangeLogger`` of every change of a node's status, when
``TreeNode::setStatus`` or ``resetStatus`` changes it (``src/tree_node.cpp``); its
``FileLogger2`` asks for the changes to IDLE too (``enableTransitionToIdle(true)``). hri's
nodes tell their ``status_observer`` of the same changes (:meth:`hri.bt.node.TreeNode.set_status`),
so a tick's transitions come in the order BehaviorTree.CPP would log them: a child's SUCCESS,
then its reset to IDLE by its parent, then the parent's own status.

:class:`TransitionRecorder` observes every node of a tree and keeps each transition as the
9 bytes ``FileLogger2::writerLoop`` writes for it (``src/loggers/bt_file_logger_v2.cpp``):

=======  =====  =========================================================================
offset   bytes  field
=======  =====  =========================================================================
0        6      time in microseconds since the log's first timestamp, little-endian
6        2      the node's UID (``uint16``, little-endian; :func:`~hri.bt.loggers.tree_xml.nodes_by_uid`)
8        1      the new status: IDLE 0, RUNNING 1, SUCCESS 2, FAILURE 3 (``NodeStatus``)
=======  =====  =========================================================================

BehaviorTree.CPP copies the low 6 bytes of a ``uint64_t`` with ``memcpy``: little-endian on
the x86 and ARM machines it runs on, and Groot2 reads them so. A node's status is never
SKIPPED (4): a skipped node keeps its status in both. The time is simulated time: each
transition of a tick is stamped with the time :meth:`TransitionRecorder.set_time` was
last given, in whole microseconds.
"""

from __future__ import annotations

import struct
from typing import Any, Callable

from py_trees.common import Status

from hri.bt.loggers.tree_xml import FIRST_UID, nodes_by_uid
from hri.bt.node import TreeNode

STATUS_CODES = {Status.INVALID: 0, Status.RUNNING: 1, Status.SUCCESS: 2, Status.FAILURE: 3}
"""BehaviorTree.CPP's ``NodeStatus`` values of hri's statuses (INVALID is IDLE)."""
RECORD_SIZE = 9
TIMESTAMP_BYTES = 6
MAX_UID = 0xFFFF  # Transition::node_uid is a uint16_t


class TransitionRecorder:
    """Records the status transitions of a tree's nodes as FileLogger2 records."""

    def __init__(self, root: Any) -> None:
        self._records = bytearray()
        self._stamp = bytes(TIMESTAMP_BYTES)
        self._nodes: list[TreeNode] = nodes_by_uid(root)
        if len(self._nodes) - 1 + FIRST_UID > MAX_UID:
            raise ValueError(f"a tree of {len(self._nodes)} nodes: FileLogger2 numbers at most {MAX_UID}")
        for uid, node in enumerate(self._nodes, FIRST_UID):
            node.status_observer = self._observer(uid)

    def _observer(self, uid: int) -> Callable[[TreeNode, Status, Status], None]:
        tails = {status: struct.pack("<HB", uid, code) for status, code in STATUS_CODES.items()}
        records = self._records

        def observe(node: TreeNode, before: Status, status: Status) -> None:
            records.extend(self._stamp + tails[status])

        return observe

    def set_time(self, t_s: float) -> None:
        """Stamp the transitions from now on with simulated time ``t_s`` (seconds)."""
        self._stamp = round(t_s * 1e6).to_bytes(TIMESTAMP_BYTES, "little")

    def take(self) -> bytes:
        """The records since the last call, oldest first; they are forgotten here."""
        records = bytes(self._records)
        self._records.clear()
        return records

    def close(self) -> None:
        """Stop observing the tree's nodes."""
        for node in self._nodes:
            node.status_observer = None
