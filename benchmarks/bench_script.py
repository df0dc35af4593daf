"""Microseconds per evaluation of a BehaviorTree.CPP script (:mod:`hri.bt.scripting`).

A Script node runs its code at every tick, and pre-conditions run at every tick of their
node, so evaluation must stay cheap: the budget is 10 µs a tick for a Script node whose code
is a three-operator assignment such as ``a := b * 2 + c - 1``. Printed per script: one
evaluation of the script alone, one ``tick_once()`` of a tree whose only node is a Script
node running it, and the parse, which happens once per script when a tree loads (and, on the
first parse of a process, lark builds its parser tables).

    python benchmarks/bench_script.py                 # the default scripts
    python benchmarks/bench_script.py --code "x := y * 3" --number 50000

Each figure is the best of ``--repeat`` timings of ``--number`` evaluations (the least
disturbed by the machine's load).
"""

from __future__ import annotations

import argparse
import re
import time
import timeit
from typing import Any

from xml.sax.saxutils import escape

import numpy as np

from hri.bt import TreeContext, default_registry, load_tree_text
from hri.bt.blackboard import Blackboard
from hri.bt.scripting import ScriptError, ScriptSyntaxError, parse_script
from hri.base.errors import HriError

BUDGET_US = 10.0
CASES: list[tuple[str, dict[str, Any]]] = [
    ("a := b * 2 + c - 1", {"b": 3.0, "c": 4.0}),
    ("a := b * 2 + c - 1", {"b": 3, "c": 4}),
    ("counter += 1", {"counter": 0}),
    ("battery > 20 && state == 'idle'", {"battery": 55.0, "state": "idle"}),
    ("done := tries >= 3 ? 'yes' : 'no'", {"tries": 1}),
]


def per_evaluation_us(code: str, entries: dict[str, Any], number: int, repeat: int) -> float:
    blackboard = Blackboard()
    for key, value in entries.items():
        blackboard.set(key, value)
    script = parse_script(code)
    script.run(blackboard)  # the first run creates the entries ':=' makes
    best = min(timeit.repeat(lambda: script.run(blackboard), number=number, repeat=repeat))
    return best / number * 1e6


def per_tick_us(code: str, entries: dict[str, Any], number: int, repeat: int) -> float:
    """One ``tick_once()`` of a tree made of one Script node running ``code``."""
    blackboard = Blackboard()
    for key, value in entries.items():
        blackboard.set(key, value)
    xml = ('<root BTCPP_format="4"><BehaviorTree ID="T"><Script code="%s"/></BehaviorTree></root>'
           % escape(code, {'"': "&quot;"}))
    ctx = TreeContext(rng=np.random.default_rng(0), now=lambda: 0.0)
    tree = load_tree_text(xml, default_registry(), ctx, blackboard)
    tree.tick_once()
    best = min(timeit.repeat(tree.tick_once, number=number, repeat=repeat))
    return best / number * 1e6


def parse_us(code: str, number: int) -> float:
    uncached = parse_script.__wrapped__  # parse_script shares one Script per code
    return timeit.timeit(lambda: uncached(code), number=number) / number * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description="Microseconds per evaluation of BehaviorTree.CPP scripts.")
    parser.add_argument("--code", action="append", help="script to time (repeatable; its names are set to 1.0)")
    parser.add_argument("--number", type=int, default=20000, help="evaluations per timing (default 20000)")
    parser.add_argument("--repeat", type=int, default=5, help="timings, the best is kept (default 5)")
    args = parser.parse_args()
    start = time.perf_counter()
    parse_script("first := 1")
    print(f"first parse (builds lark's parser tables, once per process): {(time.perf_counter() - start) * 1e3:.0f} ms")
    cases = CASES if not args.code else [(code, {}) for code in args.code]
    width = max(len(code) for code, _ in cases)
    print(f"{'script':{width}s}  {'run µs':>7s}  {'tick µs':>7s}  {'parse µs':>8s}  entries")
    for code, entries in cases:
        entries = entries or _names_as_ones(code)
        try:
            run = per_evaluation_us(code, entries, args.number, args.repeat)
            tick = per_tick_us(code, entries, args.number, args.repeat)
        except (ScriptError, ScriptSyntaxError, HriError) as error:
            raise SystemExit(f"bench_script: {code!r}: {error}") from None
        flag = "  OVER BUDGET" if tick > BUDGET_US else ""
        print(f"{code:{width}s}  {run:7.2f}  {tick:7.2f}  {parse_us(code, 200):8.1f}  {entries}{flag}")
    print(f"budget: {BUDGET_US:g} µs per tick of a Script node running 'a := b * 2 + c - 1'")


def _names_as_ones(code: str) -> dict[str, Any]:
    """Every name ``code`` reads (outside strings, not created by ``:=``) set to 1.0, so that
    a script given on the command line runs."""
    code = re.sub(r"'[^']*'", "", code)
    names = re.findall(r"(?<![\w@])@?([A-Za-z_]\w*)\b(?!\s*:=)", code)
    return {name: 1.0 for name in names if name not in ("true", "false")}


if __name__ == "__main__":
    main()
