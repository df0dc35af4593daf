"""Instructions per physics step, counted by callgrind: a figure that does not vary.

Wall-clock timings on a shared virtual machine vary by 10-15 % from one run to the next and
by a third on its bad hours, so a change of a few per cent cannot be seen in them. valgrind's
callgrind counts the instructions the process executes instead: the same number every time
for the same code, inputs and seed (the machine's load does not enter it). This script counts
them for ``Simulation.run`` alone (not the imports and the set-up) after a warm-up, per
physics step, for one or more Python interpreters (two virtual environments: two versions of
the code), alternately, and prints a table.

    python benchmarks/instructions.py                         # this interpreter, the three presets
    python benchmarks/instructions.py --python /tmp/old/bin/python --python .venv/bin/python \\
        --scenario cooperation --duration 60 --warm-up 30

Needs valgrind (Debian: ``apt-get install valgrind``, which brings ``callgrind.h``) and a C
compiler, for a ten-line helper that switches the counting on and off around the run. Under
callgrind a run is about 50 times slower: 60 simulated seconds take about three minutes. An
instruction is not a nanosecond (cache misses, memory copies and Python's allocations cost
differently), so confirm a large change with ``hri bench`` too.
"""

from __future__ import annotations

import argparse
import glob
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HELPER_C = """
#include <valgrind/callgrind.h>
void count_start(void) { CALLGRIND_START_INSTRUMENTATION; CALLGRIND_ZERO_STATS; CALLGRIND_TOGGLE_COLLECT; }
void count_stop(void) { CALLGRIND_TOGGLE_COLLECT; CALLGRIND_DUMP_STATS; CALLGRIND_STOP_INSTRUMENTATION; }
"""

CHILD = """
import ctypes, sys
from hri.scenario.load import load_scenario
from hri.run.sim import Simulation
helper = ctypes.CDLL(sys.argv[1])
with Simulation(load_scenario(sys.argv[2]), seed=int(sys.argv[5])) as sim:
    sim.run(float(sys.argv[4]))
    before = sim.step_count
    helper.count_start()
    sim.run(float(sys.argv[3]))
    helper.count_stop()
    print(sim.step_count - before)
"""


def build_helper(folder: Path) -> Path:
    source, library = folder / "count.c", folder / "libcount.so"
    source.write_text(HELPER_C)
    compiler = os.environ.get("CC", "cc")
    result = subprocess.run([compiler, "-shared", "-fPIC", "-O2", "-o", str(library), str(source)],
                            capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"instructions: cannot build the callgrind helper with {compiler} "
                 f"(is valgrind installed, with callgrind.h?): {result.stderr.strip().splitlines()[-1:]}")
    return library


def count(python: str, helper: Path, scenario: str, duration: float, warm_up: float, seed: int,
          folder: Path) -> float:
    """Instructions per physics step of ``duration`` simulated seconds after ``warm_up``."""
    for old in glob.glob(str(folder / "callgrind.*")):
        os.remove(old)
    out = folder / "callgrind.%p"
    result = subprocess.run(["valgrind", "--tool=callgrind", "--collect-atstart=no", "--instr-atstart=no",
                             f"--callgrind-out-file={out}", python, "-c", CHILD, str(helper), scenario,
                             str(duration), str(warm_up), str(seed)],
                            capture_output=True, text=True, cwd=folder)
    if result.returncode != 0:
        sys.exit(f"instructions: {python} {scenario} failed: {result.stderr.strip().splitlines()[-1:]}")
    steps = int(result.stdout.strip().splitlines()[-1])
    total = 0
    for dump in glob.glob(str(folder / "callgrind.*")):
        for line in Path(dump).read_text(errors="replace").splitlines():
            if line.startswith("totals:"):
                total += int(line.split()[1])
    return total / steps


def main() -> None:
    parser = argparse.ArgumentParser(description="Instructions per physics step of hri runs (callgrind).")
    parser.add_argument("--python", action="append", help="interpreter to measure (repeatable; default: this one)")
    parser.add_argument("--scenario", action="append", help="preset or scenario file (repeatable; default: the three presets)")
    parser.add_argument("--duration", type=float, default=20.0, help="simulated seconds counted (default 20)")
    parser.add_argument("--warm-up", type=float, default=1.0, help="simulated seconds run first, not counted (default 1)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        sys.exit("instructions: valgrind is not installed (Debian: apt-get install valgrind)")
    pythons = [os.path.abspath(py) for py in args.python or [sys.executable]]  # a venv's link, not resolved
    scenarios = args.scenario or ["coexistence", "cooperation", "collaboration"]
    with tempfile.TemporaryDirectory(prefix="hri-instructions-") as tmp:
        folder = Path(tmp)
        helper = build_helper(folder)
        print(f"{args.duration:g} simulated s after {args.warm_up:g} s, seed {args.seed}: "
              "thousand instructions per physics step", flush=True)
        for scenario in scenarios:
            figures = [count(py, helper, scenario, args.duration, args.warm_up, args.seed, folder) for py in pythons]
            cells = "  ".join(f"{f / 1000:8.1f}" for f in figures)
            ratio = f"  last/first {figures[-1] / figures[0]:.3f}" if len(figures) > 1 else ""
            print(f"{scenario:15s} {cells}{ratio}", flush=True)
        if len(pythons) > 1:
            print("columns: " + ", ".join(pythons))


if __name__ == "__main__":
    main()
