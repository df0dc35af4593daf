"""Figure 3: the time of one simulation step, split by component.

:func:`instrumented_step` replays :meth:`hri.run.sim.Simulation.step` call for call with a clock
around each component. Message passing (actor queues, service network) runs inside other
components (tree ticks send requests, the plugin reads actions and sends feedback): it is
timed by wrapping the objects it goes through, and its time is taken out of the component it
ran in (:class:`ExclusiveTimer`); so is the robot's planning, which runs when the network
delivers a ``move_to`` request. The instrumented loop must behave exactly like the real
one: ``tests/test_bench.py`` compares their trajectories and events.

The per-step figures are averages over all steps (trees tick every ``tree_every`` steps, so
their figure is their cost spread over the steps in between). Beside them, the steps by kind
(:data:`STEP_KINDS`): how many there were, what one took, and how much of the average step
each kind makes up. The steps in which the trees tick and the person acts are few and dear;
the plain steps in between are where the simulator comes nearest to bare physics.
"""

from __future__ import annotations

import statistics
import time
from collections import defaultdict
from typing import TYPE_CHECKING, Any, Callable

import pybullet as p

from hri.bench.common import BenchSettings, Say, load, sig

if TYPE_CHECKING:
    from hri.scenario.model import Scenario
    from hri.run.sim import Simulation

#: component key -> what it covers (the order of the report)
COMPONENTS: dict[str, str] = {
    "physics": "physics (stepSimulation)",
    "actor_animation": "actor animation (plugin.step)",
    "actor_messages": "actor messages (queues, server.poll)",
    "robot": "robot (online trajectory, motor commands)",
    "parts": "parts (carried, conveyors, feeders)",
    "trees": "trees (both ticks, status log)",
    "monitor": "zones, speeds, separation (monitor.step)",
    "ssm": "SSM controller (safety.mode ssm)",
    "statistics": "statistics (trajectory rows, bookkeeping)",
    "network": "service network (state streams, requests, delivery)",
}


#: kind of step -> what happens in it besides physics (:func:`instrumented_step` tells which)
STEP_KINDS: dict[str, str] = {
    "trees": "trees tick, person acts",  # both at 20 Hz in the presets: the same steps
    "person": "person acts",
    "preview": "person posed for a query",
    "plain": "robot, parts, monitor",
}


class ExclusiveTimer:
    """Accumulates wall time per component; a nested component's time is not its parent's."""

    def __init__(self) -> None:
        self.totals: dict[str, float] = defaultdict(float)
        self._stack: list[str] = []
        self._mark = 0.0

    def push(self, name: str) -> None:
        now = time.perf_counter()
        if self._stack:
            self.totals[self._stack[-1]] += now - self._mark
        self._stack.append(name)
        self._mark = now

    def pop(self) -> None:
        now = time.perf_counter()
        self.totals[self._stack.pop()] += now - self._mark
        self._mark = now

    def wrap(self, name: str, fn: Callable) -> Callable:
        def timed(*args: Any, **kwargs: Any) -> Any:
            self.push(name)
            try:
                return fn(*args, **kwargs)
            finally:
                self.pop()
        return timed


class TimedEndpoint:
    """An actor queue endpoint whose ``send``/``receive`` count as message passing."""

    def __init__(self, endpoint: Any, timer: ExclusiveTimer) -> None:
        self._endpoint = endpoint
        self.send = timer.wrap("actor_messages", endpoint.send)
        self.receive = timer.wrap("actor_messages", endpoint.receive)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._endpoint, name)


def instrument(sim: "Simulation", timer: ExclusiveTimer) -> None:
    """Route the simulation's nested work through ``timer`` (the bench's own Simulation only)."""
    sim.plugin.endpoint = TimedEndpoint(sim.plugin.endpoint, timer)
    sim.server.endpoint = TimedEndpoint(sim.server.endpoint, timer)
    sim.services.publish = timer.wrap("network", sim.services.publish)
    sim.network.advance = timer.wrap("network", sim.network.advance)
    sim.robot.move_to = timer.wrap("robot", sim.robot.move_to)  # planning, inside a delivery
    sim.robot.move_to_joints = timer.wrap("robot", sim.robot.move_to_joints)
    for host in sim.trees.values():
        host.node.poll = timer.wrap("network", host.node.poll)
        host.node.endpoint.send = timer.wrap("network", host.node.endpoint.send)


def instrumented_step(sim: "Simulation", timer: ExclusiveTimer) -> str:
    """:meth:`hri.run.sim.Simulation.step`, same calls in the same order, each one timed; returns
    the kind of step it was (a key of :data:`STEP_KINDS`).

    Observers are not called (the benchmarks run headless, without any). Keep in step with
    ``Simulation.step``: ``test_instrumented_step_is_the_real_step`` fails when they differ.
    """
    from hri.run.sim import PREVIEW, STEP

    push, pop = timer.push, timer.pop
    t = sim.now()
    sim.events.begin_step()
    push("monitor")
    reported = sim._sensed_before_step(t)  # a safety sensor's reports (the monitoring's part)
    pop()
    trees = sim.step_count % sim.tree_every == 0
    if trees:
        push("trees")
        sim._tick_trees()
        pop()
    else:
        sim.network.advance(t)
    animation = sim._person_due(sim.people[0])  # a scenario of one person: Simulation.step with them
    if animation == STEP:
        push("actor_animation")
        sim.plugin.step(t, sim.dt)
        pop()
        push("actor_messages")
        sim.server.poll(t)
        pop()
    elif animation == PREVIEW:
        push("actor_animation")
        sim.plugin.preview(t, sim.dt)
        pop()
    posed = bool(animation)
    if sim.ssm is not None and not sim._full_speed_held(t):
        push("ssm")
        sim.ssm.step(t, sim._controller_separation(t, reported), sim.monitor.joint_fraction)
        pop()
    push("robot")
    sim.robot.step(sim.dt)
    pop()
    push("parts")
    sim.parts.step()
    pop()
    push("physics")
    p.stepSimulation(physicsClientId=sim.client)
    pop()
    push("statistics")
    sim.step_count += 1
    pop()
    push("monitor")
    x, y = sim._person_xy(posed)
    pop()
    push("monitor")
    sim.monitor.step(sim.now(), x, y, posed, sim._query_ahead_s(animation))
    pop()
    push("statistics")
    sim._record_trajectory()
    pop()
    push("monitor")
    sim._sense_after_step()
    pop()
    if trees:
        return "trees"
    return {STEP: "person", PREVIEW: "preview"}.get(animation, "plain")


def measure_once(scenario: "Scenario", duration_s: float, seed: int) -> dict[str, Any]:
    """One instrumented run: seconds per component, and the loop's wall time."""
    from hri.run.sim import Simulation

    with Simulation(scenario, seed) as sim:
        steps = int(duration_s / sim.dt + 1e-9)
        timer = ExclusiveTimer()
        instrument(sim, timer)
        kinds: dict[str, list[float]] = {kind: [0, 0.0, 0.0] for kind in STEP_KINDS}  # steps, s, physics s
        clock, totals = time.perf_counter, timer.totals
        start = clock()
        for _ in range(steps):
            began, physics = clock(), totals["physics"]
            tally = kinds[instrumented_step(sim, timer)]
            tally[0] += 1
            tally[1] += clock() - began
            tally[2] += totals["physics"] - physics
        wall = clock() - start
    return {"steps": steps, "wall_s": wall, "seconds": dict(timer.totals),
            "kinds": {kind: {"steps": int(n), "seconds": s, "physics_seconds": ph}
                      for kind, (n, s, ph) in kinds.items()}}


def per_kind(run: dict[str, Any]) -> dict[str, dict[str, float]]:
    """Per kind of step: how many, microseconds per such step (all of it, and physics), and
    microseconds per step of the run (its share of the average step)."""
    out = {}
    for kind, k in run["kinds"].items():
        n = k["steps"]
        out[kind] = {"steps": n, "us_each": k["seconds"] / n * 1e6 if n else 0.0,
                     "physics_us_each": k["physics_seconds"] / n * 1e6 if n else 0.0,
                     "us_per_step": k["seconds"] / run["steps"] * 1e6}
    return out


def per_step(run: dict[str, Any]) -> dict[str, float]:
    """Microseconds per step of each component, and of the whole loop."""
    us = {name: run["seconds"].get(name, 0.0) / run["steps"] * 1e6 for name in COMPONENTS}
    us["total"] = run["wall_s"] / run["steps"] * 1e6
    return us


def measure_scenario(name: str, settings: BenchSettings, say: Say) -> dict[str, Any]:
    scenario = load(name, settings.sets)
    measured = []
    for k in range(settings.repeat):
        say(f"breakdown: {name} {k + 1}/{settings.repeat}")
        measured.append(measure_once(scenario, settings.duration_s, settings.seed))
    runs = [per_step(run) for run in measured]
    med = {key: statistics.median(run[key] for run in runs) for key in runs[0]}
    total = med["total"]
    accounted = sum(med[c] for c in COMPONENTS)
    kinds = [per_kind(run) for run in measured]
    return {
        "steps": measured[0]["steps"],
        "components": {c: {"us_per_step": sig(med[c]), "percent": sig(100.0 * med[c] / total, 3)}
                       for c in COMPONENTS},
        "total_us_per_step": sig(total),
        "accounted_us_per_step": sig(accounted),
        # the loop itself and the timer's own calls between components
        "unaccounted_us_per_step": sig(total - accounted),
        "step_kinds": {kind: {"steps": kinds[0][kind]["steps"],
                              **{key: sig(statistics.median(run[kind][key] for run in kinds))
                                 for key in ("us_each", "physics_us_each", "us_per_step")}}
                       for kind in STEP_KINDS},
    }


def run(settings: BenchSettings, say: Say) -> dict[str, Any]:
    return {name: measure_scenario(name, settings, say) for name in settings.scenarios}
