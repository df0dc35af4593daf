"""A virtual X display (Xvfb) for tests and picture scripts: start it, find a window, screenshot, close.

Needs Debian's ``xvfb`` and ``xdotool`` (``scripts/install-system-packages.sh`` installs
them); :func:`missing_tools` says what is missing so a test can skip with that message.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Iterator

import numpy as np

TOOLS = ("Xvfb", "xdotool")


def missing_tools() -> list[str]:
    return [tool for tool in TOOLS if shutil.which(tool) is None]


class VirtualDisplay:
    """``with VirtualDisplay() as display:`` starts Xvfb on a free display number (``display.name``)."""

    def __init__(self, width: int = 1280, height: int = 800) -> None:
        self.size = (width, height)
        self.name = ""
        self._process: subprocess.Popen | None = None

    def __enter__(self) -> "VirtualDisplay":
        read, write = os.pipe()
        width, height = self.size
        self._process = subprocess.Popen(
            ["Xvfb", "-displayfd", str(write), "-screen", "0", f"{width}x{height}x24", "-nolisten", "tcp"],
            pass_fds=(write,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(write)
        with os.fdopen(read) as pipe:
            number = pipe.readline().strip()  # Xvfb writes the display number once it is ready
        if not number:
            self._process.kill()
            raise RuntimeError("Xvfb did not start")
        self.name = f":{number}"
        return self

    def __exit__(self, *exc: object) -> None:
        if self._process is not None:
            self._process.terminate()
            self._process.wait(timeout=10)

    def env(self) -> dict[str, str]:
        return {**os.environ, "DISPLAY": self.name}

    def window(self, title: str, timeout_s: float = 60.0) -> str | None:
        """The id of the first window whose title contains ``title``, waiting for it to appear."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            found = subprocess.run(["xdotool", "search", "--name", title], capture_output=True, text=True,
                                   env=self.env())
            ids = found.stdout.split()
            if ids:
                return ids[0]
            time.sleep(0.5)
        return None

    def screenshot(self) -> np.ndarray:
        """The whole screen as an RGB array (height x width x 3)."""
        from PIL import ImageGrab

        return np.asarray(ImageGrab.grab(xdisplay=self.name).convert("RGB"))

    def screenshots(self, period_s: float = 1.0) -> Iterator[np.ndarray]:
        while True:
            yield self.screenshot()
            time.sleep(period_s)

    def kill_window(self, window: str) -> None:
        """Close ``window`` the way a window manager does for a window without WM_DELETE_WINDOW."""
        subprocess.run(["xdotool", "windowkill", window], check=True, env=self.env())


def wait_for_run_queues(runtime: Path, timeout_s: float = 60.0) -> list[str]:
    """The queue names in the registry under ``runtime`` (a run's ``XDG_RUNTIME_DIR``) once a
    run has both. They are made part-way through the set-up: the run is not stepping yet."""
    deadline = time.monotonic() + timeout_s
    names: list[str] = []
    while time.monotonic() < deadline and len(names) < 2:
        time.sleep(0.2)
        names = [n for record in (runtime / "hri").glob("*.json") for n in json.loads(record.read_text())["queues"]]
    return names
