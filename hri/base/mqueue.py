"""POSIX message queues owned by one run, and removed when the run ends.

A run opens a :class:`RunQueues` and creates its queues through it::

    with RunQueues() as rq:
        actions = rq.create("actor-action", message_size=336)

Every queue name starts with the run's prefix ``/hri-<pid>-<12 random hex digits>`` (not
guessable, so no other user can pre-create or squat a run's queue), is created exclusively
(``O_CREX``) with mode 0600, and is recorded in a small per-user registry before it is
created: one JSON file per run, named by the prefix, in the runtime folder
(``$XDG_RUNTIME_DIR/hri`` or ``/tmp/hri-<uid>``, mode 0700), holding the creator's pid (and
its start time, to recognise a reused pid) and the queue names. The file is replaced
atomically on every change.

The queues are closed and unlinked and the registry file removed when the ``with`` block
ends (normally or by an exception), at interpreter exit (:mod:`atexit`), and on SIGTERM: while
a run is open and nobody else has set a SIGTERM handler, one is installed that raises
:class:`~hri.base.errors.Terminated`, a ``SystemExit`` (so ``with`` blocks unwind and atexit
runs); it is removed again when the last run closes. A run killed by SIGKILL (or a crash)
leaves its queues behind: the next run calls :func:`cleanup_stale`, which removes the queues
of registry entries whose process is gone and never touches a live run.

Linux offers no system call listing message queues (and ``/dev/mqueue`` is often not
mounted), so the registry is the only record; :func:`queue_exists` checks a single name.

**The queue budget.** The kernel charges every queue to the user who created it:
:func:`queue_charge` bytes (its messages' room plus two kernel structures per message), summed
over all of that user's processes and capped by ``RLIMIT_MSGQUEUE`` (``ulimit -q``, often
800 KB). :meth:`RunQueues.reserve` checks a run's queues against that budget and creates them
all before the run starts, or none: when the budget is short it returns the one-line reason
(figures and the fix) and sets :attr:`RunQueues.short`, so that the run can use its stand-ins
(:mod:`hri.base.queue_standins`) instead. A queue that :meth:`RunQueues.create` cannot make for
want of budget raises :class:`QueueBudgetShort` with that line.
"""

from __future__ import annotations

import atexit
import errno
import json
import os
import re
import resource
import secrets
import signal
import stat
import threading
import time
from pathlib import Path

import posix_ipc

from hri.base.files import is_alive, write_atomic
from hri.base.errors import HriError, Terminated

QUEUE_MODE = 0o600
PREFIX_PATTERN = re.compile(r"^/hri-[0-9]+-[0-9a-f]{12}$")
_SUFFIX_PATTERN = re.compile(r"^[A-Za-z0-9_.][A-Za-z0-9_.-]*$")
_NAME_MAX = 255  # NAME_MAX of the mqueue file system, without the leading '/'
_TMP_PREFIX = ".tmp-"


class MQueueError(HriError, RuntimeError):
    """A message queue could not be created, opened or used as asked (one line)."""


class QueueBudgetShort(MQueueError):
    """The user's message-queue budget (``ulimit -q``) has no room for a queue."""


class QueueFullError(MQueueError):
    """A non-blocking send found the queue full: its reader is not keeping up."""


# --------------------------------------------------------------------------------------------
# Waiting for a message from another process

SPIN_S = 200e-6  # how long a wait polls before it sleeps


def receive_waiting(queue: posix_ipc.MessageQueue, timeout_s: float | None,
                    spin_s: float = SPIN_S) -> bytes | None:
    """The next message of ``queue``, waiting up to ``timeout_s`` (None: for ever); None if
    none came.

    It polls for ``spin_s`` first, yielding the CPU between polls, and only then sleeps in
    a blocking receive. An answer from another process usually comes within microseconds;
    found by polling it costs no wake-up, which on an idle virtual machine costs tens of
    microseconds when the scheduler has halted the other CPU. Yielding lets a peer on the
    same CPU run. The queue handle's blocking mode is restored.
    """
    polling = spin_s if timeout_s is None else min(spin_s, timeout_s)
    asleep = None if timeout_s is None else timeout_s - polling
    was_blocking = queue.block
    queue.block = False
    try:
        deadline = time.perf_counter() + polling
        while True:
            try:
                return queue.receive()[0]
            except posix_ipc.BusyError:
                if time.perf_counter() >= deadline:
                    break
            os.sched_yield()
        if asleep is not None and asleep <= 0.0:
            return None
        queue.block = True
        try:
            return queue.receive(asleep)[0]
        except posix_ipc.BusyError:
            return None
    finally:
        queue.block = was_blocking


# --------------------------------------------------------------------------------------------
# System limits


def _read_limit(name: str, default: int) -> int:
    try:
        return int(Path("/proc/sys/fs/mqueue", name).read_text().strip())
    except (OSError, ValueError):
        return default


def system_limits() -> dict[str, int]:
    """``msg_max``, ``msgsize_max`` and ``queues_max`` of /proc/sys/fs/mqueue (or defaults)."""
    return {
        "msg_max": _read_limit("msg_max", posix_ipc.QUEUE_MESSAGES_MAX_DEFAULT),
        "msgsize_max": _read_limit("msgsize_max", posix_ipc.QUEUE_MESSAGE_SIZE_MAX_DEFAULT),
        "queues_max": _read_limit("queues_max", 256),
    }


# The kernel's charge (ipc/mqueue.c, mqueue_get_inode): maxmsg * msgsize for the messages, plus
# maxmsg * sizeof(struct msg_msg) and min(maxmsg, MQ_PRIO_MAX) * sizeof(struct
# posix_msg_tree_node), 48 bytes each on 64-bit Linux (measured: 96 bytes a message here).
_MSG_MSG_SIZE = 48
_TREE_NODE_SIZE = 48
_MQ_PRIO_MAX = 32768


def queue_charge(max_messages: int, message_size: int) -> int:
    """Bytes of the user's ``RLIMIT_MSGQUEUE`` that a queue of these dimensions takes."""
    return (max_messages * (message_size + _MSG_MSG_SIZE)
            + min(max_messages, _MQ_PRIO_MAX) * _TREE_NODE_SIZE)


def queue_budget() -> int | None:
    """The user's message-queue budget in bytes (the soft ``RLIMIT_MSGQUEUE``); None: unlimited."""
    soft = resource.getrlimit(resource.RLIMIT_MSGQUEUE)[0]
    return None if soft == resource.RLIM_INFINITY else soft


def budget_short(need: int) -> str:
    """The one line saying that queues of ``need`` bytes do not fit in the budget, and the fix."""
    return (f"message queues of {need} bytes do not fit in the user's queue budget (`ulimit -q` "
            f"{queue_budget()} bytes, shared by all processes of uid {os.getuid()}; other runs "
            "hold the rest): run fewer at once, or raise the limit (`ulimit -q`, "
            "msgqueue in /etc/security/limits.conf)")


def _out_of_budget(error: BaseException) -> bool:
    """Whether mq_open failed for want of queue budget. The kernel says EMFILE (posix_ipc: an
    OSError without errno, "maximum number of files open"), as for a process out of file
    descriptors: that one is told apart by counting ours."""
    if not isinstance(error, OSError) or error.errno not in (None, errno.EMFILE):
        return False
    if error.errno is None and "maximum number of files" not in str(error):
        return False
    try:
        open_fds = len(os.listdir("/proc/self/fd"))
    except OSError:
        return True
    return open_fds + 1 < resource.getrlimit(resource.RLIMIT_NOFILE)[0]


# --------------------------------------------------------------------------------------------
# The per-user runtime folder and the registry


def runtime_dir() -> Path:
    """The per-user registry folder: ``$XDG_RUNTIME_DIR/hri``, else ``/tmp/hri-<uid>``."""
    base = os.environ.get("XDG_RUNTIME_DIR")
    if base and os.path.isabs(base) and os.path.isdir(base):
        return Path(base) / "hri"
    return Path("/tmp") / f"hri-{os.getuid()}"


def _ensure_private_dir(path: Path) -> Path:
    """Create ``path`` with mode 0700, or check that an existing one is ours and private.

    Refuses a symlink, a non-directory or a folder owned by another user (someone could have
    pre-created ``/tmp/hri-<uid>`` to read or plant registry files).
    """
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    info = os.lstat(path)
    if not stat.S_ISDIR(info.st_mode):
        raise MQueueError(f"{path}: runtime folder is not a directory (or is a symlink)")
    if info.st_uid != os.getuid():
        raise MQueueError(f"{path}: runtime folder belongs to uid {info.st_uid}, not to us")
    if stat.S_IMODE(info.st_mode) != 0o700:
        os.chmod(path, 0o700)  # ours: umask or an old version may have left other bits
    return path


def _registry_file(directory: Path, prefix: str) -> Path:
    return directory / (prefix.lstrip("/") + ".json")


def _process_start_time(pid: int) -> int | None:
    """Start time of ``pid`` in clock ticks since boot (field 22 of /proc/PID/stat)."""
    try:
        data = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return None
    try:
        # the command name (field 2) may hold spaces and parentheses: split after the last ')'
        return int(data[data.rindex(b")") + 2:].split()[19])
    except (ValueError, IndexError):
        return None


def _process_alive(pid: int, start_time: int | None = None) -> bool:
    """True unless ``pid`` is certainly gone (a zombie counts as gone) or reused by another process."""
    if pid <= 0 or not is_alive(pid):
        return False
    if start_time is not None:
        current = _process_start_time(pid)
        if current is not None and current != start_time:
            return False  # the pid was reused by a later process
    return True


def _write_atomically(path: Path, text: str) -> None:
    # owner-only, and named after this process so that cleanup_stale can remove the file of
    # a writer that died between write and rename
    write_atomic(path, text, prefix=f"{_TMP_PREFIX}{os.getpid()}-", mode=0o600)


def _unlink_queue(name: str) -> bool:
    """Unlink a queue by name; True when it existed."""
    try:
        posix_ipc.unlink_message_queue(name)
        return True
    except posix_ipc.ExistentialError:
        return False


def queue_exists(name: str) -> bool:
    """True when a message queue of this name exists (tries to open it)."""
    try:
        queue = posix_ipc.MessageQueue(name, 0)
    except posix_ipc.ExistentialError:
        return False
    except posix_ipc.PermissionsError:
        return True
    queue.close()
    return True


def cleanup_stale(directory: Path | str | None = None) -> int:
    """Remove the queues and registry files of runs whose process is gone.

    Call it when a run starts. Entries of live processes are left alone. Returns how many
    queues were unlinked (queues already gone are not counted).
    """
    directory = _ensure_private_dir(Path(directory) if directory is not None else runtime_dir())
    removed = 0
    for entry in sorted(directory.iterdir()):
        name = entry.name
        if name.startswith(_TMP_PREFIX):  # a writer died between write and rename
            pid_text = name[len(_TMP_PREFIX):].split("-", 1)[0]
            if pid_text.isdigit() and not _process_alive(int(pid_text)):
                entry.unlink(missing_ok=True)
            continue
        if not name.endswith(".json"):
            continue
        prefix = "/" + name[: -len(".json")]
        if not PREFIX_PATTERN.match(prefix):
            continue
        try:
            record = json.loads(entry.read_text())
            pid = int(record["pid"])
            start_time = record.get("start_time")
            queues = [str(q) for q in record.get("queues", [])]
        except (OSError, ValueError, KeyError, TypeError):
            continue  # unreadable or foreign: leave it for a human
        if _process_alive(pid, start_time):
            continue
        for queue in queues:
            # only names of that run: a tampered file cannot make us unlink other queues
            if queue.startswith(prefix + "-") and _unlink_queue(queue):
                removed += 1
        entry.unlink(missing_ok=True)
    return removed


# --------------------------------------------------------------------------------------------
# Cleanup at exit and on SIGTERM

_live_runs: list["RunQueues"] = []
_live_lock = threading.RLock()
_atexit_registered = False
_installed_handler = None
_previous_handler = None


def _on_sigterm(signum, frame):  # noqa: ARG001
    raise Terminated()


def _close_all_runs() -> None:
    with _live_lock:
        runs = list(_live_runs)
    for run in runs:
        run.close()


def _run_opened(run: "RunQueues") -> None:
    global _atexit_registered, _installed_handler, _previous_handler
    with _live_lock:
        if run in _live_runs:
            return
        _live_runs.append(run)
        if not _atexit_registered:
            atexit.register(_close_all_runs)
            _atexit_registered = True
        if _installed_handler is None and threading.current_thread() is threading.main_thread():
            try:
                current = signal.getsignal(signal.SIGTERM)
                if current is signal.SIG_DFL:  # None would be a handler set outside Python
                    signal.signal(signal.SIGTERM, _on_sigterm)
                    _installed_handler = _on_sigterm
                    _previous_handler = current
            except (ValueError, OSError):
                pass


def _run_closed(run: "RunQueues") -> None:
    global _installed_handler, _previous_handler
    with _live_lock:
        if run in _live_runs:
            _live_runs.remove(run)
        if _live_runs or _installed_handler is None:
            return
        if threading.current_thread() is not threading.main_thread():
            return  # leave it; it only raises SystemExit
        try:
            if signal.getsignal(signal.SIGTERM) is _installed_handler:
                previous = _previous_handler if _previous_handler is not None else signal.SIG_DFL
                signal.signal(signal.SIGTERM, previous)
        except (ValueError, OSError):
            return
        _installed_handler = None
        _previous_handler = None


# --------------------------------------------------------------------------------------------
# RunQueues


class RunQueues:
    """The message queues of one run: created with a per-run prefix, removed at its end.

    ``registry_dir`` overrides the runtime folder (tests). Cleanup (:meth:`close`) is
    idempotent and only ever done by the process that created the queues (a forked child
    inheriting this object does not unlink its parent's queues).
    """

    def __init__(self, registry_dir: Path | str | None = None):
        self.pid = os.getpid()
        self.prefix = f"/hri-{self.pid}-{secrets.token_hex(6)}"
        self.registry_dir = Path(registry_dir) if registry_dir is not None else runtime_dir()
        self._names: list[str] = []  # recorded before creation: cleanup unlinks these by name
        self._queues: dict[str, posix_ipc.MessageQueue] = {}
        self._lock = threading.RLock()
        self._registry_path: Path | None = None
        self._closed = False
        self._reserved: dict[str, tuple[int, int]] = {}  # made by reserve(), not yet handed out
        self.short: str | None = None  # set by reserve(): why the run uses stand-ins

    # context manager ------------------------------------------------------------------------

    def __enter__(self) -> "RunQueues":
        self._open()
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"RunQueues({self.prefix!r}, queues={self.names})"

    @property
    def names(self) -> list[str]:
        return list(self._names)

    @property
    def registry_path(self) -> Path:
        return _registry_file(self.registry_dir, self.prefix)

    @property
    def closed(self) -> bool:
        return self._closed

    def _open(self) -> None:
        if self._closed:
            raise MQueueError(f"{self.prefix}: this run's queues are already closed")
        if self._registry_path is None:
            _ensure_private_dir(self.registry_dir)
            self._registry_path = self.registry_path
            self._write_registry()
            _run_opened(self)

    def _write_registry(self) -> None:
        record = {
            "pid": self.pid,
            "start_time": _process_start_time(self.pid),
            "prefix": self.prefix,
            "queues": self._names,
        }
        _write_atomically(self.registry_path, json.dumps(record, indent=1) + "\n")

    # queues ---------------------------------------------------------------------------------

    def name(self, suffix: str) -> str:
        """The full queue name ``<prefix>-<suffix>``."""
        if not _SUFFIX_PATTERN.match(suffix):
            raise ValueError(f"queue suffix {suffix!r}: use letters, digits, '_', '.', '-'")
        full = f"{self.prefix}-{suffix}"
        if len(full) - 1 > _NAME_MAX:
            raise ValueError(f"queue name {full!r} is too long")
        return full

    def reserve(self, plan: dict[str, tuple[int, int]]) -> str | None:
        """Create the queues of ``plan`` (suffix: (max_messages, message_size)) now, all or none.

        None when they were made (:meth:`create` then hands each out). When the user's budget
        is short (their charge exceeds ``ulimit -q``, or the kernel refuses one for want of
        room), none is left, :attr:`short` holds the one-line reason, and so is it returned.
        """
        need = sum(queue_charge(*dimensions) for dimensions in plan.values())
        budget = queue_budget()
        if budget is not None and need > budget:
            self.short = budget_short(need)
            return self.short
        made: list[str] = []
        try:
            for suffix, dimensions in plan.items():
                self.create(suffix, *dimensions)
                made.append(suffix)
        except QueueBudgetShort:
            for suffix in made:
                self._remove(self.name(suffix))
            self.short = budget_short(need)
            return self.short
        self._reserved.update({self.name(suffix): plan[suffix] for suffix in made})
        return None

    def _remove(self, full: str) -> None:
        """Close and unlink one queue of this run."""
        with self._lock:
            queue = self._queues.pop(full, None)
            if queue is not None:
                try:
                    queue.close()
                except posix_ipc.Error:
                    pass
            _unlink_queue(full)
            if full in self._names:
                self._names.remove(full)
                self._write_registry()

    def create(self, suffix: str, max_messages: int = 10,
               message_size: int = 8192) -> posix_ipc.MessageQueue:
        """Create the queue ``<prefix>-<suffix>`` exclusively, mode 0600, read and write (or hand
        out the one :meth:`reserve` made with these dimensions)."""
        full = self.name(suffix)
        if self._reserved.get(full) == (max_messages, message_size):
            del self._reserved[full]
            return self._queues[full]
        limits = system_limits()
        if not 1 <= max_messages <= limits["msg_max"]:
            raise MQueueError(f"{full}: max_messages={max_messages} outside 1..{limits['msg_max']}"
                              " (/proc/sys/fs/mqueue/msg_max)")
        if not 1 <= message_size <= limits["msgsize_max"]:
            raise MQueueError(f"{full}: message_size={message_size} outside "
                              f"1..{limits['msgsize_max']} (/proc/sys/fs/mqueue/msgsize_max)")
        with self._lock:
            self._open()
            if full in self._names:
                raise MQueueError(f"{full}: this run already has a queue of that name")
            self._names.append(full)
            self._write_registry()  # record first: a crash right after creation is still found
            try:
                queue = posix_ipc.MessageQueue(full, posix_ipc.O_CREX, mode=QUEUE_MODE,
                                               max_messages=max_messages,
                                               max_message_size=message_size)
            except BaseException as error:
                self._names.remove(full)
                self._write_registry()
                if isinstance(error, posix_ipc.ExistentialError):
                    raise MQueueError(f"{full}: a queue of that name exists already") from error
                if _out_of_budget(error):
                    raise QueueBudgetShort(f"{full}: {budget_short(queue_charge(max_messages, message_size))}"
                                           ) from None
                if isinstance(error, (OSError, posix_ipc.Error)):
                    raise MQueueError(f"{full}: cannot create the message queue ({error}); see "
                                      "/proc/sys/fs/mqueue and `ulimit -q`") from error
                raise
            self._queues[full] = queue
            self._check_mode(full, queue)
            return queue

    def _check_mode(self, full: str, queue: posix_ipc.MessageQueue) -> None:
        """The umask may have taken bits away (never added any): make it exactly 0600."""
        mode = stat.S_IMODE(os.fstat(queue.mqd).st_mode)
        if mode != QUEUE_MODE:
            os.fchmod(queue.mqd, QUEUE_MODE)
            mode = stat.S_IMODE(os.fstat(queue.mqd).st_mode)
        if mode != QUEUE_MODE:
            self.close()
            raise MQueueError(f"{full}: mode {mode:o}, expected {QUEUE_MODE:o}")

    def queue(self, suffix: str) -> posix_ipc.MessageQueue:
        """An already created queue by its suffix."""
        return self._queues[self.name(suffix)]

    # cleanup --------------------------------------------------------------------------------

    def close(self) -> None:
        """Close and unlink every queue of this run and remove its registry file. Idempotent.

        Written so that an interruption (SIGTERM raising SystemExit inside it) leaves a state
        the next call finishes.
        """
        if os.getpid() != self.pid:
            return  # a forked child: the queues belong to the parent
        with self._lock:
            self._closed = True
            while self._queues:
                name, queue = next(iter(self._queues.items()))
                try:
                    queue.close()
                except posix_ipc.Error:
                    pass
                del self._queues[name]
            while self._names:
                _unlink_queue(self._names[0])
                self._names.pop(0)
            if self._registry_path is not None:
                self._registry_path.unlink(missing_ok=True)
                self._registry_path = None
            _run_closed(self)
