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
* ``inputs/robot/``: a copy of the arm's file when ``robot.model`` is the user's own (a URDF,
  a Denavit–Hartenberg table). A URDF that names other files (meshes, textures: PyBullet would
  read them from wherever they lie) or is larger than :data:`KEPT_MAX_BYTES` is not copied:
  the kept scenario names the original by its absolute path, and ``--from`` refuses it;
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
import re
import shutil
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import yaml

from hri.base.errors import HriError
from hri.base.files import plain_folder_mode, write_atomic, wrong_kind
from hri.base.numbers import MAX_DURATION_S, duration_problem
from hri.base.untrusted import MB, Missing, Unreadable, inside, path_problem, read_inside, regular_size
from hri.bt.xml_loader import MAX_FILE_BYTES
from hri.scenario.document import Document
from hri.scenario.load import build_scenario, read_document
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
    return files, scenario.document.for_run_directory(trees, plugins, _copy_model(scenario, staging, files))


def _copy_model(scenario: Scenario, staging: Path, files: dict[str, dict[str, str]]) -> str | None:
    """Copy the user's arm file (``robot.model``, not a shipped robot) to ``inputs/robot/``;
    what the kept scenario's ``robot.model`` names: the copy, the original's absolute path
    when it is a URDF that cannot be kept (:func:`_model_problem`), None for a shipped arm."""
    file = scenario.robot.model.file
    if file is None:
        return None
    if _model_problem(file.name, file.read_bytes()) is not None:
        return str(file)
    target = f"{INPUTS}/robot/{file.name}"
    _copy(str(file), staging, target, files)
    return target


def _model_problem(name: str, data: bytes) -> str | None:
    """Why the arm file ``name`` holding ``data`` is not kept in a run folder, or None: a URDF
    that names other files (PyBullet reads them, from wherever they point), or one above
    :data:`KEPT_MAX_BYTES`. A Denavit–Hartenberg table names none (its reader's cap is below)."""
    from hri.kinematics.arm_model import model_kind
    from hri.kinematics.urdf import named_files

    if model_kind(Path(name)) != ".urdf":
        return None
    if len(data) > KEPT_MAX_BYTES:
        return f"is larger than {KEPT_MAX_BYTES // MB} MB, the most a run folder keeps of a file"
    try:
        named = named_files(data)
    except ValueError as err:
        return str(err)
    return (f"names files besides itself ({', '.join(_shown(n) for n in named[:3])}"
            f"{', ...' if len(named) > 3 else ''}), which a run folder does not keep") if named else None


def _tree_closure(path: Path) -> list[str]:
    """``path`` (first) and every file it includes, directly or not, as absolute paths."""
    from hri.bt.xml_loader import parse_tree_file

    first = os.path.abspath(path)
    found, todo = [first], [first]
    while todo:
        file = todo.pop()
        for written, _ in _written_includes(parse_tree_file(Path(file).read_bytes(), file)):
            included = os.path.normpath(os.path.join(os.path.dirname(file), written))
            if included not in found:
                found.append(included)
                todo.append(included)
    return found


def _written_includes(root: Any) -> list[tuple[str, int | None]]:
    """The ``<include path=...>`` of a parsed tree file: each path as written, and its line."""
    return [(element.attrib["path"].strip(), element.line) for element in root.children
            if element.tag == "include" and element.attrib.get("path", "").strip()]


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
#
# A run folder may come from someone else: it is data. Every path it names (the manifest's
# keys, the scenario's trees and plug-ins, the trees' includes) stays inside it, only regular
# files are read, each at most a stated size (hri.base.untrusted), the manifest is checked
# against its schema before use, and plug-ins (code) run only with --trust-plugins.

MANIFEST_MAX_BYTES = MB
"""The most of ``manifest.json`` read (a kept run's is a few KB)."""
KEPT_MAX_BYTES = MAX_FILE_BYTES
"""The most of each kept file read: the tree loader's limit (``hri.bt.xml_loader``)."""
_MAX_DEPTH = 4  # format -> files -> path -> {sha256, source}
_HEX64 = re.compile(r"[0-9a-f]{64}")
_MAX_SEED = 2**63 - 1


def is_run_dir(path: Path) -> bool:
    """A folder with a manifest of its inputs."""
    return (path / MANIFEST).is_file()


def read_manifest(path: Path, option: str = "--from") -> dict[str, Any]:
    """The run directory's manifest, checked against its schema, or a one-line error naming ``option``."""
    if not path.is_dir():
        raise HriError(f"{option} {path}: {wrong_kind(path, folder=True) or 'no such directory'}")
    try:
        data = read_inside(path, MANIFEST, MANIFEST_MAX_BYTES)
    except Unreadable as err:
        if isinstance(err, Missing):
            raise HriError(f"{option} {path}: not a run directory (no {MANIFEST}; "
                           "hri run --out and hri batch write one)") from None
        raise HriError(f"{option} {path}: {MANIFEST} {err}") from None
    try:
        manifest = json.loads(data.decode("utf-8"), parse_constant=_no_constant)
    except RecursionError:
        raise HriError(f"{option} {path}: {MANIFEST} is nested deeper than a run manifest ({_MAX_DEPTH} levels)") from None
    except ValueError as err:  # UnicodeDecodeError and JSONDecodeError too
        raise HriError(f"{option} {path}: unreadable {MANIFEST} ({err})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise HriError(f"{option} {path}: {MANIFEST} is not a run manifest of this hri ({FORMAT})")
    if _depth(manifest) > _MAX_DEPTH:
        raise HriError(f"{option} {path}: {MANIFEST} is nested deeper than a run manifest ({_MAX_DEPTH} levels)")
    if (problem := manifest_problem(manifest)) is not None:
        raise HriError(f"{option} {path}: {MANIFEST}: {problem}")
    return manifest


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not a JSON number")


def _depth(value: Any) -> int:
    """How deeply ``value`` nests lists and objects (a scalar: 0), without recursion."""
    deepest, todo = 0, [(value, 1)]
    while todo:
        item, level = todo.pop()
        if isinstance(item, (dict, list)):
            deepest = max(deepest, level)
            todo.extend((child, level + 1) for child in (item.values() if isinstance(item, dict) else item))
    return deepest


def _shown(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 120 else text[:117] + "..."


def manifest_problem(manifest: dict[str, Any]) -> str | None:
    """What makes ``manifest`` (a JSON object of this format, not deeper than a manifest) no
    run manifest, or None: the schema of what :func:`keep_inputs` writes, its types and ranges."""
    for key in manifest:
        if key not in _FIELDS:
            return f"unknown key {_shown(key)}"
    for key in ("source", "seed", "duration_s", "files"):
        if key not in manifest:
            return f"lacks '{key}'"
    for key, check in _FIELDS.items():
        if key in manifest and (problem := check(manifest[key])) is not None:
            return f"{key} {problem}"
    for relative, entry in manifest["files"].items():
        if (problem := path_problem(relative)) is not None:
            return f"files: {_shown(relative)} {problem}"
        if (problem := _file_entry_problem(entry)) is not None:
            return f"files: {relative}: {problem}"
    if SCENARIO not in manifest["files"]:
        return f"files does not list {SCENARIO}"
    return None


def _must(ok: bool, what: str, value: Any) -> str | None:
    return None if ok else f"must be {what}, got {_shown(value)}"


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _duration_problem(value: Any) -> str | None:
    if not (_is_int(value) or isinstance(value, float)):
        return _must(False, "a number of seconds", value)
    if _is_int(value) and value > MAX_DURATION_S:  # float() of a huge int overflows
        return _must(False, f"at most {MAX_DURATION_S:g} s", value)
    return duration_problem(float(value))  # its message shows the value


def _file_entry_problem(entry: Any) -> str | None:
    if not isinstance(entry, dict) or set(entry) != {"sha256", "source"}:
        return _must(False, "an object {sha256, source}", entry)
    if not isinstance(entry["sha256"], str) or not _HEX64.fullmatch(entry["sha256"]):
        return f"sha256 {_must(False, '64 lowercase hex digits', entry['sha256'])}"
    return None if isinstance(entry["source"], str) else f"source {_must(False, 'a string', entry['source'])}"


def _is_module_entry(entry: Any) -> bool:
    return isinstance(entry, dict) and set(entry) == {"origin", "sha256"} and all(isinstance(v, str) for v in entry.values())


_FIELDS: dict[str, Any] = {
    "format": lambda v: _must(isinstance(v, str), "a string", v),
    "scenario_name": lambda v: _must(isinstance(v, str), "a string", v),
    "source": lambda v: _must(isinstance(v, str), "a string", v),
    "seed": lambda v: _must(_is_int(v) and 0 <= v <= _MAX_SEED, "an integer from 0 to 2**63-1", v),
    "duration_s": _duration_problem,
    "overrides": lambda v: _must(isinstance(v, list) and all(isinstance(i, str) for i in v), "a list of strings", v),
    "faults": lambda v: _must(isinstance(v, list) and all(isinstance(i, str) for i in v), "a list of strings", v),
    "strict": lambda v: _must(isinstance(v, bool), "true or false", v),
    "rerun_of": lambda v: _must(v is None or isinstance(v, str), "a string or null", v),
    "files": lambda v: _must(isinstance(v, dict) and bool(v), "an object of relative paths to {sha256, source}, "
                             f"{SCENARIO} among them", v),
    "modules": lambda v: _must(isinstance(v, dict) and all(_is_module_entry(e) for e in v.values()),
                               "an object of module names to {origin, sha256}", v),
}
"""The manifest's keys and the check of each value (a problem, or None)."""


def check_copies(path: Path, manifest: dict[str, Any], option: str = "--from") -> None:
    """Every kept file is a regular file inside ``path``, at most :data:`KEPT_MAX_BYTES`, with
    the SHA-256 the manifest has."""
    for relative, entry in manifest["files"].items():
        file = path / relative
        try:
            digest = _sha256(read_inside(path, relative, KEPT_MAX_BYTES))
        except Unreadable as err:
            raise HriError(f"{option} {path}: {file} {err} (listed in {MANIFEST})") from None
        if digest != entry["sha256"]:
            raise HriError(f"{option} {path}: {file} was changed after the run (its SHA-256 differs from {MANIFEST})")


def load_kept_run(path: Path, option: str = "--from", trust_plugins: bool = False) -> KeptRun:
    """The kept scenario and record of a run directory, its copies checked against the
    manifest, every input the scenario names listed there; its plug-ins only with
    ``trust_plugins`` (they run code), else a one-line error naming them."""
    manifest = read_manifest(path, option)
    check_copies(path, manifest, option)
    record = RunRecord(manifest["source"], manifest["seed"], float(manifest["duration_s"]),
                       list(manifest.get("overrides", [])), list(manifest.get("faults", [])),
                       manifest.get("strict", False), manifest.get("rerun_of"))
    shown = str(path.resolve() / SCENARIO)
    document = read_document(Path(shown), shown)
    model = _kept_model(path, document, manifest["files"], option)
    scenario = build_scenario(document, shown)
    used = _kept_inputs(path, scenario, manifest["files"], option) | ({model} if model else set())
    unused = sorted(set(manifest["files"]) - used - {SCENARIO})
    if unused:
        raise HriError(f"{option} {path}: {MANIFEST} lists {unused[0]}, which the kept scenario does not use")
    if scenario.plugins and not trust_plugins:
        raise HriError(f"{option} {path}: the kept scenario loads plug-ins, which run code: "
                       f"{', '.join(spec.strip() for spec in scenario.plugins)} "
                       "(add --trust-plugins to run them if you trust this folder)")
    from hri.scenario.trees import validate_trees

    validate_trees(scenario, shown)
    return KeptRun(path, scenario, record)


def _kept_model(path: Path, document: Document, files: dict[str, Any], option: str) -> str | None:
    """The manifest entry of the arm file the kept scenario's ``robot.model`` names, checked
    before the scenario's loader reads it: None for a shipped arm (or a value the loader
    refuses); else a copy inside ``path`` that the manifest lists (so :func:`check_copies`
    has held it to its size cap and SHA-256) and that :func:`_model_problem` keeps."""
    spec = _model_spec(document)
    if spec is None:
        return None
    listed = {os.path.normpath(key): key for key in files}
    if path_problem(spec) is not None or os.path.normpath(spec) not in listed:
        raise HriError(f"{option} {path}: {SCENARIO}: robot.model {_shown(spec)} is not kept in the run folder "
                       f"(a run keeps a copy of the arm's file in {INPUTS}/robot/, but not of a URDF that names mesh "
                       "files): run its scenario file again instead")
    key = listed[os.path.normpath(spec)]
    _check_model_copy(path, key, f"{option} {path}: ")
    return key


def _model_spec(document: Document) -> str | None:
    """What the kept scenario's ``robot.model`` names when it is a file (not a shipped arm,
    nor a value the loader refuses)."""
    from hri.kinematics.arm_model import SHIPPED

    robot = document.data.get("robot")
    spec = robot.get("model") if isinstance(robot, dict) else None
    return spec if isinstance(spec, str) and spec not in SHIPPED else None


def _check_model_copy(path: Path, relative: str, prefix: str) -> None:
    """The arm file ``relative`` is a regular file inside ``path``, within the size cap, that
    :func:`_model_problem` keeps; else an HriError (its message after ``prefix``)."""
    try:
        problem = _model_problem(relative, read_inside(path, relative, KEPT_MAX_BYTES))
    except Unreadable as err:
        raise HriError(f"{prefix}{path / relative} {err}") from None
    if problem is not None:
        raise HriError(f"{prefix}{relative} {problem}")


def _kept_inputs(path: Path, scenario: Scenario, files: dict[str, Any], option: str) -> set[str]:
    """The manifest entries the kept scenario reads: its trees and their includes, its plug-in
    files; each one a path inside ``path`` that the manifest lists."""
    listed = {os.path.normpath(key): key for key in files}

    def entry(relative: str, what: str, dots: bool = False) -> str:
        try:
            inside(path, relative, dots)
        except Unreadable as err:
            raise HriError(f"{option} {path}: {what} {err}") from None
        key = listed.get(os.path.normpath(relative))
        if key is None:
            raise HriError(f"{option} {path}: {what} is not listed in {MANIFEST}")
        return key

    used: set[str] = set()
    todo = [entry(str(named), f"{SCENARIO}: trees.{role} {_shown(named)}")
            for role, named in scenario.document.data["trees"].items() if role in scenario.trees]
    while todo:
        key = todo.pop()
        if key in used:
            continue
        used.add(key)
        todo.extend(entry(relative, f"{key}:{line}: include {_shown(included)}", dots=True)
                    for relative, included, line in _includes(path, key))
    for spec in scenario.plugins:
        name = str(spec).strip()
        if _is_path(name):
            used.add(entry(name, f"{SCENARIO}: plugins {_shown(name)}"))
    return used


def _includes(path: Path, key: str) -> list[tuple[str, str, int | None]]:
    """The includes of the kept tree ``key``: (path relative to the run directory, as
    written, line)."""
    from hri.bt.xml_loader import parse_tree_file

    try:
        data = read_inside(path, key, KEPT_MAX_BYTES)
    except Unreadable as err:  # read and hashed a moment ago: changed since
        raise HriError(f"{path / key} {err}") from None
    return [(written if os.path.isabs(written) else os.path.normpath(os.path.join(os.path.dirname(key), written)),
             written, line) for written, line in _written_includes(parse_tree_file(data, str(path / key)))]


def kept_scenario(path: Path) -> Scenario | None:
    """The scenario kept in a run directory (for its floor plan), or None for a folder
    without one; trees and plug-ins are not loaded. A ``scenario.yaml`` that leads out of
    the folder, is no regular file or is larger than :data:`KEPT_MAX_BYTES` is an HriError; so
    is an arm file (``robot.model``) that :func:`load_kept_run` would not load."""
    try:
        real = inside(path, SCENARIO)
        size = regular_size(real)
    except Unreadable as err:
        if isinstance(err, Missing):
            return None
        raise HriError(f"{path / SCENARIO} {err}") from None
    if size > KEPT_MAX_BYTES:
        raise HriError(f"{path / SCENARIO} is larger than {KEPT_MAX_BYTES // MB} MB, the most read")
    document = read_document(real, str(real))
    spec = _model_spec(document)
    if spec is not None:  # the arm's file, as --from checks it: inside the folder, capped, naming no other
        problem = path_problem(spec)
        if problem is not None:
            raise HriError(f"{path / SCENARIO}: robot.model {_shown(spec)} {problem}")
        _check_model_copy(path, spec, f"{path / SCENARIO}: robot.model ")
    return build_scenario(document, str(real))
