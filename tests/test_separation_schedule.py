"""The safety monitor's separation schedule: queries are skipped only where they cannot change
what is reported, so the run's smallest separation is the one a query every step finds."""

from __future__ import annotations

import math

import pybullet as p

from hri.actor import body as actor_body
from hri.run.monitor import EXACT_M, PERSON_MAX_SPEED_M_S, SEPARATION_CUTOFF_M
from hri.scenario.load import load_scenario
from hri.run.sim import Simulation


class EveryStep:
    """An observer that asks PyBullet for the separation after every physics step (of the
    simulation the test gives it: an oracle may look inside)."""

    def __init__(self) -> None:
        self.distances: list[float] = []
        self.sim: Simulation | None = None

    def start(self, run) -> None: ...

    def after_step(self, run) -> None:
        points = p.getClosestPoints(self.sim.plugin.body_id, self.sim.robot.body_id, SEPARATION_CUTOFF_M,
                                    physicsClientId=run.client)
        self.distances.append(min(pt[8] for pt in points))

    def finish(self, run) -> None: ...


def test_the_smallest_separation_is_exact_although_most_steps_skip_the_query() -> None:
    # the person posed every step, so a query every step sees the same bodies the monitor would
    scenario = load_scenario("collaboration", ["simulation.person_rate_hz=240"])
    oracle = EveryStep()
    with Simulation(scenario, 0, observers=[oracle]) as sim:
        oracle.sim = sim
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


class BodyFrames:
    """The person's link frames as posed for each physics step, and the bound of its speed the
    safety monitor is given after each step (an observer)."""

    def __init__(self, sim: Simulation) -> None:
        self.sim, self.body, self.posings, self.bounds = sim, sim.plugin._body, [], []

    def start(self, run) -> None: ...

    def after_step(self, run) -> None:
        self.bounds.append(self.sim.plugin.speed_bound())  # bounds[j]: after physics step j

    def finish(self, run) -> None: ...

    def record(self) -> None:
        """After a posing, which puts the body where it is at the end of this physics step."""
        if self.posings and self.posings[-1][0] == self.sim.step_count:
            self.posings.pop()  # posed again in the same step: the physics sees the last one
        self.posings.append((self.sim.step_count, self.body.link_frames()))

    def intervals(self):
        """Per pair of successive posings: how far any point moved at most (m), over how many
        steps, and how far the bounds given for those steps allow (m)."""
        dt = self.sim.dt
        for (step0, frames0), (step1, frames1) in zip(self.posings, self.posings[1:]):
            allowed = sum(self.bounds[step0 + 1:step1 + 1]) * dt
            yield self.body.moved_at_most(frames0, frames1), step1 - step0, allowed


def _posings(scenario, monkeypatch, seconds: float = 60.0) -> tuple[BodyFrames, list, float]:
    """Run ``scenario`` recording every posing of the person and the bounds given."""
    with Simulation(scenario, 0) as sim:
        frames = BodyFrames(sim)
        sim.observers.append(frames)
        apply = actor_body.HumanoidBody.apply

        def posed(body, *args, **kwargs):
            placed = apply(body, *args, **kwargs)
            frames.record()
            return placed

        monkeypatch.setattr(actor_body.HumanoidBody, "apply", posed)
        sim.run(seconds)
        monkeypatch.undo()
        return frames, list(frames.intervals()), sim.dt


def _beyond(intervals: list) -> list:
    return [(moved, allowed) for moved, _steps, allowed in intervals if moved > allowed + 1e-6]  # 1e-6: acos near 1


def test_no_point_of_the_person_moves_faster_than_the_schedule_assumes(monkeypatch) -> None:
    """The waits between separation queries assume the person's body moves no faster than
    the plugin's bound for what it does (ActorPlugin.speed_bound: a clip's measured speed,
    nothing standing still, PERSON_MAX_SPEED_M_S walking, turning, blending), at its own
    steps and at the previews between them. A walk that ended into a turn or the rest pose
    used to blend from where the last step had left the body, throwing a foot back 2-10 cm in
    one physics step (5-23 m/s) after previews had shown it on its way; walking alone moves a
    foot up to 4.4 m/s (the bound was 3)."""
    for preset in ("coexistence", "collaboration"):
        frames, intervals, dt = _posings(load_scenario(preset), monkeypatch)
        assert len(intervals) >= 1199, "the person is posed at least at its own steps"
        fastest = max(moved / (steps * dt) for moved, steps, _allowed in intervals)
        assert 3.0 < fastest < PERSON_MAX_SPEED_M_S, preset
        assert not _beyond(intervals), f"{preset}: moved farther than the bounds allow: {_beyond(intervals)[:3]}"
        assert sum(1 for bound in frames.bounds if bound < PERSON_MAX_SPEED_M_S) > 1000, \
            "the person stands or plays clips for a while: the bound below the top speed is tried"


def test_a_walk_faster_than_the_walk_clip_raises_the_bound_by_its_measured_speed(monkeypatch) -> None:
    """A scenario may make the person walk three times as far per cycle as the walk clip does
    (``person.walk_stride_m``), at three times its speed: a foot then moves faster than the
    top speed the presets' walks keep to, and the bound grows with it."""
    frames, intervals, dt = _posings(load_scenario("coexistence", ["person.walk_stride_m=3.7"]), monkeypatch)
    fastest = max(moved / (steps * dt) for moved, steps, _allowed in intervals)
    assert fastest > PERSON_MAX_SPEED_M_S, "the walk outruns the presets' top speed"
    assert not _beyond(intervals), f"moved farther than the bounds allow: {_beyond(intervals)[:3]}"
    assert max(frames.bounds) > fastest


def test_a_tall_fast_person_stays_within_the_bounds_of_their_scaled_body(monkeypatch) -> None:
    """A person 2.1 m tall (``person.height_m``: the humanoid scaled 1.3 times) walking 2 m/s
    (``person.walking_speed_mps``) at their own stride: their body's points move faster than
    the default body's, and the bounds the separation schedule is given (SSM's v_h too) grow
    with the body (mutation: a bound that ignores the body's scale fails)."""
    scale = 2.1 / actor_body.BODY_HEIGHT_M
    scenario = load_scenario("coexistence", ["person.height_m=2.1", "person.walking_speed_mps=2.0",
                                             f"person.walk_stride_m={1.239 * scale}"])
    frames, intervals, dt = _posings(scenario, monkeypatch, 12.0)
    assert frames.body.scale == scale
    fastest = max(moved / (steps * dt) for moved, steps, _allowed in intervals)
    assert fastest > PERSON_MAX_SPEED_M_S, "the tall fast walk outruns the default body's top speed"
    assert not _beyond(intervals), f"moved farther than the bounds allow: {_beyond(intervals)[:3]}"
