"""The safety monitor's separation schedule: queries are skipped only where they cannot change
what is reported, so the run's smallest separation is the one a query every step finds."""

from __future__ import annotations

import math

import pybullet as p

from hri.actor import body as actor_body
from hri.monitor import EXACT_M, PERSON_MAX_SPEED_M_S, SEPARATION_CUTOFF_M
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


def _reach_from_centre(client: int, body: int, link: int) -> float:
    """How far any point of ``link``'s collision shapes is from its centre of mass (metres)."""
    reach = 0.0
    for shape in p.getCollisionShapeData(body, link, physicsClientId=client):
        kind, size, offset = shape[2], shape[3], shape[5]
        extent = {p.GEOM_SPHERE: size[0], p.GEOM_CAPSULE: size[0] / 2 + size[1],
                  p.GEOM_BOX: 0.5 * math.hypot(*size)}.get(kind, max(size))
        reach = max(reach, math.hypot(*offset) + extent)
    return reach


class BodyFrames:
    """The person's link frames (centres of mass) as posed for each physics step."""

    def __init__(self, sim: Simulation) -> None:
        self.sim, self.posings = sim, []
        self.body, client = sim.plugin.body_id, sim.client
        self.links = list(range(-1, p.getNumJoints(self.body, physicsClientId=client)))
        self.reach = [_reach_from_centre(client, self.body, link) for link in self.links]

    def record(self) -> None:
        client = self.sim.client
        frames = [p.getBasePositionAndOrientation(self.body, physicsClientId=client)]
        frames += [(s[0], s[1]) for s in p.getLinkStates(self.body, self.links[1:], physicsClientId=client)]
        if self.posings and self.posings[-1][0] == self.sim.step_count:
            self.posings.pop()  # posed again in the same step: the physics sees the last one
        self.posings.append((self.sim.step_count, frames))

    def fastest_point(self) -> float:
        """An upper bound of how fast any point of the body moved from one posing to the next
        (m/s): per link, the centre's move plus its reach times the angle turned."""
        fastest = 0.0
        for (step0, frames0), (step1, frames1) in zip(self.posings, self.posings[1:]):
            dt = (step1 - step0) * self.sim.dt
            for reach, (p0, q0), (p1, q1) in zip(self.reach, frames0, frames1):
                turned = 2.0 * math.acos(min(1.0, abs(sum(a * b for a, b in zip(q0, q1)))))
                fastest = max(fastest, (math.dist(p0, p1) + reach * turned) / dt)
        return fastest


def test_no_point_of_the_person_moves_faster_than_the_schedule_assumes(monkeypatch) -> None:
    """The waits between separation queries assume the person's body moves no faster than
    PERSON_MAX_SPEED_M_S, at its own steps and at the previews between them. A walk that ended
    into a turn or the rest pose used to blend from where the last step had left the body,
    throwing a foot back 2-10 cm in one physics step (5-23 m/s) after previews had shown it on
    its way; walking alone moves a foot up to 4.4 m/s (the bound was 3)."""
    for preset in ("coexistence", "collaboration"):
        with Simulation(load_scenario(preset), 0) as sim:
            frames = BodyFrames(sim)
            apply = actor_body.HumanoidBody.apply

            def posed(body, *args, **kwargs):
                placed = apply(body, *args, **kwargs)
                frames.record()
                return placed

            monkeypatch.setattr(actor_body.HumanoidBody, "apply", posed)
            sim.run(60.0)
            monkeypatch.undo()
        assert len(frames.posings) >= 1200, "the person is posed at least at its own steps"
        assert 3.0 < frames.fastest_point() < PERSON_MAX_SPEED_M_S, preset
