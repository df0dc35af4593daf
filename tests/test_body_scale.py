"""People of other heights: ``height_m`` scales the humanoid (hri.actor.body.HumanoidBody), its
collision shapes, the pelvis offsets of its poses and its hand, so its feet stay on the floor."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pybullet
import pytest

from hri.actor.body import BODY_HEIGHT_M
from hri.run.sim import Simulation
from hri.scenario.load import load_scenario
from hri.actor.protocol import ActionMessage, ActorState
from hri.base.geometry import Pose
from test_actor_plugin import DT, Runner, clips, client  # noqa: F401 (fixtures)


def _extent(client: int, body: int) -> tuple[list[float], list[float]]:
    """The body's bounding box over its links' collision shapes."""
    low, high = [1e9] * 3, [-1e9] * 3
    for link in range(-1, pybullet.getNumJoints(body, physicsClientId=client)):
        a, b = pybullet.getAABB(body, link, physicsClientId=client)
        low, high = [min(x, y) for x, y in zip(low, a)], [max(x, y) for x, y in zip(high, b)]
    return low, high


@pytest.mark.parametrize("height", [1.45, BODY_HEIGHT_M, 2.05])
def test_a_body_of_another_height_stands_and_walks_on_the_floor(client, clips, height):  # noqa: F811
    """Standing: head at ``height``, soles on the floor, shoulders as wide as the scale makes
    them; walking: the hand where PyBullet has the wrist link, the pelvis as high as the scale
    makes it (mutation: a pelvis offset not scaled floats or sinks the body)."""
    scale = height / BODY_HEIGHT_M
    standard = Runner(client, clips, Pose(5.0, 5.0, 0.0))
    runner = Runner(client, clips, Pose(0.0, 0.0, 0.0), body_scale=scale)
    for _ in range(30):
        runner.step()
    low, high = _extent(client, runner.plugin.body_id)
    assert high[2] == pytest.approx(height, abs=1e-3) and low[2] == pytest.approx(0.0, abs=1e-6)
    s_low, s_high = _extent(client, standard.plugin.body_id)
    assert high[1] - low[1] == pytest.approx(scale * (s_high[1] - s_low[1]), rel=1e-6)
    runner.send(ActionMessage(ActorState.MOVEMENT, "walk", 1.239 * scale, Pose(2.0, 0.0, 0.0), 1))
    standard.send(ActionMessage(ActorState.MOVEMENT, "walk", 1.239, Pose(7.0, 5.0, 0.0), 1))
    for _ in range(int(1.0 / DT)):
        runner.step()
        standard.step()
    assert runner.plugin.pose.z == pytest.approx(scale * standard.plugin.pose.z, rel=1e-9)
    assert runner.plugin.pose_at(runner.t + DT).z == pytest.approx(scale * standard.plugin.pose_at(standard.t + DT).z,
                                                                   rel=1e-9)
    wrist = runner.plugin._body.joint_index["right_wrist"]
    state = pybullet.getLinkState(runner.plugin.body_id, wrist, computeForwardKinematics=1, physicsClientId=client)
    assert runner.plugin.hand_pose()[0] == pytest.approx(state[4], abs=1e-6)


def test_a_scenario_gives_each_person_their_height():
    """``height_m`` in ``people:`` reaches the person's body in a run; a person without it
    keeps the humanoid's own height (the one-person presets: scale 1, their runs unchanged)."""
    scenario = load_scenario(str(Path(__file__).parent / "data" / "people" / "coexistence_pair.yaml"))
    tall = replace(scenario, people=(replace(scenario.people[0], height_m=1.95), scenario.people[1]))
    with Simulation(tall, seed=1) as sim:
        for _ in range(5):
            sim.step()
        worker, visitor = (person.plugin for person in sim.people)
        assert worker._body.scale == pytest.approx(1.95 / BODY_HEIGHT_M) and visitor._body.scale == 1.0
        assert _extent(sim.client, worker.body_id)[1][2] == pytest.approx(1.95, abs=0.01)
        assert _extent(sim.client, visitor.body_id)[1][2] == pytest.approx(BODY_HEIGHT_M, abs=0.01)
