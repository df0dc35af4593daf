"""``hri batch``: many seeded runs of a scenario, over a sweep of parameters, resumable.

A batch directory holds ``batch.json`` (what the batch is), ``runs/<run_id>/`` (one
complete directory per finished run, renamed into place atomically) and ``results.parquet``
(one row per run, rebuilt from the run directories by :func:`build_results`). See
``docs/batch.md`` for the layout and the guarantees.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

from hri.base.errors import HriError
from hri.base.files import (hidden_file, keep_traceback, output_folder, remove_dead_staging, staging_folder,
                            write_atomic)
from hri.base.numbers import duration_problem, is_number
from hri.base.yaml_values import load_value
from hri.batch import backends

RUNS = "runs"
TMP_PREFIX = ".tmp-"


# --- the batch's definition ------------------------------------------------------------
def split_top_level(text: str) -> list[str]:
    """Split on commas that are not inside ``[]``, ``{}``, ``()`` or quotes."""
    parts, depth, quote, current = [], 0, "", []
    for ch in text:
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch in "[{(":
            depth += 1
        elif ch in "]})":
            depth = max(0, depth - 1)
        elif ch == "," and depth == 0:
            parts.append("".join(current))
            current = []
            continue
        current.append(ch)
    parts.append("".join(current))
    return parts


def parse_sweep(assignments: list[str]) -> dict[str, list[str]]:
    """``["a.b=1,2", ...]`` -> ``{"a.b": ["1", "2"]}`` (values still YAML text, keys in order).

    Keys swept together are given as one: ``"a,b=[1,x],[2,y]"`` -> ``{"a,b": ["[1,x]", "[2,y]"]}``,
    each value a list of one value per key (configurations then take them side by side, not
    crossed)."""
    sweep: dict[str, list[str]] = {}
    given: set[str] = set()
    for assignment in assignments:
        if "=" not in assignment:
            raise HriError(f"--set {assignment}: expected KEY=V1,V2,...")
        key, raw = assignment.split("=", 1)
        key = ",".join(part.strip() for part in key.split(","))
        keys = key.split(",")
        if not all(keys):
            raise HriError(f"--set {assignment}: empty key")
        for one in keys:
            if one in given:
                raise HriError(f"--set {one}: given twice (list all its values in one --set)")
            given.add(one)
        values = [v.strip() for v in split_top_level(raw)]
        for value in values:
            loaded = load_value(value, f"--set {key}")  # HriError naming the option
            if len(keys) > 1 and not (isinstance(loaded, list) and len(loaded) == len(keys)):
                raise HriError(f"--set {key}: each value is a list of {len(keys)} values, one per key, "
                               f"e.g. [{', '.join('V' + str(k + 1) for k in range(len(keys)))}]; got {value}")
        sweep[key] = values
    return sweep


def _yaml(value: str) -> Any:
    return _json_safe(load_value(value, "--set"))


def _json_safe(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))  # dates -> text


def _settings(key: str, value: str) -> list[tuple[str, Any, str]]:
    """(key, value, assignment) of each key of a sweep's ``key`` (keys swept together are one)
    at one of its values (YAML text)."""
    keys = key.split(",")
    if len(keys) == 1:
        return [(key, _yaml(value), f"{key}={value}")]
    values = [_json_safe(v) for v in load_value(value, "--set")]
    return [(k, v, f"{k}={json.dumps(v)}") for k, v in zip(keys, values)]  # JSON is YAML


def make_configs(sweep: dict[str, list[str]]) -> list[dict[str, Any]]:
    """The cross product of the sweep, in order: ``[{"id", "overrides", "assignments"}]``."""
    keys = list(sweep)
    configs = []
    for i, combo in enumerate(itertools.product(*(sweep[k] for k in keys))):
        settings = [one for k, v in zip(keys, combo) for one in _settings(k, v)]
        configs.append({"id": f"c{i:03d}", "overrides": {k: v for k, v, _ in settings},
                        "assignments": [a for _, _, a in settings]})
    return configs


def run_seeds(seed: int, runs: int) -> list[int]:
    """Seed of run k in every configuration (common random numbers)."""
    return [int(s.generate_state(1)[0]) for s in np.random.SeedSequence(seed).spawn(runs)]


def run_id(config_index: int, run_index: int) -> str:
    return f"c{config_index:03d}-r{run_index:04d}"


def batch_definition(scenario: str, duration_s: float, seed: int, runs: int,
                     sweep: dict[str, list[str]]) -> dict[str, Any]:
    """The content of ``batch.json``."""
    configs = make_configs(sweep)
    return {"scenario": scenario, "duration_s": float(duration_s), "seed": int(seed), "runs": int(runs),
            "sweep": {k: [_yaml(v) for v in values] for k, values in sweep.items()},
            "configs": [{"id": c["id"], "overrides": c["overrides"]} for c in configs]}


def claim_directory(out: Path, definition: dict[str, Any]) -> None:
    """Write ``batch.json``, or check that the one there describes the same batch; refuse (in
    one line naming it) anything in ``runs/`` this batch did not make, before anything is
    written or deleted."""
    output_folder(out, "--out")
    path = out / "batch.json"
    if not path.exists():
        for name in ("stats.json", "manifest.json"):
            if (out / name).exists():
                raise HriError(f"--out {out}: holds a run of hri run, not a batch: give another folder")
        if (out / "results.parquet").exists() or (out / "results.parquet").is_symlink():
            raise HriError(f"--out {out}: holds a results.parquet that no batch there made: give another folder")
    else:
        _check_same_batch(out, path, definition)
    runs = out / RUNS
    if runs.is_symlink() or (runs.exists() and not runs.is_dir()):
        raise HriError(f"--out {out}: {runs} is {'a link' if runs.is_symlink() else 'not a folder'}; "
                       "a batch keeps its runs in a folder of its own")
    runs.mkdir(exist_ok=True)
    check_runs_dir(runs, expected_runs(definition))
    if not path.exists():
        write_atomic(path, (json.dumps(definition, indent=2) + "\n").encode())


def _check_same_batch(out: Path, path: Path, definition: dict[str, Any]) -> None:
    try:
        existing = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise HriError(f"--out {out}: unreadable batch.json ({err})") from None
    if not isinstance(existing, dict):
        raise HriError(f"--out {out}: batch.json does not describe a batch (not a JSON object)")
    diffs = [f"{key} {existing.get(key)!r} != {definition[key]!r}"
             for key in ("scenario", "duration_s", "seed", "runs", "sweep") if existing.get(key) != definition[key]]
    if diffs:
        raise HriError(f"--out {out}: holds a different batch ({'; '.join(diffs)})")


def expected_runs(definition: dict[str, Any]) -> dict[str, int]:
    """The run ids of the batch with their seeds."""
    seeds = run_seeds(definition["seed"], definition["runs"])
    return {run_id(ci, k): seeds[k] for k in range(definition["runs"]) for ci in range(len(definition["configs"]))}


def is_own_run(entry: Path, expected: dict[str, int]) -> bool:
    """A folder the batch made: a run id of the batch, with the ``run.json`` the batch writes
    into each of its runs (its mark) naming that run and its seed."""
    if entry.is_symlink() or not entry.is_dir() or entry.name not in expected:
        return False
    record = read_run(entry)
    return isinstance(record, dict) and record.get("run_id") == entry.name and record.get("seed") == expected[entry.name]


def check_runs_dir(runs_dir: Path, expected: dict[str, int]) -> None:
    """HriError naming the first entry of ``runs/`` that the batch did not make: only its runs
    and its temporary folders (``.tmp-...-PID``) may be there, as the batch deletes failed runs
    and dead temporary folders to run them again."""
    for entry in sorted(runs_dir.iterdir()):
        temporary = entry.name.startswith(TMP_PREFIX) and entry.is_dir() and not entry.is_symlink()
        if not (temporary or is_own_run(entry, expected)):
            raise HriError(f"--out {runs_dir.parent}: {entry} was not made by this batch; hri batch keeps "
                           f"only its own runs in {RUNS}/ (move it elsewhere, or give another --out)")


# --- one run (executes in a worker) ---------------------------------------------------
def execute_run(task: dict[str, Any]) -> dict[str, Any]:
    """Run one task in a temporary directory and rename it into place; never raises for a
    failing run (its error is recorded). Returns ``{"record": run.json, "sim_time_s": ...}``."""
    from hri.base.quiet import import_pybullet_quietly

    import_pybullet_quietly()
    runs_dir = Path(task["runs_dir"])
    final = runs_dir / task["run_id"]
    tmp = staging_folder(runs_dir, f"{TMP_PREFIX}{task['run_id']}-")
    start = time.perf_counter()
    status, error, sim_time = "ok", None, 0.0
    try:
        from hri.run.run_dir import RunRecord, keep_inputs
        from hri.scenario.load import load_scenario
        from hri.run.sim import run_scenario

        scenario = load_scenario(task["scenario"], task["assignments"])
        keep_inputs(tmp, scenario, RunRecord(task["scenario"], task["seed"], float(task["duration_s"]),
                                             list(task["assignments"])))
        stats = run_scenario(scenario, task["duration_s"], seed=task["seed"], out_dir=tmp,
                             split=bool(task.get("split")))
        sim_time = float(stats.get("sim_time_s") or 0.0)
    except Exception as err:  # noqa: BLE001 - a crashing run is data, not the end of the batch
        status, error = "failed", _failure(err, tmp)
        (tmp / "stats.json").unlink(missing_ok=True)  # stats.json exists <=> the run is ok
    except BaseException:  # the worker is being stopped (SIGTERM, interrupt): leave nothing
        shutil.rmtree(tmp, ignore_errors=True)
        if backends.IN_LOCAL_WORKER:  # a local worker must not go on to its next queued run
            os._exit(1)
        raise
    record = {"run_id": task["run_id"], "config_id": task["config_id"], "overrides": task["overrides"],
              "seed": task["seed"], "run_index": task["run_index"], "status": status, "error": error,
              "wall_time_s": round(time.perf_counter() - start, 3)}
    write_atomic(tmp / "run.json", (json.dumps(record, indent=2) + "\n").encode())
    try:
        os.rename(tmp, final)
    except OSError:  # someone (an orphaned worker of an earlier start) finished it first
        shutil.rmtree(tmp, ignore_errors=True)
        record = read_run(final) or record
    return {"record": record, "sim_time_s": sim_time}


def _failure(err: Exception, run_dir: Path) -> str:
    """The ``error`` of a failed run's ``run.json``: an HriError's line, files named by absolute
    path (the batch's folder is read from anywhere), its traceback (a node's exception) kept
    in the run's folder as ``traceback.txt``; another exception's type and message."""
    if not isinstance(err, HriError):
        return f"{type(err).__name__}: {str(err) or type(err).__name__}"
    keep_traceback(err, run_dir)
    return err.text(absolute=True)


def read_run(run_dir: Path) -> dict[str, Any] | None:
    try:
        return json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def prepare_runs_dir(runs_dir: Path) -> tuple[set[str], int]:
    """Remove leftovers of dead runs and failed runs (to retry them); return the finished
    run ids and how many failed runs were cleared. Only what :func:`check_runs_dir` found to
    be the batch's own is there."""
    remove_dead_staging(runs_dir, TMP_PREFIX)
    finished, cleared = set(), 0
    for entry in sorted(runs_dir.iterdir()):
        if entry.name.startswith("."):  # temporary, not a run
            continue
        record = read_run(entry)
        if record is not None and record.get("status") == "ok":
            finished.add(entry.name)
        else:  # failed: move aside atomically, then delete
            aside = runs_dir / f"{TMP_PREFIX}{entry.name}-retry-{os.getpid()}"
            os.rename(entry, aside)
            shutil.rmtree(aside, ignore_errors=True)
            cleared += 1
    return finished, cleared


# --- results.parquet ------------------------------------------------------------------
def flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    """``{"a": {"b": 1}}`` -> ``{"a.b": 1}``."""
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, sub in value.items():
            out.update(flatten(sub, f"{prefix}.{key}" if prefix else str(key)))
        return out
    return {prefix: value}


def _column(values: list[Any]) -> Any:
    import pyarrow as pa

    present = [v for v in values if v is not None]
    if present and all(isinstance(v, bool) for v in present):
        return pa.array(values, pa.bool_())
    if present and all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        return pa.array(values, pa.int64())
    if present and all(is_number(v, finite=False) for v in present):
        return pa.array([None if v is None else float(v) for v in values], pa.float64())
    if all(isinstance(v, str) for v in present):
        return pa.array(values, pa.string())
    return pa.array([None if v is None else json.dumps(v) for v in values], pa.string())


def build_results(out: Path | str) -> Path:
    """(Re)build ``out/results.parquet`` from the run directories, atomically; return its path.

    Columns: run_id, config_id, run_index, seed, status, error, ``set.<key>`` (the swept
    value as JSON text) and every statistic of ``stats.json`` flattened with dots.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    out = Path(out)
    try:
        configs = json.loads((out / "batch.json").read_text(encoding="utf-8")).get("configs", [])
        sweep_keys = list(dict.fromkeys(k for c in configs for k in c["overrides"]))
    except (OSError, ValueError, TypeError, KeyError):
        sweep_keys = []
    rows: list[dict[str, Any]] = []
    runs_dir = out / RUNS
    entries = sorted(runs_dir.iterdir()) if runs_dir.is_dir() else []
    for entry in entries:
        if entry.name.startswith(".") or not entry.is_dir():
            continue
        record = read_run(entry)
        if record is None:
            continue
        row: dict[str, Any] = {k: record.get(k) for k in ("run_id", "config_id", "run_index", "seed",
                                                           "status", "error")}
        overrides = record.get("overrides") or {}
        for key in sweep_keys:
            row[f"set.{key}"] = json.dumps(overrides[key]) if key in overrides else None
        if record.get("status") == "ok":
            try:
                stats = json.loads((entry / "stats.json").read_text(encoding="utf-8"))
            except (OSError, ValueError):
                stats = {}
            for key, value in flatten(stats).items():
                row.setdefault(key, value)  # the run's own fields (seed, ...) come first
        rows.append(row)
    base = ["run_id", "config_id", "run_index", "seed", "status", "error"] + [f"set.{k}" for k in sweep_keys]
    columns = list(base)
    for row in rows:
        columns.extend(k for k in row if k not in columns)
    if rows:
        table = pa.table({c: _column([row.get(c) for row in rows]) for c in columns})
    else:
        table = pa.table({c: pa.array([], pa.string()) for c in columns})
    path = out / "results.parquet"
    fd, tmp = hidden_file(path)
    os.close(fd)
    try:
        pq.write_table(table, tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


# --- the batch --------------------------------------------------------------------------
def plan_tasks(definition: dict[str, Any], sweep: dict[str, list[str]], runs_dir: Path,
               finished: set[str]) -> list[dict[str, Any]]:
    """The runs still to do, run-index-major (so a partial batch covers every configuration)."""
    from hri.scenario.load import PRESETS

    seeds = run_seeds(definition["seed"], definition["runs"])
    configs = make_configs(sweep)
    scenario = definition["scenario"]  # absolute paths: a Ray worker need not share our cwd
    if not (scenario in PRESETS or ("/" not in scenario and not scenario.endswith((".yaml", ".yml")))):
        scenario = str(Path(scenario).resolve())
    tasks = []
    for k in range(definition["runs"]):
        for ci, config in enumerate(configs):
            rid = run_id(ci, k)
            if rid in finished:
                continue
            tasks.append({"run_id": rid, "config_id": config["id"], "overrides": config["overrides"],
                          "assignments": config["assignments"], "seed": seeds[k], "run_index": k,
                          "scenario": scenario, "duration_s": definition["duration_s"],
                          "runs_dir": str(runs_dir.resolve())})
    return tasks


def run_batch(scenario: str, runs: int, duration_s: float, out: Path, seed: int = 0,
              sets: list[str] | None = None, workers: int | None = None, backend: str = "local",
              address: str | None = None, resume_hint: str = "the same command",
              say: Callable[[str], None] = print, split: bool = False) -> int:
    """Run (or resume) a batch; return the exit code (0 all ok, 1 some failed or a worker
    lost, 130 interrupted). ``split``: each run's trees in processes of their own (the same
    results, so not part of the batch's definition)."""
    from hri.base.mqueue import cleanup_stale
    from hri.scenario.load import load_scenario

    if runs <= 0:
        raise HriError(f"--runs: must be positive, got {runs}")
    if (problem := duration_problem(duration_s)) is not None:
        raise HriError(f"--duration: {problem}")
    if seed < 0:
        raise HriError(f"--seed: must not be negative, got {seed}")
    workers = workers if workers is not None else (os.cpu_count() or 1)
    if workers <= 0:
        raise HriError(f"--workers: must be positive, got {workers}")
    if backend not in ("local", "ray"):
        raise HriError(f"--backend: local or ray, got {backend}")
    if backend == "ray":
        try:
            import ray  # noqa: F401
        except ImportError:
            raise HriError(backends.RAY_MISSING) from None
    sweep = parse_sweep(sets or [])
    for config in make_configs(sweep):  # unknown keys, invalid values: before any run starts
        load_scenario(scenario, config["assignments"])
    definition = batch_definition(scenario, duration_s, seed, runs, sweep)
    claim_directory(out, definition)
    cleanup_stale()
    runs_dir = out / RUNS
    finished, cleared = prepare_runs_dir(runs_dir)
    tasks = [{**task, "split": split} for task in plan_tasks(definition, sweep, runs_dir, finished)]
    total = runs * len(definition["configs"])
    skipped = total - len(tasks)
    configs = len(definition["configs"])
    say(f"batch: {total} runs ({configs} configuration{'' if configs == 1 else 's'} x {runs}), "
        f"skipping {skipped} already finished" + (f", retrying {cleared} failed" if cleared else "")
        + f"; {len(tasks)} to run on {workers} {'worker' if workers == 1 else 'workers'} ({backend})")
    results = (backends.run_ray(execute_run, tasks, workers, address) if backend == "ray"
               else backends.run_local(execute_run, tasks, workers))
    progress = backends.Progress(len(tasks))
    try:
        for result in results:
            progress.update(result)
    except (KeyboardInterrupt, backends.WorkerLost) as stop:
        results.close()
        progress.close()
        build_results(out)
        kept = len(finished) + progress.done - progress.failed
        why = "interrupted" if isinstance(stop, KeyboardInterrupt) else f"stopped: {stop}"
        say(f"hri batch: {why}; {kept} finished runs kept in {out}; resume with {resume_hint}")
        return 130 if isinstance(stop, KeyboardInterrupt) else 1
    progress.close()
    remove_dead_staging(runs_dir, TMP_PREFIX)
    path = build_results(out)
    failed = progress.failed
    say(f"batch: {progress.done} runs done, {skipped} skipped, {failed} failed; results in {path}")
    if failed:
        say(f"batch: {failed} of {progress.done} runs failed (see error in {runs_dir}/*/run.json)")
    return 1 if failed else 0
