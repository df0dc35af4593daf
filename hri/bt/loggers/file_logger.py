"""``.btlog`` files: a tree and its status transitions, as BehaviorTree.CPP's ``FileLogger2`` writes them.

Groot2 replays a run of a tree from such a file (it opens only the ``.btlog`` suffix). The
format is that of ``FileLogger2`` in BehaviorTree.CPP 4.10 (``src/loggers/bt_file_logger_v2.cpp``;
the comment of its header predates the first two fields, the code is the reference):

=========  ========  ========================================================================
field      bytes     content
=========  ========  ========================================================================
magic      18        ``BTCPP4-FileLogger2``
protocol   1         ``1``
xml size   4         length N of the XML, ``int32`` little-endian (``flatbuffers::WriteScalar``)
xml        N         the tree's XML with node UIDs (:func:`hri.bt.loggers.tree_xml.tree_xml`)
first      8         first timestamp, microseconds since the Unix epoch, ``int64`` little-endian
records    9 each    the transitions (:mod:`hri.bt.loggers.transitions`), in the order they happened
=========  ========  ========================================================================

A record's time counts microseconds from the first timestamp. BehaviorTree.CPP takes the
wall clock when the logger starts; hri writes simulated time: the first timestamp is
:data:`EPOCH_US`, the Unix epoch itself (1970-01-01 00:00:00 UTC), so a record's time is the
simulated time of the tick that made the transition, and the same run gives the same file.

:class:`BtLogFile` writes the header at once into a hidden file beside the target, appends
records as they come, and renames the file over the target in one step when the run ends
(:meth:`BtLogFile.write`): a reader never sees half a file.
"""

from __future__ import annotations

import struct
from pathlib import Path

from hri.base.files import FillingFile

MAGIC = b"BTCPP4-FileLogger2"
PROTOCOL = 1
SUFFIX = ".btlog"
EPOCH_US = 0
"""The first timestamp of hri's files: simulated time 0 is the Unix epoch."""
_XML_SIZE = struct.Struct("<i")
_FIRST_TIMESTAMP = struct.Struct("<q")


def btlog_header(xml: str, first_timestamp_us: int = EPOCH_US) -> bytes:
    """The bytes before the first record: magic, protocol, XML size, XML, first timestamp."""
    data = xml.encode("utf-8")
    return MAGIC + bytes([PROTOCOL]) + _XML_SIZE.pack(len(data)) + data + _FIRST_TIMESTAMP.pack(first_timestamp_us)


class BtLogFile:
    """A ``.btlog`` being written: the header now, records as they come, whole at the end."""

    def __init__(self, target: Path, xml: str, first_timestamp_us: int = EPOCH_US) -> None:
        if Path(target).suffix != SUFFIX:
            raise ValueError(f"{target}: a FileLogger2 file must end with {SUFFIX} (Groot2 opens no other)")
        self.target = Path(target)
        self._file = FillingFile(self.target, binary=True)
        self._file.write(btlog_header(xml, first_timestamp_us))

    def append(self, records: bytes) -> None:
        """Add whole records (9 bytes each), in the order they happened."""
        self._file.write(records)

    def write(self) -> None:
        """Flush the file to disk and put it at the target in one step."""
        self._file.commit()

    def discard(self) -> None:
        """Remove the hidden file of a log that will not be written (or failed to be)."""
        self._file.discard()
