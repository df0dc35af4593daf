"""The actor's two message queues: actions (server -> plugin) and feedback (plugin -> server).

Both are created by the run's :class:`~hri.base.mqueue.RunQueues` (per-run names, mode 0600,
registered and unlinked when the run ends) as ``<prefix>-actor-action`` and
``<prefix>-actor-feedback``; in a run with several people each person's actor has two of its
own, ``<prefix>-actor-NAME-action`` and ``<prefix>-actor-NAME-feedback`` (:func:`suffixes`). All operations but ``wait()`` are non-blocking:

- ``receive()`` returns ``None`` when the queue is empty; a record that does not decode is
  dropped and counted in ``.dropped``.
- Feedback is sent every physics step and drained every step, so a full feedback queue only
  means the reader is late: the sender drops the OLDEST queued feedback and sends the new one
  (keep-last; counted in ``PluginEndpoint.overwritten``).
- A full action queue raises :class:`QueueFullError` (the plugin is not reading its actions).
- ``wait(timeout_s)`` is ``receive()`` for an end in a process of its own: it waits for the
  next message (:func:`hri.base.mqueue.receive_waiting`: polling briefly, then asleep).
"""

from __future__ import annotations

from typing import Callable, Generic, TypeVar

import posix_ipc

from hri.base.mqueue import SPIN_S, MQueueError, QueueFullError, RunQueues, receive_waiting, system_limits
from hri.base.queue_standins import LocalQueue

from .protocol import (ACTION_SIZE, FEEDBACK_SIZE, ActionMessage, FeedbackMessage,
                       ProtocolError)

__all__ = ["ACTION_SUFFIX", "FEEDBACK_SUFFIX", "ActorLink", "PluginEndpoint", "ServerEndpoint",
           "QueueFullError", "MQueueError"]

ACTION_SUFFIX = "actor-action"
FEEDBACK_SUFFIX = "actor-feedback"
_KEEP_LAST_ATTEMPTS = 8


def suffixes(person: str | None = None) -> tuple[str, str]:
    """The action and feedback queues' suffixes of ``person``'s actor (None: the one person's)."""
    if person is None:
        return ACTION_SUFFIX, FEEDBACK_SUFFIX
    return f"actor-{person}-action", f"actor-{person}-feedback"


def _receive_nowait(queue: posix_ipc.MessageQueue) -> bytes | None:
    """The queue is in non-blocking mode (see ActorLink): a timed receive(0) costs ~30x more."""
    try:
        data, _priority = queue.receive()
    except posix_ipc.BusyError:
        return None
    return data


def _send_nowait(queue: posix_ipc.MessageQueue, data: bytes) -> bool:
    try:
        queue.send(data)
    except posix_ipc.BusyError:
        return False
    return True


Message = TypeVar("Message", ActionMessage, FeedbackMessage)


class _Endpoint(Generic[Message]):
    def __init__(self, outgoing: posix_ipc.MessageQueue, incoming: posix_ipc.MessageQueue,
                 decode: Callable[[bytes], Message]):
        self._outgoing = outgoing
        self._incoming = incoming
        self._decode = decode
        self.dropped = 0  # received records that did not decode

    def receive(self) -> Message | None:
        """The next message, or None when there is none. Undecodable records are skipped."""
        while (data := _receive_nowait(self._incoming)) is not None:
            if (message := self._decoded(data)) is not None:
                return message
        return None

    def wait(self, timeout_s: float | None = None, spin_s: float = SPIN_S) -> Message | None:
        """The next message, waiting up to ``timeout_s`` (None: for ever) for one, the first
        ``spin_s`` of it polling; None if none came. Undecodable records are skipped."""
        while (data := receive_waiting(self._incoming, timeout_s, spin_s)) is not None:
            if (message := self._decoded(data)) is not None:
                return message
        return None

    def _decoded(self, data: bytes) -> Message | None:
        try:
            return self._decode(data)
        except (ProtocolError, ValueError):
            self.dropped += 1  # drop it and look at the next one
            return None


class PluginEndpoint(_Endpoint[ActionMessage]):
    """The plugin's side: receives actions, sends feedback (keep-last when full)."""

    def __init__(self, actions: posix_ipc.MessageQueue, feedback: posix_ipc.MessageQueue):
        super().__init__(outgoing=feedback, incoming=actions, decode=ActionMessage.decode)
        self.overwritten = 0  # queued feedback dropped to make room for newer feedback

    def send(self, msg: FeedbackMessage) -> None:
        """Send feedback; if the queue is full, drop the oldest queued feedback first."""
        data = msg.encode()
        for _ in range(_KEEP_LAST_ATTEMPTS):
            if _send_nowait(self._outgoing, data):
                return
            if _receive_nowait(self._outgoing) is not None:
                self.overwritten += 1
        raise QueueFullError(f"{self._outgoing.name}: feedback queue stays full")


class ServerEndpoint(_Endpoint[FeedbackMessage]):
    """The server's side: sends actions (error when full), receives feedback."""

    def __init__(self, actions: posix_ipc.MessageQueue, feedback: posix_ipc.MessageQueue):
        super().__init__(outgoing=actions, incoming=feedback, decode=FeedbackMessage.decode)

    def send(self, msg: ActionMessage) -> None:
        """Send an action; raises QueueFullError when the plugin has not read the queue."""
        data = msg.encode()
        if not _send_nowait(self._outgoing, data):
            raise QueueFullError(
                f"{self._outgoing.name}: action queue full ({self._outgoing.max_messages} "
                "messages): the actor plugin is not reading its actions")


def default_depth() -> int:
    """How many messages each of the actor's queues holds."""
    return min(10, system_limits()["msg_max"])


class ActorLink:
    """The action and feedback queues of one run's actor, created through ``run_queues``; when
    the run's queue budget was short (``run_queues.short``), their in-process stand-ins.
    ``person``: whose actor, in a run with several people (None: the one person's)."""

    def __init__(self, run_queues: RunQueues, max_messages: int | None = None, person: str | None = None):
        if max_messages is None:
            max_messages = default_depth()
        self.run_queues = run_queues
        action, feedback = suffixes(person)
        if run_queues.short is None:
            self.actions = run_queues.create(action, max_messages, ACTION_SIZE)
            self.feedback = run_queues.create(feedback, max_messages, FEEDBACK_SIZE)
        else:
            self.actions = LocalQueue(run_queues.name(action), max_messages, ACTION_SIZE)
            self.feedback = LocalQueue(run_queues.name(feedback), max_messages, FEEDBACK_SIZE)
        for queue in (self.actions, self.feedback):
            queue.block = False  # every endpoint call returns at once (O_NONBLOCK)

    @property
    def action_name(self) -> str:
        return self.actions.name

    @property
    def feedback_name(self) -> str:
        return self.feedback.name

    def inject(self, queue: str, record: bytes, times: int = 1) -> None:
        """Put ``record`` on the ``actions`` or ``feedback`` queue up to ``times`` times, or until
        it is full, as a broken peer would (fault injection)."""
        target = self.actions if queue == "actions" else self.feedback
        for _ in range(times):
            try:
                target.send(record)
            except posix_ipc.BusyError:
                return

    @staticmethod
    def plan(max_messages: int | None = None, person: str | None = None) -> dict[str, tuple[int, int]]:
        """The queues an ActorLink creates: suffix -> (max_messages, message_size)."""
        depth = default_depth() if max_messages is None else max_messages
        action, feedback = suffixes(person)
        return {action: (depth, ACTION_SIZE), feedback: (depth, FEEDBACK_SIZE)}

    def plugin_endpoint(self) -> PluginEndpoint:
        return PluginEndpoint(self.actions, self.feedback)

    def server_endpoint(self) -> ServerEndpoint:
        return ServerEndpoint(self.actions, self.feedback)
