"""A screenshot of the live view (``hri run --gui``) under a virtual display, for the README.

    .venv/bin/python scripts/live_view_still.py docs/images/live_view.png --time 3

runs ``hri run coexistence --gui --realtime --seed 10`` on Xvfb, takes the picture ``--time``
seconds after the run has started (simulated = wall-clock seconds with ``--realtime``), then
closes the window.
Needs Xvfb and xdotool (``scripts/install-system-packages.sh``).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from virtual_display import VirtualDisplay, missing_tools, wait_for_run_queues  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--time", type=float, default=3.0, help="seconds into the run")
    parser.add_argument("--scenario", default="coexistence")
    parser.add_argument("--seed", type=int, default=10, help="seed 10: the person walks into the stop zone at once")
    args = parser.parse_args()
    if missing_tools():
        print(f"needs {', '.join(missing_tools())}: run scripts/install-system-packages.sh", file=sys.stderr)
        return 1
    hri = Path(sys.executable).parent / "hri"
    with VirtualDisplay() as display, tempfile.TemporaryDirectory() as runtime:
        os.chmod(runtime, 0o700)
        run = subprocess.Popen([str(hri), "run", args.scenario, "--gui", "--realtime", "--seed", str(args.seed),
                                "--duration", str(args.time + 30)], env={**display.env(), "XDG_RUNTIME_DIR": runtime},
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            window = display.window("Bullet")
            if window is None or not wait_for_run_queues(Path(runtime)):
                print("PyBullet's window or the run did not start", file=sys.stderr)
                return 1
            time.sleep(args.time)  # the run has started: simulated time keeps pace with --realtime
            from PIL import Image

            Image.fromarray(display.screenshot()).save(args.out)
            display.kill_window(window)
            run.wait(timeout=60)
        finally:
            if run.poll() is None:
                run.kill()
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
