"""Tests of the animated person: clips (hri.actor.animation) and the plugin's state machine."""

from __future__ import annotations

import collections
import math

import numpy as np
import pybullet
import pytest
from shapely.geometry import Point, box

from hri.actor.animation import FOOT_CORNERS, ClipLibrary, KeyframeClip, WalkClip
from hri.actor.pose import pose_distance
from hri.actor.quaternions import qrotate
from hri.actor.plugin import ActorPlugin
from hri.actor.protocol import ActionMessage, ActorState, FeedbackMessage
from hri.actor.route import WalkingArea
from hri.base.geometry import Pose

DT = 1.0 / 240.0
NAMED_CLIPS = ["standing_extend_arm", "standing_retract_arm", "standing_to_low", "low_inspect",
               "low_grab", "low_put", "low_to_standing", "stand"]


class FakeEndpoint:
    """In-memory stand-in for the plugin's queue endpoint."""

    def __init__(self):
        self.actions: collections.deque[ActionMessage] = collections.deque()
        self.feedback: list[FeedbackMessage] = []

    def receive(self) -> ActionMessage | None:
        return self.actions.popleft() if self.actions else None

    def send(self, message: FeedbackMessage) -> None:
        self.feedback.append(message)


@pytest.fixture(scope="module")
def clips() -> ClipLibrary:
    return ClipLibrary.default()


@pytest.fixture
def client():
    cid = pybullet.connect(pybullet.DIRECT)
    yield cid
    pybullet.disconnect(cid)


class Runner:
    def __init__(self, client, clips, start=Pose(0.0, 0.0, 0.0), **kwargs):
        self.client = client
        self.endpoint = FakeEndpoint()
        self.plugin = ActorPlugin(client, clips, start, self.endpoint, **kwargs)
        self.t = 0.0
        self.plugin.step(self.t, DT)

    def send(self, message: ActionMessage) -> None:
        self.endpoint.actions.append(message)

    def step(self) -> None:
        self.t += DT
        self.plugin.step(self.t, DT)

    def joints(self) -> np.ndarray:
        states = pybullet.getJointStatesMultiDof(self.plugin.body_id,
                                                 list(range(pybullet.getNumJoints(
                                                     self.plugin.body_id, physicsClientId=self.client))),
                                                 physicsClientId=self.client)
        return np.concatenate([np.asarray(s[0], float) for s in states])

    def lowest_foot_point(self) -> float:
        lowest = math.inf
        for name in ("left_ankle", "right_ankle"):
            index = self.plugin._body.joint_index[name]
            state = pybullet.getLinkState(self.plugin.body_id, index, computeForwardKinematics=1,
                                          physicsClientId=self.client)
            corners = np.asarray(state[4]) + qrotate(np.asarray(state[5]), FOOT_CORNERS)
            lowest = min(lowest, float(corners[:, 2].min()))
        return lowest

    def run_until_idle(self, max_seconds: float, on_step=None) -> float:
        start = self.t
        while self.t - start < max_seconds:
            self.step()
            if on_step is not None:
                on_step()
            if self.plugin.state == ActorState.IDLE:
                return self.t - start
        raise AssertionError(f"still {self.plugin.state.name} after {max_seconds} s")


def action_feedback(endpoint: FakeEndpoint, sequence: int) -> list[FeedbackMessage]:
    return [f for f in endpoint.feedback if f.sequence == sequence]


# ---------------------------------------------------------------- clips
def test_library_has_walk_and_named_clips(clips):
    assert clips.has("walk") and isinstance(clips.get("walk"), WalkClip)
    for name in NAMED_CLIPS:
        assert clips.has(name) and isinstance(clips.get(name), KeyframeClip)
    assert not clips.has("dance")
    with pytest.raises(KeyError):
        clips.get("dance")
    walk = clips.walk
    assert 1.0 < walk.stride < 1.5  # ~1.24 m per cycle (two steps) for a 1.6 m person
    assert 0.8 < walk.natural_speed < 1.3


@pytest.mark.parametrize("first, second", [
    ("stand", "standing_extend_arm"), ("standing_extend_arm", "standing_retract_arm"),
    ("standing_retract_arm", "stand"), ("stand", "standing_to_low"),
    ("standing_to_low", "low_inspect"), ("low_inspect", "low_grab"), ("low_grab", "low_put"),
    ("low_put", "low_to_standing"), ("low_to_standing", "stand")])
def test_clips_chain(clips, first, second):
    a, b = clips.get(first).end_pose(), clips.get(second).start_pose()
    assert pose_distance(a, b) < 1e-6
    assert np.allclose(a.root, b.root, atol=1e-6)


def test_humanoid_collides_with_nothing_but_closest_points_work(client, clips):
    runner = Runner(client, clips)
    shape = pybullet.createCollisionShape(pybullet.GEOM_BOX, halfExtents=[0.2, 0.2, 0.2],
                                          physicsClientId=client)
    overlapping = pybullet.createMultiBody(1.0, shape, basePosition=[0.1, 0.0, 1.0],
                                           physicsClientId=client)
    far = pybullet.createMultiBody(0.0, shape, basePosition=[2.0, 0.0, 1.0], physicsClientId=client)
    pybullet.setGravity(0, 0, 0, physicsClientId=client)
    pybullet.stepSimulation(physicsClientId=client)
    assert pybullet.getContactPoints(bodyA=runner.plugin.body_id, physicsClientId=client) == ()
    near = pybullet.getClosestPoints(runner.plugin.body_id, overlapping, 0.1, physicsClientId=client)
    assert near and min(p[8] for p in near) < 0.0  # penetration is seen
    distance = pybullet.getClosestPoints(runner.plugin.body_id, far, 5.0, physicsClientId=client)
    assert distance and 1.0 < min(p[8] for p in distance) < 2.0


def test_humanoid_stays_where_it_is_posed_and_is_seen_there(client, clips):
    """The body sleeps through the physics steps (it neither sags under gravity nor costs the
    step), and a new pose moves it for the distance queries all the same."""
    from hri.actor.body import HumanoidBody

    pybullet.setGravity(0, 0, -9.81, physicsClientId=client)
    body = HumanoidBody(client)
    body.apply(clips.rest_pose(), 0.0, 0.0, 0.0)
    pybullet.stepSimulation(physicsClientId=client)  # Bullet lays it to rest at the end of its first step
    body.apply(clips.rest_pose(), 0.0, 0.0, 0.0)
    links = range(pybullet.getNumJoints(body.body_id, physicsClientId=client))

    def link_positions():
        return np.array([s[4] for s in pybullet.getLinkStates(body.body_id, links, computeForwardKinematics=1,
                                                              physicsClientId=client)])

    posed = link_positions()
    for _ in range(240):
        pybullet.stepSimulation(physicsClientId=client)
    assert np.max(np.abs(link_positions() - posed)) < 1e-9
    shape = pybullet.createCollisionShape(pybullet.GEOM_BOX, halfExtents=[0.1, 0.1, 1.0], physicsClientId=client)
    post = pybullet.createMultiBody(0.0, shape, basePosition=[2.0, 0.0, 1.0], physicsClientId=client)
    before = min(p[8] for p in pybullet.getClosestPoints(body.body_id, post, 5.0, physicsClientId=client))
    body.apply(clips.rest_pose(), 1.0, 0.0, 0.0)  # one metre nearer
    pybullet.stepSimulation(physicsClientId=client)
    after = min(p[8] for p in pybullet.getClosestPoints(body.body_id, post, 5.0, physicsClientId=client))
    assert after == pytest.approx(before - 1.0, abs=1e-6)
    assert np.allclose(link_positions(), posed + [1.0, 0.0, 0.0], atol=1e-9)


# ---------------------------------------------------------------- plugin: setup, movement
def test_setup_then_idle(client, clips):
    runner = Runner(client, clips, Pose.from_xy_yaw(1.0, 2.0, 0.3))
    assert runner.plugin.state == ActorState.IDLE
    first = runner.endpoint.feedback[0]
    assert first.state == ActorState.IDLE
    assert first.current.x == pytest.approx(1.0) and first.current.y == pytest.approx(2.0)
    assert first.current.yaw == pytest.approx(0.3)
    assert 0.8 < first.current.z < 0.95  # pelvis height of a ~1.6 m person


@pytest.mark.parametrize("orientation", ["given", "null"])
def test_movement_reaches_target(client, clips, orientation):
    runner = Runner(client, clips, Pose.from_xy_yaw(0.0, 0.0, math.pi))
    goal = (Pose.from_xy_yaw(3.0 * math.cos(0.4), 3.0 * math.sin(0.4), -1.2) if orientation == "given"
            else Pose(3.0 * math.cos(0.4), 3.0 * math.sin(0.4), 0.0, 0.0, 0.0, 0.0, 0.0))
    runner.send(ActionMessage(ActorState.MOVEMENT, "walk", 0.0, goal, sequence=7))
    start_joints = runner.joints()
    leg_motion = []
    elapsed = runner.run_until_idle(10.0, lambda: leg_motion.append(
        np.abs(runner.joints() - start_joints).max()))
    feedback = action_feedback(runner.endpoint, 7)
    assert feedback[0].state == ActorState.MOVEMENT
    assert all(f.state == ActorState.MOVEMENT for f in feedback[:-1])
    assert len(feedback) >= elapsed / DT - 1  # feedback on every step
    assert feedback[-1].state == ActorState.IDLE and feedback[-1].progress == 1.0
    progress = [f.progress for f in feedback]
    assert all(b >= a for a, b in zip(progress, progress[1:]))
    assert max(leg_motion) > 0.5  # the legs moved (radians / quaternion components)
    pose = runner.plugin.pose
    assert math.hypot(pose.x - goal.x, pose.y - goal.y) < 0.05
    assert feedback[-1].current.x == pytest.approx(pose.x)
    expected = -1.2 if orientation == "given" else 0.4
    assert abs(math.remainder(pose.yaw - expected, 2 * math.pi)) < 0.02
    # duration: turn + 3 m at the natural speed + turn + settle
    assert 3.0 / clips.walk.natural_speed < elapsed < 3.0 / clips.walk.natural_speed + 3.0


def test_walking_feet_do_not_slide(client, clips):
    runner = Runner(client, clips)
    runner.send(ActionMessage(ActorState.MOVEMENT, "walk", 0.0, Pose(4.0, 0.0, 0.0, 0, 0, 0, 0), 1))
    samples = []  # (pelvis x, left foot, right foot) per step
    runner.run_until_idle(10.0, lambda: samples.append(
        (runner.plugin.pose.x, *runner.plugin.foot_positions())))
    pelvis = np.array([s[0] for s in samples])
    feet = np.array([[s[1], s[2]] for s in samples])  # (n, 2, 3)
    # steady walking only: the pelvis moves, and away from the blend-in/out at the ends
    walking = np.flatnonzero(np.diff(pelvis) > 0.5 * DT)
    walking = walking[(pelvis[walking] > 0.4) & (pelvis[walking] < 3.6)]
    slips, planted = [], []  # stance as specified; stance with the foot not landing/lifting
    for foot in (0, 1):
        floor = feet[walking, foot, 2].min()
        for i in walking:
            z0, z1 = feet[i, foot, 2], feet[i + 1, foot, 2]
            lower = z0 <= feet[i, 1 - foot, 2]
            if lower and z0 < floor + 0.02 and z1 < floor + 0.02:
                slip = np.hypot(*(feet[i + 1, foot, :2] - feet[i, foot, :2])) / DT
                slips.append(slip)
                if abs(z1 - z0) / DT < 0.1:
                    planted.append(slip)
    speed = np.diff(pelvis)[walking].mean() / DT
    mean_slip, mean_planted = float(np.mean(slips)), float(np.mean(planted))
    print(f"walking speed {speed:.3f} m/s; stance foot slip: mean {mean_slip:.3f} m/s, median "
          f"{np.median(slips):.3f} m/s over {len(slips)} steps; without landing/lifting "
          f"(|vz| < 0.1 m/s): mean {mean_planted:.3f} m/s over {len(planted)} steps")
    assert len(planted) > 100
    # The sole's centre rolls heel-to-toe and the 30 Hz motion capture lands the heel within one
    # frame, so the stance point is never perfectly still; slipping would show as ~speed.
    assert mean_planted < 0.1
    assert np.median(slips) < 0.1
    assert mean_slip < 0.25 * speed
    assert speed == pytest.approx(clips.walk.natural_speed, rel=0.02)


def test_walk_speed_and_animation_distance(client, clips):
    runner = Runner(client, clips, walk_speed=1.5)
    runner.send(ActionMessage(ActorState.MOVEMENT, "walk", 0.8, Pose(3.0, 0.0, 0.0, 0, 0, 0, 0), 2))
    elapsed = runner.run_until_idle(10.0)
    assert elapsed == pytest.approx(3.0 / 1.5 + 0.25, abs=0.02)  # walk + settle, no turns
    assert runner.plugin.pose.x == pytest.approx(3.0, abs=0.01)


def test_short_target_only_turns(client, clips):
    runner = Runner(client, clips)
    runner.send(ActionMessage(ActorState.MOVEMENT, "", 0.0, Pose.from_xy_yaw(0.02, 0.0, 1.0), 3))
    runner.run_until_idle(5.0)
    assert runner.endpoint.feedback[-1].progress == 1.0
    assert runner.plugin.pose.x == pytest.approx(0.0, abs=1e-9)
    assert runner.plugin.pose.yaw == pytest.approx(1.0, abs=1e-6)


def test_cancel_during_movement(client, clips):
    runner = Runner(client, clips)
    runner.send(ActionMessage(ActorState.MOVEMENT, "walk", 0.0, Pose(5.0, 0.0, 0.0, 0, 0, 0, 0), 4))
    for _ in range(240):
        runner.step()
    assert runner.plugin.state == ActorState.MOVEMENT
    runner.send(ActionMessage(ActorState.IDLE, sequence=4))
    x = runner.plugin.pose.x
    runner.step()
    assert runner.plugin.state == ActorState.IDLE
    last = runner.endpoint.feedback[-1]
    assert last.state == ActorState.IDLE and last.sequence == 4 and last.progress < 1.0
    for _ in range(120):
        runner.step()
    assert runner.plugin.pose.x == pytest.approx(x, abs=0.05)  # stopped where it was
    assert runner.endpoint.feedback[-1].state == ActorState.IDLE  # no feedback flood in IDLE


# ---------------------------------------------------------------- plugin: animations
@pytest.mark.parametrize("name", NAMED_CLIPS)
def test_clip_plays(client, clips, name):
    runner = Runner(client, clips)
    speed = 1.5
    clip = clips.get(name)
    start = clip.start_pose()
    if name.startswith("low") or name == "standing_retract_arm":
        # start from the clip's own start pose: what the previous clip of a chain leaves
        runner.plugin._motion.shown = runner.plugin._idle_target = start
        runner.step()
    runner.send(ActionMessage(ActorState.ANIMATION, name, speed, sequence=11))
    z0 = runner.plugin.pose.z
    joints, pelvis_z, lowest = [], [], []

    def record():
        joints.append(runner.joints())
        pelvis_z.append(runner.plugin.pose.z)
        lowest.append(runner.lowest_foot_point())

    elapsed = runner.run_until_idle(clip.duration / speed + 1.0, record)
    assert elapsed == pytest.approx(clip.duration / speed, abs=2 * DT)
    feedback = action_feedback(runner.endpoint, 11)
    assert feedback[0].state == ActorState.ANIMATION
    assert feedback[-1].state == ActorState.IDLE and feedback[-1].progress == 1.0
    progress = [f.progress for f in feedback]
    assert all(b >= a for a, b in zip(progress, progress[1:]))
    if name != "stand":
        assert np.abs(joints[len(joints) // 2] - joints[0]).max() > 0.1
    assert min(lowest) > -0.02  # feet never below the floor by more than 2 cm
    assert min(lowest) < 0.02  # ... nor floating
    if name == "standing_to_low":
        assert z0 - pelvis_z[-1] > 0.25


def test_unknown_animation_fails(client, clips):
    runner = Runner(client, clips)
    runner.send(ActionMessage(ActorState.ANIMATION, "moonwalk", 1.0, sequence=9))
    runner.step()
    assert runner.plugin.state == ActorState.IDLE
    last = runner.endpoint.feedback[-1]
    assert last.state == ActorState.IDLE and last.progress == 0.0 and last.sequence == 9
    runner.send(ActionMessage(ActorState.MOVEMENT, "moonwalk", 0.0, Pose(1.0, 0.0, 0.0), 10))
    runner.step()
    last = runner.endpoint.feedback[-1]
    assert last.state == ActorState.IDLE and last.progress == 0.0 and last.sequence == 10


def test_step_cost(client, clips):
    import time

    runner = Runner(client, clips)
    runner.send(ActionMessage(ActorState.MOVEMENT, "walk", 0.0, Pose(20.0, 0.0, 0.0, 0, 0, 0, 0), 1))
    runner.step()
    begin = time.perf_counter()
    for _ in range(480):
        runner.step()
    per_step = (time.perf_counter() - begin) / 480
    print(f"ActorPlugin.step while walking: {per_step * 1e6:.0f} us")
    assert per_step < 0.002


def test_the_plugin_walks_the_route_leg_by_leg(client, clips):
    table = box(3.0, 1.0, 4.0, 4.0)
    area = WalkingArea(box(0.0, 0.0, 8.0, 6.0), [table], clearance=0.35)
    runner = Runner(client, clips, Pose.from_xy_yaw(1.0, 1.5, 0.0), walking_area=area)
    goal = Pose.from_xy_yaw(6.0, 1.5, math.pi / 2)
    runner.send(ActionMessage(ActorState.MOVEMENT, "walk", 0.0, goal, sequence=3))
    path = []
    runner.run_until_idle(30.0, lambda: path.append((runner.plugin.pose.x, runner.plugin.pose.y)))
    pose = runner.plugin.pose
    assert math.hypot(pose.x - 6.0, pose.y - 1.5) < 0.05
    assert abs(math.remainder(pose.yaw - math.pi / 2, 2 * math.pi)) < 0.02
    # the pelvis kept off the table (the clip's sway: a few cm), and went around it
    assert min(Point(xy).distance(table) for xy in path) > 0.25
    progress = [f.progress for f in action_feedback(runner.endpoint, 3)]
    assert all(b >= a for a, b in zip(progress, progress[1:])) and progress[-1] == 1.0
    assert any(f.state == ActorState.IDLE for f in action_feedback(runner.endpoint, 3)[-1:])


def _body_state(plugin: ActorPlugin, client: int) -> tuple:
    position, orientation = pybullet.getBasePositionAndOrientation(plugin.body_id, physicsClientId=client)
    joints = pybullet.getJointStatesMultiDof(plugin.body_id, list(range(pybullet.getNumJoints(
        plugin.body_id, physicsClientId=client))), physicsClientId=client)
    return tuple(position), tuple(orientation), tuple(tuple(j[0]) for j in joints)


def test_a_preview_poses_the_body_as_a_step_would_and_changes_nothing_the_person_does(client, clips):
    """The safety monitor has the person posed between the person's own steps: when it does
    must not change the walk, the clip or the feedback (a step there would read actions, end
    activities and start blends on the monitor's schedule)."""
    every = 12  # the person's own steps: 20 Hz at 240 Hz physics
    walk = ActionMessage(ActorState.MOVEMENT, "walk", 0.0, Pose.from_xy_yaw(3.0, 1.2, 2.0), 1)
    grab = ActionMessage(ActorState.ANIMATION, "low_grab", 1.0, Pose(), 2)
    previews = [k for k in range(1, 2200) if k % every in (5, 11) or 300 <= k < 340 and k % every]
    probes = {301: None, 1109: None}  # a step instead of the preview (walking, grabbing): where the body must be
    plain, previewed = Runner(client, clips), Runner(client, clips)
    runners = [plain, previewed] + [Runner(client, clips) for _ in probes]
    for runner in runners:
        runner.send(walk)
    for k in range(1, 2200):
        t = k * DT
        if k % every == 0:
            walked = plain.plugin.state == ActorState.IDLE and plain.endpoint.feedback[-1].sequence == walk.sequence
            if walked and plain.plugin.progress == 1.0:
                for runner in runners:
                    runner.send(grab)
            for runner in runners:
                runner.plugin.step(t, DT)
            assert _body_state(previewed.plugin, client) == _body_state(plain.plugin, client)
            assert previewed.plugin.pose == plain.plugin.pose
        elif k in previews:
            previewed.plugin.preview(t, DT)
            for probe, at in zip(runners[2:], probes):
                if k == at:
                    probe.plugin.step(t, DT)
                    probes[at] = _body_state(probe.plugin, client)
                    assert probe.plugin.state == (ActorState.MOVEMENT if at < 600 else ActorState.ANIMATION)
            if k in probes:
                assert _body_state(previewed.plugin, client) == probes[k]
    assert previewed.endpoint.feedback == plain.endpoint.feedback
    states = [m.state for m in plain.endpoint.feedback]
    assert ActorState.MOVEMENT in states and ActorState.ANIMATION in states and states[-1] == ActorState.IDLE
    assert None not in probes.values()


def test_between_its_steps_the_pelvis_is_where_the_next_posing_puts_it(client, clips):
    """The safety monitor decides zones from ``pose_at`` between the person's steps: it must
    be where a preview (the body posed as a step would pose it) puts the pelvis, through
    walks around furniture (several legs), turns, the walk's sway, clips, and the blends
    after a cancel; else a zone border flickers when the body is posed again."""
    every = 12  # the person's own steps: 20 Hz at 240 Hz physics
    area = WalkingArea(box(0.0, 0.0, 8.0, 6.0), [box(3.0, 1.0, 4.0, 4.0)], clearance=0.35)
    runner = Runner(client, clips, Pose.from_xy_yaw(1.0, 1.5, 0.0), walking_area=area)
    plugin = runner.plugin
    script = {12: ActionMessage(ActorState.MOVEMENT, "walk", 0.0, Pose.from_xy_yaw(6.0, 1.5, math.pi / 2), 1),
              3000: ActionMessage(ActorState.ANIMATION, "low_grab", 1.3, Pose(), 2),
              3300: ActionMessage(ActorState.IDLE, sequence=3),
              3600: ActionMessage(ActorState.MOVEMENT, "walk", 0.0, Pose.from_xy_yaw(1.0, 5.0, 0.0), 4),
              4200: ActionMessage(ActorState.IDLE, sequence=5)}
    checked, moved = collections.Counter(), collections.Counter()
    for k in range(1, 4800):
        t = k * DT
        if k % every == 0:
            if k in script:
                runner.send(script[k])
            plugin.step(t, DT)
            continue
        last = plugin.pose
        ahead = plugin.pose_at(t + DT)
        assert plugin.pelvis_xy_at(t + DT) == (ahead.x, ahead.y)  # the zones' cheap path: the same numbers
        legs = plugin._motion.leg
        plugin.preview(t, DT)
        posed = plugin.pose
        assert (ahead.x, ahead.y, ahead.z) == pytest.approx((posed.x, posed.y, posed.z), abs=1e-9), (k, plugin.state)
        assert abs(math.remainder(ahead.yaw - posed.yaw, 2 * math.pi)) < 1e-9
        state = plugin.state.name + (f" leg {legs}" if plugin.state == ActorState.MOVEMENT else "")
        checked[state] += 1
        moved[state] += math.hypot(posed.x - last.x, posed.y - last.y) > 1e-4
    assert {"MOVEMENT leg 0", "MOVEMENT leg 1", "ANIMATION", "IDLE"} <= set(checked)
    assert all(moved[state] > 20 for state in ("MOVEMENT leg 0", "MOVEMENT leg 1", "ANIMATION", "IDLE")), moved
