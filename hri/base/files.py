"""Small helpers for the files and processes of runs: atomic writes, spools, staging folders,
is a process alive.

A reader never sees half a file: :func:`write_atomic` writes a temporary file beside the
target, flushes it to disk, and renames it over the target; a :class:`Spool` does the same
for a file written line by line over a whole run. A whole set of files is made in a
:func:`staging_folder` and moved into place at the end; the staging folders of processes
that died (SIGKILL) are removed by the next command that writes there
(:func:`remove_dead_staging`). A command writes over an existing file only when asked
(:func:`check_new_file`), and a link in its place is replaced, never followed. The traceback
behind an error (a plug-in's exception) is kept in a file the error's line names
(:func:`keep_traceback`).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Callable

from hri.base.errors import HriError


def output_folder(path: Path | str, option: str) -> Path:
    """The folder an option writes into, created (with its parents) before any work is done:
    a path that cannot be one is a one-line error naming the option, not a traceback at the
    end of a run."""
    path = Path(path)
    check_output_folder(path, option)  # the same mistake, the same line, whichever command
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise HriError(f"{option} {path}: cannot create the folder: {err.strerror or err}") from None
    return path


def check_output_folder(path: Path | str, option: str) -> None:
    """As :func:`output_folder`, without creating anything: ``path`` is a folder one can write
    in, or the folder nearest to it that exists is."""
    path = Path(path)
    existing = path
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if existing == path and not path.is_dir():
        raise HriError(f"{option} {path}: is a file, not a folder")
    if not existing.is_dir():
        raise HriError(f"{option} {path}: cannot create the folder: {existing} is a file")
    check_writable(existing, option, path)


def check_writable(folder: Path, option: str, wanted: Path | None = None) -> None:
    """A one-line error naming the option (and ``wanted``, the folder to be made in
    ``folder``) unless a file can be created in ``folder``."""
    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as err:
        where = "there" if wanted is None or wanted == folder else f"in {folder}"
        raise HriError(f"{option} {wanted or folder}: cannot write {where}: {err.strerror or err}") from None


def plain_file_mode() -> int:
    """The mode a plain new file gets under this process's umask. The hidden files that become
    a run's outputs are made by ``mkstemp``, which makes them 0600; they get this mode before
    they are renamed, so outputs are as readable as any file the user makes."""
    try:  # read, not set and reset: another thread may be creating a file meanwhile
        with open("/proc/self/status") as status:
            umask = next(int(line.split()[1], 8) for line in status if line.startswith("Umask:"))
    except (OSError, StopIteration, ValueError, IndexError):
        umask = os.umask(0)
        os.umask(umask)
    return 0o666 & ~umask


def plain_folder_mode() -> int:
    """The mode a plain new folder gets under this process's umask (``mkdtemp`` makes 0700)."""
    mode = plain_file_mode()
    return mode | (mode & 0o444) >> 2


def staging_folder(parent: Path, prefix: str) -> Path:
    """A new hidden folder in ``parent``, named ``prefix``, some random letters and ``-PID``
    (this process's), with the mode of a plain new folder: where a set of files is made before
    it is moved into place. :func:`remove_dead_staging` removes it once this process is gone."""
    path = Path(tempfile.mkdtemp(dir=parent, prefix=prefix, suffix=f"-{os.getpid()}"))
    os.chmod(path, plain_folder_mode())
    return path


def remove_dead_staging(parent: Path, prefix: str) -> None:
    """Delete the folders in ``parent`` named ``prefix...-PID`` whose process is gone: what a
    killed process left of its :func:`staging_folder`. Only real folders: a link so named is
    neither followed nor removed."""
    for entry in parent.iterdir():
        if entry.name.startswith(prefix) and entry.is_dir() and not entry.is_symlink():
            pid = entry.name.rsplit("-", 1)[-1]
            if not (pid.isdigit() and is_alive(int(pid))):
                shutil.rmtree(entry, ignore_errors=True)


def check_new_file(target: Path, force: bool, option: str) -> None:
    """HriError naming ``target`` unless a command may write it: it does not exist, or it is a
    file and ``force`` is given (a link there is then replaced, not followed). ``option`` is
    the option that names the file."""
    if not (target.exists() or target.is_symlink()):
        return
    if target.is_dir():
        raise HriError(f"is a folder: {option} names the file to write", str(target))
    if not force:
        raise HriError(f"exists: pass --force to overwrite it, or {option} to write elsewhere", str(target))


def hidden_file(target: Path, suffix: str = "", prefix: str | None = None,
                mode: int | None = None) -> tuple[int, str]:
    """A new hidden file beside ``target`` (``mkstemp``'s fd and path), named ``prefix``
    (default ``.NAME.``) and some random letters, with ``mode`` (default: the mode a plain new
    file gets), to be renamed over ``target`` when complete."""
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=prefix or f".{target.name}.", suffix=suffix)
    os.fchmod(fd, plain_file_mode() if mode is None else mode)
    return fd, tmp


def close_into_place(close: Callable[[], None], tmp: Path, path: Path, keep: bool = True,
                     prepare: Callable[[Path], None] | None = None) -> None:
    """Close the writer of the hidden file ``tmp`` (:func:`hidden_file`) and move the file to
    ``path`` (``prepare`` it first; with ``keep`` false remove it instead): the hidden file is
    removed when anything here fails, so no half file is left."""
    try:
        close()
        if not keep:
            tmp.unlink()
            return
        if prepare is not None:
            prepare(tmp)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_atomic(path: Path, data: str | bytes, prefix: str | None = None, mode: int | None = None) -> None:
    """Replace ``path`` with ``data`` (text is written as UTF-8) in one step; the temporary
    file is named and made as :func:`hidden_file` says."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = hidden_file(path, prefix=prefix, mode=mode)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(raw)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except OSError as err:
        Path(tmp).unlink(missing_ok=True)
        raise named(err, path) from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


TRACEBACK = "traceback.txt"
"""The file of a run's folder that keeps the traceback of the exception that ended it."""
TRACEBACK_PREFIX = "hri-traceback-"


def keep_traceback(err: HriError, folder: Path | None = None) -> None:
    """Save the traceback ``err`` carries (a plug-in's exception behind it) and name the file
    in its line: ``folder/traceback.txt`` in a run's folder; without one (a tree refused when
    it loads: no run folder is made for it) a new ``hri-traceback-*.txt`` in the temporary
    folder (``$TMPDIR``, else ``/tmp``), readable by its owner only. Nothing when ``err``
    carries no traceback or has saved it; a file that cannot be written leaves the line as it
    is (it names the node and the exception all the same)."""
    if err.traceback is None or err.traceback_file is not None:
        return
    try:
        if folder is not None:
            path = folder / TRACEBACK
            folder.mkdir(parents=True, exist_ok=True)
            write_atomic(path, err.traceback)
        else:
            fd, name = tempfile.mkstemp(prefix=TRACEBACK_PREFIX, suffix=".txt")
            path = Path(name)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(err.traceback)
    except OSError:
        return
    err.traceback_file = path


def named(err: OSError, path: Path) -> OSError:
    """``err`` naming ``path``, the file the user asked for, instead of a hidden file beside it
    (the one line a failed write prints is ``PATH: reason``)."""
    return OSError(err.errno, err.strerror, str(path))


def wrong_kind(path: Path, folder: bool = False) -> str | None:
    """Why ``path``, which exists, is not the file (or, with ``folder``, the folder) to read, or
    None: a message that names what it is instead of calling it missing."""
    if path.is_dir():
        return None if folder else "is a folder, not a file"
    if path.is_file():
        return "is a file, not a folder" if folder else None
    return None if not path.exists() else f"is not a regular {'folder' if folder else 'file'}"


def is_alive(pid: int) -> bool:
    """True while the process exists and is not a zombie (killed, not yet reaped)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (OSError, IndexError):
        return True


class FillingFile:
    """A hidden file beside ``target`` that a run fills as it goes, renamed over ``target`` in
    one step when complete (:meth:`commit`), or removed (:meth:`discard`). A write that fails
    (a full disk) removes it and raises the error naming ``target``."""

    def __init__(self, target: Path, binary: bool = False) -> None:
        self.target = Path(target)
        fd, tmp = hidden_file(self.target)
        self._tmp = Path(tmp)
        self._file = os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8")

    @property
    def done(self) -> bool:
        """Committed or discarded."""
        return self._file.closed

    def write(self, data: str | bytes) -> None:
        try:
            self._file.write(data)
        except OSError as err:
            self.discard()
            raise named(err, self.target) from None

    def commit(self) -> None:
        """Flush to disk and put the file at ``target`` (nothing once done)."""
        if self.done:
            return
        try:
            self._file.flush()
            os.fsync(self._file.fileno())
            self._file.close()
            os.replace(self._tmp, self.target)
        except OSError as err:
            self.discard()
            raise named(err, self.target) from None

    def discard(self) -> None:
        """Remove the hidden file (nothing once committed)."""
        if not self._file.closed:
            try:
                self._file.close()
            except OSError:  # what it could not flush is lost with it
                pass
        self._tmp.unlink(missing_ok=True)


class Spool:
    """Items (events, trajectory rows) kept in :attr:`items` until a file receives them.

    Without :meth:`spill_to` they stay in memory and :meth:`write` puts them into a file at
    the end. With it, every ``every`` items go, as lines, into a hidden file beside the target
    and leave memory (a long run's memory stays flat); :meth:`write` adds the rest and renames
    the hidden file over the target in one step, so a reader never sees half a file.
    """

    def __init__(self, to_line: Callable[[Any], str], header: str = "") -> None:
        self.items: list[Any] = []
        self.spilled = 0  # items already in the hidden file
        self._to_line = to_line
        self._header = header
        self._file: FillingFile | None = None
        self._every = 0

    def __len__(self) -> int:
        return self.spilled + len(self.items)

    def spill_to(self, target: Path, every: int = 2000) -> None:
        self._every = every
        self._file = FillingFile(target)
        self._file.write(self._header)

    def append(self, item: Any) -> None:
        self.items.append(item)
        if self._file is not None and len(self.items) >= self._every:
            self._flush()

    def _flush(self) -> None:
        self._file.write("".join(self._to_line(item) for item in self.items))
        self.spilled += len(self.items)
        self.items.clear()

    def lines(self) -> str:
        """Everything still in memory, as the file's text (header included when nothing spilled)."""
        return (self._header if not self.spilled and self._file is None else "") + "".join(
            self._to_line(item) for item in self.items)

    def write(self, target: Path) -> None:
        """The whole file at ``target`` (the one spilled to, if any), in one step."""
        if self._file is None:
            write_atomic(target, self.lines())
            return
        self._flush()
        self._file.commit()
        self._file = None

    def discard(self) -> None:
        """Remove the hidden file of a spool that will not be written."""
        if self._file is not None:
            self._file.discard()
            self._file = None
