"""The README's first picture, the ``two_workers`` workcell: its caption names the command that
makes it, the same as ``scripts/make-doc-images.sh`` runs, and what the caption says of that
moment holds in a run of the same scenario and seed (both people in the warning zone, the robot
at 10 %, the inspector checking the table, the worker entering the stop zone half a second
later and the robot stopping). The picture is small, as the README's others."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

from PIL import Image
from test_cli import hri

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
PICTURE = ROOT / "docs" / "images" / "two_workers.png"
COMMAND = r"python -m hri\.view\.snapshot (\S*)two_workers\.png --scenario two_workers --time ([0-9.]+) --seed (\d+)"


def _first_picture() -> tuple[str, str]:
    """The README's first image (its file) and the paragraph after it (its caption)."""
    found = re.search(r"!\[[^]]*\]\(([^)]+)\)\n\n(\*.*?\*)\n", README, re.DOTALL)
    assert found, "the README has no picture with a caption"
    return found[1], " ".join(found[2].split())


def _moment() -> tuple[float, int]:
    """The time and seed of the picture, as its caption and the script that made it say."""
    image, caption = _first_picture()
    assert image == "docs/images/two_workers.png"
    in_caption = re.search(COMMAND, caption)
    in_script = re.search(r"\$PY -m hri\.view\.snapshot \$IMG/two_workers\.png --scenario two_workers --time ([0-9.]+) "
                          r"--seed (\d+)\n", (ROOT / "scripts" / "make-doc-images.sh").read_text())
    assert in_caption and in_script
    assert in_caption.group(2, 3) == in_script.group(1, 2)
    time_s, seed = float(in_script[1]), int(in_script[2])
    assert f"{time_s:g} s into `hri run two_workers --seed {seed}`" in caption
    return time_s, seed


def test_the_caption_names_the_command_of_the_script_and_the_picture_is_small():
    _moment()
    with Image.open(PICTURE) as image:
        assert image.size == (960, 600)
    assert PICTURE.stat().st_size < 40_000


def test_the_run_at_the_pictures_moment_is_what_the_caption_says(tmp_path):
    at, seed = _moment()
    out = tmp_path / "run"
    result = hri("run", "two_workers", "--duration", f"{at + 1.0:g}", "--seed", str(seed), "--out", str(out), cwd=ROOT)
    assert result.returncode == 0, result.stderr
    with (out / "trajectory.csv").open() as rows:
        row = next(r for r in csv.DictReader(rows) if abs(float(r["t"]) - at) < 1e-9)
    assert row["person_worker_zone"] == row["person_inspector_zone"] == "warning"
    assert float(row["robot_velocity_fraction"]) == 0.1
    events = [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines()]

    def first(event: str, **fields) -> float:
        return next(e["t"] for e in events if e["event"] == event and all(e.get(k) == v for k, v in fields.items()))

    # the inspector checks the table (CheckPart: the arm stretched towards it) at that moment
    assert first("person_action_started", tree="inspector", node="CheckPart") < at
    assert first("person_action_finished", tree="inspector", node="CheckPart") > at
    # the worker walks on into the stop zone, half a second later, and the robot stops
    entered = first("zone_enter", zone="stop", person="worker")
    assert at < entered <= at + 0.6
    assert entered < first("protective_stop", person="worker") <= at + 1.0
