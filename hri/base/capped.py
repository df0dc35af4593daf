"""Reading a user's file with a size cap: never more than the cap (and one byte to tell), and
one line saying the file is too large, whatever size the file system reports (a FIFO, a
file still growing)."""

from __future__ import annotations

import os


def read_capped(path: str | os.PathLike[str], limit: int) -> tuple[bytes, str | None]:
    """The file's bytes, and None; or its first ``limit + 1`` bytes and why it is refused
    (``file too large (50.0 MB, limit 1 MB)``). OSError as ``open`` raises it."""
    with open(path, "rb") as stream:
        data = stream.read(limit + 1)
        if len(data) <= limit:
            return data, None
        size = max(os.fstat(stream.fileno()).st_size, len(data))
    return data, f"file too large ({size / 2**20:.1f} MB, limit {limit / 2**20:g} MB)"
