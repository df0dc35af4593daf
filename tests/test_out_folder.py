"""Commands write, overwrite and delete only what they made: ``hri run --out`` (one run at a
time in a folder, never two mixed, SIGKILL at any moment leaves the old run whole or none),
``hri stats --plots``, ``hri render -o``, ``hri run --record``."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hri.cli.main import main
from test_cli import HRI

# Runs hri in a process that kills itself (SIGKILL) at the COUNT-th call of FUNCTION (os.rename,
# os.replace, shutil.rmtree) whose arguments, as text, hold every |-separated piece of TEXT
# ({pid}: its own): a moment of the writing reached for certain, which a sleep hits by chance.
KILLER = """
import os, shutil, signal, sys
function, pieces, count = sys.argv[1], sys.argv[2].replace("{pid}", str(os.getpid())).split("|"), int(sys.argv[3])
seen = [0]
def armed(name, original):
    def call(*args, **kwargs):
        if name == function and all(piece in " ".join(map(str, args)) for piece in pieces):
            seen[0] += 1
            if seen[0] == count:
                os.kill(os.getpid(), signal.SIGKILL)
        return original(*args, **kwargs)
    return call
os.rename, os.replace = armed("rename", os.rename), armed("replace", os.replace)
shutil.rmtree = armed("rmtree", shutil.rmtree)
from hri.cli.main import main
sys.exit(main(sys.argv[4:]))
"""
# (function, text, count) and what X holds after: the inputs about to be kept, stats.json
# about to be staged, the staged run about to go beside X, X about to go aside, the new run
# about to move in, the old run about to be deleted.
WRITING = [("rename", "/inputs", 1, "old"), ("replace", "stats.json", 1, "old"), ("rename", ".X.hri-new-", 1, "old"),
           ("rename", ".X.hri-old-", 1, "old"), ("rename", ".X.hri-new-", 2, "none"),
           ("rmtree", ".X.hri-old-|-{pid}", 1, "new")]
STARTING = [0.05, 0.8, 1.6, 2.6]  # seconds after the start: imports, set-up, the run stepping


def _run(*argv: str) -> int:
    return main(["run", "coexistence", "--duration", "1", "--json", *argv])


def _files(folder: Path) -> dict[str, bytes]:
    """Every visible file under ``folder`` (hidden ones are staging), by relative path."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and not any(part.startswith(".") for part in p.relative_to(folder).parts)}


def _hidden(folder: Path) -> list[str]:
    """Hidden entries in ``folder`` and beside it (a swap's folders, ``.NAME.hri-...``)."""
    inside = [p.name for p in folder.iterdir() if p.name.startswith(".")] if folder.is_dir() else []
    return inside + [p.name for p in folder.parent.iterdir() if p.name.startswith(f".{folder.name}.")]


def _seeds(folder: Path) -> tuple[int, int]:
    return (json.loads((folder / "manifest.json").read_text())["seed"],
            json.loads((folder / "stats.json").read_text())["seed"])


def test_two_runs_into_one_out_never_mix(tmp_path: Path, capsys) -> None:
    out = tmp_path / "X"
    assert _run("--seed", "1", "--out", str(out)) == 0
    first = _files(out)
    capsys.readouterr()
    assert _run("--seed", "2", "--out", str(out)) == 1  # a second run without --force: refused
    err = capsys.readouterr().err
    assert err == f"--out {out}: holds a run (stats.json and 7 more); pass --force to replace it, or choose another folder\n"
    assert _files(out) == first
    (out / ".events.jsonl.k3j_x9a2").write_text("left by a killed run of an earlier hri")
    (out / ".inputs-old-q8w7e6r5").mkdir()
    assert _run("--seed", "2", "--out", str(out), "--force") == 0
    assert _seeds(out) == (2, 2) and set(_files(out)) == set(first) and not _hidden(out)
    assert json.loads((out / "events.jsonl").read_text().splitlines()[0])["seed"] == 2
    # with a file of the user's own the run's files are swapped one by one: the user's stays,
    # a link where plots/ belongs goes as a link (what it points at is left alone)
    (out / "notes.txt").write_text("mine")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "a.png").write_text("keep")
    (out / "plots").symlink_to(tmp_path / "elsewhere")
    (out / "traceback.txt").write_text("an earlier run's")
    assert _run("--seed", "3", "--out", str(out), "--force") == 0
    assert _seeds(out) == (3, 3) and not _hidden(out)
    assert set(_files(out)) == set(first) | {"notes.txt"} and (out / "notes.txt").read_text() == "mine"
    assert (tmp_path / "elsewhere" / "a.png").read_text() == "keep" and not (out / "plots").is_symlink()


def test_a_folder_another_run_writes_into_is_refused(tmp_path: Path, capsys) -> None:
    out = tmp_path / "X"
    out.mkdir()
    fd = os.open(out, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # as a run going on there holds it
        assert _run("--out", str(out)) == 1
    finally:
        os.close(fd)
    assert capsys.readouterr().err == f"--out {out}: another run is writing into this folder\n"
    assert list(out.iterdir()) == []


def test_a_folder_that_is_not_a_runs_is_never_replaced(tmp_path: Path, capsys) -> None:
    out = tmp_path / "X"
    (out / "stats.json").mkdir(parents=True)
    assert _run("--out", str(out), "--force") == 1
    assert capsys.readouterr().err == (f"--out {out}: holds stats.json, a folder that no run wrote; "
                                       "choose another folder\n")
    assert (out / "stats.json").is_dir()
    batch = tmp_path / "batch"
    batch.mkdir()
    (batch / "batch.json").write_text("{}")
    assert _run("--out", str(batch), "--force") == 1
    assert capsys.readouterr().err == f"--out {batch}: holds a batch of hri batch, not a run: give another folder\n"
    assert [p.name for p in batch.iterdir()] == ["batch.json"]


def _restore(out: Path, old: Path) -> None:
    """``out`` holding the old run again, its hidden leftovers kept (the next run removes them)."""
    out.mkdir(exist_ok=True)
    for entry in out.iterdir():
        if not entry.name.startswith("."):
            shutil.rmtree(entry) if entry.is_dir() and not entry.is_symlink() else entry.unlink()
    shutil.copytree(old, out, dirs_exist_ok=True)


def _check_after_kill(out: Path, old: dict[str, bytes], moment: str) -> str:
    """The folder holds the old run whole, no run, or the new run whole: never a mix."""
    files = _files(out) if out.is_dir() else {}
    if files == old:
        return "old"
    if "stats.json" not in files and "manifest.json" not in files:
        return "none"
    assert set(files) == set(old) and _seeds(out) == (2, 2), f"{moment}: a mix: {sorted(files)}"
    assert json.loads(files["events.jsonl"].splitlines()[0])["seed"] == 2, f"{moment}: a mix"
    return "new"


def test_sigkill_at_ten_moments_leaves_the_old_run_or_none(tmp_path: Path) -> None:
    """Over a complete run, ``hri run --out X --force`` killed (SIGKILL) at ten moments: four
    by the clock (start-up, set-up, stepping), six at the writing's steps. Each time X holds the
    old run byte for byte or no run (neither stats.json nor manifest.json), or, killed after the
    last rename, the new run whole; then one more run into X leaves its run and no hidden file,
    in X or beside it."""
    out, old = tmp_path / "X", tmp_path / "old"
    assert _run("--seed", "1", "--out", str(old)) == 0
    reference = _files(old)
    _restore(out, old)
    outcomes, expected = [], []
    for when in STARTING:
        # an hour simulated: still stepping when killed, however fast the machine (60 s took 2.5 s)
        process = subprocess.Popen([HRI, "run", "coexistence", "--duration", "3600", "--seed", "2", "--out", str(out),
                                    "--force"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(when)
        process.kill()
        assert process.wait(30) == -signal.SIGKILL
        outcomes.append(_check_after_kill(out, reference, f"{when} s"))
        expected.append("old")
        _restore(out, old)
    for function, text, count, after in WRITING:
        argv = ["run", "coexistence", "--duration", "1", "--seed", "2", "--out", str(out), "--force", "--json"]
        result = subprocess.run([sys.executable, "-c", KILLER, function, text, str(count), *argv],
                                capture_output=True, timeout=300)
        assert result.returncode == -signal.SIGKILL, (function, text, result.stderr.decode())
        outcomes.append(_check_after_kill(out, reference, f"{function} {text}"))
        expected.append(after)
        _restore(out, old)
    assert outcomes == expected
    assert _hidden(out)  # what the killed runs left, until the next run
    assert main(["run", "coexistence", "--duration", "1", "--seed", "3", "--out", str(out), "--force", "--json"]) == 0
    assert _seeds(out) == (3, 3) and set(_files(out)) == set(reference) and not _hidden(out)


def test_stats_plots_stay_inside_the_folder(tmp_path: Path, capsys) -> None:
    run, elsewhere = tmp_path / "run", tmp_path / "elsewhere"
    assert _run("--out", str(run)) == 0
    elsewhere.mkdir()
    (run / "plots").symlink_to(elsewhere)
    capsys.readouterr()
    assert main(["stats", str(run), "--plots"]) == 1
    assert capsys.readouterr().err == (f"--plots {run / 'plots'}: is a link; the figures go into a folder inside DIR, "
                                       "not where a link points\n")
    assert list(elsewhere.iterdir()) == []
    (run / "plots").unlink()  # a link in place of a figure is replaced, not written through
    (run / "plots").mkdir()
    (elsewhere / "mine.png").write_text("mine")
    (run / "plots" / "path.png").symlink_to(elsewhere / "mine.png")
    assert main(["stats", str(run), "--plots"]) == 0
    assert (elsewhere / "mine.png").read_text() == "mine"
    assert not (run / "plots" / "path.png").is_symlink() and (run / "plots" / "path.png").read_bytes()[:4] == b"\x89PNG"


def test_render_and_record_overwrite_only_with_force(tmp_path: Path, capsys) -> None:
    tree = str(Path(__file__).parent.parent / "trees" / "coexistence_robot.xml")
    dot, video = tmp_path / "robot.dot", tmp_path / "run.gif"
    dot.write_text("mine")
    video.write_text("mine")
    assert main(["render", tree, "-o", str(dot)]) == 1
    assert capsys.readouterr().err == f"{dot}: exists: pass --force to overwrite it, or -o to write elsewhere\n"
    assert _run("--record", str(video), "--record-size", "160x90") == 1
    assert capsys.readouterr().err == f"{video}: exists: pass --force to overwrite it, or --record to write elsewhere\n"
    assert dot.read_text() == "mine" and video.read_text() == "mine"
    assert main(["render", tree, "-o", str(dot), "--force"]) == 0 and dot.read_text().startswith("digraph")
    assert main(["run", "coexistence", "--duration", "0.2", "--json", "--record", str(video), "--record-size", "160x90",
                 "--force"]) == 0
    assert video.read_bytes()[:6] == b"GIF89a"
