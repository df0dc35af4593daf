"""``hri run --gui`` under a virtual display: the window shows the workcell, and closing it ends the run cleanly.

Skipped with a message where Xvfb or xdotool is missing; ``scripts/install-system-packages.sh``
(part of the README's test command, so of CI) installs them.
"""

import json
import os
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest
import zmq
from PIL import Image

from hri.base.mqueue import queue_exists
from test_cli import HRI, _one_error_line
from test_groot2_publisher import REQUEST
from test_groot2_run import _free_quad
from virtual_display import VirtualDisplay, missing_tools, wait_for_run_queues

needs_xvfb = pytest.mark.skipif(bool(missing_tools()),
                                reason=f"needs {' and '.join(missing_tools())} (scripts/install-system-packages.sh)")


def _warm_pixels(image: np.ndarray) -> float:
    """Share of orange-red pixels: the warning and stop zones on the floor (and the workbench)."""
    r, g, b = (image[..., i].astype(int) for i in range(3))
    return float(np.mean((r - b > 70) & (r > 140)))


def test_gui_without_display_is_one_clear_line() -> None:
    env = {k: v for k, v in os.environ.items() if k != "DISPLAY"}
    result = subprocess.run([HRI, "run", "coexistence", "--gui", "--duration", "1"], env=env,
                            capture_output=True, text=True, timeout=120)
    assert _one_error_line(result) == "--gui: no display (DISPLAY is not set; try xvfb-run, or --record for a video)"


def _wait_until_stepping(port: int, within_s: float = 300.0) -> None:
    """Return once the run steps: its Groot2 server (``--groot2``) is polled only after the
    trees tick, so an answer to STATUS with a ticked node comes from a run whose set-up is over
    and whose window has been framed. The picture cannot tell: the default view during the
    set-up already shows the zones, many colours and bodies appearing one after another, and a
    window closed then ends the run with exit 1 (``--gui: the window was closed while the run
    was being set up``)."""
    client = zmq.Context.instance().socket(zmq.REQ)
    client.setsockopt(zmq.LINGER, 0)
    client.connect(f"tcp://127.0.0.1:{port}")
    try:
        deadline = time.monotonic() + within_s
        while time.monotonic() < deadline:
            client.send(REQUEST.pack(2, ord("S"), 1))
            assert client.poll(round(1000 * max(0.0, deadline - time.monotonic()))), "the run never stepped"
            status = client.recv_multipart()[1]
            if any(status[i] for i in range(2, len(status), 3)):  # a node has ticked
                return
            time.sleep(0.2)
        raise AssertionError(f"no node ticked within {within_s:g} s")
    finally:
        client.close(0)


def _new_frames(display: VirtualDisplay, count: int = 2, within_s: float = 120.0) -> np.ndarray:
    """A screenshot after the picture has changed ``count`` times: frames drawn since now."""
    shot = display.screenshot()
    deadline = time.monotonic() + within_s
    while count and time.monotonic() < deadline:
        time.sleep(0.2)
        before, shot = shot, display.screenshot()
        count -= bool(np.mean(np.abs(shot.astype(int) - before.astype(int))) > 0.05)
    assert not count, f"the picture did not change within {within_s:g} s"
    return shot


@needs_xvfb
def test_gui_window_shows_the_workcell_and_closing_it_ends_the_run(tmp_path: Path) -> None:
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    out = tmp_path / "run"
    base = _free_quad()
    with VirtualDisplay() as display:
        env = {**display.env(), "XDG_RUNTIME_DIR": str(runtime), "PYTHONWARNINGS": "ignore"}
        process = subprocess.Popen([HRI, "run", "coexistence", "--gui", "--duration", "600", "--json",
                                    "--out", str(out), "--groot2", str(base)], env=env, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True)
        try:
            _wait_until_stepping(base)
            window = display.window("Bullet")
            assert window is not None, "PyBullet's window did not appear"
            queues = wait_for_run_queues(runtime)
            assert len(queues) == 2 and all(queue_exists(name) for name in queues)
            shot = _new_frames(display)
            Image.fromarray(shot).save(tmp_path / "screen.png")  # to look at when it fails
            assert shot.std() > 20, "the screen is blank"
            assert len(np.unique(shot.reshape(-1, 3)[::7], axis=0)) > 200, "too few colours for a 3D scene"
            assert _warm_pixels(shot) > 0.01, "no zones on the floor"
            display.kill_window(window)
            stdout, stderr = process.communicate(timeout=120)
        finally:
            if process.poll() is None:
                process.kill()
                process.communicate()
    assert process.returncode == 0, stderr
    assert "Traceback" not in stderr
    stats = json.loads(stdout)  # stdout holds the JSON only, none of PyBullet's chatter
    assert stats["complete"] is False and 0 < stats["sim_time_s"] < 600
    written = json.loads((out / "stats.json").read_text())
    assert written["complete"] is False and written["sim_time_s"] == stats["sim_time_s"]
    assert (out / "events.jsonl").read_text().rstrip().endswith('"complete": false}')
    assert not any(queue_exists(name) for name in queues)
    assert not list((runtime / "hri").glob("*.json"))
