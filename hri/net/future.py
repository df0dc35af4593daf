"""The outcome of one call: a :class:`Future` the caller polls each tick.

A call returns a future at once: ``pending`` until its reply arrives, then ``done`` (``value``)
or ``failed`` (``error``: the service's refusal, :class:`~hri.net.errors.CallTimeout` when its
simulated time ran out, :class:`~hri.net.errors.Cancelled` when the caller gave up or a newer
answer superseded it). Reading a pending future checks its deadline, so a caller never waits
past it. The node that made the call fills it in (:class:`CallKeeper`).
"""

from __future__ import annotations

from typing import Any, Callable, Protocol

from .errors import Cancelled, NetError


class CallKeeper(Protocol):
    """What a future uses of the node that made its call (:class:`~hri.net.node.Node`)."""

    def check_deadline(self, future: "Future") -> None: ...

    def finish_call(self, future: "Future", status: str, value: Any, error: NetError | None) -> None: ...


PENDING, DONE, FAILED = "pending", "done", "failed"


class Future:
    """The outcome of one call, filled in when its reply arrives (or its time runs out)."""

    def __init__(self, node: CallKeeper | None, request_id: int, key: tuple, sent_at: float,
                 deadline: float, supersede: bool | str = False):
        self.request_id = request_id
        self.key = key  # (address, channel, op)
        self.sent_at = sent_at
        self.deadline = deadline
        self.supersede = supersede  # True, or the name of what a newer answer supersedes (node.call)
        self.transform: Callable[[Any], Any] | None = None  # applied to the reply (e.g. a record)
        self.answered_at: float | None = None
        self._node = node
        self._status = PENDING
        self._value: Any = None
        self._error: NetError | None = None
        self._callbacks: list[Callable[["Future"], None]] = []

    def __repr__(self) -> str:
        return f"Future({self.key[1]}.{self.key[2]} #{self.request_id}, {self._status})"

    @classmethod
    def failed_now(cls, error: NetError, key: tuple = (0, "", ""), at: float = 0.0) -> "Future":
        """A future that has already failed (e.g. the request could not be sent)."""
        future = cls(None, 0, key, at, at)
        future._finish(FAILED, None, error, at)
        return future

    @property
    def status(self) -> str:
        if self._status == PENDING and self._node is not None:
            self._node.check_deadline(self)
        return self._status

    @property
    def pending(self) -> bool:
        return self.status == PENDING

    @property
    def done(self) -> bool:
        return self.status == DONE

    @property
    def failed(self) -> bool:
        return self.status == FAILED

    @property
    def error(self) -> NetError | None:
        self.status  # noqa: B018 - a read may find the deadline passed
        return self._error

    @property
    def value(self) -> Any:
        """The reply; raises the error of a failed call, or NetError while pending."""
        status = self.status
        if status == DONE:
            return self._value
        if status == FAILED:
            raise self._error
        raise NetError(f"call {self.key[1]}.{self.key[2]} #{self.request_id} is still pending")

    result = value

    def cancel(self) -> None:
        """Give up on the call: it fails with Cancelled; a late reply is dropped as stale."""
        if self._status == PENDING and self._node is not None:
            self._node.finish_call(self, FAILED, None, Cancelled("cancelled by the caller"))

    def add_done_callback(self, callback: Callable[["Future"], None]) -> None:
        """Call ``callback(future)`` when the call ends (at once if it has ended)."""
        if self._status == PENDING:
            self._callbacks.append(callback)
        else:
            callback(self)

    def _finish(self, status: str, value: Any, error: NetError | None, at: float) -> None:
        self._status, self._value, self._error, self.answered_at = status, value, error, at
        callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback(self)
