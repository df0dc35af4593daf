"""An exception inside a node's tick (a plug-in's bug) ends the run with one line, not a traceback.

The line names the node's file and line, its type and name, the simulated time and the
exception; with ``--out`` the traceback is kept in the run directory (``traceback.txt``),
beside the run's files marked ``complete: false``.
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


def test_hri_run_prints_one_line_and_writes_the_traceback(tmp_path):
    folder = tmp_path / "scenario"
    shutil.copytree(EXAMPLE, folder)
    (folder / "boom.py").write_text(BOOM)
    robot = folder / "robot.xml"
    robot.write_text(robot.read_text()
                     .replace("../../../trees/", str(EXAMPLE.parent.parent.parent / "trees") + "/")
                     .replace('<RunOnce name="StartCounting">', '<Boom name="Fuse"/>\n        <RunOnce name="StartCounting">'))
    person = folder / "person.xml"
    person.write_text(person.read_text().replace("../../../trees/", str(EXAMPLE.parent.parent.parent / "trees") + "/"))
    scenario = folder / "scripted_shift.yaml"
    scenario.write_text(scenario.read_text().replace("plugins: [shelf_sections.py]", "plugins: [shelf_sections.py, boom.py]"))
    out = tmp_path / "run"
    result = subprocess.run([HRI, "run", str(scenario), "--duration", "30", "--seed", "1", "--out", str(out)],
                            capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONWARNINGS": "ignore"})
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode == 1 and len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    line = next(n for n, text in enumerate(robot.read_text().splitlines(), 1) if "Boom" in text)
    assert lines[0].startswith(f"{robot}:{line}: Boom 'Fuse' raised ZeroDivisionError: integer division or modulo by zero at t = ")
    assert lines[0].endswith(f" s (traceback in {out / 'traceback.txt'})")
    assert "ZeroDivisionError" in (out / "traceback.txt").read_text()
    assert json.loads((out / "stats.json").read_text())["complete"] is False
