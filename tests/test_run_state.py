"""The per-step state every output reads (hri.run.state): what it says equals the simulation,
the step's events add up to the event log, and a run nobody watches makes none of the costly parts."""

from __future__ import annotations

import csv
import io

import pytest

import hri.run.sim as sim_module
from hri.run.sim import Simulation
from hri.run.state import _links
from hri.scenario.load import load_scenario


class Collect:
    """Every step's news and, every 25 steps, the state and the simulation's own figures."""

    def __init__(self) -> None:
        self.events: list[dict] = []
        self.checked = 0
        self.seen = 0

    def start(self, run) -> None:
        self.events += run.news().events

    def after_step(self, run) -> None:
        self.events += run.news().events
        self.seen = len(run.news().events)
        if run.step_count % 25 == 0:
            state, sim = run.state(), run._sim
            assert state.t == pytest.approx(run.step_count * run.dt, abs=1e-12)
            assert state.robot.positions == tuple(sim.robot.joint_positions())
            assert state.people[0].zone == sim.monitor.zone
            bodies = run.bodies()
            tool = sim.robot.tool_pose()
            assert bodies.robot["tool"] == (tool.position, tool.orientation)
            assert set(bodies.people) == {person.name for person in sim.people}
            for person in sim.people:  # kept between posings: the frames PyBullet gives now
                assert bodies.people[person.name] == _links(sim.client, person.plugin.body_id,
                                                            run._body_names().people[person.name])
            self.checked += 1

    def finish(self, run) -> None:  # the events the run's closing emitted after the last step
        self.events += run.news().events[self.seen:]

def test_the_steps_events_add_up_to_the_event_log_and_the_state_is_the_simulations() -> None:
    collect = Collect()
    with Simulation(load_scenario("coexistence"), seed=1, observers=[collect]) as sim:
        sim.run(10.0)
        logged = list(sim.events.events)
    assert collect.checked > 0
    assert collect.events == logged


def test_trajectory_rows_end_with_the_joint_positions_of_the_state(tmp_path) -> None:
    seen: dict[float, tuple] = {}

    class Joints:
        def start(self, run) -> None: ...

        def after_step(self, run) -> None:
            if run.step_count % run._sim.trajectory_every == 0:
                seen[round(run.now(), 6)] = run.state().robot.positions

        def finish(self, run) -> None: ...

    with Simulation(load_scenario("coexistence"), seed=2, observers=[Joints()]) as sim:
        sim.run(5.0)
        names = sim.robot.model.names
        text = sim.trajectory.lines()
    rows = list(csv.DictReader(io.StringIO(text)))
    assert list(rows[0])[-len(names):] == [f"robot_q_{name}" for name in names]
    for row in rows:
        joints = [float(row[f"robot_q_{name}"]) for name in names]
        assert joints == pytest.approx(seen[float(row["t"])], rel=1e-5, abs=1e-9)


def test_a_run_nobody_watches_reads_no_link_poses_or_shapes(monkeypatch) -> None:
    calls = []
    monkeypatch.setattr(sim_module, "capture_bodies", lambda *a: calls.append("bodies"))
    monkeypatch.setattr(sim_module, "capture_shapes", lambda *a: calls.append("shapes"))
    made = []
    real = sim_module.capture_step
    monkeypatch.setattr(sim_module, "capture_step", lambda *a: made.append(1) or real(*a))
    with Simulation(load_scenario("coexistence"), seed=1) as sim:
        sim.run(2.0)
        rows = len(sim.trajectory)
    assert calls == []
    assert len(made) == rows  # the state is made for the trajectory's rows only
