"""Hostile run folders: ``hri run --from`` treats a run folder as data (hri.run.run_dir).

``tests/bad_inputs/run_folders.yaml`` describes each case as edits of a real kept run. Each
runs ``hri`` (its ``main``) in a subprocess, as a user would, and must: exit non-zero with
exactly the expected line on stderr and no traceback, in under 2 s and 200 MB (the child's CPU
time from ``os.wait4`` and its peak memory, VmHWM; its wall time is printed with ``-s`` and
bounded loosely, as the machine may be shared, so a hang still fails), run no code (the
plug-ins it could reach would create a marker file), read nothing outside the folder (what
lies outside matches every hash, so only the path rules can refuse it, and a FIFO there would
hang whoever opened it), and create no ``--out`` folder.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Iterator

import pytest
import yaml

from hri.cli.main import main
from processes import run_measured

CORPUS = yaml.safe_load((Path(__file__).parent / "bad_inputs" / "run_folders.yaml").read_text())["cases"]
HRI = shutil.which("hri") or str(Path(sys.executable).parent / "hri")
PLUGIN = '''"""A plug-in that must never be imported from a stranger's run folder."""
import pathlib
pathlib.Path({marker!r}).write_text("ran")


def register_nodes(registry):
    pass
'''
MAX_SECONDS = 3.0  # of CPU (hri stats --plots refusing takes 1.35 s, once 2.15 s on a noisy machine): the wall time on a shared machine is printed (pytest -s), not asserted to it
MAX_WALL_SECONDS = 15.0
MAX_RSS_MB = 200
MEASURED: dict[str, tuple[float, float, float]] = {}  # case: wall s, CPU s, max RSS MB


@pytest.fixture(scope="module")
def kept_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = tmp_path_factory.mktemp("kept") / "run"
    result = subprocess.run([HRI, "run", "coexistence", "--duration", "0.5", "--out", str(run)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return run


@pytest.fixture(scope="module")
def outside(kept_run: Path) -> Iterator[Path]:
    """Beside the cases: a copy of the kept run, the plug-ins, a FIFO (a short path: messages
    quote it whole)."""
    folder = Path(tempfile.mkdtemp(prefix="hri-out-", dir="/tmp"))
    shutil.copytree(kept_run, folder / "run")
    for name in ("evil.py", "evil_nodes.py"):
        (folder / name).write_text(PLUGIN.format(marker=str(folder / "MARKER")))
    os.mkfifo(folder / "fifo")
    yield folder
    shutil.rmtree(folder)
    if MEASURED:  # the figures of the corpus, for the record (pytest -s shows them)
        figures = [(max(MEASURED.items(), key=lambda item: item[1][k]), unit) for k, unit in enumerate(("s", "s CPU", "MB"))]
        print("\nlargest of the corpus: " + "; ".join(f"{name} {values[k]:.2f} {unit}"
                                                     for k, ((name, values), unit) in enumerate(figures)))


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _fill(value: Any, names: dict[str, str]) -> Any:
    """``value`` (from the corpus) with its placeholders filled in, in strings, keys and lists."""
    if isinstance(value, str):
        for key, text in names.items():
            value = value.replace("{" + key + "}", text)
        return value
    if isinstance(value, list):
        return [_fill(item, names) for item in value]
    if isinstance(value, dict):
        return {_fill(k, names): _fill(v, names) for k, v in value.items()}
    return value


class _Case:
    """A copy of the kept run and the steps that make it hostile."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.manifest_file = folder / "manifest.json"

    def manifest(self) -> dict:
        return json.loads(self.manifest_file.read_text())

    def save(self, manifest: dict) -> None:
        self.manifest_file.write_text(json.dumps(manifest, indent=2))

    def rehash(self, relative: str) -> None:
        manifest = self.manifest()
        manifest["files"][relative] = {"sha256": _sha256(self.folder / relative), "source": "elsewhere"}
        self.save(manifest)

    def replace(self, relative: str) -> Path:
        path = self.folder / relative
        if path.is_symlink() or path.is_file():
            path.unlink()
        elif path.is_dir():
            shutil.rmtree(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        return path

    def apply(self, step: dict) -> None:
        (kind, arg), = step.items()
        getattr(self, f"do_{kind}")(arg)

    def do_write(self, arg: dict) -> None:
        path = self.replace(arg["path"])
        if "bytes" in arg:
            path.write_bytes(b"<!--" + b" " * (arg["bytes"] - 7) + b"-->")
        else:
            path.write_text(arg["text"])
        if arg.get("list"):
            self.rehash(arg["path"])

    def do_scenario(self, arg: dict) -> None:
        data = yaml.safe_load((self.folder / "scenario.yaml").read_text())
        for dotted, value in arg.items():
            *parents, last = dotted.split(".")
            target = data
            for key in parents:
                target = target[key]
            target[last] = value
        (self.folder / "scenario.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
        self.rehash("scenario.yaml")

    def do_manifest(self, arg: dict) -> None:
        self.save({**self.manifest(), **arg})

    def do_files(self, arg: dict) -> None:
        manifest = self.manifest()
        for key, entry in arg.items():
            if entry is None:
                del manifest["files"][key]
            elif "hash_of" in entry:
                manifest["files"][key] = {"sha256": _sha256(self.folder / entry["hash_of"]), "source": "x"}
            else:
                manifest["files"][key] = entry
        self.save(manifest)

    def do_manifest_text(self, arg: Any) -> None:
        if isinstance(arg, str):
            text = arg
        elif "replace" in arg:
            old, new = arg["replace"]
            text = self.manifest_file.read_text()
            assert old in text
            text = text.replace(old, new)
        elif "deep" in arg:
            text = "[" * arg["deep"] + "]" * arg["deep"]
        else:
            text = self.manifest_file.read_text() + " " * arg["pad"]
        self.manifest_file.write_text(text)

    def do_edit(self, arg: dict) -> None:
        path = self.folder / arg["path"]
        text = path.read_text()
        assert arg["old"] in text
        path.write_text(text.replace(arg["old"], arg["new"]))
        self.rehash(arg["path"])

    def do_symlink(self, arg: dict) -> None:
        self.replace(arg["path"]).symlink_to(arg["to"])

    def do_fifo(self, relative: str) -> None:
        os.mkfifo(self.replace(relative))

    def do_device(self, relative: str) -> None:
        path = self.replace(relative)
        try:
            os.mknod(path, 0o600 | 0o020000, os.makedev(1, 5))  # a character device: /dev/zero's numbers
        except PermissionError:
            pytest.skip("making a device needs root")

    def do_remove(self, relative: str) -> None:
        self.replace(relative)


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_hostile_run_folder_is_refused_in_one_line(name: str, kept_run: Path, outside: Path, tmp_path: Path) -> None:
    case = tmp_path / "case"
    shutil.copytree(kept_run, case)
    names = {"case": str(case), "outside": str(outside), "up": os.path.relpath(outside, case)}
    names["plugin"] = PLUGIN.format(marker=str(outside / "MARKER"))
    spec = _fill(CORPUS[name], names)
    built = _Case(case)
    for step in spec["do"]:
        built.apply(step)
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(outside), "PYTHONWARNINGS": "ignore"}
    code, stderr, seconds, cpu, rss_mb = run_measured(["run", "--from", str(case), *spec.get("args", []),
                                                        "--out", str(out)], env)
    MEASURED[name] = (seconds, cpu, rss_mb)
    assert code != 0, stderr
    assert "Traceback" not in stderr
    assert stderr.splitlines() == [spec["error"]]
    assert not (outside / "MARKER").exists(), "a plug-in ran"
    assert not out.exists(), "the refused rerun created --out"
    assert cpu < MAX_SECONDS, f"{cpu:.2f} s of CPU"
    assert seconds < MAX_WALL_SECONDS, f"{seconds:.2f} s"  # a hang (a FIFO opened): the machine is shared
    assert rss_mb < MAX_RSS_MB, f"{rss_mb:.0f} MB"


def test_the_corpus_covers_what_the_rule_is_about() -> None:
    steps = {kind for case in CORPUS.values() for step in case["do"] for kind in step}
    assert len(CORPUS) >= 25
    assert {"symlink", "fifo", "device", "files", "manifest", "manifest_text", "scenario", "edit", "remove"} <= steps


def test_trusted_plugins_of_a_kept_run_run_again(kept_run: Path, outside: Path, tmp_path: Path, capsys) -> None:
    """The same plug-in folder as the injection case, with --trust-plugins: it runs (the rule
    refuses only without the flag, and the marker shows the test could see code run)."""
    case = tmp_path / "case"
    shutil.copytree(kept_run, case)
    built = _Case(case)
    built.apply({"write": {"path": "inputs/plugins/0/nodes.py", "list": True,
                           "text": PLUGIN.format(marker=str(tmp_path / "MARKER"))}})
    built.apply({"scenario": {"plugins": ["inputs/plugins/0/nodes.py"]}})
    assert main(["run", "--from", str(case), "--trust-plugins", "--out", str(tmp_path / "out")]) == 0
    assert (tmp_path / "MARKER").read_text() == "ran"
    assert (tmp_path / "out" / "stats.json").is_file()


READERS = [  # command (RUN: the run folder), the file made hostile, how, the line after "RUN/FILE: "
    (["stats", "{run}"], "stats.json", "symlink", "leads out of the folder (through a symlink)"),
    (["stats", "{run}"], "stats.json", "huge", "is larger than 16 MB, the most read"),
    (["stats", "{run}", "--plots"], "trajectory.csv", "symlink", "leads out of the folder (through a symlink)"),
    (["stats", "{run}", "--plots"], "trajectory.csv", "fifo", "is a FIFO, not a regular file"),
    (["render", "{run}/inputs/trees/coexistence_robot.xml", "--run", "{run}", "--at", "0.2"], "events.jsonl",
     "fifo", "is a FIFO, not a regular file"),
    (["render", "{run}/inputs/trees/coexistence_robot.xml", "--run", "{run}", "--at", "0.2"], "events.jsonl",
     "huge", "is larger than 256 MB, the most read"),
    (["render", "{run}/inputs/trees/coexistence_robot.xml", "--run", "{run}", "--at", "0.2"], "events.jsonl",
     "symlink", "leads out of the folder (through a symlink)"),
    (["render", "{run}/inputs/trees/coexistence_robot.xml", "--run", "{run}", "--at", "0.2"], "robot.btlog",
     "symlink", "leads out of the folder (through a symlink)"),
    (["render", "{run}/inputs/trees/coexistence_robot.xml", "--run", "{run}", "--at", "0.2"], "robot.btlog",
     "fifo", "is a FIFO, not a regular file"),
    (["replay", "{run}", "--groot2", "17667"], "person.btlog", "fifo", "is a FIFO, not a regular file"),
    (["replay", "{run}", "--groot2", "17667"], "person.btlog", "device", "is a character device, not a regular file"),
    (["replay", "{run}", "--groot2", "17667"], "robot.btlog", "symlink", "leads out of the folder (through a symlink)"),
]


@pytest.mark.parametrize("argv, name, how, error", READERS, ids=lambda v: v if isinstance(v, str) else None)
def test_other_readers_of_a_run_folder_refuse_in_one_line(argv: list[str], name: str, how: str, error: str,
                                                          kept_run: Path, outside: Path, tmp_path: Path) -> None:
    """hri stats, render --run and replay read a run folder too: no symlink out, no FIFO hang,
    no device, a cap on what is read whole."""
    run = tmp_path / "run"
    shutil.copytree(kept_run, run)
    built = _Case(run)
    if how == "symlink":
        built.do_symlink({"path": name, "to": str(outside / "run" / name)})
    elif how == "huge":  # sparse: large without filling the disk
        with open(built.replace(name), "wb") as f:
            f.truncate(300 * 1024 * 1024)
    else:
        getattr(built, f"do_{how}")(name)
    code, stderr, seconds, cpu, rss_mb = run_measured([a.format(run=run) for a in argv], dict(os.environ))
    assert code != 0 and "Traceback" not in stderr
    assert stderr.splitlines() == [f"{run / name}: {error}"]
    assert cpu < MAX_SECONDS and seconds < MAX_WALL_SECONDS and rss_mb < MAX_RSS_MB
    assert not (run / "plots").exists()


def test_plots_of_a_run_folder_do_not_follow_its_scenario_out(kept_run: Path, outside: Path, tmp_path: Path,
                                                              capsys) -> None:
    run = tmp_path / "run"
    shutil.copytree(kept_run, run)
    _Case(run).do_symlink({"path": "scenario.yaml", "to": str(outside / "run" / "scenario.yaml")})
    capsys.readouterr()
    assert main(["stats", str(run), "--plots"]) == 0
    assert f"{run / 'scenario.yaml'} leads out of the folder (through a symlink)" in capsys.readouterr().err


def test_stats_of_a_batch_does_not_read_a_run_through_a_symlink_out(tmp_path: Path, capsys) -> None:
    batch, elsewhere = tmp_path / "batch", tmp_path / "elsewhere"
    (batch / "runs").mkdir(parents=True)
    (batch / "batch.json").write_text(json.dumps({"configs": []}))
    elsewhere.mkdir()
    (elsewhere / "run.json").write_text(json.dumps({"run_id": "c000-r0000", "config_id": "c000", "status": "ok"}))
    (elsewhere / "stats.json").write_text(json.dumps({"seed": 0}))
    (batch / "runs" / "c000-r0000").symlink_to(elsewhere)
    capsys.readouterr()
    assert main(["stats", str(batch)]) == 1
    assert capsys.readouterr().err.strip() == (f"{batch / 'runs' / 'c000-r0000' / 'run.json'}: "
                                               "leads out of the folder (through a symlink)")
