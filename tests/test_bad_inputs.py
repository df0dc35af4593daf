"""The bad-input corpus: every mistake a user can write gives one clear line.

``tests/bad_inputs/expected.yaml`` lists every file of ``tests/bad_inputs/`` (each a valid
``_good_*`` file with one mistake) with the exact line ``hri validate`` prints for it, and
the command-line mistakes (``--set`` values, options, missing files) with theirs. Each must end
with a non-zero exit, exactly that one line on stderr, and no traceback; ``hri run`` must fail
before the simulation starts and write no output folder. Where the mistake is a plug-in's
exception, the line names the file its traceback was saved in (``{traceback}``: a new file in
the temporary folder, as no run folder is made), and the file holds it.

``hri validate`` runs in this process (``hri.cli.main.main``: ~85 files in a few seconds); the
``hri run`` cases run the installed command in a subprocess, as a user would.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import yaml

from hri.base.errors import shown_path
from hri.cli.main import main
from hri.scenario.load import preset_path

DIR = Path(__file__).parent.resolve() / "bad_inputs"
MANIFEST = yaml.safe_load((DIR / "expected.yaml").read_text())
HRI = shutil.which("hri") or str(Path(sys.executable).parent / "hri")
HELPERS = ("_good_", "_robot_")  # valid files the corpus is made from or refers to
PLUGIN = "_plugin_"  # a plug-in whose nodes fail as they are built, and the trees using them: not valid
MODEL = "_model_"  # robot models (URDF) the corpus's scenarios name: not hri's inputs themselves


def _expand(text: str, out: Path, traceback: str = "{traceback}") -> str:
    """The line of the manifest: the corpus's and the presets' folders named as every line
    names a file (relative to the current folder when inside it, :func:`shown_path`)."""
    presets = shown_path(preset_path("coexistence").parent.resolve())
    return (text.replace("{dir}", shown_path(DIR)).replace("{out}", str(out)).replace("{presets}", presets)
            .replace("{traceback}", traceback))


def _kept_traceback(folder: Path) -> str:
    """The traceback file a command saved in ``folder`` (its temporary folder) as the line
    shows it, removed for the next command; ``{traceback}`` if none (then a line naming one
    does not match)."""
    kept = list(folder.iterdir())
    assert len(kept) <= 1, kept
    if not kept:
        return "{traceback}"
    assert kept[0].name.startswith("hri-traceback-") and "Traceback (most recent call last)" in kept[0].read_text()
    assert kept[0].stat().st_mode & 0o077 == 0  # the user's own
    shown = shown_path(kept[0])
    kept[0].unlink()
    return shown


def _one_line(code: int, stderr: str) -> str:
    assert code != 0, stderr
    assert "Traceback" not in stderr
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    return lines[0]


def _validate(path: Path, capsys: pytest.CaptureFixture) -> tuple[int, str]:
    code = main(["validate", str(path)])
    return code, capsys.readouterr().err


def _hri(*args: str, tmpdir: Path | None = None) -> subprocess.CompletedProcess:
    temporary = {"TMPDIR": str(tmpdir)} if tmpdir is not None else {}
    return subprocess.run([HRI, *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONWARNINGS": "ignore", **temporary})


def test_the_corpus_has_forty_files_each_in_the_manifest():
    corpus = sorted(p.name for p in DIR.iterdir() if p.name not in ("expected.yaml", "run_folders.yaml") and not p.name.startswith((*HELPERS, PLUGIN, MODEL)))
    assert corpus == sorted(MANIFEST["files"])
    assert len(corpus) >= 40


@pytest.mark.parametrize("path", sorted(p for p in DIR.iterdir() if p.name.startswith(HELPERS)), ids=lambda p: p.name)
def test_the_files_the_corpus_is_made_from_are_valid(path, capsys):
    code, stderr = _validate(path, capsys)
    assert code == 0, stderr
    if path.name.startswith("_good_"):
        assert stderr == ""  # not even a warning: each corpus file's one mistake is all that is wrong


@pytest.mark.parametrize("name", sorted(MANIFEST["files"]))
def test_bad_file_gives_its_line(name, capsys, tmp_path, monkeypatch):
    entry = MANIFEST["files"][name]
    out = tmp_path / "out"
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temporary))
    line = _one_line(*_validate(DIR / name, capsys))
    assert line == _expand(entry["error"], out, _kept_traceback(temporary))
    if entry.get("run"):
        result = _hri("run", str(DIR / name), "--duration", "0.1", "--out", str(out), tmpdir=temporary)
        line = _one_line(result.returncode, result.stderr)
        assert line == _expand(entry["error"], out, _kept_traceback(temporary))
        assert not out.exists()


@pytest.mark.parametrize("entry", MANIFEST["commands"], ids=lambda e: " ".join(e["args"][1:]))
def test_command_line_mistake_gives_its_line(entry, tmp_path):
    out = tmp_path / "out"
    args = [_expand(arg, out) for arg in entry["args"]]
    if args[0] == "run":
        args += ([] if "--duration" in args else ["--duration", "0.1"]) + ["--out", str(out)]
    result = _hri(*args)
    assert _one_line(result.returncode, result.stderr) == _expand(entry["error"], out)
    assert not out.exists()


OUTPUT_MISTAKES = [  # {file}: a plain file where a folder is wanted; the same line from every command
    (["run", "coexistence", "--duration", "0.1", "--out", "{file}"], "--out {file}: is a file, not a folder"),
    (["run", "coexistence", "--duration", "0.1", "--out", "{file}/run"],
     "--out {file}/run: cannot create the folder: {file} is a file"),
    (["batch", "coexistence", "--runs", "1", "--duration", "0.1", "--out", "{file}"],
     "--out {file}: is a file, not a folder"),
    (["bench", "--only", "safety", "--scenario", "coexistence", "--safety-hours", "0.001", "--safety-run", "1",
      "--safety-dir", "{file}/safety"], "--safety-dir {file}/safety: cannot create the folder: {file} is a file"),
    (["convert", str(preset_path("coexistence").parent.parent / "trees" / "coexistence_person.xml"),
      "-o", "{file}/person.yaml"], "{file}/person.yaml: cannot write: Not a directory"),
    (["run", "coexistence", "--duration", "0.1", "--out", "/proc/hri/run"],
     "--out /proc/hri/run: cannot write in /proc: No such file or directory"),
    (["batch", "coexistence", "--runs", "1", "--duration", "0.1", "--out", "/proc/hri/run"],
     "--out /proc/hri/run: cannot write in /proc: No such file or directory"),
]


@pytest.mark.parametrize("args, error", OUTPUT_MISTAKES,
                         ids=["run --out", "run --out under", "batch --out", "bench --safety-dir", "convert -o",
                              "run --out in /proc", "batch --out in /proc"])
def test_an_output_path_that_cannot_be_written_gives_its_line_before_any_work(args, error, tmp_path):
    """Where a command is to write (a folder or a file) is checked when it starts: one line
    naming the option, not a traceback after the run."""
    obstacle = tmp_path / "a_file"
    obstacle.write_text("not a folder\n")
    result = _hri(*[arg.replace("{file}", str(obstacle)) for arg in args])
    assert _one_line(result.returncode, result.stderr) == error.replace("{file}", str(obstacle))
    assert sorted(tmp_path.iterdir()) == [obstacle]
