"""What a run directory keeps of what ran, so the run can be plotted, run again and compared.

Besides its outputs (``stats.json``, ``events.jsonl``, ``trajectory.csv``), every run
directory (``hri run --out DIR``, each run of ``hri batch``) keeps its inputs:

* ``scenario.yaml``: the scenario as it ran, ``--set`` overrides and ``--fault`` s applied,
  its ``trees`` and ``plugins`` pointing at the copies below (``hri run DIR/scenario.yaml``
  loads it);
* ``inputs/trees/``: copies of the two tree files and every file they include, laid out as
  the originals were relative to each other, so the includes' relative paths still hold;
* ``inputs/plugins/``: copies of the plug-in files (``.py`` paths, and modules named by an
  importable name that are a single file);
* ``manifest.json`` (written last: present means the inputs are complete): where the scenario
  came from, the overrides, seed, duration and ``strict``, and every kept file with its
  SHA-256 and original path.

:func:`load_kept_run` reads them back for ``hri run --from DIR``, refusing a folder without a
manifest and a kept file that changed since (hash mismatch); the plots take the floor plan
from :func:`kept_scenario`. A plug-in given as a package name is recorded (name, SHA-256 of
its ``__init__``), not copied: the rerun imports it by name again.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import yaml

from hri.base.errors import HriError
from hri.base.files import plain_folder_mode, write_atomic, wrong_kind
from hri.base.numbers import duration_problem
from hri.scenario.load import load_scenario
from hri.scenario.model import Scenario

MANIFEST = "manifest.json"
SCENARIO = "scenario.yaml"
INPUTS = "inputs"
FORMAT = "hri-run-1"
_HEADER = "# The scenario as it ran (overrides applied); trees and plug-ins are the copies in inputs/.\n"


@dataclass
class RunRecord:
    """How a run was asked for: enough, with the kept scenario, to run it again."""

    source: str
    """The scenario as the user named it (preset name or path), before any copy."""
    seed: int
    duration_s: float
    overrides: list[str] = field(default_factory=list)
    faults: list[str] = field(default_factory=list)
    strict: bool = False
    rerun_of: str | None = None
    """The run directory this run repeats (``hri run --from``)."""


@dataclass
class KeptRun:
    """A run directory's kept inputs, checked: the scenario to run and how."""

    path: Path
    scenario: Scenario
    record: RunRecord


# --- writing --------------------------------------------------------------------------------

def keep_inputs(out_dir: Path, scenario: Scenario, record: RunRecord) -> None:
    """Write ``scenario.yaml``, ``inputs/`` and then ``manifest.json`` into ``out_dir``, a
    folder of its own for this run (the staging folder of :mod:`hri.run.out_folder`, a batch
    run's temporary folder), which holds no run yet."""
    out_dir.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=out_dir, prefix=f".{INPUTS}-"))
    os.chmod(staging, plain_folder_mode())  # mkdtemp's 0700 would hide inputs/ from others
    try:
        files, data = _copy_inputs(scenario, staging)
        text = _dump_scenario(data)
        write_atomic(out_dir / SCENARIO, text)
        os.rename(staging, out_dir / INPUTS)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    files = {SCENARIO: {"sha256": _sha256(text.encode("utf-8")), "source": str(scenario.path)}, **files}
    manifest = {"format": FORMAT, "scenario_name": scenario.name, **asdict(record), "files": files,
                "modules": _named_modules(scenario)}
    write_atomic(out_dir / MANIFEST, json.dumps(manifest, indent=2) + "\n")


def check_replaceable(out_dir: Path, option: str) -> None:
    """A ``scenario.yaml`` or ``inputs/`` already in ``out_dir`` is an earlier run's: one we
    wrote (manifest, or our header), not a user's own folder given as ``--out``."""
    scenario, inputs = out_dir / SCENARIO, out_dir / INPUTS
    if not (scenario.exists() or inputs.exists()) or is_run_dir(out_dir):
        return
    try:
        ours = scenario.is_file() and scenario.read_text(encoding="utf-8").startswith(_HEADER)
    except (OSError, UnicodeDecodeError):
        ours = False
    if not ours:
        raise HriError(f"{option} {out_dir}: holds a {SCENARIO} or {INPUTS}/ that no run wrote; "
                       "a run keeps what ran there, so choose another folder")


def _copy_inputs(scenario: Scenario, staging: Path) -> tuple[dict[str, dict[str, str]], dict]:
    """Copy trees and plug-ins into ``staging``; the manifest's file entries (paths relative to
    the run directory) and the scenario's document pointing at the copies."""
    files: dict[str, dict[str, str]] = {}
    tree_files = {role: _tree_closure(path) for role, path in scenario.trees.items()}
    every = sorted({f for closure in tree_files.values() for f in closure})
    root = os.path.commonpath([os.path.dirname(f) for f in every])
    for source in every:
        _copy(source, staging, f"{INPUTS}/trees/{os.path.relpath(source, root)}", files)
    trees = {role: f"{INPUTS}/trees/{os.path.relpath(closure[0], root)}" for role, closure in tree_files.items()}
    plugins = _copy_plugins(scenario, staging, files) if scenario.plugins else None
    return files, scenario.document.for_run_directory(trees, plugins)


def _tree_closure(path: Path) -> list[str]:
    """``path`` (first) and every file it includes, directly or not, as absolute paths."""
    from hri.bt.xml_loader import parse_tree_file

    first = os.path.abspath(path)
    found, todo = [first], [first]
    while todo:
        file = todo.pop()
        root = parse_tree_file(Path(file).read_bytes(), file)
        for element in root.children:
            relative = element.attrib.get("path", "").strip() if element.tag == "include" else ""
            included = os.path.normpath(os.path.join(os.path.dirname(file), relative)) if relative else ""
            if included and included not in found:
                found.append(included)
                todo.append(included)
    return found


def _copy_plugins(scenario: Scenario, staging: Path, files: dict[str, dict[str, str]]) -> list[str]:
    """Copy each plug-in file; the scenario's ``plugins`` list, pointing at the copies."""
    specs = []
    for i, spec in enumerate(scenario.plugins):
        source = (os.path.abspath(scenario.path.parent / spec.strip()) if _is_path(spec.strip())
                  else _single_file_module(spec.strip()))
        if source is None:  # a package: imported by name again (recorded in "modules")
            specs.append(spec)
            continue
        target = f"{INPUTS}/plugins/{i}/{os.path.basename(source)}"  # one folder each: names may clash
        _copy(source, staging, target, files)
        specs.append(target)
    return specs


def _is_path(spec: str) -> bool:
    """A plug-in named by its file, as :mod:`hri.bt.plugins` tells them from module names."""
    return spec.endswith(".py") or "/" in spec or os.sep in spec


def _single_file_module(name: str) -> str | None:
    """The ``.py`` file of an importable module that is a single file, else None."""
    spec = importlib.util.find_spec(name)
    if spec is None or spec.submodule_search_locations is not None or not (spec.origin or "").endswith(".py"):
        return None
    return os.path.abspath(spec.origin)


def _named_modules(scenario: Scenario) -> dict[str, dict[str, str]]:
    """Plug-ins kept by name: their file and its SHA-256, to show what they were."""
    out = {}
    for spec in scenario.plugins:
        if _is_path(spec.strip()) or _single_file_module(spec.strip()) is not None:
            continue
        found = importlib.util.find_spec(spec.strip())
        origin = found.origin if found is not None else None
        out[spec] = {"origin": str(origin), "sha256": _sha256(Path(origin).read_bytes())
                     if origin and os.path.isfile(origin) else ""}
    return out


def _copy(source: str, staging: Path, relative: str, files: dict[str, dict[str, str]]) -> None:
    """Copy ``source`` to where ``relative`` (``inputs/...``) lies in the staging folder and
    enter it in ``files`` with the hash of the bytes copied."""
    data = Path(source).read_bytes()
    staged = staging / Path(relative).relative_to(INPUTS)
    staged.parent.mkdir(parents=True, exist_ok=True)
    staged.write_bytes(data)
    files[relative] = {"sha256": _sha256(data), "source": source}


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class _NoAliases(yaml.SafeDumper):
    def ignore_aliases(self, data: Any) -> bool:  # a value used twice is written twice: plain YAML
        return True


def _dump_scenario(data: dict) -> str:
    return _HEADER + yaml.dump(data, Dumper=_NoAliases, sort_keys=False, allow_unicode=True, default_flow_style=None)


# --- reading --------------------------------------------------------------------------------

def is_run_dir(path: Path) -> bool:
    """A folder with a manifest of its inputs."""
    return (path / MANIFEST).is_file()


def read_manifest(path: Path, option: str = "--from") -> dict[str, Any]:
    """The run directory's manifest, or a one-line error naming ``option``."""
    if not path.is_dir():
        raise HriError(f"{option} {path}: {wrong_kind(path, folder=True) or 'no such directory'}")
    if not is_run_dir(path):
        raise HriError(f"{option} {path}: not a run directory (no {MANIFEST}; hri run --out and hri batch write one)")
    try:
        manifest = json.loads((path / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise HriError(f"{option} {path}: unreadable {MANIFEST} ({err})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise HriError(f"{option} {path}: {MANIFEST} is not a run manifest of this hri ({FORMAT})")
    return manifest


def check_copies(path: Path, manifest: dict[str, Any], option: str = "--from") -> None:
    """Every kept file is there with the SHA-256 the manifest has."""
    for relative, entry in (manifest.get("files") or {}).items():
        file = path / relative
        try:
            digest = _sha256(file.read_bytes())
        except OSError:
            raise HriError(f"{option} {path}: {file} is missing (listed in {MANIFEST})") from None
        if digest != entry.get("sha256"):
            raise HriError(f"{option} {path}: {file} was changed after the run (its SHA-256 differs from {MANIFEST})")


def load_kept_run(path: Path, option: str = "--from") -> KeptRun:
    """The kept scenario and record of a run directory, its copies checked against the manifest."""
    manifest = read_manifest(path, option)
    check_copies(path, manifest, option)
    try:
        record = RunRecord(str(manifest["source"]), int(manifest["seed"]), float(manifest["duration_s"]),
                           list(manifest.get("overrides") or []), list(manifest.get("faults") or []),
                           bool(manifest.get("strict")), manifest.get("rerun_of"))
    except KeyError as err:
        raise HriError(f"{option} {path}: {MANIFEST} lacks {err}") from None
    except (TypeError, ValueError) as err:
        raise HriError(f"{option} {path}: {MANIFEST} holds a value of the wrong kind ({err})") from None
    if (problem := duration_problem(record.duration_s)) is not None:
        raise HriError(f"{option} {path}: {MANIFEST}: duration_s {problem}")
    return KeptRun(path, load_scenario(str(path.resolve() / SCENARIO)), record)


def kept_scenario(path: Path) -> Scenario | None:
    """The scenario kept in a run directory (for its floor plan), or None for a folder
    without one; trees and plug-ins are not loaded."""
    file = path / SCENARIO
    if not file.is_file():
        return None
    return load_scenario(str(file.resolve()), check_trees=False)
