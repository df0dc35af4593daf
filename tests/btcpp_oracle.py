"""Oracle side of the differential tests: runs a corpus case on BehaviorTree.CPP itself.

A case (``tests/differential_corpus/<name>.yaml``) is a small tree, the scripted statuses
of its test leaves and a number of ``tick_once()`` calls. ``run_case`` runs it on the
Python bindings of BehaviorTree.CPP (``behaviortreepy``: 4.8.2 from the package index, or
a local 4.10 build) and returns the outcome as a plain JSON-able dict::

    {"load_error": bool, "ticks": [status names], "tick_error": int | None,
     "log": [[leaf name, "start" | "tick" | "halt"], ...], "blackboard": {key: text}}

``tick_error`` is the index of the ``tick_once()`` that raised (no more ticks after it);
``blackboard`` holds ``get_string`` of every root-blackboard entry, None for an entry that
exists but holds no value (e.g. declared by a ``{port}`` and never written). When the tree
does not load, the other fields stay empty.

The reference is BehaviorTree.CPP 4.10. Where 4.8.2 behaves otherwise, the case file pins
the 4.10 outcome (``expected_4_10``, with ``why_4_8_differs``); ``expected_outcome`` gives
the pin or else runs the case. A case marked ``crashes_4_8_2`` kills a 4.8.2 process, so
``run_case`` refuses to run it there.

Run as a script with either interpreter, it prints the outcomes as JSON keyed by case
name: ``python tests/btcpp_oracle.py [--btlog DIR] [CASE.yaml ...]`` (no case: the whole
corpus; a case the library cannot run gives null; ``--btlog``: each case's ticks are also
logged by BehaviorTree.CPP's ``FileLogger`` into ``DIR/<case>.btlog``). It needs only PyYAML and behaviortreepy, so that
the 4.10 venv can run it too.
"""

from __future__ import annotations

import ctypes
import functools
import importlib
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import yaml

CORPUS_DIR = Path(__file__).parent / "differential_corpus"
VENV_410_PYTHON = Path("/work/ref/venv410/bin/python")
# TryCatch appeared in 4.9.0, with the subtree cycle detection that 4.8.2 lacks
PROBE_4_9_XML = (
    '<root BTCPP_format="4"><BehaviorTree ID="T">'
    "<TryCatch><AlwaysSuccess/><AlwaysSuccess/></TryCatch></BehaviorTree></root>"
)


class UnsupportedCase(Exception):
    """The case would crash the library version at hand."""


def load_case(path: str | Path) -> dict:
    """The case stored in one corpus file."""
    with open(path, encoding="utf-8") as stream:
        return yaml.safe_load(stream)


def load_corpus(directory: Path = CORPUS_DIR) -> list[tuple[str, dict]]:
    """Every case of the corpus, as (name, case) sorted by name."""
    return [(path.stem, load_case(path)) for path in sorted(directory.glob("*.yaml"))]


def expected_outcome(case: dict, module: str = "behaviortreepy") -> dict:
    """What BehaviorTree.CPP 4.10 does: the pinned outcome, else the one ``module`` gives."""
    return case.get("expected_4_10") or run_case(case, module)


class _Leaves:
    """State of the test leaves of one run: each name's status script and the event log."""

    def __init__(self, scripts: dict[str, list[str]], status_type: Any):
        self.scripts = scripts
        self.status_type = status_type
        self.calls: dict[str, int] = {}
        self.log: list[list[str]] = []
        # Callbacks run inside C++, which turns a Python exception into FAILURE;
        # keep it so that a bug of the oracle surfaces instead.
        self.error: BaseException | None = None

    def _next(self, node: Any, event: str) -> Any:
        try:
            name = node.name()
            self.log.append([name, event])
            script = self.scripts.get(name) or ["SUCCESS"]
            count = self.calls.get(name, 0)
            self.calls[name] = count + 1
            return getattr(self.status_type, script[min(count, len(script) - 1)])
        except BaseException as error:
            self.error = error
            raise

    def on_start(self, node: Any) -> Any:
        return self._next(node, "start")

    def on_running(self, node: Any) -> Any:
        return self._next(node, "tick")

    def on_halted(self, node: Any) -> None:
        self.log.append([node.name(), "halt"])

    def condition(self, node: Any) -> Any:
        return self._next(node, "tick")


@functools.cache
def _is_4_9_or_later(module: str) -> bool:
    bt = importlib.import_module(module)
    try:
        bt.BehaviorTreeFactory().create_tree_from_text(PROBE_4_9_XML)
    except Exception:  # noqa: BLE001 - any load error means no TryCatch
        return False
    return True


def _initial_blackboard(bt: Any, entries: dict) -> Any:
    board = bt.Blackboard.create()
    for key, value in entries.items():
        # bool first: it is an int to Python
        if isinstance(value, bool):
            board.set_bool(key, value)
        elif isinstance(value, int):
            board.set_int(key, value)
        elif isinstance(value, float):
            board.set_double(key, value)
        else:
            board.set_string(key, str(value))
    return board


def _entry_text(board: Any, key: str) -> str | None:
    try:
        return board.get_string(key)
    except Exception:  # noqa: BLE001 - an entry without a value
        return None


class OpenLogs:
    """FileLoggers kept open, with their trees, until their files are complete.

    FileLogger2 writes from a thread of its own, which takes the queued transitions in
    batches; destroyed while it writes a batch, it ends without the transitions queued since
    (``~FileLogger2`` clears ``loop``, and ``writerLoop`` checks it before taking the queue
    again). :meth:`close` waits until no file has grown for :data:`SETTLE_S` (longer than the
    thread's 10 ms wait, so every thread is idle), then destroys the loggers, then the trees.
    """

    SETTLE_S = 0.1
    TIMEOUT_S = 5.0

    def __init__(self) -> None:
        self.loggers: list[Any] = []
        self.trees: list[Any] = []
        self.paths: list[str] = []

    def add(self, logger: Any, tree: Any, path: str) -> None:
        self.loggers.append(logger)
        self.trees.append(tree)
        self.paths.append(path)

    def close(self) -> None:
        sizes: list[int] = []
        start = changed = time.monotonic()
        while time.monotonic() - changed < self.SETTLE_S and time.monotonic() - start < self.TIMEOUT_S:
            now = [os.path.getsize(path) for path in self.paths]
            if now != sizes:
                sizes, changed = now, time.monotonic()
            time.sleep(0.002)
        self.loggers.clear()  # each destructor closes its file
        self.trees.clear()


def run_case(case: dict, module: str = "behaviortreepy", btlog: str | None = None,
             open_logs: OpenLogs | None = None) -> dict:
    """Run ``case`` on the BehaviorTree.CPP bindings importable as ``module``; with ``btlog``,
    its ``FileLogger`` (FileLogger2) logs the ticks into that ``.btlog`` file, complete when
    this returns, or when ``open_logs`` is closed if it is given (one wait for many cases)."""
    if case.get("crashes_4_8_2") and not _is_4_9_or_later(module):
        raise UnsupportedCase("this case crashes BehaviorTree.CPP before 4.9: use its expected_4_10")
    bt = importlib.import_module(module)
    leaves = _Leaves(case.get("leaves") or {}, bt.NodeStatus)
    factory = bt.BehaviorTreeFactory()
    factory.register_simple_stateful_action("TestAction", leaves.on_start, leaves.on_running, leaves.on_halted)
    factory.register_simple_condition("TestCondition", leaves.condition)
    outcome: dict = {"load_error": False, "ticks": [], "tick_error": None, "log": [], "blackboard": {}}
    try:
        tree = factory.create_tree_from_text(case["xml"], _initial_blackboard(bt, case.get("blackboard") or {}))
    except Exception:  # noqa: BLE001 - pybind maps C++ errors to several Python types
        outcome["load_error"] = True
        return outcome
    logger = bt.FileLogger(tree, btlog) if btlog is not None else None
    for index in range(case["ticks"]):
        try:
            outcome["ticks"].append(tree.tick_once().name)
        except Exception:  # noqa: BLE001 - as for loading
            outcome["tick_error"] = index
            break
        finally:
            if leaves.error is not None:
                raise RuntimeError("a test leaf callback failed") from leaves.error
    board = tree.root_blackboard()
    outcome["blackboard"] = {key: _entry_text(board, key) for key in sorted(board.get_keys())}
    # copied now: destroying the tree may halt running leaves and log more
    outcome["log"] = [list(event) for event in leaves.log]
    if logger is not None:
        logs = open_logs or OpenLogs()
        logs.add(logger, tree, btlog)
        del logger, tree
        if open_logs is None:
            logs.close()
    return outcome


def _outcome_or_none(case: dict, btlog: str | None = None, open_logs: OpenLogs | None = None) -> dict | None:
    try:
        return run_case(case, btlog=btlog, open_logs=open_logs)
    except UnsupportedCase:
        return None


def main(paths: list[str]) -> None:
    btlog_dir = None
    if paths[:1] == ["--btlog"]:  # --btlog DIR: each case also logs into DIR/<case>.btlog
        btlog_dir, paths = Path(paths[1]), paths[2:]
    cases = [(Path(path).stem, load_case(path)) for path in paths] if paths else load_corpus()
    # the library prints diagnostics on the C stdout: send them to stderr, keep stdout JSON
    sys.stdout.flush()
    json_stdout = os.dup(1)
    os.dup2(2, 1)
    try:
        open_logs = OpenLogs()
        outcomes = {name: _outcome_or_none(case, None if btlog_dir is None else str(btlog_dir / f"{name}.btlog"),
                                           open_logs)
                    for name, case in cases}
        open_logs.close()
    finally:
        ctypes.CDLL(None).fflush(None)  # what C++ buffered belongs to stderr too
        os.dup2(json_stdout, 1)
        os.close(json_stdout)
    json.dump(outcomes, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv[1:])
