"""The safety monitor's separation schedule: queries are skipped only where they cannot change
what is reported, so the run's smallest separation is the one a query every step finds."""

from __future__ import annotations

import math

import pybullet as p

from hri.monitor import EXACT_M, SEPARATION_CUTOFF_M
from hri.scenario import load_scenario
from hri.sim import Simulation


class EveryStep:
    """An observer that asks PyBullet for the separation after every physics step."""

    def __init__(self) -> None:
        self.distances: list[float] = []

    def start(self, sim: Simulation) -> None: ...

    def after_step(self, sim: Simulation) -> None:
        points = p.getClosestPoints(sim.plugin.body_id, sim.robot.body_id, SEPARATION_CUTOFF_M,
                                    physicsClientId=sim.client)
        self.distances.append(min(pt[8] for pt in points))

    def finish(self, sim: Simulation) -> None: ...


def test_the_smallest_separation_is_exact_although_most_steps_skip_the_query() -> None:
    # the person posed every step, so a query every step sees the same bodies the monitor would
    scenario = load_scenario("collaboration", ["simulation.person_rate_hz=240"])
    oracle = EveryStep()
    with Simulation(scenario, 0, observers=[oracle]) as sim:
        queries = full = 0
        closest_within = sim.monitor._closest_within

        def counted(cutoff: float):
            nonlocal queries, full
            queries += 1
            full += cutoff == SEPARATION_CUTOFF_M
            return closest_within(cutoff)

        sim.monitor._closest_within = counted
        stats = sim.run(90.0)
    smallest = min(oracle.distances)
    assert smallest < 0.9 <= EXACT_M, "the person must come near the robot for this test to say anything"
    assert math.isclose(stats["min_separation_m"], round(smallest, 6), abs_tol=2e-6)
    # the robot slowed or at rest near the person closes the gap slowly: the measured joint
    # speeds stretch the waits (1653 queries in 90 s without them, 829 with)
    assert queries < len(oracle.distances) / 20
    # all link pairs at the full cutoff only at the first query: then those within the distance
    # of the pair closest last time (the person walked away from the robot and back in between)
    assert full == 1
