"""``hri bench``'s tables for people (rich), from the document :func:`run_benchmarks` returns."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from hri.bench.step_breakdown import COMPONENTS, STEP_KINDS
from hri.run.stats import is_ssm

BUSY_CPUS = 0.25  # CPUs kept busy by other processes, before or after the bench, above which it was not idle


def _f(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def header(doc: dict[str, Any]) -> str:
    m, s = doc["machine"], doc["settings"]
    before, after = doc.get("busy_cpus_before"), doc.get("busy_cpus_after")
    lines = [f"hri bench, {doc['started']}: {m['cpus']} CPUs ({m['cpu']}), Python {m['python']}, "
             f"PyBullet {m['pybullet']}, OpenBLAS {m.get('blas') or '?'} kernels",
             f"{s['duration_s']:g} simulated s per run, medians of {s['repeat']} runs, seed {s['seed']}"]
    if before is not None and after is not None:
        busy = max(before, after) > BUSY_CPUS
        lines.append(f"CPUs busy with other work: {before:.2f} before the bench, {after:.2f} after"
                     + (" - figures taken under load" if busy else " (idle)"))
    return "\n".join(lines)


def realtime_table(results: dict[str, Any]) -> Table:
    table = Table(title="Real-time factor (headless) beside bare PyBullet on the same world",
                  caption="bare: the same bodies in PyBullet alone, the arm still; "
                          "moving: the arm given the run's motor commands; SSM: the full run with "
                          "safety.mode=ssm; MCAP: the full run writing --mcap at 30 Hz; Foxglove: the full "
                          "run serving --foxglove, nobody connected")
    table.add_column("scenario", no_wrap=True)
    for column in ("physics Hz", "RTF full", "RTF bare", "full/bare", "RTF moving", "full/moving",
                   "µs/step full", "µs/step bare", "set-up s", "RTF SSM", "SSM/full", "SSM/full per cycle",
                   "RTF MCAP", "MCAP/full", "RTF Foxglove", "Foxglove/full"):
        table.add_column(column, justify="right", min_width=len(column) if column.startswith("full/") else None)
    for name, r in results.items():
        table.add_row(name, _f(r["physics_rate_hz"], 0), _f(r["full_rtf"]["median"]), _f(r["bare_rtf"]["median"]),
                      _f(r["ratio"]["median"], 3), _f(r["bare_moving_rtf"]["median"]),
                      _f(r["ratio_moving"]["median"], 3), _f(r["full_step_us"]), _f(r["bare_step_us"]),
                      _f(r["setup_s"]["median"], 2), _f(r["ssm_rtf"]["median"]), _f(r["ssm_ratio"]["median"], 3),
                      "-" if r["ssm_cycle_ratio"] is None else _f(r["ssm_cycle_ratio"]["median"], 3),
                      _f(r["mcap_rtf"]["median"]), _f(r["mcap_ratio"]["median"], 3),
                      _f(r["foxglove_rtf"]["median"]), _f(r["foxglove_ratio"]["median"], 3))
    return table


def breakdown_table(results: dict[str, Any]) -> Table:
    table = Table(title="Time per simulation step by component: µs per step (% of the step)")
    table.add_column("component", no_wrap=True)
    for name in results:
        table.add_column(name, justify="right")
    for key, label in COMPONENTS.items():
        table.add_row(label, *(f"{_f(r['components'][key]['us_per_step'])} ({r['components'][key]['percent']:.1f}%)"
                               for r in results.values()))
    table.add_row("not attributed (loop, timer)", *(_f(r["unaccounted_us_per_step"]) for r in results.values()))
    table.add_row("[b]total (instrumented)[/b]", *(f"[b]{_f(r['total_us_per_step'])}[/b]" for r in results.values()))
    return table


def step_kinds_table(results: dict[str, Any]) -> Table:
    table = Table(title="Steps by kind: what one took, and its share of the average step")
    for column in ("scenario", "kind of step", "steps", "µs each", "of which physics", "µs per step"):
        table.add_column(column, justify="left" if column in ("scenario", "kind of step") else "right")
    for name, r in results.items():
        kinds = r.get("step_kinds") or {}
        for kind, label in STEP_KINDS.items():
            k = kinds.get(kind)
            if k and k["steps"]:
                table.add_row(name, f"{kind}: {label}", f"{k['steps']} ({100.0 * k['steps'] / r['steps']:.0f}%)",
                              _f(k["us_each"]), _f(k["physics_us_each"]), _f(k["us_per_step"]))
    return table


def roundtrip_table(results: dict[str, Any]) -> Table:
    table = Table(title="Actor action message round trip (server -> plugin -> server)")
    for column in ("mode", "median µs", "p95 µs", "round trips per run"):
        table.add_column(column, justify="left" if column == "mode" else "right")
    for mode, r in results.items():
        table.add_row(mode.replace("_", " "), _f(r["median_us"]["median"]), _f(r["p95_us"]["median"]),
                      str(r["messages"]))
    return table


def batch_table(r: dict[str, Any]) -> Table:
    title = f"Batch throughput: {r['runs']} runs of {r['duration_s']:g} s of {r['scenario']}"
    table = Table(title=title)
    table.add_column("workers")
    table.add_column("simulated h per wall h", justify="right")
    for workers, s in r["sim_h_per_h"].items():
        table.add_row(workers, _f(s["median"]))
    if "speedup" in r:
        table.add_row(f"speed-up {r['workers']} vs 1", f"{r['speedup']['median']:.2f}x")
    return table


def memory_table(results: dict[str, Any]) -> Table:
    table = Table(title="Memory of one run (a fresh process)")
    table.add_column("scenario", no_wrap=True)
    for column in ("simulated s", "peak MB", "after set-up MB", "at end MB", "growth MB per sim h",
                   "events", "trajectory rows"):
        table.add_column(column, justify="right")
    for name, r in results.items():
        table.add_row(name, _f(r["sim_s"], 0), _f(r["peak_rss_mb"]), _f(r["after_setup_mb"]), _f(r["end_mb"]),
                      _f(r["growth_mb_per_sim_h"], 2), str(r["events"]), str(r["trajectory_rows"]))
    return table


def safety_table(r: dict[str, Any]) -> Table:
    table = Table(title=f"Safety: {r['sim_h']:g} simulated hours, {r['run_s']:g} s per run, seeds from {r['seed']}")
    table.add_column("scenario", no_wrap=True)
    ssm = is_ssm(r["total"])  # SSM mode: its stops and margin beside
    for column in ("runs", "simulated h", "safety violations", "violations/h (95 % upper)",
                   "person-person contacts", "runs with violations",
                   "SSM stops" if ssm else "protective stops", "min separation m",
                   *(("min SSM margin m",) if ssm else ()), "PFL contacts / violations", "incomplete runs",
                   "failed runs", "wall h"):
        table.add_column(column, justify="right")
    for name, s in [*r["scenarios"].items(), ("all", r["total"])]:
        table.add_row(name, str(s["runs"]), _f(s["sim_h"]), str(s["safety_violations"]),
                      _f(s.get("violations_per_h_upper"), 3), str(s.get("person_contacts", 0)),
                      str(s["runs_with_violations"]), str(s["ssm_stops"] if ssm else s["protective_stops"]),
                      _f(s["min_separation_m"], 3), *((_f(s["ssm_margin_min_m"], 3),) if ssm else ()),
                      f"{s['pfl_contacts']} / {s['pfl_violations']}", str(s["incomplete"]), str(s["failed_runs"]),
                      _f(s["wall_h"], 2))
    return table


def groot2_table(results: dict[str, Any]) -> Table:
    table = Table(title="Serving the trees to Groot2 (hri run --groot2): real-time factor",
                  caption="idle: --groot2, nobody connected; client: --groot2 and a client in another "
                          "process asking both trees for their statuses; ratios paired per repeat")
    table.add_column("scenario", no_wrap=True)
    for column in ("RTF plain", "RTF idle", "idle/plain", "RTF client", "client/plain", "client Hz",
                   "answers per s"):
        table.add_column(column, justify="right")
    for name, r in results.items():
        table.add_row(name, _f(r["plain_rtf"]["median"]), _f(r["idle_rtf"]["median"]),
                      _f(r["idle_ratio"]["median"], 3), _f(r["client_rtf"]["median"]),
                      _f(r["client_ratio"]["median"], 3), _f(r["client_hz"], 0), _f(r["answers_per_s"]))
    return table


def xml_table(results: dict[str, Any]) -> Table:
    table = Table(title=f"Reading a tree file of {results['bytes'] / 1e6:.1f} MB ({results['nodes']} nodes, "
                        "every value rewritten for expat)",
                  caption="pre-pass: tinyxml2's values made XML (regular expressions); parse_xml: the whole reader")
    for column in ("pre-pass s", "expat s", "pre-pass/expat", "parse_xml s", "pre-pass MB/s"):
        table.add_column(column, justify="right")
    table.add_row(_f(results["pre_pass_s"]["median"], 3), _f(results["expat_s"]["median"], 3),
                  _f(results["pre_pass_per_expat"]["median"]), _f(results["parse_xml_s"]["median"], 3),
                  _f(results["mb_per_s_pre_pass"]))
    return table


def people_table(r: dict[str, Any]) -> Table:
    table = Table(title=f"People in one room: wall time per simulated second ({r['sim_s']:g} simulated s per run)",
                  caption="each person walks to and fro on a lane of their own; per added person: "
                          "(N people - 1 person) / (N - 1)")
    for column in ("people", "wall s per sim s", "spread", "per added person s"):
        table.add_column(column, justify="right")
    for count, c in r["counts"].items():
        w = c["wall_per_sim_s"]
        table.add_row(count, _f(w["median"], 3), f"{_f(min(w['runs']), 3)}..{_f(max(w['runs']), 3)}",
                      _f(c["per_added_person_s"], 3))
    return table


def ab_table(r: dict[str, Any]) -> Table:
    table = Table(title=f"This install against {r['other']}: real-time factor of the same seeded runs, "
                        f"{r['sim_s']:g} simulated s each",
                  caption="median (slowest..fastest); the two alternating, each run in a process of its own and "
                          "timed by its own statistics; this/other above 1: this install is faster; paired: the range "
                          "of the per-repeat ratios; within spread: this median is at least the other's slowest repeat")
    table.add_column("scenario", no_wrap=True)  # a scenario file by its name: the table stays 120 wide
    for column in ("RTF this", "RTF other", "this/other", "paired", "within spread"):
        table.add_column(column, justify="right", no_wrap=True)
    table.add_column("same statistics", min_width=10)
    for name, c in r["scenarios"].items():
        this, other, paired = c["this"], c["other"], c["paired_ratios"]["runs"]
        table.add_row(Path(name).name, _spread(this), _spread(other), _f(c["ratio"], 3),
                      f"{_f(min(paired), 3)}..{_f(max(paired), 3)}", "yes" if c["within_spread"] else "no",
                      "yes" if c["same_stats"] else "NO: " + ", ".join(c["differing"]))
    return table


def _spread(side: dict[str, Any]) -> str:
    low, high = side["spread"]
    return f"{_f(side['rtf']['median'])} ({_f(low)}..{_f(high)})"


TABLES = {"realtime": realtime_table, "breakdown": breakdown_table, "roundtrip": roundtrip_table,
          "batch": batch_table, "memory": memory_table, "groot2": groot2_table, "safety": safety_table,
          "xml": xml_table, "people": people_table, "ab": ab_table}


def print_report(doc: dict[str, Any], console: Console | None = None) -> None:
    """The tables on ``console``, or on stdout through ``print`` (whose broken pipe the
    command line ends quietly; rich's own handler would exit 1)."""
    if console is None:
        console = Console()
        if not console.is_terminal:  # piped into a file or a README: rich would assume 80 columns
            console = Console(width=120)
        with console.capture() as captured:
            print_report(doc, console)
        print(captured.get(), end="")
        return
    console.print(header(doc), highlight=False)
    for name, results in doc["results"].items():
        console.print()
        console.print(TABLES[name](results))
        if name == "breakdown":
            console.print()
            console.print(step_kinds_table(results))
