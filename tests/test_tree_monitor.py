"""Tree monitoring: node statuses recorded as change events (``TreeStatusLog``), replayed
(``statuses_at``), drawn from a run (``hri render --run --at``) and shown live
(``hri run --show-trees``)."""

import io
import json
import shutil
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from bt_harness import Harness
from rich.console import Console
from test_cli import _one_error_line, hri

from hri.bt import Blackboard, TreeContext, default_registry, load_tree
from hri.bt.render import build_draw_tree, render_file
from hri.bt.status import IDLE, IDLE_FROM, STATUS_COLOURS, STATUS_NAMES, NodeState, TreeStatusLog, preorder, statuses_at
from hri.view.terminal_view import CHECK_EVERY_STEPS, TreeView, TreesView, visible_lines
from hri.bt.xml_loader import load_document
from hri.base.errors import HriError, shown_path

ROOT = Path(__file__).parent.parent
TREES = ROOT / "trees"
ROBOT_XML = str(TREES / "coexistence_robot.xml")
STATUSES = ("RUNNING", "SUCCESS", "FAILURE", IDLE)


class Recorder:
    """Collects what ``EventLog.emit`` would write."""

    def __init__(self) -> None:
        self.events: list[dict] = []

    def __call__(self, t: float, event: str, **fields) -> None:
        self.events.append({"t": t, "event": event, **fields})


def _draw_preorder(node, depth=0):
    yield depth, node
    for child in node.children:
        yield from _draw_preorder(child, depth + 1)


# --- TreeStatusLog and statuses_at ---------------------------------------------------------------

SMALL_TREE = """<Sequence>
  <Fake id="a" ticks="1"/>
  <Fallback>
    <Cond id="c" ok="false"/>
    <Fake id="b" ticks="2"/>
  </Fallback>
</Sequence>"""


def test_status_log_emits_exactly_the_transitions_and_replays_them(tmp_path):
    harness = Harness(tmp_path, SMALL_TREE)
    log = TreeStatusLog("T", harness.root, str(tmp_path / "tree.xml"))
    emit = Recorder()
    log.start(0.0, emit)
    assert emit.events == [{"t": 0.0, "event": "tree_nodes", "tree": "T", "file": str(tmp_path / "tree.xml"),
                            "nodes": ["Sequence", "Fake", "Fallback", "Cond", "Fake"]}]
    nodes = [node for _, node in preorder(harness.root)]
    before = [IDLE] * len(nodes)
    snapshots = []
    for tick in range(1, 11):
        t = tick * 0.05
        count = len(emit.events)
        harness.tick(t)
        log.record(t, emit)
        after = [STATUS_NAMES[node.status] for node in nodes]
        expected = {str(i): s for i, (s, old) in enumerate(zip(after, before)) if s != old}
        new = emit.events[count:]
        if expected:
            assert new == [{"t": t, "event": "tree_status", "tree": "T", "changes": expected}]
        else:
            assert new == []
        assert [state.status for state in log.current()] == after
        snapshots.append((t, after))
        before = after
    # the first two ticks by hand: a runs one tick, then the Fallback's condition fails and b runs
    assert emit.events[1]["changes"] == {"0": "RUNNING", "1": "RUNNING"}
    assert emit.events[2]["changes"] == {"1": "SUCCESS", "2": "RUNNING", "3": "FAILURE", "4": "RUNNING"}
    # the Sequence finished and, as in BehaviorTree.CPP, the tree was made IDLE again at once
    assert any(e["changes"].get("0") == "IDLE" for e in emit.events[2:])
    assert statuses_at(emit.events, "T", 0.0)[1] == [IDLE] * 5
    for t, statuses in snapshots:
        assert statuses_at(emit.events, "T", t)[1] == statuses
        assert statuses_at(emit.events, "T", t + 0.02)[1] == statuses  # between ticks: the last tick's
    assert [(s.depth, s.node_id) for s in log.current()] == [(0, "Sequence"), (1, "Fake"), (1, "Fallback"),
                                                             (2, "Cond"), (2, "Fake")]
    with pytest.raises(KeyError):
        statuses_at(emit.events, "other", 1.0)


def _shipped_trees() -> list[tuple[str, str | None]]:
    cases = []
    for path in sorted([*TREES.glob("*.xml"), *TREES.glob("*.yaml")]):
        root, trees, _ = load_document(str(path))
        main = root.attrib.get("main_tree_to_execute") if root is not None else None
        cases += [(path.name, None)] if main else [(path.name, tree_id) for tree_id in sorted(trees)]
    return cases


@pytest.mark.parametrize("name,tree_id", _shipped_trees())
def test_drawn_preorder_matches_the_legend_of_the_built_tree(name, tree_id):
    registry = default_registry()
    path = str(TREES / name)
    ctx = TreeContext(rng=np.random.default_rng(0), now=lambda: 0.0)
    log = TreeStatusLog("t", load_tree(path, registry, ctx, Blackboard(), tree_id).root, path)
    emit = Recorder()
    log.start(0.0, emit)
    legend = emit.events[0]["nodes"]
    _, root = build_draw_tree(path, registry, tree_id, expand=True)
    drawn = list(_draw_preorder(root))
    assert len(drawn) == len(legend)
    for (depth, node), recorded, state in zip(drawn, legend, log.current()):
        assert recorded == node.node_id == state.node_id  # as written, aliases (AmICalled) too
        assert depth == state.depth


# --- a real run: events, hri render --run --at ----------------------------------------------------

@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("run") / "run"
    result = hri("run", "coexistence", "--duration", "20", "--out", str(out))
    assert result.returncode == 0, result.stderr
    return out


def _events(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "events.jsonl").read_text().splitlines()]


def test_run_records_legends_and_status_changes(run_dir):
    events = _events(run_dir)
    legends = {e["tree"]: e for e in events if e["event"] == "tree_nodes"}
    assert set(legends) == {"person", "robot"}
    assert Path(legends["robot"]["file"]).name == "coexistence_robot.xml"  # the checkout's or the installed one
    assert Path(legends["person"]["file"]).name == "coexistence_person.xml"
    for tree in ("person", "robot"):
        changes = [e for e in events if e["event"] == "tree_status" and e["tree"] == tree]
        assert len(changes) > 3
        assert all(set(e["changes"].values()) <= set(STATUSES) for e in changes)
        assert all(0 <= int(i) < len(legends[tree]["nodes"]) for e in changes for i in e["changes"])
    _, robot = statuses_at(events, "robot", 10.0)
    assert robot[0] == "RUNNING"  # the robot's root runs all the time


def _status_column(text: str) -> list[str]:
    """The statuses of ``hri render --at``'s text, with what the tick made IDLE (IDLE_FROM_...,
    tests/test_render_faded.py) as IDLE: what ``statuses_at`` replays from the events."""
    shown = (*STATUSES, *IDLE_FROM.values())
    column = [line.split()[0] for line in text.splitlines() if line.split() and line.split()[0] in shown]
    return [IDLE if status in IDLE_FROM.values() else status for status in column]


def test_render_text_shows_the_statuses_at_that_time(run_dir):
    result = hri("render", ROBOT_XML, "--run", str(run_dir), "--at", "10")
    assert result.returncode == 0, result.stderr
    _, expected = statuses_at(_events(run_dir), "robot", 10.0)
    assert _status_column(result.stdout) == expected
    assert "robot tree at t = 10 s" in result.stdout.splitlines()[1]
    collapsed = render_file(ROBOT_XML, default_registry(), None, run=run_dir, at=10.0, expand=False)
    assert "Inverter" not in collapsed
    assert _status_column(collapsed) == expected[:2] + expected[9:]  # AdaptToPerson's 7 nodes folded


def test_render_picture_and_dot_from_a_run(run_dir, tmp_path):
    out = tmp_path / "robot.png"
    result = hri("render", ROBOT_XML, "--run", str(run_dir), "--at", "10", "-o", str(out))
    assert result.returncode == 0, result.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 1000
    dot = tmp_path / "robot.dot"
    render_file(ROBOT_XML, default_registry(), str(dot), run=run_dir, at=10.0)
    text = dot.read_text()
    assert f'fillcolor="{STATUS_COLOURS["RUNNING"]}"' in text and "t = 10 s" in text


def test_render_from_a_run_accepts_the_yaml_twin(run_dir):
    text = render_file(str(TREES / "coexistence_robot.yaml"), default_registry(), run=run_dir, at=5.0)
    assert _status_column(text) == statuses_at(_events(run_dir), "robot", 5.0)[1]


def test_render_refuses_a_changed_tree_file(run_dir, tmp_path):
    for name in ("coexistence_robot.xml", "robot_subtrees.xml"):
        shutil.copy(TREES / name, tmp_path / name)
    tree = tmp_path / "coexistence_robot.xml"
    run = tmp_path / "run"
    run.mkdir()
    lines = [json.dumps({**e, "file": str(tree)} if e["event"] == "tree_nodes" and e["tree"] == "robot" else e)
             for e in _events(run_dir)]
    (run / "events.jsonl").write_text("\n".join(lines) + "\n")
    assert _status_column(render_file(str(tree), default_registry(), run=run, at=10.0))  # unchanged: fine
    tree.write_text(tree.read_text().replace('<RobotMove name="MoveToPlace"', '<Sleep msec="1" name="MoveToPlace"'))
    with pytest.raises(HriError, match="node 16 is Sleep here, RobotMove in the run's robot tree: the tree file"):
        render_file(str(tree), default_registry(), run=run, at=10.0)


def test_render_run_errors_are_one_line(run_dir, tmp_path):
    other = TREES / "collaboration_robot.xml"
    error = _one_error_line(hri("render", str(other), "--run", str(run_dir), "--at", "10"))
    shown = shown_path(other)  # hri() runs in this folder: the form the command uses
    assert error.startswith(f"{shown}: the run has no tree from this file") and "coexistence_robot.xml" in error
    assert _one_error_line(hri("render", ROBOT_XML, "--run", str(tmp_path / "none"), "--at", "1")).endswith(
        "no such run directory")
    cases = {  # the same errors, without starting a process for each
        (tmp_path, 1.0): "no events.jsonl here",
        (run_dir, -1.0): "--at: must be a time in seconds >= 0, got -1",
        (run_dir, 20.5): "--at 20.5: the run ended at 20 s",
    }
    for (run, at), message in cases.items():
        with pytest.raises(HriError) as err:
            render_file(ROBOT_XML, default_registry(), run=run, at=at)
        assert message in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(HriError, match="main tree only"):
        render_file(ROBOT_XML, default_registry(), tree_id="AdaptToPerson", run=run_dir, at=1.0)
    assert "give both" in _one_error_line(hri("render", ROBOT_XML, "--run", str(run_dir)))


# --- hri run --show-trees ------------------------------------------------------------------------

def _state(depth: int, status: str, node_id: str = "Sequence", name: str = "") -> NodeState:
    return NodeState(depth, node_id, name or node_id, status)


ROBOT_STATES = [
    _state(0, "RUNNING", "ReactiveSequence", "SafetyZones"),
    _state(1, "SUCCESS", "SubTree AdaptToPerson", "AdaptToPerson"),
    _state(2, "SUCCESS", "Sequence", "AdaptToPerson"),
    _state(3, "FAILURE", "InAreaTest"),
    _state(3, "IDLE", "SetRobotVelocity", "Reduced"),
    _state(1, "RUNNING", "InterruptableSequence", "MoveObject"),
    _state(2, "SUCCESS", "GenerateXYPose"),
    _state(2, "RUNNING", "RobotMove", "MoveToPick"),
    _state(2, "IDLE", "RobotMove", "MoveToPlace"),
]


def _render(view: TreesView, width: int = 80) -> str:
    console = Console(record=True, width=width, file=io.StringIO(), color_system=None)
    console.print(view)
    return console.export_text()


def test_visible_lines_hide_idle_nodes_and_fold_finished_branches():
    assert [line.index for line in visible_lines(ROBOT_STATES)] == [0, 1, 2, 3, 5, 6, 7]
    idle_parent = [_state(0, "IDLE"), _state(1, "SUCCESS", "AlwaysSuccess")]
    assert [line.index for line in visible_lines(idle_parent)] == [0, 1]  # kept for the structure
    folded = visible_lines(ROBOT_STATES, max_lines=5)  # the innermost finished branch goes first
    assert [(line.index, line.folded) for line in folded] == [(0, 0), (1, 2), (5, 0), (6, 0), (7, 0)]
    assert visible_lines(ROBOT_STATES, max_lines=1)[-1].index == 7  # RUNNING nodes are never folded


def test_trees_view_text():
    text = _render(TreesView(12.5, {"person": [_state(0, "RUNNING", "ActorMovement", "WalkToBench")],
                                    "robot": ROBOT_STATES}))
    assert "t = 12.50 s" in text.splitlines()[0]
    assert "▶ SafetyZones ReactiveSequence" in text and "✔ AdaptToPerson SubTree" in text
    assert "✘ InAreaTest" in text and "▶ MoveToPick RobotMove" in text and "MoveToPlace" not in text
    assert "2 idle hidden" in text and "0 idle hidden" in text
    person_line = next(line for line in text.splitlines() if "WalkToBench" in line)
    assert "SafetyZones" in person_line  # side by side on 80 columns
    stacked = _render(TreesView(1.0, {"person": ROBOT_STATES, "robot": ROBOT_STATES}), width=50)
    assert not any(line.count("SafetyZones") == 2 for line in stacked.splitlines())
    short = _render(TreesView(1.0, {"person": ROBOT_STATES, "robot": ROBOT_STATES}, height=10))
    assert len(short.splitlines()) <= 10 and "+N folded" in short


class FakeSim:
    """What TreeView reads of a Simulation."""

    def __init__(self) -> None:
        self.step_count = 0
        self.scenario = SimpleNamespace(name="fake")
        self.status_logs = {"robot": SimpleNamespace(current=lambda: ROBOT_STATES)}

    def now(self) -> float:
        return self.step_count / 240


def test_tree_view_redraws_on_a_terminal_and_stops_cleanly():
    out = io.StringIO()
    view = TreeView(Console(file=out, force_terminal=True, width=80, height=24), refresh_s=0.0)
    sim = FakeSim()
    view.finish(sim)  # before start: nothing to stop
    view.start(sim)
    for _ in range(48):
        sim.step_count += 1
        view.after_step(sim)  # looks at the clock every CHECK_EVERY_STEPS steps only
    view.finish(sim)
    view.finish(sim)
    text = out.getvalue()
    assert text.count("fake   t = ") == 1 + 48 // CHECK_EVERY_STEPS + 1  # start, 2 redraws, the end
    assert "t = 0.20 s" in text and text.endswith("\x1b[?25h")  # the cursor is back


def test_show_trees_keeps_stdout_json():
    result = hri("run", "coexistence", "--duration", "5", "--show-trees", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["sim_time_s"] == pytest.approx(5.0)
    # stderr is no terminal here: the final view, printed once
    assert result.stderr.count("t = 5.00 s") == 1 and result.stderr.endswith("╯\n")
    assert "person" in result.stderr and "robot" in result.stderr
    assert "▶ SafetyZones ReactiveSequence" in result.stderr and "running" in result.stderr
