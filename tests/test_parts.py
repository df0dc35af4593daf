"""Parts in the cooperation scene: picked from the feeder, put on the table (where they rest,
dynamic) or on the conveyor (where they ride the belt to its end and are delivered).

The robot here is a stand-in: a bodiless marker whose tool pose the test sets, so that only
:class:`hri.workcell.parts.PartManager` is under test.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pybullet as p
import pytest

from hri.base.errors import HriError
from hri.base.geometry import Pose
from hri.workcell.parts import PartManager, PersonHand, Sink
from hri.scenario.load import load_scenario
from hri.workcell.world import build_world

DT = 1.0 / 240.0


class StandInRobot:
    def __init__(self, client: int):
        self.body_id = p.createMultiBody(0.0, -1, -1, (0.0, 0.0, -5.0), physicsClientId=client)
        self.tool = Pose(0.0, 0.0, 3.0, 1.0, 0.0, 0.0, 0.0)

    def tool_pose(self) -> Pose:
        return self.tool

    def tool_frame(self):
        return self.tool.position, self.tool.orientation


@pytest.fixture
def scene():
    scenario = load_scenario("cooperation")
    client = p.connect(p.DIRECT)
    p.setTimeStep(DT, physicsClientId=client)
    p.setGravity(0, 0, -9.81, physicsClientId=client)
    furniture = build_world(client, scenario.room, scenario.furniture)
    events = []
    parts = PartManager(client, scenario.parts, scenario.areas, furniture, scenario.furniture,
                        np.random.default_rng(3), lambda event, **fields: events.append((event, fields)))
    robot = StandInRobot(client)
    person = p.createMultiBody(0.0, -1, -1, (0.0, 0.0, -6.0), physicsClientId=client)
    clock = [0.0]  # simulated time, advanced by step()
    parts.connect(robot, {"person": PersonHand(person, lambda: Pose(), lambda: ((0.0, 0.0, -6.0), (0.0, 0.0, 0.0, 1.0)))},
                  lambda: clock[0])
    yield SimpleNamespace(client=client, parts=parts, robot=robot, events=events, belt=scenario.furniture["conveyor"],
                          clock=clock)
    p.disconnect(client)


def step(scene, steps: int) -> None:
    for _ in range(steps):
        scene.parts.step()
        p.stepSimulation(physicsClientId=scene.client)
        scene.clock[0] += DT


def pick_and_put(scene, x: float, y: float, part=None) -> tuple:
    """Grasp ``part`` (the first part) at its top, carry it to (x, y) 5 cm above the surfaces, release."""
    part = part or scene.parts.parts[0]
    px, py, pz = scene.parts.position(part)
    scene.robot.tool = Pose(px, py, pz + scene.parts.half[2], 1.0, 0.0, 0.0, 0.0)
    assert scene.parts.robot_grasp()
    scene.robot.tool = Pose(x, y, 0.85, 1.0, 0.0, 0.0, 0.0)
    step(scene, 1)
    return part, scene.parts.robot_release()


def mass(scene, part) -> float:
    return p.getDynamicsInfo(part.body_id, -1, physicsClientId=scene.client)[0]


def test_a_part_put_on_the_belt_rides_it_at_its_speed_and_is_delivered_at_its_end(scene):
    part, surface = pick_and_put(scene, 0.65, 0.9)
    assert surface == "conveyor"
    assert mass(scene, part) == 0.0  # kinematic: the belt, not a contact, carries it
    start = np.array(scene.parts.position(part))
    step(scene, 240)
    moved = np.array(scene.parts.position(part)) - start
    speed = scene.belt.speed  # the belt runs along +y (yaw 90 degrees)
    assert moved == pytest.approx([0.0, speed * 240 * DT, 0.0], abs=1e-9)
    belt_end = scene.belt.center[1] + scene.belt.size[0] / 2
    steps_left = (belt_end - scene.parts.half[0] - start[1]) / (speed * DT) - 240
    step(scene, math.floor(steps_left) - 2)
    assert part in scene.parts.parts and scene.parts.counts.delivered == 0
    step(scene, 4)
    assert part not in scene.parts.parts and scene.parts.counts.delivered == 1
    assert ("part_delivered", {"part": part.number, "conveyor": "conveyor"}) in scene.events


def test_a_part_put_on_the_table_is_dynamic_and_stays_where_it_was_put(scene):
    part, surface = pick_and_put(scene, 2.3, 0.8)
    assert surface == "robot_table"
    assert mass(scene, part) == pytest.approx(scene.parts.mass)
    start = np.array(scene.parts.position(part))
    step(scene, 240)
    assert np.array(scene.parts.position(part)) == pytest.approx(start, abs=2e-3)
    assert part.riding is None


def test_a_part_picked_off_the_belt_stops_riding(scene):
    part, _ = pick_and_put(scene, 0.65, 0.9)
    step(scene, 24)
    scene.robot.tool = Pose(*scene.parts.position(part)[:2], scene.parts.position(part)[2] + scene.parts.half[2],
                            1.0, 0.0, 0.0, 0.0)
    assert scene.parts.robot_grasp()
    held_at = np.array(scene.parts.position(part))
    step(scene, 24)  # the tool stands still: so does the part it holds
    assert np.array(scene.parts.position(part)) == pytest.approx(held_at, abs=1e-6)
    assert part.riding is None


def test_a_part_in_the_persons_hand_follows_each_new_hand_pose_and_a_regrasp_takes_it_to_the_hand(scene):
    """The hand's frame is one object per posing: a part is moved only when it changes, and a
    part grasped again within the same posing still goes to the hand."""
    part = scene.parts.parts[0]
    x, y, z = scene.parts.position(part)
    hand = {"frame": ((x, y, z + 0.02), (0.0, 0.0, 0.0, 1.0))}
    body = scene.parts.hands["person"].body
    scene.parts.connect(scene.robot, {"person": PersonHand(body, lambda: Pose(x, y, 1.0), lambda: hand["frame"])},
                        lambda: 0.0)
    assert scene.parts.person_grab(None)
    step(scene, 1)
    assert scene.parts.position(part) == pytest.approx(hand["frame"][0], abs=1e-6)
    hand["frame"] = ((x + 0.1, y, z + 0.3), (0.0, 0.0, 0.0, 1.0))  # the person was posed again
    step(scene, 2)
    assert scene.parts.position(part) == pytest.approx(hand["frame"][0], abs=1e-6)
    scene.parts.person_release()
    p.resetBasePositionAndOrientation(part.body_id, (x + 0.15, y, z + 0.3), (0.0, 0.0, 0.0, 1.0),
                                      physicsClientId=scene.client)
    assert scene.parts.person_grab(None)  # the same hand frame as before the release
    step(scene, 1)
    assert scene.parts.position(part) == pytest.approx(hand["frame"][0], abs=1e-6)


def test_each_person_takes_parts_into_their_own_hand_and_puts_down_what_it_holds(scene):
    """Two people: the second one's hand is at the part, the first one's far away. The second
    takes the part (the first finds none within reach), it follows the second's hand, and only
    the second can put it down; a name of nobody is refused. (Caught: every person acting with
    the first person's hand.)"""
    part = scene.parts.parts[0]
    x, y, z = scene.parts.position(part)
    near = {"frame": ((x, y, z + 0.02), (0.0, 0.0, 0.0, 1.0))}
    far = ((x + 3.0, y + 3.0, 1.0), (0.0, 0.0, 0.0, 1.0))
    first = PersonHand(p.createMultiBody(0.0, -1, -1, (0.0, 0.0, -7.0), physicsClientId=scene.client),
                       lambda: Pose(x + 3.0, y + 3.0, 0.0), lambda: far)
    second = PersonHand(p.createMultiBody(0.0, -1, -1, (0.0, 0.0, -8.0), physicsClientId=scene.client),
                        lambda: Pose(x, y + 0.7, 0.0, 0.0, 0.0, -0.7071068, 0.7071068), lambda: near["frame"])
    scene.parts.connect(scene.robot, {"ann": first, "bob": second}, lambda: 0.0)
    assert not scene.parts.person_grab(None, "ann")
    assert scene.parts.person_grab(None, "bob")
    near["frame"] = ((x + 0.1, y, z + 0.3), (0.0, 0.0, 0.0, 1.0))  # bob was posed again
    step(scene, 1)
    assert scene.parts.position(part) == pytest.approx(near["frame"][0], abs=1e-6)
    assert scene.parts.person_release("ann") is None and part.holder == "person"
    assert scene.parts.person_release("bob") == "robot_table" and part.holder is None
    assert [fields.get("person") for event, fields in scene.events if event in ("part_picked", "part_placed")] == [
        "bob", "bob"]
    with pytest.raises(HriError, match="no person 'cid'"):
        scene.parts.person_grab(None, "cid")


def test_bodies_of_parts_taken_away_serve_the_next_parts_which_behave_as_new_ones(scene, monkeypatch):
    """PyBullet keeps about 1 KB of every body it removes: a long run would grow with every part
    delivered or collected. The bodies are reused instead; a part on a reused body lies, weighs
    and can be picked as a new one."""
    created = []
    real_create = p.createMultiBody
    monkeypatch.setattr(p, "createMultiBody", lambda *a, **k: created.append(1) or real_create(*a, **k))
    belt_x = scene.belt.center[0]
    belt_end = scene.belt.center[1] + scene.belt.size[0] / 2
    for _ in range(30):  # put down just before the belt's end: delivered at once
        part, surface = pick_and_put(scene, belt_x, belt_end - scene.parts.half[0] - 1e-3)
        assert surface == "conveyor"
        step(scene, 2)
        assert part not in scene.parts.parts
    assert scene.parts.counts.delivered == 30
    assert len(created) == 1  # the part the first grasp left the feeder to put out; 29 reused
    fresh = scene.parts.parts[0]
    assert fresh.holder is None and fresh.riding is None and mass(scene, fresh) == pytest.approx(scene.parts.mass)
    assert_new_part_on_the_feeder(scene, fresh)


def test_a_part_collected_asleep_gives_its_body_to_a_new_part_that_falls_and_rests(scene):
    """A part that rested long enough to sleep, then was collected by a sink: its body, reused,
    must wake up, or the new part would hang 1 mm above the table."""
    scene.parts.sinks.append(Sink(load_scenario("cooperation").areas["table_right"], after_s=4.0))
    part, surface = pick_and_put(scene, 2.3, 0.8)
    assert surface == "robot_table"
    step(scene, 1200)  # at rest for more than 2 s (asleep), then collected
    assert part not in scene.parts.parts and scene.parts.counts.collected == 1
    pick_and_put(scene, 2.3, 0.9)  # the feeder's next part: its grasp has a new one put out
    assert_new_part_on_the_feeder(scene, scene.parts.parts[-1], body=part.body_id)


def assert_new_part_on_the_feeder(scene, part, body: int | None = None) -> None:
    """``part`` is free, dynamic, falls the 1 mm onto the feeder's table, rests, and can be picked."""
    assert body is None or part.body_id == body
    assert part.holder is None and part.riding is None and mass(scene, part) == pytest.approx(scene.parts.mass)
    step(scene, 240)
    assert scene.parts.position(part)[2] == pytest.approx(0.75 + scene.parts.half[2], abs=5e-4)
    linear, angular = p.getBaseVelocity(part.body_id, physicsClientId=scene.client)
    assert max(map(abs, (*linear, *angular))) < 1e-3
    _, surface = pick_and_put(scene, 2.3, 0.8, part)
    assert part.holder is None and surface == "robot_table" and mass(scene, part) == pytest.approx(scene.parts.mass)


def test_a_feeder_puts_its_next_part_clear_of_the_part_just_gripped(scene):
    """A feeder refills the moment a part is gripped, while the gripped part is still on the
    feeder's table: the new part keeps the feeder's spacing from it as from any other part, or
    it would appear inside the gripped one and be knocked off the table when it is carried away."""
    feeder = scene.parts.feeders[0]
    belt_x = scene.belt.center[0]
    belt_end = scene.belt.center[1] + scene.belt.size[0] / 2
    nearest = []
    for _ in range(40):
        held = scene.parts.parts[0]
        x, y, z = scene.parts.position(held)
        scene.robot.tool = Pose(x, y, z + scene.parts.half[2], 1.0, 0.0, 0.0, 0.0)
        assert scene.parts.robot_grasp()
        new = [part for part in scene.parts.parts if part is not held]
        assert len(new) == 1
        nearest.append(math.dist(scene.parts.position(new[0])[:2], (x, y)))
        scene.robot.tool = Pose(belt_x, belt_end - scene.parts.half[0] - 1e-3, 0.85, 1.0, 0.0, 0.0, 0.0)
        step(scene, 1)
        assert scene.parts.robot_release() == "conveyor"
        step(scene, 2)  # delivered at once
    assert min(nearest) >= feeder.min_spacing


class RiderWatch:
    """An observer that draws PyBullet's world after each step, as a window or a video does:
    it asks for the riding parts to be placed (``RunView.place_riders``), then reads every
    riding part's pose from PyBullet (the simulation's part manager, given to it by the test,
    says where they should be)."""

    def __init__(self):
        self.seen = 0
        self.sim = None

    def start(self, run) -> None:
        pass

    def after_step(self, run) -> None:
        run.place_riders()
        for part in self.sim.parts.parts:
            if part.riding is not None:
                position = p.getBasePositionAndOrientation(part.body_id, physicsClientId=run.client)[0]
                assert list(position) == pytest.approx(part.riding.position, abs=1e-12)
                self.seen += 1

    def finish(self, run) -> None:
        pass


def test_a_view_sees_the_riding_parts_where_they_are_and_does_not_change_the_run():
    """Parts on a belt are put into PyBullet only before something looks at them: a view (a
    window, a video) that asks finds them where they are on every step, and with or without a
    view the run is the same (they push nothing, so when they are put there cannot matter)."""
    from hri.run.sim import Simulation
    from hri.run.stats import WALL_CLOCK_KEYS

    def run(observers):
        sim = Simulation(load_scenario("cooperation"), seed=1, observers=observers)
        for observer in observers:
            observer.sim = sim
        with sim:
            stats = sim.run(60.0)
            return ({k: v for k, v in stats.items() if k not in WALL_CLOCK_KEYS}, sim.trajectory.items,
                    sim.events.events)

    watch = RiderWatch()
    watched = run([watch])
    assert watch.seen > 2000  # parts rode the belt for thousands of steps
    assert watched[0]["parts"]["delivered"] >= 2
    assert watched == run([])
