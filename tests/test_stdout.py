"""Every command when its standard output is closed (``>&-``) or its reader goes away
(``| head -1``): one line and exit 1, or a quiet exit 141 (as a command ended by SIGPIPE);
never a traceback."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from hri.cli.main import BROKEN_PIPE_EXIT, STDOUT_CLOSED, _build_parser
from hri.run.run_dir import RunRecord, keep_inputs
from hri.run.sim import run_scenario
from hri.scenario.load import load_scenario
from test_cli import HRI
from test_groot2_run import _free_quad

TREE = "trees/coexistence_robot.xml"
# one command line per command of hri (the test below checks that none is missing)
COMMANDS = {
    "run": ["run", "coexistence", "--duration", "1"],
    "replay": ["replay", "RUN", "--groot2", "PORT", "--speed", "1000", "--from", "1.5"],
    "batch": ["batch", "coexistence", "--runs", "1", "--duration", "1", "--workers", "1", "--out", "TMP/batch"],
    "validate": ["validate", TREE],
    "convert": ["convert", TREE, "-o", "TMP/robot.yaml"],
    "nodes": ["nodes", "--xml", "--all"],
    "render": ["render", TREE],
    "list": ["list", "nodes"],
    "stats": ["stats", "RUN"],
    "bench": ["bench", "--only", "roundtrip", "--messages", "20", "--repeat", "1", "--scenario", "coexistence"],
    "robot": ["robot", "stops"],
    "export": ["export", "RUN", "-o", "TMP/run.mcap"],
}


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("run")
    scenario = load_scenario("coexistence")
    keep_inputs(out, scenario, RunRecord("coexistence", 1, 2.0))  # a run hri export can rerun
    run_scenario(scenario, 2.0, seed=1, out_dir=out)
    return out


# as most users run it: stdout a pipe is written in blocks, the last one at the end
ENV = {name: value for name, value in os.environ.items() if name != "PYTHONUNBUFFERED"}


def _argv(command: str, run_dir: Path, tmp_path: Path) -> list[str]:
    words = {"RUN": str(run_dir), "PORT": str(_free_quad()) if command == "replay" else ""}
    return [HRI] + [words.get(word, word.replace("TMP", str(tmp_path))) for word in COMMANDS[command]]


def test_every_command_is_covered():
    sub = next(a for a in _build_parser()._actions if a.dest == "command")
    assert set(sub.choices) == set(COMMANDS)


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_closed_stdout_is_one_line(command, run_dir, tmp_path):
    argv = _argv(command, run_dir, tmp_path)
    result = subprocess.run(["sh", "-c", '"$@" >&-', "sh", *argv], capture_output=True, text=True,
                            timeout=120, env=ENV, cwd=Path(__file__).parent.parent)
    assert result.returncode == 1
    assert result.stderr == STDOUT_CLOSED + "\n"
    assert not list(tmp_path.iterdir())  # refused before it did anything


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_reader_gone_ends_the_command_quietly(command, run_dir, tmp_path):
    read, write = os.pipe()
    os.close(read)  # the reader is gone before anything is written: every write fails
    try:
        process = subprocess.Popen(_argv(command, run_dir, tmp_path), stdout=write, stderr=subprocess.PIPE,
                                   text=True, env=ENV, cwd=Path(__file__).parent.parent)
    finally:
        os.close(write)
    _, err = process.communicate(timeout=180)
    assert process.returncode == BROKEN_PIPE_EXIT, err
    # what the command says on stderr anyway (warnings, progress), nothing about the pipe
    assert "Traceback" not in err and "Error" not in err and "Broken pipe" not in err, err
