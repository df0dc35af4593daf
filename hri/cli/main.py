"""The ``hri`` command line: ``run``, ``replay``, ``batch``, ``stats``, ``bench``, ``validate``, ``convert``, ``nodes``, ``render``, ``list``, ``robot``.

See the README and ``docs/trees.md`` ("Authoring tools").

Every mistake a user can make ends in one line on stderr and a non-zero exit, never a
traceback: :class:`hri.base.errors.HriError` carries the ``FILE:LINE: message``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from hri.bench import add_bench_parser, bench_command
from hri.base.errors import HriError, SafetyViolation, Terminated, shortened, shown_path
from hri.base.files import keep_traceback
from hri.base.numbers import duration_problem

DEFAULT_GROOT2_PORT = 1667  # BehaviorTree.CPP Groot2Publisher's default server port (hri.run.groot2; not imported: zmq)
DEFAULT_FOXGLOVE_PORT = 8765  # Foxglove's default WebSocket port (hri.view.foxglove_live; not imported: the SDK)

if TYPE_CHECKING:
    from hri.run.out_folder import OutFolder
    from hri.run.run_dir import RunRecord
    from hri.scenario.model import Scenario


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2, like argparse but without usage noise
        print(f"hri: {shortened(message)}", file=sys.stderr)  # argparse quotes a bad value whole
        raise SystemExit(2)


def _build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="hri", description="Behaviour-tree human-robot interaction simulator.")
    parser.add_argument("--version", action="version", version=f"hri {_version()}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    run = sub.add_parser("run", help="run one simulation of a scenario")
    run.add_argument("scenario", nargs="?",
                     help="preset name (coexistence) or path to a scenario .yaml (none with --from)")
    run.add_argument("--duration", type=float, help="simulated seconds (default: the scenario's)")
    run.add_argument("--seed", type=int, help="seed of all randomness (default 0)")
    run.add_argument("--gui", action="store_true", help="open PyBullet's 3D window")
    run.add_argument("--realtime", action="store_true", help="pace the run to the wall clock")
    run.add_argument("--fault", dest="faults", action="append", default=[], metavar="KIND[:NAME]@SECONDS",
                     help="inject a fault at a simulated time, e.g. actor_hang@5, or actor_hang:NAME@5 for the person NAME "
                          "(without @SECONDS: at 0 s; repeatable; docs/faults.md)")
    run.add_argument("--strict", action="store_true",
                     help="end the run at the first safety violation, with exit status 3")
    run.add_argument("--split", action="store_true",
                     help="run each tree in a process of its own (same results; docs/network.md)")
    run.add_argument("--groot2", type=int, nargs="?", const=DEFAULT_GROOT2_PORT, metavar="PORT",
                     help="serve the trees live to Groot2: the person's on PORT and PORT+1, the robot's on "
                          f"PORT+2 and PORT+3 (default {DEFAULT_GROOT2_PORT}); a breakpoint set in Groot2 "
                          "pauses the whole simulation (docs/visualisation.md)")
    _add_groot2_host(run)
    run.add_argument("--groot2-allow-remote-hooks", action="store_true",
                     help="with --groot2-host: take breakpoints and forced results from other hosts too "
                          "(by default only from this machine)")
    run.add_argument("--json", action="store_true", help="print the statistics as one JSON object")
    run.add_argument("--out", type=Path, help="write stats.json, events.jsonl and trajectory.csv into this folder, "
                     "and what ran: scenario.yaml, copies of the trees and plug-ins, manifest.json")
    run.add_argument("--force", action="store_true",
                     help="replace the run already in --out (its files only) and an existing --record "
                          "or --mcap file")
    run.add_argument("--from", dest="from_run", type=Path, metavar="RUN_DIR",
                     help="run again exactly the run kept in RUN_DIR (a --out folder or a batch run); "
                          "with --out, the new run goes there; its paths must stay inside RUN_DIR")
    run.add_argument("--trust-plugins", action="store_true",
                     help="with --from: load the plug-ins the kept scenario names (they run code; "
                          "without this a run folder with plug-ins is refused)")
    run.add_argument("--record", type=Path, metavar="VIDEO",
                     help="record a video of the run, headless (.mp4 or .gif; docs/visualisation.md)")
    run.add_argument("--mcap", type=Path, nargs="?", const=True, metavar="PATH",
                     help="write an MCAP file of the run for Foxglove (no PATH: run.mcap in --out; "
                          "docs/visualisation.md)")
    run.add_argument("--mcap-rate", type=float, metavar="HZ",
                     help="transforms, joint states and safety samples per simulated second in --mcap and "
                          "--foxglove (default 30)")
    run.add_argument("--foxglove", type=int, nargs="?", const=DEFAULT_FOXGLOVE_PORT, metavar="PORT",
                     help="serve the run live to Foxglove over its WebSocket protocol, the channels of --mcap "
                          f"(default port {DEFAULT_FOXGLOVE_PORT}); with --realtime at wall speed "
                          "(docs/visualisation.md)")
    run.add_argument("--foxglove-host", metavar="ADDR",
                     help="listen for Foxglove on this address of the machine (default 127.0.0.1: from this "
                          "machine only; 0.0.0.0: from every IPv4 interface)")
    run.add_argument("--record-fps", type=float, metavar="FPS",
                     help="frames per simulated second of --record (default 15)")
    run.add_argument("--record-size", metavar="WxH",
                     help="frame size of --record in pixels (default 800x450)")
    run.add_argument("--show-trees", action="store_true",
                     help="show both trees' node statuses live in the terminal (on stderr)")
    run.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                     help="override a scenario parameter by its dotted key (repeatable)")

    replay = sub.add_parser("replay", help="serve a finished run's trees to Groot2 again, paced by simulated time")
    replay.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="a run's --out folder (its person.btlog and robot.btlog)")
    replay.add_argument("--groot2", type=int, nargs="?", const=DEFAULT_GROOT2_PORT, required=True, metavar="PORT",
                        help="serve the person's tree on PORT and PORT+1, the robot's on PORT+2 and PORT+3 "
                             f"(default {DEFAULT_GROOT2_PORT}), as hri run --groot2 does")
    _add_groot2_host(replay)
    replay.add_argument("--speed", type=float, default=1.0, metavar="X",
                        help="simulated seconds per wall-clock second (default 1: real time)")
    replay.add_argument("--from", dest="start", type=float, default=0.0, metavar="S",
                        help="start at this simulated time, with the statuses it had (default 0)")
    replay.add_argument("--to", dest="end", type=float, metavar="S",
                        help="end at this simulated time (default: the last recorded transition)")
    replay.add_argument("--loop", action="store_true",
                        help="at the end start again from --from, until Ctrl-C")

    batch = sub.add_parser("batch", help="many seeded runs over a parameter sweep (resumable; docs/batch.md)")
    batch.add_argument("scenario", help="preset name (coexistence) or path to a scenario .yaml")
    batch.add_argument("--runs", type=int, required=True, help="seeded runs per configuration")
    batch.add_argument("--duration", type=float, required=True, help="simulated seconds per run")
    batch.add_argument("--workers", type=int, help="parallel runs (default: the number of CPUs)")
    batch.add_argument("--backend", choices=("local", "ray"), default="local",
                       help="local worker processes (default) or Ray tasks")
    batch.add_argument("--address", help="with --backend ray: the Ray cluster to join (default: a local one)")
    batch.add_argument("--seed", type=int, default=0, help="seed the runs' seeds derive from (default 0)")
    batch.add_argument("--set", dest="sweep", action="append", default=[], metavar="KEY=V1,V2,...",
                       help="sweep a scenario parameter over values (repeatable: cross product); keys "
                            "swept together: KEY1,KEY2=[V1,V2],[W1,W2],... (docs/batch.md)")
    batch.add_argument("--out", type=Path, required=True, help="the batch directory (resumes if it exists)")
    batch.add_argument("--split", action="store_true",
                       help="each run's trees in processes of their own, as hri run --split (the same results)")

    plugin_help = "a node module (name or .py path) registering extra nodes (repeatable)"
    validate = sub.add_parser("validate", help="check tree and scenario files")
    validate.add_argument("files", nargs="+", type=Path, metavar="FILE",
                          help="a tree (.xml, .yaml), a scenario (.yaml) or an animation clip (.yaml)")
    validate.add_argument("--plugin", dest="plugins", action="append", default=[], metavar="MODULE",
                          help=plugin_help)

    convert = sub.add_parser("convert", help="write a tree file as XML or YAML, comments included (docs/trees.md)")
    convert.add_argument("file", type=Path, help="the tree file to read (.xml, .yaml or .yml)")
    convert.add_argument("-o", "--output", type=Path,
                         help="the file to write; its suffix picks the format: .xml, .yaml or .yml "
                              "(default: beside FILE, in the other format)")
    convert.add_argument("--force", action="store_true", help="overwrite OUTPUT if it exists (never FILE itself)")
    convert.add_argument("--plugin", dest="plugins", action="append", default=[], metavar="MODULE",
                         help=plugin_help + ", listed in the XML's <TreeNodesModel>")

    nodes = sub.add_parser("nodes", help="list every node type with its ports")
    nodes.add_argument("--xml", action="store_true",
                       help="print a BehaviorTree.CPP v4 <TreeNodesModel> for Groot2 instead")
    nodes.add_argument("--all", action="store_true",
                       help="with --xml: also the nodes BehaviorTree.CPP (and Groot2) already know")
    nodes.add_argument("--plugin", dest="plugins", action="append", default=[], metavar="MODULE",
                       help=plugin_help)

    render = sub.add_parser("render", help="draw a tree as text, Graphviz DOT, SVG or PNG")
    render.add_argument("file", help="tree file (.xml, .yaml)")
    render.add_argument("-o", "--output", help="write .dot, .svg or .png (default: text to the terminal)")
    render.add_argument("--force", action="store_true", help="overwrite OUTPUT if it exists")
    render.add_argument("--tree", help="the tree ID to draw (default: main_tree_to_execute)")
    group = render.add_mutually_exclusive_group()
    group.add_argument("--expand-subtrees", dest="expand", action="store_true", default=True,
                       help="draw each SubTree's nodes under it (default)")
    group.add_argument("--collapse-subtrees", dest="expand", action="store_false",
                       help="draw each SubTree as a single box")
    render.add_argument("--run", type=Path, metavar="RUN_DIR",
                        help="colour the nodes by their statuses in this run's events.jsonl (with --at)")
    render.add_argument("--at", type=float, metavar="SECONDS",
                        help="with --run: the simulated time whose statuses are drawn")
    render.add_argument("--plugin", dest="plugins", action="append", default=[], metavar="MODULE",
                        help=plugin_help)

    listing = sub.add_parser("list", help="what exists: the preset scenarios, the animation clips, the node types, "
                             "the message-queue budget")
    listing.add_argument("what", choices=("scenarios", "clips", "nodes", "queues"), help="what to list")

    export = sub.add_parser("export", help="an MCAP file of a kept run for Foxglove, made by running it again "
                                           "(docs/visualisation.md)")
    export.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="a run's --out folder (its inputs/ and manifest.json)")
    export.add_argument("-o", "--output", type=Path, required=True, metavar="PATH", help="the MCAP file to write")
    export.add_argument("--mcap-rate", type=float, metavar="HZ",
                        help="transforms, joint states and safety samples per simulated second (default 30)")
    export.add_argument("--force", action="store_true", help="replace PATH if it exists")
    export.add_argument("--trust-plugins", action="store_true",
                        help="run the plug-ins the kept scenario loads (they run code: only a folder you trust)")

    stats = sub.add_parser("stats", help="statistics of a run directory or a batch directory")
    stats.add_argument("dir", type=Path, help="a run's --out folder or a batch folder")
    stats.add_argument("--plots", action="store_true", help="also write PNG figures into DIR/plots/")
    stats.add_argument("--format", choices=("table", "markdown", "csv", "json"), default="table",
                       help="output format (default: an aligned text table)")
    robot = sub.add_parser("robot", help="the robot's own figures: its stopping distances and times (docs/safety.md)")
    robot_sub = robot.add_subparsers(dest="robot_command", required=True, parser_class=_Parser)
    stops = robot_sub.add_parser("stops", help="stopping distances and times per ISO 10218-1 Annex B, measured in "
                                 "the simulation: stop category 0 and 1, 33/66/100 %% speed and payload, the three "
                                 "main joints")
    stops.add_argument("--scenario", default="coexistence",
                       help="preset name or scenario file whose robot is measured (default coexistence)")
    stops.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE",
                       help="override a scenario parameter, as hri run --set (repeatable)")
    stops.add_argument("--json", action="store_true",
                       help="print the table as JSON, in the layout a scenario's safety.stop_table takes")
    add_bench_parser(sub)
    return parser


def _add_groot2_host(command: argparse.ArgumentParser) -> None:
    command.add_argument("--groot2-host", metavar="ADDR",
                         help="listen for Groot2 on this address of the machine (default 127.0.0.1: from this "
                              "machine only; 0.0.0.0: from every IPv4 interface)")


def _groot2_access(args: argparse.Namespace):  # -> hri.bt.loggers.groot2_publisher.Access (imports zmq)
    """Where the Groot2 servers listen and who may send hooks, from the options."""
    from hri.bt.loggers.groot2_publisher import Access

    remote_hooks = getattr(args, "groot2_allow_remote_hooks", False)
    if args.groot2 is None:
        for option, given in (("--groot2-host", args.groot2_host is not None),
                              ("--groot2-allow-remote-hooks", remote_hooks)):
            if given:
                raise HriError(f"{option}: only with --groot2")
    return Access(args.groot2_host or Access.host, remote_hooks)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("hri")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown"


def _cmd_robot(args: argparse.Namespace) -> int:
    from hri.cli.robot import stops_command

    print(stops_command(args.scenario, args.sets, args.json))
    return 0


def _cmd_list(args: argparse.Namespace) -> int:
    from hri.cli.listing import LISTERS

    print(LISTERS[args.what](), end="")
    return 0


def _cmd_export(args: argparse.Namespace) -> int:
    from hri.cli.export import export_command

    print(export_command(args.run_dir, args.output, args.mcap_rate, args.force, args.trust_plugins))
    return 0


def _cmd_stats(args: argparse.Namespace) -> int:
    from hri.cli.stats import stats_command

    print(stats_command(args.dir, args.format, args.plots))
    return 0


def _run_inputs(args: argparse.Namespace) -> tuple[Scenario, RunRecord]:
    """The scenario of ``hri run`` and how it runs: from the arguments, or kept by ``--from``."""
    from hri.run.run_dir import RunRecord
    from hri.scenario.load import load_scenario

    if args.from_run is not None:
        return _rerun_inputs(args)
    if args.trust_plugins:
        raise HriError("--trust-plugins: only with --from (a scenario of your own loads its plug-ins)")
    if args.scenario is None:
        raise HriError("run: give a scenario (a preset name or a .yaml path) or --from RUN_DIR")
    scenario = load_scenario(args.scenario, args.overrides)
    if args.faults:  # one line naming the option, before anything starts
        scenario = scenario.with_faults(args.faults)
    duration = args.duration if args.duration is not None else scenario.simulation.duration_s
    if (problem := duration_problem(duration)) is not None:
        raise HriError(f"--duration: {problem}")
    seed = 0 if args.seed is None else args.seed
    if seed < 0:
        raise HriError(f"--seed: must not be negative, got {seed}")
    return scenario, RunRecord(args.scenario, seed, float(duration), list(args.overrides), list(args.faults),
                               args.strict)


def _rerun_inputs(args: argparse.Namespace) -> tuple[Scenario, RunRecord]:
    """``--from RUN_DIR``: its kept scenario, seed and duration; nothing that would change them."""
    from dataclasses import replace

    from hri.run.run_dir import load_kept_run

    changes = (("a scenario", args.scenario is not None), ("--set", args.overrides), ("--fault", args.faults),
               ("--seed", args.seed is not None), ("--duration", args.duration is not None))
    for what, given in changes:
        if given:
            raise HriError(f"--from: runs the kept run as it was, so not with {what} (edit a copy of "
                           f"{args.from_run / 'scenario.yaml'} and run that instead)")
    if args.out is not None and args.out.resolve() == args.from_run.resolve():
        raise HriError(f"--out {args.out}: is the run directory of --from; the new run goes into another folder")
    kept = load_kept_run(args.from_run, trust_plugins=args.trust_plugins)
    return kept.scenario, replace(kept.record, strict=kept.record.strict or args.strict,
                                  rerun_of=str(args.from_run.resolve()))


def _cmd_run(args: argparse.Namespace) -> int:
    from hri.run.stats import format_table

    scenario, record = _run_inputs(args)
    groot2_access = _groot2_access(args)
    duration = record.duration_s
    observers = []
    for option, value in (("--record-fps", args.record_fps), ("--record-size", args.record_size)):
        if value is not None and args.record is None:
            raise HriError(f"{option}: only with --record")
    if args.record is not None:
        from hri.base.files import check_new_file
        from hri.view.record import Recorder, parse_size

        fps = 15.0 if args.record_fps is None else args.record_fps
        observers.append(Recorder(args.record, fps, parse_size(args.record_size or "800x450"), duration_s=duration))
        check_new_file(args.record, args.force, "--record")
    channels = _foxglove_channels(args)
    if channels is not None:
        observers.append(channels)
    if args.show_trees:
        from hri.view.terminal_view import TreeView

        observers.append(TreeView())
    folder = None
    if args.out is not None:
        from hri.scenario.faults import check_split
        from hri.run.out_folder import OutFolder

        check_split(scenario.faults, args.split)  # refused before anything is written
        folder = OutFolder(args.out, force=args.force)  # the run is made in its staging folder
    elif args.force and args.record is None and args.mcap is None:
        raise HriError("--force: only with --out, --record or --mcap (it lets them replace what is there)")
    try:
        stats = _run_into(args, scenario, record, observers, folder, groot2_access)
    except OSError as err:  # name the file in --out, not its staged copy
        if folder is None:
            raise
        raise folder.final(err) from None
    print(json.dumps(stats) if args.json else format_table(stats))
    return 0


def _foxglove_channels(args: argparse.Namespace):
    """The run's Foxglove channels (:class:`hri.view.mcap_file.ChannelPublisher`) into the file
    of ``--mcap`` and the live server of ``--foxglove`` (None without either); the path and the
    port checked before the run."""
    if args.foxglove is None and args.foxglove_host is not None:
        raise HriError("--foxglove-host: only with --foxglove")
    if args.mcap is None and args.foxglove is None:
        if args.mcap_rate is not None:
            raise HriError("--mcap-rate: only with --mcap or --foxglove")
        return None
    from hri.view.mcap_file import DEFAULT_RATE_HZ, ChannelPublisher

    sinks = [] if args.mcap is None else [_mcap_file(args)]
    if args.foxglove is not None:
        from hri.view.foxglove_live import LiveServer

        if args.foxglove == 0:
            raise HriError("--foxglove 0: not a port (1-65535)")
        live = LiveServer(args.foxglove, args.foxglove_host)
        sinks.append(live)
        _say(f"Foxglove: connect to {live.url()} (Open connection, Foxglove WebSocket) while the run goes")
    return ChannelPublisher(sinks, DEFAULT_RATE_HZ if args.mcap_rate is None else args.mcap_rate)


def _mcap_file(args: argparse.Namespace):  # -> hri.view.mcap_file.McapFile
    """The MCAP file of ``--mcap``."""
    from hri.run.out_folder import MCAP_NAME
    from hri.view.mcap_file import McapFile

    if args.mcap is True:  # a bare --mcap: made in the run's staging folder, put in place with the run
        if args.out is None:
            raise HriError("--mcap: name the file (--mcap PATH), or give --out DIR for DIR/run.mcap")
        return McapFile(Path(MCAP_NAME), in_out_folder=True)
    return McapFile(args.mcap, force=args.force)


def _run_into(args: argparse.Namespace, scenario: Scenario, record: RunRecord, observers: list,
              folder: "OutFolder | None", groot2_access) -> dict:
    """The run, its files made in ``folder``'s staging folder and put in place at the end."""
    from hri.run.run_dir import keep_inputs
    from hri.run.sim import run_scenario
    from hri.run.stats import format_table

    out_dir = None if folder is None else folder.staging
    for observer in observers:  # --mcap without a path: run.mcap among the run's files
        for sink in getattr(observer, "sinks", ()):
            if getattr(sink, "in_out_folder", False):
                sink.path = out_dir / sink.path.name
    try:
        if out_dir is not None:
            keep_inputs(out_dir, scenario, record)  # before the run: a failed run says what ran too
        window = None
        if args.gui:
            from hri.view.live_view import LiveView

            window = LiveView()
        return run_scenario(scenario, record.duration_s, seed=record.seed, window=window, realtime=args.realtime,
                            out_dir=out_dir, observers=observers, split=args.split, strict=record.strict,
                            groot2_port=args.groot2, groot2_access=groot2_access, say=_say)
    except HriError as err:  # a run that ended early prints what it has too ("complete": false)
        if folder is not None and err.traceback_file is not None:  # named where it will be
            err.traceback_file = folder.placed(err.traceback_file)
        if err.stats is not None:
            print(json.dumps(err.stats) if args.json else format_table(err.stats), flush=True)
        raise
    finally:
        if folder is not None:
            folder.finish()


def _say(line: str) -> None:
    """What a run tells as it goes (where Groot2 reaches its trees): on stderr, so that stdout
    holds the statistics alone (one JSON object with ``--json``)."""
    print(line, file=sys.stderr, flush=True)


def _cmd_replay(args: argparse.Namespace) -> int:
    from hri.base.errors import sigterm_raises
    from hri.run.replay import Replay, read_run

    trees = read_run(args.run_dir)
    with sigterm_raises(), Replay(trees, args.groot2, args.speed, args.start, args.end, loop=args.loop,
                                  access=_groot2_access(args)) as replay:
        for line in replay.describe():
            print(line, flush=True)
        ended = replay.run()
    print(f"replay ended at {ended:g} s simulated")
    return 0


def _cmd_batch(args: argparse.Namespace) -> int:
    import shlex

    from hri.batch.batch import run_batch

    if args.address and args.backend != "ray":
        raise HriError("--address: only with --backend ray")
    command = ["hri", "batch", args.scenario, "--runs", str(args.runs), "--duration", f"{args.duration:g}",
               "--seed", str(args.seed)] + [a for s in args.sweep for a in ("--set", s)] + ["--out", str(args.out)]
    if args.backend == "ray":  # where the runs go; the worker count is the resumer's choice
        command += ["--backend", "ray"] + (["--address", args.address] if args.address else [])
    command += ["--split"] if args.split else []
    return run_batch(args.scenario, args.runs, args.duration, args.out, seed=args.seed, sets=args.sweep,
                     workers=args.workers, backend=args.backend, address=args.address,
                     resume_hint=shlex.join(command), split=args.split)


def _cmd_validate(args: argparse.Namespace) -> int:
    from hri.cli.validate import is_warning, validate_files

    problems = validate_files(args.files, args.plugins)
    for problem in problems:
        keep_traceback(problem)  # a plug-in's exception: its traceback in a file the line names
        print(problem, file=sys.stderr)
    if any(not is_warning(p) for p in problems):
        return 1
    files = len(args.files)
    warned = f" ({len(problems)} warning{'s' if len(problems) != 1 else ''})" if problems else ""
    print(f"{files} file{'s' if files != 1 else ''} OK{warned}")
    return 0


def _cmd_convert(args: argparse.Namespace) -> int:
    from hri.cli.convert import convert_file

    target, warnings = convert_file(args.file, args.output, force=args.force, plugins=args.plugins)
    for warning in warnings:
        print(warning, file=sys.stderr)
    print(target)
    return 0


def _cmd_nodes(args: argparse.Namespace) -> int:
    from hri.bt.catalogue import format_catalogue, tree_nodes_model_xml
    from hri.bt.plugins import plugin_registry

    if args.all and not args.xml:
        raise HriError("--all: only with --xml (the text catalogue always lists every node)")
    registry = plugin_registry(args.plugins, Path.cwd())
    print(tree_nodes_model_xml(registry, args.all) if args.xml else format_catalogue(registry), end="")
    return 0


def _tree_period(run: Path | None) -> float | None:
    """The tree period of the run in ``run`` (which tick was the last at ``--at``), from the
    scenario it kept; None, with a warning, when it kept none that loads."""
    if run is None or not run.is_dir():
        return None  # render says what is wrong with the folder
    from hri.run.run_dir import kept_scenario

    try:
        scenario = kept_scenario(run)
    except HriError as err:
        scenario = None
        print(f"hri render: {err}: what the tick made IDLE is not shown", file=sys.stderr)
    return scenario.simulation.tree_period_s if scenario is not None else None


def _cmd_render(args: argparse.Namespace) -> int:
    from hri.bt.plugins import plugin_registry
    from hri.bt.render import render_file

    registry = plugin_registry(args.plugins, Path.cwd())
    if (args.run is None) != (args.at is None):
        raise HriError("--run and --at: give both (the run directory and the simulated time) or neither")
    result = render_file(args.file, registry, args.output, args.tree, args.expand, run=args.run, at=args.at,
                         force=args.force, tick_s=_tree_period(args.run))
    if args.output is None:
        print(result, end="")
    else:
        print(f"wrote {result}")
    return 0


def _port_given(argv: list[str]) -> list[str]:
    """``--groot2`` takes an optional PORT, and argparse gives it the next word whatever it
    is: ``hri run --groot2 coexistence`` would read the scenario as the port. A word after
    ``--groot2`` that is not a number is not its port: the default port goes in between."""
    given: list[str] = []
    for k, word in enumerate(argv):
        given.append(word)
        after = argv[k + 1] if k + 1 < len(argv) else None
        if word == "--groot2" and after is not None and not after.startswith("-") and not after.isdigit():
            given.append(str(DEFAULT_GROOT2_PORT))
    return given


STDOUT_CLOSED = ("hri: standard output is closed: the command writes its results there "
                 "(send them to a file or to /dev/null instead)")
BROKEN_PIPE_EXIT = 141  # 128 + SIGPIPE: what a shell reports for a command whose reader went away


def _stdout_closed() -> bool:
    """Whether descriptor 1 is closed (``>&-``): the next file opened would take its place."""
    try:
        os.fstat(1)
    except OSError:
        return True
    return False


def _drop_stdout() -> None:
    """After a broken pipe: what is left for stdout goes to /dev/null, so that the flush at
    exit does not fail again (and print a traceback) after the command has ended."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout has no descriptor (a test's capture)
        pass
    finally:
        os.close(devnull)


def main(argv: list[str] | None = None) -> int:
    args = _build_parser().parse_args(_port_given(sys.argv[1:] if argv is None else argv))
    if _stdout_closed():
        print(STDOUT_CLOSED, file=sys.stderr)
        return 1
    from hri.base.quiet import import_pybullet_quietly

    import_pybullet_quietly()  # keeps stdout clean for --json
    handlers = {"run": _cmd_run, "replay": _cmd_replay, "batch": _cmd_batch, "validate": _cmd_validate, "convert": _cmd_convert, "nodes": _cmd_nodes,
                "render": _cmd_render, "stats": _cmd_stats, "list": _cmd_list, "bench": bench_command,
                "robot": _cmd_robot, "export": _cmd_export}
    try:
        code = handlers[args.command](args)
        sys.stdout.flush()  # here, where a reader that went away is caught, not at exit
    except BrokenPipeError:  # the reader went away (`| head`): end quietly, as a command SIGPIPE ends
        _drop_stdout()
        code = BROKEN_PIPE_EXIT
    except SafetyViolation as err:
        print(err, file=sys.stderr)
        code = 3
    except HriError as err:
        keep_traceback(err)  # a plug-in's exception that no run folder keeps: in a file the line names
        print(err, file=sys.stderr)
        code = 1
    except KeyboardInterrupt:
        print("hri: interrupted", file=sys.stderr)
        code = 130
    except Terminated as stop:
        print("hri: terminated", file=sys.stderr)
        code = stop.code
    except OSError as err:  # the machine's, not ours: a full disk, a folder gone (one line all the same)
        print(f"{shown_path(err.filename)}: {err.strerror}" if err.filename else f"hri: {err}", file=sys.stderr)
        code = 1
    if getattr(args, "gui", False):
        from hri.view.live_view import exit_after_lost_window

        exit_after_lost_window(code)
    return code


if __name__ == "__main__":
    sys.exit(main())
