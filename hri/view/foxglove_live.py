"""The run live in Foxglove: ``hri run SCENARIO --foxglove [PORT]``.

:class:`LiveServer` is a sink of the run's channels (:class:`hri.view.mcap_file.ChannelPublisher`):
Foxglove's own WebSocket server (``foxglove.start_server``, the Foxglove WebSocket protocol)
on the same context as the MCAP file, so that Foxglove connected to ``ws://HOST:PORT`` sees
the messages the file gets, while the run goes. It listens on 127.0.0.1 unless told.

The server sends a channel's messages only to the clients subscribed to it, and the publisher
builds no message that no sink takes: with nobody connected, a run costs almost nothing more.
The server runs in threads of its own; a client that disconnects, is slow (its oldest
messages are dropped) or sends garbage does not reach the run, nor its terminal: what the SDK
logs about clients while the server runs (a connection that is no Foxglove client is dropped,
logged as an error) is counted, and said in one line when the server stops. The port is
checked when the option is read, before the run starts, and the server is stopped with the
run, however the run ends.
"""

from __future__ import annotations

import errno
import logging
import socket
import sys
from typing import Callable

import foxglove
from foxglove.websocket import ChannelView, Client, ServerListener

from hri.base.errors import HriError

DEFAULT_HOST = "127.0.0.1"
NAME = "hri"
#: the SDK's logger of its WebSocket server and clients (its Rust side logs through Python's)
SDK_LOGGER = "foxglove.websocket"


def check_port(host: str, port: int, option: str = "--foxglove") -> None:
    """One line when ``port`` on ``host`` cannot be listened on (in use, not an address of
    this machine), before anything starts. Binds as the server does (address reuse on, so a
    port left in TIME_WAIT by a finished run is not refused)."""
    if not 0 <= port <= 65535:
        raise HriError(f"{option} {port}: not a port (1-65535)")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as err:
            what = "in use" if err.errno == errno.EADDRINUSE else (err.strerror or str(err))
            raise HriError(f"{option} {port}: cannot listen on {host}:{port}: {what}") from None


class _Subscriptions(ServerListener):
    """Tells the publisher when a client subscribes to /scene (sent once at the start, so a
    client that connects later would have no scene)."""

    def __init__(self, scene_wanted: Callable[[], None]) -> None:
        self._scene_wanted = scene_wanted

    def on_subscribe(self, client: Client, channel: ChannelView) -> None:
        if channel.topic == "/scene":
            self._scene_wanted()


class ClientLog(logging.Handler):
    """What the SDK logs of its clients while a server runs, kept from the run's terminal:
    the warnings and errors counted, the last one kept."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0
        self.last = ""

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1
        self.last = record.getMessage()

    def attach(self) -> None:
        logger = logging.getLogger(SDK_LOGGER)
        logger.addHandler(self)
        self._propagate, logger.propagate = logger.propagate, False

    def detach(self) -> str | None:
        """Stop taking the SDK's lines; the one line that says what was taken (None: nothing)."""
        logger = logging.getLogger(SDK_LOGGER)
        logger.removeHandler(self)
        logger.propagate = self._propagate
        if not self.count:
            return None
        return f"Foxglove: {self.count} client problem{'s' if self.count > 1 else ''} while the run went (the last: {self.last})"


class LiveServer:
    """Foxglove's WebSocket server as a sink of the run's channels (see the module docstring)."""

    def __init__(self, port: int, host: str | None = None, option: str = "--foxglove") -> None:
        # port 0: any free port (tests), the one taken in .port once open
        self.host = host or DEFAULT_HOST
        self.port = port
        self.option = option
        check_port(self.host, port, option)
        self._server: foxglove.WebSocketServer | None = None
        self._log = ClientLog()

    def open(self, context: foxglove.Context, scene_wanted: Callable[[], None]) -> None:
        """Start the server on ``context``; ``scene_wanted`` is called (from the server's
        thread) when a client subscribes to /scene."""
        self._log.attach()
        try:
            self._server = foxglove.start_server(name=NAME, host=self.host, port=self.port, context=context,
                                                 server_listener=_Subscriptions(scene_wanted))
        except RuntimeError as err:  # the port taken since it was checked
            self._log.detach()
            raise HriError(f"{self.option} {self.port}: cannot listen on {self.host}:{self.port}: {err}") from None
        self.port = self._server.port

    def url(self) -> str:
        return f"ws://{self.host}:{self.port}"

    def close(self) -> None:
        """Stop the server: its socket closed, its clients disconnected."""
        server, self._server = self._server, None
        if server is not None:
            try:
                server.stop()
            finally:
                said = self._log.detach()
                if said is not None:
                    print(said, file=sys.stderr)

    discard = close
