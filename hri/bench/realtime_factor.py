"""Figures 1 and 2: the headless real-time factor of each scenario, and beside it bare PyBullet
stepping the same world (:mod:`hri.bench.bare_pybullet`) for the same number of steps.

Each repeat runs the full simulation and then the bare world, interleaved, so a change of
load on the machine hits both alike. The ratio full/bare (of real-time factors, which is
bare step time / full step time) says how much of the physical limit the simulator keeps.

The bare world's arm holds still. A third world per repeat, *bare moving*, is the bare world
with the arm given the motor commands of a run with the same seed (recorded once, untimed,
and replayed on the same steps: the arm ends where the run's did, to the bit), so its
physics is the run's with nothing else; full/bare moving says how much of that the simulator
keeps.

A fourth run per repeat is the full simulation again with ``safety.mode=ssm`` (speed and
separation monitoring instead of the zones, ``docs/safety.md``): ``ssm_ratio`` is its real-time
factor over the full run's, paired per repeat, and ``ssm_cycle_ratio`` its wall time per robot
cycle over the full run's (the RTF ratio's inverse times the cycles ratio: SSM may let the robot
do more cycles in the same simulated time, and a cycle is what the user waits for). The pair runs back to back, the SSM run first in
every other repeat: the machine's speed drifts by several per cent within seconds (a shared
host), and a pair split by the bare worlds, or always in the same order, would carry that drift
into the ratio.

A fifth run per repeat is the full simulation writing an MCAP file at 30 Hz
(:class:`hri.view.mcap_file.ChannelPublisher`, ``hri run --mcap``: the messages built and
written by a process of its own, whose start counts in the set-up) into a temporary folder:
``mcap_ratio`` is its real-time factor over the full run's, paired per repeat like SSM's (the
three runs back to back, their order turned round every repeat), and ``mcap_bytes`` the
file's size.

A sixth run per repeat is the full simulation serving its channels live to Foxglove
(:class:`hri.view.foxglove_live.LiveServer`, ``hri run --foxglove``) on a free port of
127.0.0.1 with nobody connected: ``foxglove_ratio`` is its real-time factor over the full
run's, paired per repeat like MCAP's (the four runs back to back, their order turned round
every repeat).
"""

from __future__ import annotations

import math
import statistics
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hri.bench.common import BenchSettings, Say, load, sig, summary

if TYPE_CHECKING:
    from hri.scenario.model import Scenario


def run_full(scenario: "Scenario", duration_s: float, seed: int, observers: tuple = ()) -> dict[str, float]:
    """One headless run: set-up time, and the wall time of ``Simulation.run`` alone."""
    from hri.run.sim import Simulation

    start = time.perf_counter()
    with Simulation(scenario, seed, observers=observers) as sim:
        setup_s = time.perf_counter() - start
        sim.run(duration_s)
        steps, wall, cycles = sim.step_count, sim.stats.wall_time_s, sim.stats.robot_cycles
    return {"steps": steps, "wall_s": wall, "setup_s": setup_s, "rtf": steps * sim.dt / wall, "cycles": cycles}


def run_bare(scenario: "Scenario", steps: int, seed: int, commands: list | None = None) -> dict[str, float]:
    """The bare world stepped ``steps`` times; with ``commands``, the arm moving by them."""
    from hri.bench.bare_pybullet import build_bare_world, step_bare, step_bare_moving

    with build_bare_world(scenario, seed) as world:
        wall = step_bare(world, steps) if commands is None else step_bare_moving(world, steps, commands)
    return {"steps": steps, "wall_s": wall, "rtf": steps * world.dt / wall}


def measure_scenario(name: str, settings: BenchSettings, say: Say) -> dict[str, Any]:
    from hri.bench.bare_pybullet import record_arm_commands

    scenario = load(name, settings.sets)
    ssm = load(name, [*settings.sets, "safety.mode=ssm"])
    dt = 1.0 / scenario.simulation.physics_rate_hz
    steps = int(math.floor(settings.duration_s / dt + 1e-9))  # what Simulation.run does
    say(f"realtime: {name}: recording the arm's commands")
    commands = record_arm_commands(scenario, settings.duration_s, settings.seed)
    full, bare, moving, with_ssm, with_mcap, with_live = [], [], [], [], [], []
    for k in range(settings.repeat):
        say(f"realtime: {name} {k + 1}/{settings.repeat}")
        paired = [(full, scenario), (with_ssm, ssm), (with_mcap, scenario), (with_live, scenario)]
        for runs, which in paired if k % 2 == 0 else reversed(paired):
            runner = _run_mcap if runs is with_mcap else _run_live if runs is with_live else _run_plain
            runs.append(runner(which, settings))
        bare.append(run_bare(scenario, full[-1]["steps"], settings.seed))
        moving.append(run_bare(scenario, full[-1]["steps"], settings.seed, commands))
    full_rtf = statistics.median(f["rtf"] for f in full)
    return {
        "physics_rate_hz": sig(1.0 / dt), "steps": steps, "sim_s": sig(steps * dt),
        "full_rtf": summary([f["rtf"] for f in full]),
        "full_step_us": sig(dt / full_rtf * 1e6),
        "setup_s": summary([f["setup_s"] for f in full]),
        **_beside(full, bare, dt, ""),
        **_beside(full, moving, dt, "_moving"),
        "ssm_rtf": summary([s["rtf"] for s in with_ssm]),
        "ssm_ratio": summary([s["rtf"] / f["rtf"] for f, s in zip(full, with_ssm)]),
        "ssm_cycle_ratio": _per_cycle(full, with_ssm),
        "mcap_rtf": summary([m["rtf"] for m in with_mcap]),
        "mcap_ratio": summary([m["rtf"] / f["rtf"] for f, m in zip(full, with_mcap)]),
        "mcap_bytes": with_mcap[-1]["bytes"],
        "foxglove_rtf": summary([m["rtf"] for m in with_live]),
        "foxglove_ratio": summary([m["rtf"] / f["rtf"] for f, m in zip(full, with_live)]),
    }


def _run_plain(scenario: "Scenario", settings: BenchSettings) -> dict[str, float]:
    return run_full(scenario, settings.duration_s, settings.seed)


def _run_live(scenario: "Scenario", settings: BenchSettings) -> dict[str, float]:
    """The full run serving its channels to Foxglove on a free port, nobody connected."""
    from hri.view.foxglove_live import LiveServer
    from hri.view.mcap_file import DEFAULT_RATE_HZ, ChannelPublisher

    return run_full(scenario, settings.duration_s, settings.seed,
                    (ChannelPublisher([LiveServer(0)], DEFAULT_RATE_HZ),))


def _run_mcap(scenario: "Scenario", settings: BenchSettings) -> dict[str, float]:
    """The full run writing an MCAP file at 30 Hz (removed after), and the file's size."""
    from hri.view.mcap_file import DEFAULT_RATE_HZ, ChannelPublisher, McapFile

    with tempfile.TemporaryDirectory(prefix="hri-bench-mcap-") as folder:
        path = Path(folder) / "run.mcap"
        figures = run_full(scenario, settings.duration_s, settings.seed, (ChannelPublisher([McapFile(path)], DEFAULT_RATE_HZ),))
        return {**figures, "bytes": path.stat().st_size}


def _per_cycle(full: list[dict], with_ssm: list[dict]) -> dict[str, Any] | None:
    """SSM's wall time per robot cycle over the full run's (the median of the paired
    repeats): above 1, a cycle costs more wall time in SSM. None when a run made no cycle
    (too short a ``--duration``)."""
    if any(run["cycles"] == 0 for run in (*full, *with_ssm)):
        return None
    return summary([(s["wall_s"] / s["cycles"]) / (f["wall_s"] / f["cycles"]) for f, s in zip(full, with_ssm)])


def _beside(full: list[dict], other: list[dict], dt: float, suffix: str) -> dict[str, Any]:
    """A bare world's figures (keys ``bare{suffix}_rtf``, ``bare{suffix}_step_us``) and the
    ratio full/bare (``ratio{suffix}``: the median of the per-repeat ratios, paired runs)."""
    rtf = statistics.median(b["rtf"] for b in other)
    return {f"bare{suffix}_rtf": summary([b["rtf"] for b in other]),
            f"ratio{suffix}": summary([f["rtf"] / b["rtf"] for f, b in zip(full, other)]),
            f"bare{suffix}_step_us": sig(dt / rtf * 1e6)}


def run(settings: BenchSettings, say: Say) -> dict[str, Any]:
    return {name: measure_scenario(name, settings, say) for name in settings.scenarios}
