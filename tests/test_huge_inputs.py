"""The bad-input corpus's huge inputs: files too large to keep in ``tests/bad_inputs`` (a
50-MB scenario, a 2-MB tree, trees of 100,000 and 6,000 nodes, a script of 200,000 terms)
and command lines with a 100,000-digit value, made here in a temporary folder.

Each is listed under ``generated`` in ``tests/bad_inputs/expected.yaml`` with its exact line:
``hri validate`` (and, with ``run: true``, ``hri run`` of a scenario, or of a scenario using
the tree) prints it and exits non-zero, with no traceback or warning, within 500 MB.
Each runs as a user runs it, in a process of its own; its peak memory (that process's own
VmHWM, :func:`processes.run_measured`) stays below 500 MB.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from processes import run_measured

DIR = Path(__file__).parent.resolve() / "bad_inputs"
GENERATED = yaml.safe_load((DIR / "expected.yaml").read_text())["generated"]
HRI = shutil.which("hri") or str(Path(sys.executable).parent / "hri")
MAX_PEAK_MB = 500
DIGITS = "1" * 100_000


def _tree(body: str) -> str:
    return (f'<root BTCPP_format="4" main_tree_to_execute="Main">\n <BehaviorTree ID="Main">\n  <Sequence>\n'
            f'   <AlwaysSuccess/>\n{body}  </Sequence>\n </BehaviorTree>\n</root>\n')


def _good_tree() -> str:
    return (DIR / "_good_tree.xml").read_text()


MAKERS: dict[str, Callable[[], str]] = {
    "scenario_50mb.yaml": lambda: (DIR / "_good_scenario.yaml").read_text() + "#" * (50 * 2**20 - 1) + "\n",
    "tree_2mb.xml": lambda: _good_tree() + " " * (2 * 2**20),
    "tree_100000_nodes.xml": lambda: _tree("   <AlwaysSuccess/>\n" * 100_000),
    "tree_6000_nodes.xml": lambda: _tree("   <AlwaysSuccess/>\n" * 6_000),
    "tree_script_200000_terms.xml": lambda: _tree(f'   <Script code="x := {"+".join(["1"] * 200_000)}"/>\n'),
    "tree_script_integer_100000_digits.xml": lambda: _tree(f'   <Script code="x := {DIGITS}"/>\n'),
    "tree_port_integer_100000_digits.xml": lambda: _tree(f'   <Sleep msec="{DIGITS}"/>\n'),
    "tree_port_name_100000_characters.xml": lambda: _tree(f'   <ActorAnimation animation_name="x{DIGITS}"/>\n'),
}


def _hri(*args: str) -> tuple[int, str, float]:
    """Exit status, stderr and peak memory (MB) of ``hri ARGS`` in a process of its own."""
    code, stderr, _, _, peak_mb = run_measured(list(args), {**os.environ, "PYTHONWARNINGS": "default"})
    return code, stderr, peak_mb


def _one_line(code: int, stderr: str, peak_mb: float) -> str:
    assert code != 0, stderr
    assert "Traceback" not in stderr and "Warning" not in stderr, stderr[-2000:]
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr[-2000:]
    assert peak_mb < MAX_PEAK_MB
    return lines[0]


def _scenario_using(tree: Path, folder: Path) -> Path:
    """The corpus's valid scenario, in ``folder``, with ``tree`` as the person's tree."""
    text = (DIR / "_good_scenario.yaml").read_text()
    robot = (DIR / "../../trees/coexistence_robot.xml").resolve()
    text = text.replace("person: ../../trees/coexistence_person.xml", f"person: {tree}")
    path = folder / "uses_the_tree.yaml"
    path.write_text(text.replace("robot: ../../trees/coexistence_robot.xml", f"robot: {robot}"))
    return path


def test_every_generated_case_has_its_maker():
    assert sorted(entry["name"] for entry in GENERATED if "args" not in entry) == sorted(MAKERS)


@pytest.mark.parametrize("entry", GENERATED, ids=lambda e: e["name"])
def test_a_huge_input_gives_its_line(entry, tmp_path):
    expected = re.sub(r"\{1\*(\d+)\}", lambda ones: "1" * int(ones.group(1)), entry["error"].replace("{tmp}", str(tmp_path)))
    if "args" in entry:
        args = [arg.replace("{digits}", DIGITS) for arg in entry["args"]]
        assert _one_line(*_hri(*args, "--out", str(tmp_path / "out"))) == expected
        assert not (tmp_path / "out").exists()
        return
    path = tmp_path / entry["name"]
    path.write_text(MAKERS[entry["name"]]())
    assert _one_line(*_hri("validate", str(path))) == expected
    if entry.get("run"):
        scenario = path if path.suffix == ".yaml" else _scenario_using(path, tmp_path)
        out = tmp_path / "out"
        assert _one_line(*_hri("run", str(scenario), "--duration", "0.1", "--out", str(out))) == expected
        assert not out.exists()
