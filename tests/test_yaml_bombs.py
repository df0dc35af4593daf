"""YAML alias bombs: every YAML reader refuses one in under 2 s with one line, in little memory.

Nine levels of nine aliases make a text of 1 KB that PyYAML composes in microseconds into a
graph of a few dozen nodes, and that anything walking it (the scenario's values, validation,
key checks, JSON for a sweep) expands to 9^10 nodes: minutes of CPU and gigabytes. Every reader
goes through :mod:`hri.base.yaml_values`, whose composer bounds what aliases add
(:data:`~hri.base.yaml_values.MAX_ALIAS_NODES`): a scenario, a ``--set`` value (run and batch), a
tree file and a clip. Trees and clips take no aliases at all. Each case here runs under a 2 s
alarm, so the code before the bound fails in 2 s instead of hanging.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml

from hri.actor.animation import ClipLibrary
from hri.actor.clip_check import check_clip
from hri.batch.batch import make_configs, parse_sweep
from hri.bt.yaml_format import parse_yaml
from hri.base.errors import HriError
from hri.scenario.load import load_scenario
from hri.cli.validate import validate_files
from hri.base.yaml_values import MAX_ALIAS_NODES, load, load_value

ROOT = Path(__file__).resolve().parent.parent
GOOD = Path(__file__).resolve().parent / "bad_inputs"
HRI = shutil.which("hri") or str(Path(sys.executable).parent / "hri")
LIMIT_S = 2.0
LIMIT_MB = 200
REFUSED = f"YAML aliases expand to more than {MAX_ALIAS_NODES} nodes"


def bomb_lines(levels: int = 9, prefix: str = "lol") -> list[str]:
    """``lol0: &a0 [x, ...]`` then ``levels`` lines of nine aliases of the line before."""
    lines = [f"{prefix}0: &a0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"{prefix}{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, levels + 1)]
    return lines


def bomb_value(levels: int = 9) -> str:
    """The bomb as one flow list, for ``--set KEY=VALUE``."""
    items = ["&a0 [x, x, x, x, x, x, x, x, x]"]
    items += [f"&a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, levels + 1)]
    return f"[{', '.join(items)}]"


def _scenario(tmp_path: Path, section: str, lines: list[str], name: str = "bomb.yaml") -> Path:
    """The corpus's good scenario (trees by absolute path) with ``lines`` under ``section``."""
    text = (GOOD / "_good_scenario.yaml").read_text().replace("../../trees/", f"{ROOT / 'trees'}/")
    path = tmp_path / name
    path.write_text(text + f"{section}:\n" + "".join(f"  {line}\n" for line in lines))
    return path


def _written(path: Path, good: str, lines: list[str]) -> Path:
    path.write_text((GOOD / good).read_text() + "".join(f"{line}\n" for line in lines))
    return path


def _line_of(path: Path, needle: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if needle in line)


class _Hung(BaseException):
    """Not an Exception: no reader's catch-all may turn it into a line."""


def _alarm(signum: int, frame: object) -> None:
    raise _Hung(f"still busy after {LIMIT_S} s")


def refused(call: Callable[[], object]) -> str:
    """The one line of the HriError ``call`` raises within :data:`LIMIT_S` (an alarm ends it)."""
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, LIMIT_S)
    start = time.perf_counter()
    try:
        with pytest.raises(HriError) as caught:
            call()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert time.perf_counter() - start < LIMIT_S
    line = str(caught.value)
    assert line.strip() and "\n" not in line
    return line


# --- each reader ---------------------------------------------------------------------------

@pytest.mark.parametrize("section", ["blackboard", "furniture", "areas", "poses", "net"])
def test_a_scenario_bomb_is_refused_at_the_alias_that_crosses_the_bound(tmp_path, section):
    path = _scenario(tmp_path, section, bomb_lines())
    line = _line_of(path, "lol5:")  # lol1..lol4 add 74718 nodes, lol5's first alias 66430 more
    assert refused(lambda: load_scenario(str(path))) == f"{path}:{line}: {REFUSED}"


def test_a_scenario_bomb_in_a_key_or_a_value_where_a_number_belongs_is_refused(tmp_path):
    keyed = _scenario(tmp_path, "blackboard", [*bomb_lines(), "? *a9\n  : 1"], "keyed.yaml")
    assert refused(lambda: load_scenario(str(keyed))).endswith(REFUSED)
    text = (GOOD / "_good_scenario.yaml").read_text()
    path = tmp_path / "number.yaml"
    path.write_text(f"lols: {bomb_value()}\n" + text.replace("  tree_rate_hz: 20", "  tree_rate_hz: *a9"))
    assert refused(lambda: load_scenario(str(path))) == f"{path}:1: {REFUSED}"


def test_a_scenario_bomb_is_refused_by_validate_and_run_as_commands(tmp_path):
    path = _scenario(tmp_path, "blackboard", bomb_lines())
    expected = f"{path}:{_line_of(path, 'lol5:')}: {REFUSED}"
    for args in (["validate", str(path)], ["run", str(path), "--duration", "0.1", "--out", str(tmp_path / "out")]):
        result = subprocess.run([HRI, *args], capture_output=True, text=True, timeout=60,
                                env={**os.environ, "PYTHONWARNINGS": "ignore"})
        assert result.returncode != 0
        assert result.stderr.strip() == expected  # one line, no traceback
    assert not (tmp_path / "out").exists()


def test_a_set_bomb_is_refused_naming_the_option():
    expected = f"--set blackboard.lol: {REFUSED}"
    assert refused(lambda: load_scenario("coexistence", [f"blackboard.lol={bomb_value()}"])) == expected
    assert refused(lambda: load_scenario("coexistence", [f"zones.warning={bomb_value()}"])).endswith(REFUSED)


def test_a_swept_set_bomb_is_refused_before_the_batch_starts():
    expected = f"--set blackboard.lol: {REFUSED}"
    assert refused(lambda: parse_sweep([f"blackboard.lol=1,{bomb_value()}"])) == expected
    assert refused(lambda: make_configs({"blackboard.lol": [bomb_value()]})) == f"--set: {REFUSED}"


def test_a_set_value_inside_itself_is_one_line_not_an_endless_list():
    line = refused(lambda: load_scenario("coexistence", ["blackboard.loop=&a [1, *a]"]))
    assert line == "--set blackboard.loop: malformed YAML: an alias inside what it names (endless)"


def test_a_tree_bomb_is_refused_by_the_parser_the_validator_and_a_scenario(tmp_path):
    path = _written(tmp_path / "tree.yaml", "_good_tree.yaml", bomb_lines())
    expected = f"{path}:{_line_of(path, 'lol1:')}: anchors and aliases are not supported"
    assert refused(lambda: parse_yaml(path.read_bytes(), str(path))) == expected
    text = _scenario(tmp_path, "blackboard", ["x: 1"]).read_text()
    scenario = tmp_path / "uses_the_tree.yaml"
    scenario.write_text(text.replace(str(ROOT / "trees" / "coexistence_person.xml"), str(path)))
    assert refused(lambda: load_scenario(str(scenario))) == expected


def test_a_clip_bomb_is_refused_by_the_check_and_the_library(tmp_path):
    folder = tmp_path / "clips"
    folder.mkdir()
    path = _written(folder / "bomb.yaml", "_good_clip.yaml", bomb_lines())
    expected = f"{path}:{_line_of(path, 'lol1:')}: anchors and aliases are not supported"
    assert refused(lambda: check_clip(path.read_bytes(), str(path))) == expected
    assert refused(lambda: ClipLibrary.load(folder)) == expected


@pytest.mark.parametrize("kind", ["scenario", "tree", "clip"])
def test_hri_validate_refuses_a_bomb_of_each_kind_in_one_line(tmp_path, kind):
    path = {"scenario": lambda: _scenario(tmp_path, "blackboard", bomb_lines()),
            "tree": lambda: _written(tmp_path / "tree.yaml", "_good_tree.yaml", bomb_lines()),
            "clip": lambda: _written(tmp_path / "clip.yaml", "_good_clip.yaml", bomb_lines())}[kind]()

    def validate() -> None:
        errors = validate_files([path])
        if errors:
            raise errors[0]

    assert refused(validate).startswith(f"{path}:")


def test_hri_convert_refuses_a_tree_bomb(tmp_path):
    path = _written(tmp_path / "tree.yaml", "_good_tree.yaml", bomb_lines())
    result = subprocess.run([HRI, "convert", str(path), "-o", str(tmp_path / "tree.xml")], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode != 0 and len(result.stderr.strip().splitlines()) == 1
    assert "aliases" in result.stderr and not (tmp_path / "tree.xml").exists()


# --- memory ----------------------------------------------------------------------------------

_MEASURE = """
import json, sys, time
from pathlib import Path
from hri.actor.clip_check import check_clip
from hri.batch.batch import parse_sweep
from hri.bt.yaml_format import parse_yaml
from hri.base.errors import HriError
from hri.scenario.load import load_scenario
scenario, value, tree, clip = sys.argv[1:]


def high_water_kb():
    # VmHWM, the process's own peak: getrusage's ru_maxrss keeps the parent's through fork and
    # exec, so a test run by a big pytest process would measure pytest
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])


before = high_water_kb()
times = {}
for name, call in [("scenario", lambda: load_scenario(scenario)),
                   ("set", lambda: load_scenario("coexistence", ["blackboard.lol=" + value])),
                   ("sweep", lambda: parse_sweep(["blackboard.lol=" + value])),
                   ("tree", lambda: parse_yaml(Path(tree).read_bytes(), tree)),
                   ("clip", lambda: check_clip(Path(clip).read_bytes(), clip))]:
    start = time.perf_counter()
    try:
        call()
    except HriError:
        pass
    times[name] = time.perf_counter() - start
peak = high_water_kb()
print(json.dumps({"times": times, "peak_mb": peak / 1024, "added_mb": (peak - before) / 1024}))
"""


def test_refusing_bombs_takes_little_time_and_memory(tmp_path):
    """Peak memory of a fresh process that imports the readers and is given each bomb."""
    paths = [_scenario(tmp_path, "blackboard", bomb_lines()),
             _written(tmp_path / "tree.yaml", "_good_tree.yaml", bomb_lines()),
             _written(tmp_path / "clip.yaml", "_good_clip.yaml", bomb_lines())]
    result = subprocess.run([sys.executable, "-c", _MEASURE, str(paths[0]), bomb_value(), str(paths[1]), str(paths[2])],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    measured = json.loads(result.stdout)
    assert all(seconds < LIMIT_S for seconds in measured["times"].values()), measured
    assert measured["peak_mb"] < LIMIT_MB, measured
    assert measured["added_mb"] < 20, measured  # the bombs themselves: next to nothing
    assert len(measured["times"]) == 5


# --- what must still load --------------------------------------------------------------------

def _files(pattern: str) -> Iterator[Path]:
    yield from sorted(ROOT.glob(pattern))


def test_aliases_a_file_may_use_still_load_to_the_same_values(tmp_path):
    text = (GOOD / "_good_scenario.yaml").read_text().replace("../../trees/", f"{ROOT / 'trees'}/")
    shared = text.replace("  warning: [[0.0, 0.0], [4.3, 0.0], [4.3, 3.3], [0.0, 3.3]]",
                          "  warning: &warning [[0.0, 0.0], [4.3, 0.0], [4.3, 3.3], [0.0, 3.3]]")
    shared += "blackboard:\n  again: *warning\n"
    path = tmp_path / "shared.yaml"
    path.write_text(shared)
    scenario = load_scenario(str(path))
    assert scenario.blackboard["again"] == [list(corner) for corner in scenario.zones["warning"].points]
    assert scenario.blackboard["again"] is not scenario.document.data["zones"]["warning"]  # built apart


def test_aliases_adding_up_to_the_bound_load(tmp_path):
    """Four levels of nine add 74718 nodes: under the bound, and quick to build and check."""
    path = _scenario(tmp_path, "blackboard", bomb_lines(levels=4))
    start = time.perf_counter()
    scenario = load_scenario(str(path))
    assert time.perf_counter() - start < LIMIT_S
    assert len(scenario.blackboard["lol4"]) == 9
    assert len(load_value(bomb_value(levels=4), "--set x")) == 5


@pytest.mark.parametrize("path", [*_files("scenarios/*.yaml"), *_files("trees/*.yaml"),
                                  *_files("assets/actor/clips/*.yaml"), *_files("tests/bad_inputs/_good_*.yaml")],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_the_shipped_files_load_as_safe_load_loads_them(path):
    text = path.read_text()
    assert load(text, str(path)) == yaml.safe_load(text)
