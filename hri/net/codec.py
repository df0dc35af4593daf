"""Messages on the wire: length-prefixed, versioned binary frames with a tagged payload.

A frame is a fixed little-endian header of :data:`HEADER_SIZE` bytes, then the channel name,
the operation name and the payload::

    offset size field
    0      4    magic          b"HRIN"
    4      1    version        PROTOCOL_VERSION (1)
    5      1    kind           Kind (REQUEST, REPLY, ERROR, STREAM, SUBSCRIBE, ...)
    6      2    flags          0 (reserved)
    8      4    frame length   the whole frame, header included
    12     4    sender         endpoint id
    16     4    receiver       endpoint id
    20     4    payload length
    24     8    request id     echoed in replies; the sequence number of a stream sample
    32     8    sent at        simulated seconds (float64)
    40     1    channel length UTF-8 bytes that follow the header
    41     1    op length      UTF-8 bytes that follow the channel
    42     2    reserved       0

The frame length is checked against the bytes actually received and against the sum of the
header and the three parts, so a wrong prefix is an error instead of a misread (the length
bug of seed ``000``). :func:`split_frames` cuts a byte stream into frames by that prefix.

The payload is self-describing, without pickle (decoding never runs code): one tag byte per
value, then its data.

==== ==============================================================
tag  value
==== ==============================================================
N    None
T/F  True / False
i    int in int64: 8 bytes
I    any other int: u32 length, signed little-endian bytes
f    float: float64
s    str: u32 length, UTF-8
b    bytes: u32 length, raw
l/t  list / tuple: u32 count, values
d    dict: u32 count, key and value pairs (keys any hashable value)
a    NumPy array: dtype (u8 length, e.g. ``<f8``), u8 ndim, u32 per dimension, C-order data
==== ==============================================================

Anything wrong in a frame or a payload raises :class:`~hri.net.errors.CodecError`, never
another exception: ``decode_frame(encode_frame(f)) == f`` for every encodable frame, and any
other bytes give a frame or a ``CodecError``.
"""

from __future__ import annotations

import enum
import struct
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from .errors import CodecError

MAGIC = b"HRIN"
PROTOCOL_VERSION = 1
_HEADER = struct.Struct("<4sBBHIIIIQdBBH")
HEADER_SIZE = _HEADER.size  # 44
MAX_FRAME_SIZE = 1 << 24  # 16 MiB: a corrupt length prefix must not make a reader wait for 4 GB
MAX_DEPTH = 32  # nesting of lists/dicts: bounds recursion on both sides
_NAME_MAX = 255
_U32 = struct.Struct("<I")
_I64 = struct.Struct("<q")
_F64 = struct.Struct("<d")
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1
# array dtypes allowed on the wire: numbers and bools only (never object arrays)
_DTYPES = frozenset(f"{order}{code}" for order in "<|" for code in
                    ("b1", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f4", "f8"))


class Kind(enum.IntEnum):
    """What a frame is."""

    REQUEST = 1  # a call: channel = service, op = request kind
    REPLY = 2  # the answer to a call: same request id
    ERROR = 3  # a failed call: same request id, payload {"type", "message"}
    STREAM = 4  # a state sample: op = stream name, request id = sample number
    SUBSCRIBE = 5  # ask a service for a stream (answered by a REPLY)
    UNSUBSCRIBE = 6  # stop a stream (not answered)
    HEARTBEAT = 7  # "still here" (payload free)


@dataclass(frozen=True)
class Frame:
    """One message. ``channel`` is the service it belongs to (and whose quality it gets)."""

    kind: Kind
    sender: int
    receiver: int
    request_id: int = 0
    channel: str = ""
    op: str = ""
    payload: Any = None
    sent_at: float = 0.0


# --------------------------------------------------------------------------------------------
# Frames


def _name_bytes(name: str, what: str) -> bytes:
    try:
        data = name.encode("utf-8")
    except (UnicodeEncodeError, AttributeError) as error:
        raise CodecError(f"{what} {name!r} is not a UTF-8 string: {error}") from None
    if len(data) > _NAME_MAX:
        raise CodecError(f"{what} {name[:40]!r}... is longer than {_NAME_MAX} bytes")
    return data


def encode_frame(frame: Frame) -> bytes:
    """The bytes of ``frame``; :class:`CodecError` when a field or the payload cannot go."""
    channel = _name_bytes(frame.channel, "channel")
    op = _name_bytes(frame.op, "op")
    payload = encode_value(frame.payload)
    length = HEADER_SIZE + len(channel) + len(op) + len(payload)
    if length > MAX_FRAME_SIZE:
        raise CodecError(f"frame of {length} bytes exceeds {MAX_FRAME_SIZE}")
    try:
        header = _HEADER.pack(MAGIC, PROTOCOL_VERSION, int(Kind(frame.kind)), 0, length,
                              frame.sender, frame.receiver, len(payload), frame.request_id,
                              float(frame.sent_at), len(channel), len(op), 0)
    except (struct.error, ValueError, TypeError) as error:
        raise CodecError(f"frame header: {error}") from None
    return b"".join((header, channel, op, payload))


def frame_length(data: bytes) -> int | None:
    """The length a frame starting with ``data`` announces, or None with fewer than 12 bytes."""
    if len(data) < 12:
        return None
    if data[:4] != MAGIC:
        raise CodecError(f"bad magic {bytes(data[:4])!r}, expected {MAGIC!r}")
    length = _U32.unpack_from(data, 8)[0]
    if not HEADER_SIZE <= length <= MAX_FRAME_SIZE:
        raise CodecError(f"frame length {length} outside {HEADER_SIZE}..{MAX_FRAME_SIZE}")
    return length


def split_frames(buffer: bytes) -> tuple[list[bytes], bytes]:
    """Cut a byte stream into whole frames by their length prefix; return them and the rest."""
    frames: list[bytes] = []
    view = memoryview(buffer)
    while (length := frame_length(view)) is not None and len(view) >= length:
        frames.append(bytes(view[:length]))
        view = view[length:]
    return frames, bytes(view)


def decode_frame(data: bytes) -> Frame:
    """The frame in ``data`` (exactly one); :class:`CodecError` for anything else."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise CodecError(f"a frame is bytes, not {type(data).__name__}")
    if len(data) < HEADER_SIZE:
        raise CodecError(f"truncated frame: {len(data)} bytes, the header alone is {HEADER_SIZE}")
    (magic, version, kind, flags, length, sender, receiver, payload_length, request_id,
     sent_at, channel_length, op_length, reserved) = _HEADER.unpack_from(data)
    if magic != MAGIC:
        raise CodecError(f"bad magic {magic!r}, expected {MAGIC!r}")
    if version != PROTOCOL_VERSION:
        raise CodecError(f"protocol version {version}, this side speaks {PROTOCOL_VERSION}")
    if flags or reserved:
        raise CodecError("reserved header bits are set")
    if length != len(data):
        raise CodecError(f"frame says {length} bytes, {len(data)} arrived")
    if length != HEADER_SIZE + channel_length + op_length + payload_length:
        raise CodecError("frame length does not match its parts")
    try:
        kind = Kind(kind)
    except ValueError:
        raise CodecError(f"unknown message kind {kind}") from None
    reader = _Reader(data, HEADER_SIZE)
    channel = reader.text(channel_length)
    op = reader.text(op_length)
    payload = decode_value(reader.take(payload_length))
    return Frame(kind, sender, receiver, request_id, channel, op, payload, sent_at)


# --------------------------------------------------------------------------------------------
# Values
#
# Every tick carries a few frames of small values (a pose, a zone, a robot state) each way, so
# encoding and decoding go by the value's exact type through a table, with one struct call per
# tag and its data; anything else (numpy scalars, subclasses) takes the general path.

_TAG = struct.Struct("<c")
_TAG_I64 = struct.Struct("<cq")
_TAG_F64 = struct.Struct("<cd")
_TAG_U32 = struct.Struct("<cI")


def encode_value(value: Any) -> bytes:
    """The tagged encoding of ``value`` (see the module docstring)."""
    parts: list[bytes] = []
    _encode(value, parts, 0)
    return b"".join(parts)


def _encode(value: Any, out: list[bytes], depth: int) -> None:
    if depth > MAX_DEPTH:
        raise CodecError(f"value nested deeper than {MAX_DEPTH}")
    encoder = _ENCODERS.get(type(value))
    if encoder is not None:
        encoder(value, out, depth)
    else:
        _encode_other(value, out, depth)


def _encode_other(value: Any, out: list[bytes], depth: int) -> None:
    """Values whose type is not in the table: numpy scalars and arrays, subclasses."""
    if isinstance(value, (bool, np.bool_)):
        out.append(b"T" if value else b"F")
    elif isinstance(value, (int, np.integer)):
        _encode_int(int(value), out, depth)
    elif isinstance(value, (float, np.floating)):
        out.append(_TAG_F64.pack(b"f", float(value)))
    elif isinstance(value, str):
        _encode_str(value, out, depth)
    elif isinstance(value, (bytes, bytearray, memoryview)):
        _encode_sized(b"b", bytes(value), out)
    elif isinstance(value, (list, tuple)):
        _encode_items(b"l" if isinstance(value, list) else b"t", value, out, depth)
    elif isinstance(value, dict):
        _encode_dict(value, out, depth)
    elif isinstance(value, np.ndarray):
        _encode_array(value, out)
    else:
        raise CodecError(f"cannot encode a value of type {type(value).__name__}")


def _encode_int(value: int, out: list[bytes], depth: int = 0) -> None:
    if _INT64_MIN <= value <= _INT64_MAX:
        out.append(_TAG_I64.pack(b"i", value))
        return
    size = (value.bit_length() + 8) // 8  # one spare bit for the sign
    _encode_sized(b"I", value.to_bytes(size, "little", signed=True), out)


def _encode_str(value: str, out: list[bytes], depth: int = 0) -> None:
    _encode_sized(b"s", value.encode("utf-8", errors="surrogatepass"), out)


def _encode_sized(tag: bytes, data: bytes, out: list[bytes]) -> None:
    if len(data) > MAX_FRAME_SIZE:
        raise CodecError(f"{len(data)} bytes exceed {MAX_FRAME_SIZE}")
    out.append(_TAG_U32.pack(tag, len(data)))
    out.append(data)


def _encode_items(tag: bytes, items: list | tuple, out: list[bytes], depth: int) -> None:
    out.append(_TAG_U32.pack(tag, len(items)))
    for item in items:
        _encode(item, out, depth + 1)


def _encode_dict(value: dict, out: list[bytes], depth: int) -> None:
    out.append(_TAG_U32.pack(b"d", len(value)))
    for key, item in value.items():
        _encode(key, out, depth + 1)
        _encode(item, out, depth + 1)


def _encode_array(array: np.ndarray, out: list[bytes]) -> None:
    wire = array.dtype.newbyteorder("<") if array.dtype.byteorder not in "|" else array.dtype
    code = wire.str
    if code not in _DTYPES:
        raise CodecError(f"cannot encode an array of dtype {array.dtype}")
    if array.ndim > 255:
        raise CodecError("array with more than 255 dimensions")
    data = np.ascontiguousarray(array, dtype=wire).tobytes()
    out.append(b"a" + bytes([len(code)]) + code.encode("ascii") + bytes([array.ndim]))
    out.append(b"".join(_U32.pack(n) for n in array.shape))
    out.append(data)


_ENCODERS: dict[type, Callable[[Any, list[bytes], int], None]] = {
    type(None): lambda value, out, depth: out.append(b"N"),
    bool: lambda value, out, depth: out.append(b"T" if value else b"F"),
    int: _encode_int,
    float: lambda value, out, depth: out.append(_TAG_F64.pack(b"f", value)),
    str: _encode_str,
    bytes: lambda value, out, depth: _encode_sized(b"b", value, out),
    list: lambda value, out, depth: _encode_items(b"l", value, out, depth),
    tuple: lambda value, out, depth: _encode_items(b"t", value, out, depth),
    dict: _encode_dict,
}


class _Reader:
    """Reads ``data`` from ``pos`` to its end; every overrun is a CodecError."""

    __slots__ = ("data", "pos", "end")

    def __init__(self, data: bytes, pos: int = 0):
        self.data = data
        self.pos = pos
        self.end = len(data)

    def _overrun(self, n: int) -> CodecError:
        return CodecError(f"truncated: need {n} bytes at offset {self.pos}, {self.end - self.pos} left")

    def take(self, n: int) -> bytes:
        pos = self.pos
        end = pos + n
        if n < 0 or end > self.end:
            raise self._overrun(n)
        self.pos = end
        return bytes(self.data[pos:end])

    def byte(self) -> int:
        pos = self.pos
        if pos >= self.end:
            raise self._overrun(1)
        self.pos = pos + 1
        return self.data[pos]

    def unpack(self, fmt: struct.Struct) -> Any:
        """One value of the one-field struct ``fmt``."""
        pos = self.pos
        if pos + fmt.size > self.end:
            raise self._overrun(fmt.size)
        self.pos = pos + fmt.size
        return fmt.unpack_from(self.data, pos)[0]

    def remaining(self) -> int:
        return self.end - self.pos

    def u32(self) -> int:
        return self.unpack(_U32)

    def count(self, min_item_size: int) -> int:
        """An element count that the remaining bytes can actually hold (no huge allocation)."""
        n = self.u32()
        if n * min_item_size > self.remaining():
            raise CodecError(f"count {n} at offset {self.pos - 4} exceeds the remaining data")
        return n

    def text(self, n: int) -> str:
        try:
            return self.take(n).decode("utf-8")
        except UnicodeDecodeError as error:
            raise CodecError(f"invalid UTF-8: {error.reason}") from None


def decode_value(data: bytes) -> Any:
    """The value encoded in ``data`` (all of it); :class:`CodecError` for anything else."""
    return _decode_all(_Reader(data))


def _decode_all(reader: _Reader) -> Any:
    """The one value from the reader's position to the end of its data."""
    value = _decode(reader, 0)
    if reader.remaining():
        raise CodecError(f"{reader.remaining()} trailing bytes after the value")
    return value


def _decode(reader: _Reader, depth: int) -> Any:
    if depth > MAX_DEPTH:
        raise CodecError(f"value nested deeper than {MAX_DEPTH}")
    tag = reader.byte()
    decoder = _DECODERS.get(tag)
    if decoder is None:
        raise CodecError(f"unknown value tag {bytes([tag])!r} at offset {reader.pos - 1}")
    return decoder(reader, depth)


def _decode_string(reader: _Reader, depth: int) -> str:
    n = reader.count(1)
    try:
        return reader.take(n).decode("utf-8", errors="surrogatepass")
    except UnicodeDecodeError as error:
        raise CodecError(f"invalid UTF-8: {error.reason}") from None


def _decode_dict(reader: _Reader, depth: int) -> dict:
    result: dict = {}
    for _ in range(reader.count(2)):
        key = _decode(reader, depth + 1)
        try:
            result[key] = _decode(reader, depth + 1)
        except TypeError:
            raise CodecError(f"unhashable dict key of type {type(key).__name__}") from None
    return result


def _decode_array(reader: _Reader, depth: int) -> np.ndarray:
    code = reader.take(reader.byte()).decode("ascii", errors="replace")
    if code not in _DTYPES:
        raise CodecError(f"array dtype {code!r} is not allowed")
    dtype = np.dtype(code)
    shape = tuple(reader.u32() for _ in range(reader.byte()))
    size = dtype.itemsize
    for n in shape:
        size *= n
    try:  # an empty array may claim dimensions no array can have
        array = np.frombuffer(reader.take(size), dtype=dtype).reshape(shape)
    except ValueError as error:
        raise CodecError(f"array of shape {shape}: {error}") from None
    return array.astype(dtype.newbyteorder("="), copy=True)  # native order, writable


def _decode_bigint(reader: _Reader, depth: int) -> int:
    return int.from_bytes(reader.take(reader.count(1)), "little", signed=True)


_DECODERS: dict[int, Callable[[_Reader, int], Any]] = {
    ord("N"): lambda r, d: None,
    ord("T"): lambda r, d: True,
    ord("F"): lambda r, d: False,
    ord("i"): lambda r, d: r.unpack(_I64),
    ord("I"): _decode_bigint,
    ord("f"): lambda r, d: r.unpack(_F64),
    ord("s"): _decode_string,
    ord("b"): lambda r, d: r.take(r.count(1)),
    ord("l"): lambda r, d: [_decode(r, d + 1) for _ in range(r.count(1))],
    ord("t"): lambda r, d: tuple(_decode(r, d + 1) for _ in range(r.count(1))),
    ord("d"): _decode_dict,
    ord("a"): _decode_array,
}
