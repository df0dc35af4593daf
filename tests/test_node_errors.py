"""An exception inside a node (a plug-in's bug) ends the command with one line, not a traceback.

Raised while the node ticks, the line names the node's file and line, its type and name, the
simulated time and the exception; with ``--out`` the traceback is kept in the run directory
(``traceback.txt``), beside the run's files marked ``complete: false`` with the line as
``error`` (and a ``run_error`` event). Raised by the node's constructor, the line names the
node, its file and line and the exception, in ``hri validate``, ``hri run`` (``--split`` too)
and ``hri batch`` alike: refused as the tree loads, the traceback goes to a new file in the
temporary folder (no run folder is made for a refused run); built in a run (a node that fails
only then), to the run's folder as a tick's does. The bad-input corpus has the lines of
``validate`` and ``run`` (tests/bad_inputs, ``scenario_plugin_*``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from hri.bt import Blackboard, TreeContext, default_registry, load_tree_text
from hri.bt.node import NodeExecutionError

EXAMPLE = Path(__file__).parent.parent / "docs" / "examples" / "btcpp_tutorial"
HRI = shutil.which("hri") or str(Path(sys.executable).parent / "hri")
BOOM = '''
from py_trees.common import Status

from hri.bt import BTNode


class Boom(BTNode):
    """Divides by zero on its third tick."""

    count = 0

    def update(self):
        self.count += 1
        return Status.SUCCESS if self.count < 3 else Status(1 // 0)


def register_nodes(registry):
    registry.register("Boom", Boom, "action")
'''


def test_an_exception_in_a_node_names_the_node_and_keeps_the_traceback(tmp_path):
    registry = default_registry()
    namespace: dict = {}
    exec(compile(BOOM, "boom.py", "exec"), namespace)
    namespace["register_nodes"](registry)
    clock = [0.0]
    ctx = TreeContext(rng=np.random.default_rng(0), now=lambda: clock[0])
    tree = load_tree_text('<root BTCPP_format="4">\n<BehaviorTree ID="T">\n<Sequence>\n'
                          '<Boom name="Fuse"/>\n</Sequence>\n</BehaviorTree>\n</root>', registry, ctx,
                          Blackboard(), file="t.xml")
    tree.tick_once()
    tree.tick_once()
    clock[0] = 1.25
    with pytest.raises(NodeExecutionError) as info:
        tree.tick_once()
    assert str(info.value) == "t.xml:4: Boom 'Fuse' raised ZeroDivisionError: integer division or modulo by zero at t = 1.250 s"
    assert 'File "boom.py", line 14, in update' in info.value.traceback


def _scenario_with(tmp_path: Path, plugin: str, node: str) -> tuple[Path, Path]:
    """The tutorial's scenario with the plug-in ``plugin`` (its source) and ``node`` first in
    the robot's tree: (scenario, robot's tree)."""
    folder = tmp_path / "scenario"
    shutil.copytree(EXAMPLE, folder)
    (folder / "boom.py").write_text(plugin)
    robot = folder / "robot.xml"
    robot.write_text(robot.read_text()
                     .replace("../../../trees/", str(EXAMPLE.parent.parent.parent / "trees") + "/")
                     .replace('<RunOnce name="StartCounting">', f'{node}\n        <RunOnce name="StartCounting">'))
    person = folder / "person.xml"
    person.write_text(person.read_text().replace("../../../trees/", str(EXAMPLE.parent.parent.parent / "trees") + "/"))
    scenario = folder / "scripted_shift.yaml"
    scenario.write_text(scenario.read_text().replace("plugins: [shelf_sections.py]", "plugins: [shelf_sections.py, boom.py]"))
    return scenario, robot


def _hri(*args: str, tmpdir: Path | None = None) -> tuple[int, str]:
    """Exit code and the one line on stderr (asserted: one, no traceback)."""
    temporary = {"TMPDIR": str(tmpdir)} if tmpdir is not None else {}
    result = subprocess.run([HRI, *args], capture_output=True, text=True, timeout=300,
                            env={**os.environ, "PYTHONWARNINGS": "ignore", **temporary})
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode != 0 and len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    return result.returncode, lines[0]


def _line_of(path: Path, text: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if text in line)


@pytest.mark.parametrize("split", [False, True], ids=["one process", "split"])
def test_hri_run_prints_one_line_and_writes_the_traceback(tmp_path, split):
    """With --split the tree process sends the traceback to the simulation, which keeps it as
    in one process."""
    scenario, robot = _scenario_with(tmp_path, BOOM, '<Boom name="Fuse"/>')
    out = tmp_path / "run"
    code, line = _hri("run", str(scenario), "--duration", "30", "--seed", "1", "--out", str(out),
                      *(["--split"] if split else []))
    assert code == 1
    reason = f"{robot}:{_line_of(robot, 'Boom')}: Boom 'Fuse' raised ZeroDivisionError: integer division or modulo by zero at t = "
    assert line.startswith(reason)
    assert line.endswith(f" s (traceback in {out / 'traceback.txt'})")
    assert "ZeroDivisionError" in (out / "traceback.txt").read_text()
    stats = json.loads((out / "stats.json").read_text())
    assert stats["complete"] is False
    assert stats["error"] == line.removesuffix(f" (traceback in {out / 'traceback.txt'})")  # the reason, kept
    events = [json.loads(text) for text in (out / "events.jsonl").read_text().splitlines()]
    errors = [event for event in events if event["event"] == "run_error"]
    assert errors == [{"t": errors[0]["t"], "event": "run_error", "error": stats["error"]}]
    assert line.startswith(f"{reason}{errors[0]['t']:.3f} s")
    assert events[-1] == {"t": errors[0]["t"], "event": "run_finished", "complete": False}


GRUMPY = '''
from py_trees.common import Status

from hri.bt import BTNode


class Grumpy(BTNode):
    """Its constructor raises; where it is built for a run only (ONLY_IN_RUNS) it opens its
    device then, so that validation passes and the run fails as it builds the tree."""

    ONLY_IN_RUNS = False

    def __init__(self, config):
        super().__init__(config)
        in_a_run = getattr(config.ctx.events, "__self__", None) is not None  # a tree host's event sink
        if in_a_run or not self.ONLY_IN_RUNS:
            raise OSError("no device at /dev/gripper")

    def update(self):
        return Status.SUCCESS


def register_nodes(registry):
    registry.register("Grumpy", Grumpy, "action")
'''


@pytest.mark.parametrize("command", ["validate", "run", "run --split", "batch", "batch --split"])
def test_a_constructor_that_raises_is_one_line_with_the_traceback_in_a_file(tmp_path, command):
    """Refused as the tree loads, before anything is made: the traceback goes to a new file in
    the temporary folder, which the line names."""
    scenario, robot = _scenario_with(tmp_path, GRUMPY, '<Grumpy name="Gripper"/>')
    out, temporary = tmp_path / "out", tmp_path / "tmp"
    temporary.mkdir()
    name, *options = command.split()
    args = {"validate": [], "run": ["--duration", "1", "--out", str(out)],
            "batch": ["--runs", "1", "--duration", "1", "--out", str(out)]}[name]
    code, line = _hri(name, str(scenario), *args, *options, tmpdir=temporary)
    kept = list(temporary.iterdir())
    assert code == 1 and len(kept) == 1 and kept[0].name.startswith("hri-traceback-")
    assert line == (f"{robot}:{_line_of(robot, 'Grumpy')}: Grumpy 'Gripper': constructor raised OSError: "
                    f"no device at /dev/gripper (traceback in {kept[0]})")
    assert 'raise OSError("no device at /dev/gripper")' in kept[0].read_text()
    assert not out.exists()


@pytest.mark.parametrize("split", [False, True], ids=["one process", "split"])
def test_a_constructor_that_raises_in_the_run_keeps_the_traceback_in_the_run(tmp_path, split):
    """A node that fails only when built to run (in its tree's own process with --split):
    the run ends as it starts, with the same line, the traceback in its folder."""
    scenario, robot = _scenario_with(tmp_path, GRUMPY.replace("ONLY_IN_RUNS = False", "ONLY_IN_RUNS = True"),
                                     '<Grumpy name="Gripper"/>')
    out = tmp_path / "run"
    code, line = _hri("run", str(scenario), "--duration", "1", "--out", str(out), *(["--split"] if split else []))
    assert code == 1
    assert line == (f"{robot}:{_line_of(robot, 'Grumpy')}: Grumpy 'Gripper': constructor raised OSError: "
                    f"no device at /dev/gripper (traceback in {out / 'traceback.txt'})")
    assert 'raise OSError("no device at /dev/gripper")' in (out / "traceback.txt").read_text()
    assert (out / "manifest.json").is_file()  # what ran is kept with it


def test_a_batch_run_whose_constructor_raises_keeps_its_line_and_traceback(tmp_path):
    """In a batch's run the failure is data: run.json's error is the line (files named by
    absolute path), traceback.txt is in the run's folder."""
    scenario, robot = _scenario_with(tmp_path, GRUMPY.replace("ONLY_IN_RUNS = False", "ONLY_IN_RUNS = True"),
                                     '<Grumpy name="Gripper"/>')
    out = tmp_path / "batch"
    result = subprocess.run([HRI, "batch", str(scenario), "--runs", "1", "--duration", "1", "--workers", "1",
                             "--out", str(out)], capture_output=True, text=True, timeout=300,
                            env={**os.environ, "PYTHONWARNINGS": "ignore"})
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    run = out / "runs" / "c000-r0000"
    record = json.loads((run / "run.json").read_text())
    assert record["status"] == "failed"
    assert record["error"] == (f"{robot}:{_line_of(robot, 'Grumpy')}: Grumpy 'Gripper': constructor raised OSError: "
                               "no device at /dev/gripper")
    assert 'raise OSError("no device at /dev/gripper")' in (run / "traceback.txt").read_text()
