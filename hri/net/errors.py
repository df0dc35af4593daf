"""The errors of the service network, all :class:`~hri.base.errors.HriError` subclasses.

A caller of the network never sees anything else for a network problem: a frame that does
not decode, a service nobody offers, a call that is not answered in time, a full queue. The
errors cross the wire by class name (an ERROR reply carries ``{"type": ..., "message": ...}``)
and are rebuilt on the caller's side by :func:`error_from_wire`.
"""

from __future__ import annotations

from hri.base.errors import HriError


class NetError(HriError):
    """Any problem of the service network."""


class CodecError(NetError):
    """A frame or payload that cannot be encoded or decoded (truncated, corrupt, bad version)."""


class ConfigError(NetError):
    """A network-quality setting that is not valid; the message starts with the key path."""


class DiscoveryError(NetError):
    """No service (or more than one equally good service) matches a discovery query."""


class QueueFull(NetError):
    """A bounded queue on the way was full: the message was not accepted."""


class CallTimeout(NetError):
    """A call was not answered within its timeout (in simulated time)."""


class Cancelled(NetError):
    """A call was cancelled by its caller or superseded by a newer answered call."""


class RemoteError(NetError):
    """The service answered with an error of a kind this side does not know."""


_BY_NAME: dict[str, type[NetError]] = {
    cls.__name__: cls for cls in (NetError, CodecError, ConfigError, DiscoveryError, QueueFull,
                                  CallTimeout, Cancelled, RemoteError)}


# The reason a failed call gives in a tree's events and the run's statistics, by error class:
# a short name to count (the error's message says the rest).
_REASONS: dict[type[NetError], str] = {
    CallTimeout: "timeout", QueueFull: "queue_full", DiscoveryError: "no_service",
    Cancelled: "cancelled", CodecError: "corrupt_message"}


def failure_reason(error: BaseException) -> str:
    """Why a call failed, as a short name: ``timeout`` (the request or its answer was lost, or
    came too late), ``queue_full``, ``no_service``, ``cancelled``, ``corrupt_message``, or
    ``refused`` (the service answered with an error)."""
    return next((reason for cls, reason in _REASONS.items() if isinstance(error, cls)), "refused")


def error_to_wire(error: BaseException) -> dict[str, str]:
    """The payload of an ERROR reply for ``error``."""
    name = type(error).__name__ if type(error).__name__ in _BY_NAME else "RemoteError"
    message = error.message if isinstance(error, HriError) else str(error)
    return {"type": name, "message": message}


def error_from_wire(payload: object) -> NetError:
    """The error an ERROR reply describes (a :class:`RemoteError` when it is malformed)."""
    if isinstance(payload, dict):
        cls = _BY_NAME.get(str(payload.get("type")), RemoteError)
        return cls(str(payload.get("message", "")))
    return RemoteError(f"malformed error reply: {payload!r}")
