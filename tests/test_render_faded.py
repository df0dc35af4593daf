"""What a tick made IDLE again, drawn faded with the status it had in it (Groot2's
``IDLE_FROM_SUCCESS``, ...): ``hri.bt.status.with_tick`` and ``tick_records``, the live view
(``TreeStatusLog``, ``hri run --show-trees``), ``hri render --run --at``; and the README's tree
picture, which shows coloured nodes at the time its caption says."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import matplotlib.image
import numpy as np
import pytest
from bt_harness import Harness
from test_cli import hri

from hri.bt.loggers.btlog_reader import read_btlog
from hri.bt.loggers.transitions import TransitionRecorder
from hri.bt.status import IDLE, IDLE_FROM, STATUS_COLOURS, TreeStatusLog, tick_records, with_tick

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
PICTURE = ROOT / "docs" / "images" / "tree_status_robot.png"
ROBOT_XML = "trees/coexistence_robot.xml"

# A ReactiveSequence ticks its check every tick and makes it IDLE again when the next child
# answers RUNNING, as BehaviorTree.CPP's does: after the tick the check is IDLE.
REACTIVE = """<ReactiveSequence>
  <Cond id="check" ok="true"/>
  <Fake id="work" ticks="2"/>
</ReactiveSequence>"""


def _records(stamp_us: int, *transitions: tuple[int, int]) -> bytes:
    """``.btlog`` records of ``(uid, NodeStatus code)`` at one time."""
    return b"".join(stamp_us.to_bytes(6, "little") + uid.to_bytes(2, "little") + bytes([code])
                    for uid, code in transitions)


def _ticks(harness: Harness, count: int) -> list[list[str]]:
    """What the live view shows after each of ``count`` ticks, 0.05 s apart: the tree's
    transitions go to its status log as the simulation hands them over."""
    recorder = TransitionRecorder(harness.root)
    log = TreeStatusLog("T", harness.root, "tree.xml")
    shown = []
    for tick in range(1, count + 1):
        t = tick * 0.05
        recorder.set_time(t)
        harness.tree.tick_once()
        log.record(t, lambda *args, **fields: None)
        log.observe(recorder.take())
        log.ticked(t)
        shown.append([state.status for state in log.current()])
    return shown


def test_a_node_reset_within_the_tick_shows_its_last_status_of_the_tick(tmp_path):
    shown = _ticks(Harness(tmp_path, REACTIVE), 4)
    # the check ran and succeeded, then its parent reset it: IDLE, shown as IDLE_FROM_SUCCESS
    assert shown[0] == ["RUNNING", IDLE_FROM["SUCCESS"], "RUNNING"]
    assert shown[1] == ["RUNNING", IDLE_FROM["SUCCESS"], "RUNNING"]
    # the work finished: the whole tree succeeded and was made IDLE again at the end of the tick
    assert shown[2] == [IDLE_FROM["SUCCESS"]] * 3
    assert shown[3] == ["RUNNING", IDLE_FROM["SUCCESS"], "RUNNING"]  # started anew


def test_a_tick_that_changed_nothing_shows_no_faded_status(tmp_path):
    harness = Harness(tmp_path, """<Sequence>
  <Fallback><Cond id="c" ok="false"/><Fake id="a"/></Fallback>
  <Fake id="b" ticks="5"/>
</Sequence>""")
    shown = _ticks(harness, 2)
    # the Fallback finished and reset its children in the first tick
    assert shown[0] == ["RUNNING", "SUCCESS", IDLE_FROM["FAILURE"], IDLE_FROM["SUCCESS"], "RUNNING"]
    # the second tick only ticked b, still RUNNING: no transition, nothing faded
    assert shown[1] == ["RUNNING", "SUCCESS", IDLE, IDLE, "RUNNING"]
    assert with_tick([IDLE, IDLE], b"") == [IDLE, IDLE]


def test_with_tick_takes_the_last_status_before_the_reset_and_refuses_unknown_nodes():
    # node 1: RUNNING, SUCCESS, IDLE; node 2: FAILURE, IDLE, RUNNING (restarted: not faded); node 3 halted
    records = _records(50_000, (1, 1), (1, 2), (1, 0), (2, 3), (2, 0), (2, 1), (3, 0))
    assert with_tick([IDLE, "RUNNING", IDLE], records) == [IDLE_FROM["SUCCESS"], "RUNNING", IDLE]
    assert with_tick([IDLE], _records(0, (1, 1), (1, 0))) == [IDLE_FROM["RUNNING"]]
    with pytest.raises(ValueError, match="UID 4, of 3 nodes"):
        with_tick([IDLE] * 3, _records(0, (4, 2)))


def test_tick_records_are_those_of_the_last_tick_at_or_before_the_time():
    period, end = 50_000, 10_000_000
    records = _records(1_000_000, (1, 2), (1, 0)) + _records(1_050_000, (2, 1))
    second = _records(1_050_000, (2, 1))
    assert tick_records(records, 1_050_000, period, end) == second
    assert tick_records(records, 1_099_999, period, end) == second  # before the next tick
    assert tick_records(records, 1_100_000, period, end) == b""  # a later tick changed nothing
    assert tick_records(records, 1_049_999, period, end) == _records(1_000_000, (1, 2), (1, 0))
    assert tick_records(records, 999_999, period, end) == b""
    # no tick at the run's end: its last tick is the one before
    assert tick_records(records, 1_100_000, period, 1_100_000) == second


# --- a real run -----------------------------------------------------------------------------------

def _readme_time() -> float:
    """The time of the README's tree picture, as its caption says it (and the same in its
    command and in scripts/make-doc-images.sh, which made it)."""
    caption = re.search(r"!\[the robot tree at ([0-9.]+) s of the run[^]]*\]\(docs/images/tree_status_robot\.png\)",
                        README)
    command = re.search(r"hri render trees/coexistence_robot\.xml --run runs/seed10 --at ([0-9.]+) -o robot\.png",
                        README)
    script = re.search(r'--run "\$RUN" --at ([0-9.]+) -o \$IMG/tree_status_robot\.png',
                       (ROOT / "scripts" / "make-doc-images.sh").read_text())
    assert caption and command and script
    assert caption[1] == command[1] == script[1]
    return float(caption[1])


@pytest.fixture(scope="module")
def seed10(tmp_path_factory) -> Path:
    """The README's run (seed 10), as long as the picture needs: the first seconds of a seeded
    run are the same whatever its duration."""
    out = tmp_path_factory.mktemp("faded") / "seed10"
    duration = str(_readme_time() + 1.0)
    result = hri("run", "coexistence", "--duration", duration, "--seed", "10", "--out", str(out), cwd=ROOT)
    assert result.returncode == 0, result.stderr
    return out


def _column(text: str) -> list[str]:
    names = {"RUNNING", "SUCCESS", "FAILURE", IDLE, *IDLE_FROM.values()}
    return [line.split()[0] for line in text.splitlines() if line.split() and line.split()[0] in names]


def test_render_at_the_readme_time_shows_the_tick_faded(seed10):
    at = _readme_time()
    result = hri("render", ROBOT_XML, "--run", str(seed10), "--at", f"{at:g}", cwd=ROOT)
    assert result.returncode == 0, result.stderr
    column = _column(result.stdout)
    # the person is in the stop zone: in the tick the check of the stop zone fails, with it the
    # ReactiveSequence, and the tree is made IDLE again; the move, halted earlier, stays IDLE
    assert column[:5] == [IDLE_FROM["FAILURE"]] * 4 + [IDLE_FROM["SUCCESS"]]
    assert column[5:] == [IDLE] * 11
    # the same statuses, by the transitions of that tick in the .btlog, read here by hand
    tick = [t for t in read_btlog(seed10 / "robot.btlog").transitions if t.time_us == round(at * 1e6)]
    last = {t.uid - 1: t.status for t in tick if t.status != IDLE}
    assert [IDLE_FROM[last[i]] if i in last else IDLE for i in range(16)] == column


def test_the_readme_picture_shows_coloured_nodes_at_its_caption_time(seed10, tmp_path):
    """The picture made by the caption's command has the colours of the statuses that command
    gives now, and not only IDLE's grey."""
    at = _readme_time()
    statuses = set(_column(hri("render", ROBOT_XML, "--run", str(seed10), "--at", f"{at:g}", cwd=ROOT).stdout))
    assert statuses - {IDLE}
    pixels = {tuple(int(round(c * 255)) for c in pixel[:3])
              for pixel in matplotlib.image.imread(PICTURE).reshape(-1, 4)}
    for status in statuses:
        colour = STATUS_COLOURS[status]
        assert tuple(int(colour[i:i + 2], 16) for i in (1, 3, 5)) in pixels, status
    assert PICTURE.stat().st_size < 200_000
    dot = tmp_path / "robot.dot"
    assert hri("render", ROBOT_XML, "--run", str(seed10), "--at", f"{at:g}", "-o", str(dot), cwd=ROOT).returncode == 0
    assert f'fillcolor="{STATUS_COLOURS[IDLE_FROM["FAILURE"]]}"' in dot.read_text()


def test_the_live_view_shows_what_the_tick_made_idle():
    """--show-trees records the trees' transitions for itself (no --out here)."""
    result = hri("run", "coexistence", "--duration", "4.5", "--seed", "10", "--show-trees", cwd=ROOT)
    assert result.returncode == 0, result.stderr
    view = result.stderr
    assert "·✘ SafetyZones ReactiveSequence" in view and "·✔ InAreaTest" in view
    assert "·✔ reset" in view.splitlines()[0]  # the legend


def test_render_without_the_runs_tree_period_shows_the_statuses_unfaded(seed10, tmp_path):
    """A run folder whose scenario.yaml leads out of it: the statuses of the events, one warning."""
    run = tmp_path / "run"
    shutil.copytree(seed10, run)
    (run / "scenario.yaml").unlink()
    (run / "scenario.yaml").symlink_to(seed10 / "scenario.yaml")
    result = hri("render", ROBOT_XML, "--run", str(run), "--at", f"{_readme_time():g}", cwd=ROOT)
    assert result.returncode == 0
    assert result.stderr.splitlines() == [f"hri render: {run / 'scenario.yaml'} leads out of the folder "
                                          "(through a symlink): what the tick made IDLE is not shown"]
    assert set(_column(result.stdout)) == {IDLE}
