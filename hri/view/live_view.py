"""The live 3D view of ``hri run --gui``: PyBullet's window, its camera, an overlay, and closing it.

:func:`connect` opens PyBullet's window (its own OpenGL renderer, so it needs a display;
Xvfb will do) and :class:`LiveView` keeps a text overlay up to date: simulated time, the
person's zone, the robot's velocity fraction and motion state.

Closing the window is a normal way to end a run. PyBullet's window does not take part in
the window manager's close protocol: the window manager (or ``xdotool windowkill``) cuts
its X connection, and Xlib's default handlers then end the whole process at once, before
statistics are written or message queues unlinked. So :func:`connect` installs X error
handlers that only note the loss (:func:`window_lost`); the simulation loop sees it and ends
the run cleanly. The PyBullet thread that met the error is parked, so PyBullet cannot be
shut down normally afterwards: the command line leaves with :func:`exit_after_lost_window`.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys
import threading
import time
from typing import TYPE_CHECKING

import pybullet as p

from hri.base.errors import HriError
from hri.base.quiet import silence_c_stdout_for_good

if TYPE_CHECKING:
    from hri.run.sim import RunView

OVERLAY_PERIOD_S = 0.1  # simulated seconds between overlay updates
WINDOW_OPTIONS = "--width=1280 --height=800"
GUI_TIMEOUT_S = 2.0  # a call waiting on the window's thread gives up after this once the window is gone

_lost = threading.Event()
_X_ERROR = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)
_X_IO_ERROR = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)


@_X_ERROR
def _on_x_error(display: int, event: int) -> int:
    _lost.set()  # a request on a window that is gone: the window was closed
    return 0


@_X_IO_ERROR
def _on_x_io_error(display: int) -> int:
    # The X connection is gone. Xlib exits the process when this handler returns, so this
    # (PyBullet's render) thread waits here for the process to end instead.
    _lost.set()
    while True:
        time.sleep(3600)


def _install_x_handlers() -> None:
    name = ctypes.util.find_library("X11") or "libX11.so.6"
    try:
        x11 = ctypes.CDLL(name)
    except OSError:
        return  # not X11 (macOS, Windows): PyBullet reports a closed window by disconnecting
    x11.XSetErrorHandler(_on_x_error)
    x11.XSetIOErrorHandler(_on_x_io_error)


def connect() -> int:
    """Open PyBullet's window; HriError when there is no display."""
    if sys.platform.startswith("linux") and not os.environ.get("DISPLAY"):
        raise HriError("--gui: no display (DISPLAY is not set; try xvfb-run, or --record for a video)")
    silence_c_stdout_for_good()
    client = p.connect(p.GUI, options=WINDOW_OPTIONS)
    if client < 0:
        raise HriError("--gui: cannot open PyBullet's window (no display?)")
    _install_x_handlers()
    p.setTimeOut(GUI_TIMEOUT_S, physicsClientId=client)
    p.configureDebugVisualizer(p.COV_ENABLE_GUI, 0, physicsClientId=client)  # no side panels
    p.configureDebugVisualizer(p.COV_ENABLE_SHADOWS, 0, physicsClientId=client)  # halves software GL
    return client


def window_lost() -> bool:
    """True once the window has been closed (its X connection or window is gone)."""
    return _lost.is_set()


def exit_after_lost_window(code: int) -> None:
    """End the process now if the window was closed (PyBullet cannot be shut down then)."""
    if window_lost():
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


class LiveView:
    """PyBullet's window for a run (a :class:`~hri.run.sim.Window`): opens it, frames the
    workcell and refreshes the overlay."""

    def __init__(self) -> None:
        self._text_id = -1
        self._every = 1
        self._anchor = (0.0, 0.0, 0.0)

    def connect(self) -> int:
        return connect()

    def lost(self) -> bool:
        return window_lost()

    def start(self, run: RunView) -> None:
        room = run.scenario.room
        sx, sy = room.size
        p.resetDebugVisualizerCamera(max(sx, sy) * 0.85, 35, -45, (sx / 2, sy / 2, 0.0),
                                     physicsClientId=run.client)
        self._anchor = (sx * 0.05, sy * 0.95, room.wall_height + 0.3)
        self._every = max(1, round(OVERLAY_PERIOD_S / run.dt))
        self._update(run)

    def after_step(self, run: RunView) -> None:
        run.place_riders()  # the window draws PyBullet's world as it goes
        if run.step_count % self._every == 0 and not window_lost():
            self._update(run)

    def finish(self, run: RunView) -> None:
        pass

    def _update(self, run: RunView) -> None:
        try:
            self._text_id = p.addUserDebugText("   ".join(run.status_lines()), self._anchor,
                                               textColorRGB=(0.05, 0.05, 0.05), textSize=1.4,
                                               replaceItemUniqueId=self._text_id, physicsClientId=run.client)
        except p.error:
            # timed out waiting for the window's thread: the window is gone, and from now on
            # any call on this client could wait for that thread for ever
            _lost.set()
