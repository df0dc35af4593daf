"""The actor's two message queues: actions (server -> plugin) and feedback (plugin -> server).

Both are created by the run's :class:`~hri.mqueue.RunQueues` (per-run names, mode 0600,
registered and unlinked when the run ends) as ``<prefix>-actor-action`` and
``<prefix>-actor-feedback``. All operations are non-blocking:

- ``receive()`` returns ``None`` when the queue is empty; a record that does not decode is
  dropped and counted in ``.dropped``.
- Feedback is sent every physics step and drained every step, so a full feedback queue only
  means the reader is late: the sender drops the OLDEST queued feedback and sends the new one
  (keep-last; counted in ``PluginEndpoint.overwritten``).
- A full action queue raises :class:`QueueFullError` (the plugin is not reading its actions).
"""

from __future__ import annotations

import posix_ipc

from hri.mqueue import MQueueError, QueueFullError, RunQueues, system_limits

from .protocol import (ACTION_SIZE, FEEDBACK_SIZE, ActionMessage, FeedbackMessage,
                       ProtocolError)

__all__ = ["ACTION_SUFFIX", "FEEDBACK_SUFFIX", "ActorLink", "PluginEndpoint", "ServerEndpoint",
           "QueueFullError", "MQueueError"]

ACTION_SUFFIX = "actor-action"
FEEDBACK_SUFFIX = "actor-feedback"
_KEEP_LAST_ATTEMPTS = 8


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


class _Endpoint:
    def __init__(self, outgoing: posix_ipc.MessageQueue, incoming: posix_ipc.MessageQueue):
        self._outgoing = outgoing
        self._incoming = incoming
        self.dropped = 0  # received records that did not decode

    def _receive(self, decode):
        while True:
            data = _receive_nowait(self._incoming)
            if data is None:
                return None
            try:
                return decode(data)
            except (ProtocolError, ValueError):
                self.dropped += 1  # drop it and look at the next one


class PluginEndpoint(_Endpoint):
    """The plugin's side: receives actions, sends feedback (keep-last when full)."""

    def __init__(self, actions: posix_ipc.MessageQueue, feedback: posix_ipc.MessageQueue):
        super().__init__(outgoing=feedback, incoming=actions)
        self.overwritten = 0  # queued feedback dropped to make room for newer feedback

    def receive(self) -> ActionMessage | None:
        """The next action, or None when there is none. Undecodable records are skipped."""
        return self._receive(ActionMessage.decode)

    def send(self, msg: FeedbackMessage) -> None:
        """Send feedback; if the queue is full, drop the oldest queued feedback first."""
        data = msg.encode()
        for _ in range(_KEEP_LAST_ATTEMPTS):
            if _send_nowait(self._outgoing, data):
                return
            if _receive_nowait(self._outgoing) is not None:
                self.overwritten += 1
        raise QueueFullError(f"{self._outgoing.name}: feedback queue stays full")


class ServerEndpoint(_Endpoint):
    """The server's side: sends actions (error when full), receives feedback."""

    def __init__(self, actions: posix_ipc.MessageQueue, feedback: posix_ipc.MessageQueue):
        super().__init__(outgoing=actions, incoming=feedback)

    def send(self, msg: ActionMessage) -> None:
        """Send an action; raises QueueFullError when the plugin has not read the queue."""
        data = msg.encode()
        if not _send_nowait(self._outgoing, data):
            raise QueueFullError(
                f"{self._outgoing.name}: action queue full ({self._outgoing.max_messages} "
                "messages): the actor plugin is not reading its actions")

    def receive(self) -> FeedbackMessage | None:
        """The next feedback, or None when there is none. Undecodable records are skipped."""
        return self._receive(FeedbackMessage.decode)


class ActorLink:
    """The action and feedback queues of one run's actor, created through ``run_queues``."""

    def __init__(self, run_queues: RunQueues, max_messages: int | None = None):
        if max_messages is None:
            max_messages = min(10, system_limits()["msg_max"])
        self.run_queues = run_queues
        self.actions = run_queues.create(ACTION_SUFFIX, max_messages, ACTION_SIZE)
        self.feedback = run_queues.create(FEEDBACK_SUFFIX, max_messages, FEEDBACK_SIZE)
        for queue in (self.actions, self.feedback):
            queue.block = False  # every endpoint call returns at once (O_NONBLOCK)

    @property
    def action_name(self) -> str:
        return self.actions.name

    @property
    def feedback_name(self) -> str:
        return self.feedback.name

    def plugin_endpoint(self) -> PluginEndpoint:
        return PluginEndpoint(self.actions, self.feedback)

    def server_endpoint(self) -> ServerEndpoint:
        return ServerEndpoint(self.actions, self.feedback)
