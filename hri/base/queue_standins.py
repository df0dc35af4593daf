"""Stand-ins for a run's message queues when the user's queue budget is short.

:meth:`hri.base.mqueue.RunQueues.reserve` finds out whether a run's queues fit in the user's
budget (``ulimit -q``); when they do not, the run uses these instead, with the same messages
in the same order, so a seeded run gives the same bits either way:

- :class:`LocalQueue`, between two ends in one process (the actor's action and feedback
  queues): a bounded FIFO, full and empty as a queue of that depth would be;
- :class:`SocketQueue`, between the run's processes (a tree process's lockstep pipe): one end
  of an ``AF_UNIX`` ``SOCK_SEQPACKET`` socket pair (:func:`socket_pair`), which keeps message
  boundaries like a queue and charges nothing to the queue budget. The tree process inherits
  its end; both ends are closed when the run ends, and the kernel removes the pair with them.

Both offer the part of :class:`posix_ipc.MessageQueue` that the run uses (``send``,
``receive``, ``block``, ``name``, ``max_messages``, ``max_message_size``, ``close``) and raise
its errors: :class:`posix_ipc.BusyError` for full or empty, :class:`posix_ipc.ExistentialError`
for a peer that closed its end.
"""

from __future__ import annotations

import socket
import threading
from collections import deque

import posix_ipc


class LocalQueue:
    """A bounded FIFO of whole messages between two ends in one process."""

    def __init__(self, name: str, max_messages: int, max_message_size: int) -> None:
        self.name = name
        self.max_messages = max_messages
        self.max_message_size = max_message_size
        self.block = True
        self._messages: deque[bytes] = deque()
        self._changed = threading.Condition()

    def send(self, message: bytes, timeout: float | None = None) -> None:
        if len(message) > self.max_message_size:
            raise ValueError("The message is longer than permitted by max_message_size")
        with self._changed:
            if not self._wait(lambda: len(self._messages) < self.max_messages, timeout):
                raise posix_ipc.BusyError("The queue is full")
            self._messages.append(bytes(message))
            self._changed.notify_all()

    def receive(self, timeout: float | None = None) -> tuple[bytes, int]:
        with self._changed:
            if not self._wait(lambda: bool(self._messages), timeout):
                raise posix_ipc.BusyError("The queue is empty")
            message = self._messages.popleft()
            self._changed.notify_all()
            return message, 0

    def _wait(self, ready, timeout: float | None) -> bool:
        if not self.block:
            return ready()
        return self._changed.wait_for(ready, timeout)

    def close(self) -> None:
        self._messages.clear()


class SocketQueue:
    """One end of a SOCK_SEQPACKET socket pair, used as a queue in and a queue out at once."""

    def __init__(self, sock: socket.socket, name: str, max_message_size: int) -> None:
        self.sock = sock
        self.name = name
        self.max_messages = 0  # no fixed depth: the socket's buffer
        self.max_message_size = max_message_size
        self.block = True

    def _timed(self, timeout: float | None) -> None:
        self.sock.settimeout((None if timeout is None else max(timeout, 0.0)) if self.block else 0.0)

    def send(self, message: bytes, timeout: float | None = None) -> None:
        if len(message) > self.max_message_size:
            raise ValueError("The message is longer than permitted by max_message_size")
        self._timed(timeout)
        try:
            self.sock.send(message)
        except (BlockingIOError, socket.timeout):
            raise posix_ipc.BusyError("The socket's buffer is full") from None
        except OSError as error:  # the peer closed its end (EPIPE, ECONNRESET), or we did
            raise posix_ipc.ExistentialError(f"{self.name}: {error.strerror or error}") from None

    def receive(self, timeout: float | None = None) -> tuple[bytes, int]:
        self._timed(timeout)
        try:
            message = self.sock.recv(self.max_message_size)
        except (BlockingIOError, socket.timeout):
            raise posix_ipc.BusyError("Nothing arrived") from None
        except OSError as error:
            raise posix_ipc.ExistentialError(f"{self.name}: {error.strerror or error}") from None
        if not message:  # every message has at least one byte: an empty read is the peer's end
            raise posix_ipc.ExistentialError(f"{self.name}: the other end was closed")
        return message, 0

    def close(self) -> None:
        self.sock.close()


def socket_pair() -> tuple[socket.socket, socket.socket]:
    """Two connected SOCK_SEQPACKET sockets (not inheritable: pass one with ``pass_fds``)."""
    return socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
