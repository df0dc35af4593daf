"""Reads a ``.btlog`` file (BehaviorTree.CPP's ``FileLogger2``) back: the tree's XML and its transitions.

Written from what ``FileLogger2`` writes (``src/loggers/bt_file_logger_v2.cpp``,
BehaviorTree.CPP 4.10), not from hri's writer, so that it reads a file of either: the magic
``BTCPP4-FileLogger2``, the protocol byte (1), the XML's length (``int32``, little-endian)
and the XML, the first timestamp (``int64`` microseconds since the Unix epoch), then
9-byte transitions: 6 bytes of microseconds since the first timestamp, the node's UID
(``uint16``) and its new status (``uint8``), all little-endian.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

MAGIC = b"BTCPP4-FileLogger2"
STATUS_NAMES = {0: "IDLE", 1: "RUNNING", 2: "SUCCESS", 3: "FAILURE", 4: "SKIPPED"}
"""BehaviorTree.CPP's ``NodeStatus`` by value."""
FIRST_UID = 1
"""The first node's UID (``Tree::getUID`` pre-increments a counter that starts at 0): a node's
UID less this is its index in the pre-order of the tree with its subtrees expanded."""
_TRANSITION_SIZE = 9


class BtLogError(ValueError):
    """The bytes are not a FileLogger2 file."""


@dataclass(frozen=True)
class Transition:
    """One status change: when (microseconds since the first timestamp), which node, to what."""

    time_us: int
    uid: int
    status: str


@dataclass(frozen=True)
class BtLog:
    """A FileLogger2 file's content."""

    protocol: int
    xml: str
    first_timestamp_us: int
    transitions: list[Transition]


def parse_btlog(data: bytes) -> BtLog:
    """The content of FileLogger2 bytes; :class:`BtLogError` says what is wrong with others."""
    protocol, xml, first, body = split_btlog(data)
    return BtLog(protocol, xml, first, parse_transitions(body))


def split_btlog(data: bytes) -> tuple[int, str, int, bytes]:
    """``(protocol, XML, first timestamp, records)`` of FileLogger2 bytes, the records (9 bytes
    each) unread; :class:`BtLogError` says what is wrong with others."""
    if not data.startswith(MAGIC):
        raise BtLogError(f"does not start with {MAGIC.decode()}")
    offset = len(MAGIC)
    if len(data) < offset + 1 + 4:
        raise BtLogError("ends inside the header")
    protocol = data[offset]
    (size,) = struct.unpack_from("<i", data, offset + 1)
    start = offset + 5
    if size < 0 or len(data) < start + size + 8:
        raise BtLogError(f"ends inside the XML or the first timestamp (XML of {size} bytes announced)")
    xml = data[start:start + size].decode("utf-8")
    (first,) = struct.unpack_from("<q", data, start + size)
    body = data[start + size + 8:]
    if len(body) % _TRANSITION_SIZE:
        raise BtLogError(f"{len(body) % _TRANSITION_SIZE} bytes of a transition left over at the end")
    return protocol, xml, first, body


def parse_transitions(records: bytes) -> list[Transition]:
    """The transitions of whole 9-byte records, in their order."""
    return [_transition(records, at) for at in range(0, len(records) - _TRANSITION_SIZE + 1, _TRANSITION_SIZE)]


def _transition(body: bytes, at: int) -> Transition:
    time_us = int.from_bytes(body[at:at + 6], "little")
    uid = int.from_bytes(body[at + 6:at + 8], "little")
    code = body[at + 8]
    if code not in STATUS_NAMES:
        raise BtLogError(f"transition at byte {at}: status {code} is not a NodeStatus")
    return Transition(time_us, uid, STATUS_NAMES[code])


def read_btlog(path: Path | str) -> BtLog:
    """The content of the ``.btlog`` file at ``path``."""
    return parse_btlog(Path(path).read_bytes())
