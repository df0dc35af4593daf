"""Reading files with a size cap: a user's own (:func:`read_own`), and the files of a folder
someone else wrote (a run folder): inside it, regular, capped.

A run folder names files by relative paths (its manifest's keys, its scenario's ``trees`` and
``plugins``, a tree's includes). Such a path is data: :func:`inside` keeps it in the folder (no
absolute path, no ``..`` where none was written, no symlink leading out) and :func:`read_capped`
reads only a regular file, at most a stated size. The file is looked at (``lstat``) before it is
opened and opened with ``O_NOFOLLOW | O_NONBLOCK``, so a FIFO never hangs a reader, a device is
never opened and ``/dev/zero`` never fills the memory.

Each refusal is an :class:`Unreadable` whose text says what is wrong with the file (no file
name): the caller puts it after the name it shows the user.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path, PurePosixPath

MB = 1024 * 1024
JSON_MAX_BYTES = 16 * MB
"""The most read of a run's or a batch's JSON file (``stats.json``, ``run.json``, ``batch.json``)."""
OUTPUT_MAX_BYTES = 256 * MB
"""The most read of a run's output read whole (``events.jsonl``, ``trajectory.csv``, a
``.btlog``): some 70 hours of simulated time."""


class Unreadable(ValueError):
    """Why a file of an untrusted folder is not read (the caller names the file)."""


class Missing(Unreadable):
    """The file is not there."""


def path_problem(relative: object, dots: bool = False) -> str | None:
    """Why ``relative`` is no path inside a folder as a folder's own file names it, or None:
    a string, not empty, not absolute, and (unless ``dots``) without ``..``."""
    if not isinstance(relative, str) or not relative.strip():
        return "is not a relative path"
    if "\0" in relative:
        return "holds a NUL character"
    if os.path.isabs(relative) or relative.startswith("~"):
        return "is an absolute path (a run folder names its files relative to itself)"
    if not dots and ".." in PurePosixPath(relative).parts:
        return "holds '..' (a run folder names its files inside itself)"
    return None


def inside(folder: Path, relative: str, dots: bool = False) -> Path:
    """The real path of ``relative`` in ``folder``, every symlink followed; Unreadable when
    :func:`path_problem` refuses it or the path (through a symlink, or ``..`` with ``dots``)
    leads out of ``folder``."""
    if (problem := path_problem(relative, dots)) is not None:
        raise Unreadable(problem)
    root = os.path.realpath(folder)
    real = os.path.realpath(os.path.join(root, relative))
    if os.path.commonpath([root, real]) != root:
        link = " (through a symlink)" if os.path.normpath(os.path.join(root, relative)).startswith(root + os.sep) else ""
        raise Unreadable(f"leads out of the folder{link}")
    return Path(real)


def kind(mode: int) -> str:
    """What a file of this ``st_mode`` is, in words."""
    for test, name in ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISLNK, "a symlink")):
        if test(mode):
            return name
    return "not a regular file"


def regular_size(path: Path) -> int:
    """The size of ``path``, a regular file (looked at without being opened and without
    following a symlink); Unreadable when it is missing or not a regular file."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        raise Missing("is missing") from None
    except OSError as err:
        raise Unreadable(f"cannot be read: {err.strerror}") from None
    if not stat.S_ISREG(info.st_mode):
        raise Unreadable(f"is {kind(info.st_mode)}, not a regular file")
    return info.st_size


def read_capped(path: Path, limit: int) -> bytes:
    """The bytes of ``path``, a regular file of at most ``limit`` bytes; Unreadable otherwise.
    Never blocks on a FIFO, never opens a device, never reads more than ``limit + 1`` bytes."""
    if regular_size(path) > limit:
        raise Unreadable(f"is larger than {_size(limit)}, the most read")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as err:
        raise Unreadable(f"cannot be read: {err.strerror}") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # swapped since lstat
            raise Unreadable("is not a regular file")
        data = _read_at_most(fd, limit + 1)
    except OSError as err:
        raise Unreadable(f"cannot be read: {err.strerror}") from None
    finally:
        os.close(fd)
    if len(data) > limit:  # grew since lstat
        raise Unreadable(f"is larger than {_size(limit)}, the most read")
    return data


def read_own(path: str | os.PathLike[str], limit: int) -> tuple[bytes, str | None]:
    """A file the user names (a scenario, a tree): its bytes and None; or its first ``limit + 1``
    bytes and why it is refused (``file too large (50.0 MB, limit 1 MB)``), whatever size the
    file system reports (a file still growing). OSError as ``open`` raises it."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        data = _read_at_most(fd, limit + 1)
        if len(data) <= limit:
            return data, None
        size = max(os.fstat(fd).st_size, len(data))
    finally:
        os.close(fd)
    return data, f"file too large ({size / MB:.1f} MB, limit {limit / MB:g} MB)"


def _read_at_most(fd: int, most: int) -> bytes:
    """At most ``most`` bytes of ``fd``, from where it stands."""
    chunks, size = [], 0
    while size < most:
        chunk = os.read(fd, min(most - size, MB))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def read_inside(folder: Path, relative: str, limit: int, dots: bool = False) -> bytes:
    """:func:`read_capped` of :func:`inside`: a file a folder names, read only when inside it."""
    return read_capped(inside(folder, relative, dots), limit)


def read_output(path: Path, limit: int = OUTPUT_MAX_BYTES) -> bytes:
    """:func:`read_inside` of a file of a run folder by its path (``DIR/NAME``): not through a
    symlink out of ``DIR``, regular, at most ``limit`` bytes."""
    return read_inside(path.parent, path.name, limit)


def _size(limit: int) -> str:
    return f"{limit / MB:g} MB" if limit >= MB else f"{limit} bytes"
