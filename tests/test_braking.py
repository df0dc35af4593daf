"""S_s and T_s from the arm's state (robot/braking.py) against the simulation's braking from
that state (robot/stopping.py's measure_stop: the arm put at a sampled state, halt(), the
farthest any point of it gets until every link frame is at rest): never below, and tight (the
median model/measured ratio at most 1.5 per speed fraction).

The states are drawn by hypothesis, derandomized (the same states on every run): joint
positions within the limits, velocities at a speed fraction (the fastest joint at it, the
others anywhere below), accelerations any a trajectory limited to that fraction can have
(towards more speed only as far as the jerk limit lets it reach the limit), whose braking stays
within the joint limits (as the arm's trajectories do). The default suite
draws 20 states per fraction; ``-m slow`` 500, and prints the ratios (the figures in
docs/safety.md):

    .venv/bin/pytest -m slow -s tests/test_braking.py -k sampled

The arm is the robot tests' LBR iisy (tests/test_robot.py, 240 Hz), without obstacles (a
braking that touched the table would measure the contact, not the brake).
"""

from __future__ import annotations

import statistics
from collections.abc import Iterator

import numpy as np
import pybullet as p
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from hri.robot.arm import HOME, MotionStatus
from hri.robot.braking import REUSE_CYCLES, BrakingBound, JointState, StateStops
from hri.robot.stopping import PointTracker, measure_stop
from test_robot import DT, Sim

FRACTIONS = (0.25, 0.5, 1.0)
MEDIAN_RATIO = 1.5


@pytest.fixture(scope="module")
def sim() -> Iterator[Sim]:
    s = Sim(build=lambda client: [])
    yield s
    s.close()


@st.composite
def states(draw: st.DrawFn, arm, fraction: float) -> JointState:
    """A joint state of ``arm`` running at ``fraction`` (see the module doc)."""
    vmax = arm.model.max_velocity
    amax, jmax = np.array(arm.config.max_acceleration), np.array(arm.config.max_jerk)
    lower, upper = np.maximum(arm.model.lower, -np.pi), np.minimum(arm.model.upper, np.pi)
    unit = st.floats(-1.0, 1.0, allow_nan=False)
    q = np.array([draw(st.floats(lo, hi, allow_nan=False)) for lo, hi in zip(lower, upper)])
    share = np.array([draw(unit) for _ in vmax])
    fastest = draw(st.integers(0, len(vmax) - 1))
    share[fastest] = 1.0 if share[fastest] >= 0.0 else -1.0
    velocity = fraction * vmax * share
    sign = np.where(velocity >= 0.0, 1.0, -1.0)
    room = np.maximum(fraction * vmax - np.abs(velocity), 0.0)
    speeding = np.minimum(amax, np.sqrt(2.0 * jmax * room))  # reaches the limit at zero acceleration
    push = np.array([draw(unit) for _ in vmax])
    acceleration = sign * np.where(push >= 0.0, push * speeding, push * amax)
    return JointState(q, q, velocity, acceleration)


def sampled_ratios(sim: Sim, fraction: float, count: int) -> list[float]:
    """Model/measured S_s over ``count`` sampled states at ``fraction``; asserts the model
    (distance and time) is never below the measurement."""
    bound = BrakingBound.for_arm(sim.arm, DT)
    tracker = PointTracker(sim.arm)
    ratios: list[float] = []

    @settings(max_examples=count, derandomize=True, deadline=None, database=None)
    @given(state=states(sim.arm, fraction))
    def check(state: JointState) -> None:
        # the arm's trajectories stay within the joint limits, and so does a braking from them
        # (PyBullet's limit would stop a joint that went on, and push the others)
        rows = bound.braking(state.position.tolist(), state.velocity.tolist(), state.acceleration.tolist())
        assume(np.all(rows >= sim.arm.model.lower) and np.all(rows <= sim.arm.model.upper))
        model = bound.stop(state)
        quick = bound.quick(state, REUSE_CYCLES)  # the controller's bound without kinematics
        assert quick.distance_m >= bound.commanded(state, REUSE_CYCLES).distance_m
        assert quick.time_s == bound.commanded(state, REUSE_CYCLES).time_s
        measured = measure_stop(sim.arm, DT, state, tracker)
        assert measured.distance_m <= model.distance_m, (measured, model)
        assert measured.time_s <= model.time_s, (measured, model)
        ratios.append(model.distance_m / measured.distance_m)

    check()
    return ratios


def report(fraction: float, ratios: list[float]) -> None:
    print(f"\nspeed fraction {fraction}: {len(ratios)} states, model/measured S_s median "
          f"{statistics.median(ratios):.3f}, worst {max(ratios):.3f}, least {min(ratios):.3f}")


@pytest.mark.parametrize("fraction", FRACTIONS)
def test_the_state_bound_is_sound_and_tight_on_sampled_states(sim: Sim, fraction: float) -> None:
    ratios = sampled_ratios(sim, fraction, 20)
    report(fraction, ratios)
    assert statistics.median(ratios) <= MEDIAN_RATIO


@pytest.mark.slow
@pytest.mark.parametrize("fraction", FRACTIONS)
def test_the_state_bound_on_500_sampled_states(sim: Sim, fraction: float) -> None:
    ratios = sampled_ratios(sim, fraction, 500)
    report(fraction, ratios)
    assert len(ratios) >= 500
    assert statistics.median(ratios) <= MEDIAN_RATIO


def test_braking_later_goes_at_least_as_far(sim: Sim) -> None:
    """Braking a cycle later (worst jerk first) goes at least as far as braking now, and
    ``REUSE_CYCLES`` later at least as far as one later."""
    bound = BrakingBound.for_arm(sim.arm, DT)
    rng = np.random.default_rng(7)
    arm = sim.arm
    for _ in range(30):
        q = rng.uniform(np.maximum(arm.model.lower, -3.0), np.minimum(arm.model.upper, 3.0))
        velocity = arm.model.max_velocity * rng.uniform(-1.0, 1.0, len(q))
        state = JointState(q, q, velocity, np.zeros(len(q)))
        now, later, reused = bound.stop(state), bound.stop(state, ahead=1), bound.stop(state, ahead=REUSE_CYCLES)
        assert now.distance_m <= later.distance_m <= reused.distance_m
        assert now.time_s <= later.time_s <= reused.time_s


def test_the_controller_s_reused_bound_covers_every_step(sim: Sim) -> None:
    """What SSM's controller takes on each step of a motion (the forward kinematics' bound of
    up to ``REUSE_CYCLES`` steps ago, plus how far the arm can have moved since; or, on some
    steps, the quick bound without kinematics, after which the reuse starts anew) is never
    below the bound of the braking one cycle after that step, taken afresh."""
    arm = sim.arm
    arm.set_velocity_fraction(1.0)
    arm.move_to_joints(HOME)
    sim.run_while_moving()
    stops = StateStops(arm, DT)
    fresh = BrakingBound.for_arm(arm, DT)
    arm.move_to_joints(np.array(HOME) + np.array([1.2, -0.3, -0.5, 1.0, 0.6, 1.5]))
    steps = 0
    while arm.status == MotionStatus.MOVING and steps < 600:
        quick = stops.quick()
        if steps % 7 == 3:  # the controller decided on the quick bound this step
            stops.take(quick)
            used = quick
        else:
            used = stops.ahead()
        exact = fresh.stop(JointState.of(arm), ahead=1)
        assert used.distance_m >= exact.distance_m and used.time_s >= exact.time_s - 1e-12
        assert quick.distance_m >= exact.distance_m and quick.time_s >= exact.time_s - 1e-12
        sim.step()
        steps += 1
    assert steps > 100


def test_the_forward_kinematics_puts_the_points_where_pybullet_has_them(sim: Sim) -> None:
    bound = BrakingBound.for_arm(sim.arm, DT)
    tracker = PointTracker(sim.arm)
    q = sim.arm.joint_positions()[None, :]
    frames = bound.chain.frames(q)[0, bound.links]
    ours = np.einsum("lij,ljp->lpi", frames, bound._points_t)[..., :3].reshape(-1, 3)
    theirs = tracker.positions()
    # the same sets of points (ours repeat a link's origin to pad): each within 1e-6 m of one
    gaps = np.linalg.norm(ours[:, None, :] - theirs[None, :, :], axis=2).min(axis=1)
    assert gaps.max() < 1e-6


def test_the_displacement_between_two_configurations_is_the_farthest_point_s(sim: Sim) -> None:
    """What SSM's controller subtracts from a sensor's report for the robot's travel since it was
    measured: the farthest any point of the arm is from where it was, as PyBullet has the points
    at both configurations, and within the joints' reach bound ``sum_i reach_i |dq_i|``."""
    arm = sim.arm
    arm.set_velocity_fraction(1.0)
    arm.move_to_joints(HOME)
    sim.run_while_moving()
    tracker, bound = PointTracker(arm), BrakingBound.for_arm(arm, DT)
    start, before = arm.joint_positions(), tracker.positions()
    arm.move_to_joints(np.array(HOME) + np.array([0.9, -0.4, 0.5, 0.8, -0.6, 1.1]))
    for _ in range(60):  # part of the way
        sim.step()
    end, after = arm.joint_positions(), tracker.positions()
    measured = float(np.linalg.norm(after - before, axis=1).max())
    assert measured > 0.1
    assert bound.displacement_m(start, end) == pytest.approx(measured, abs=1e-6)
    assert bound.displacement_m(start, end) <= float(np.dot(arm.scene.joint_reach, np.abs(end - start)))
    assert bound.displacement_m(end, end) == 0.0


def test_a_carried_parts_points_count_in_the_bound() -> None:
    """A part the robot carries (and a tool of its own body) lies within ``tool_reach_m`` of the
    tool frame: the bound's displacement covers such a point, 0.25 m out along the tool's axis,
    which moves farther than any point of the arm's own links."""
    s = Sim(build=lambda client: [])
    try:
        arm = s.arm
        arm.add_tool(None, 0.25)  # the default gripper, and a part's points up to 0.25 m out
        assert arm.tool_reach_m == 0.25
        arm.set_velocity_fraction(1.0)
        arm.move_to_joints(HOME)
        s.run_while_moving()

        def tip() -> np.ndarray:  # a point of the part: 0.25 m along the tool frame's z axis
            position, orientation = arm.tool_frame()
            axis = np.array(p.getMatrixFromQuaternion(orientation)).reshape(3, 3)[:, 2]
            return np.array(position) + 0.25 * axis

        bound, links = BrakingBound.for_arm(arm, DT), PointTracker(arm)
        start, tip_before, before = arm.joint_positions(), tip(), links.positions()
        arm.move_to_joints(np.array(HOME) + np.array([0.9, -0.4, 0.5, 0.8, -0.6, 1.1]))
        for _ in range(80):
            s.step()
        end = arm.joint_positions()
        moved_tip = float(np.linalg.norm(tip() - tip_before))
        moved_links = float(np.linalg.norm(links.positions() - before, axis=1).max())
        assert moved_tip > moved_links + 0.01  # the part's point is the one that goes farthest
        assert bound.displacement_m(start, end) >= moved_tip
        assert float(np.dot(arm.joint_reach, np.abs(end - start))) >= moved_tip
    finally:
        s.close()


class WithPart(PointTracker):
    """The arm's points and those of a part carried on its tool: six points 0.25 m from the
    tool frame's origin, along and against each of its axes."""

    def positions(self) -> np.ndarray:
        position, orientation = self.arm.tool_frame()
        axes = np.array(p.getMatrixFromQuaternion(orientation)).reshape(3, 3).T  # rows: x, y, z
        part = np.array(position) + 0.25 * np.vstack([axes, -axes])
        return np.vstack([super().positions(), part])


def test_the_braking_bound_covers_a_carried_part_on_sampled_states() -> None:
    """The braking from sampled states at full speed, with a part's points 0.25 m around the tool
    frame (``add_tool``'s reach): they never get farther than S_s from the state, and on some
    states they are what goes farthest, so a bound of the arm's links alone would not do."""
    s = Sim(build=lambda client: [])
    try:
        arm = s.arm
        arm.add_tool(None, 0.25)
        bound, part, links = BrakingBound.for_arm(arm, DT), WithPart(arm), PointTracker(arm)
        farther = []

        @settings(max_examples=12, derandomize=True, deadline=None, database=None)
        @given(state=states(arm, 1.0))
        def check(state: JointState) -> None:
            rows = bound.braking(state.position.tolist(), state.velocity.tolist(), state.acceleration.tolist())
            assume(np.all(rows >= arm.model.lower) and np.all(rows <= arm.model.upper))
            measured = measure_stop(arm, DT, state, part)
            assert measured.distance_m <= bound.stop(state).distance_m, measured
            farther.append(measured.distance_m > measure_stop(arm, DT, state, links).distance_m + 1e-3)

        check()
        assert len(farther) >= 10 and any(farther)
    finally:
        s.close()


def test_a_straight_segment_s_stop_covers_every_cycle_of_it(sim: Sim) -> None:
    """A move from rest to rest runs straight segments in joint space (phase synchronised): on
    every cycle of one, the command lies on the segment's line, and the segment's stop taken on
    the cycle before (once per segment, with the lag then) is not below the forward kinematics'
    bound of the braking from the state now, one cycle later (T_s counted from that decision),
    the next segment's first cycle included. The braking measured from states sampled along the
    segments (the arm put at the state) stays within the segment's stop too."""
    arm = sim.arm
    arm.set_velocity_fraction(1.0)
    arm.move_to_joints(HOME)
    sim.run_while_moving()
    stops, fresh = StateStops(arm, DT), BrakingBound.for_arm(arm, DT)
    offsets = [[1.2, -0.3, -0.5, 1.0, 0.6, 1.5], [-0.8, 0.4, 0.6, -1.2, -0.5, -1.0], [0.3, 0.1, -0.2, 0.4, 0.9, -0.7],
               [-0.9, -0.4, 0.3, -0.6, 0.2, 0.8]]
    lines, held, samples, before = set(), 0, [], None
    for offset in offsets:
        arm.move_to_joints(np.array(HOME) + np.array(offset))
        while arm.status == MotionStatus.MOVING:
            state, line = JointState.of(arm), arm.motion_line
            if before is not None:  # the stop decided on the cycle before
                exact = fresh.stop(state)
                assert before.distance_m >= exact.distance_m and before.time_s >= exact.time_s + DT - 1e-12
                held += 1
            before = None if line is None else stops.line()
            if line is not None:
                start, end, _ = line
                along, off = end - start, state.position - start
                if along @ along > 0.0:  # on the line
                    assert np.linalg.norm(off - (off @ along) / (along @ along) * along) < 1e-9
                lines.add(id(line))
                if len(lines) > len(samples) // 4 and held % 20 == 0:
                    samples.append((JointState(state.position, state.position, state.velocity, state.acceleration),
                                    fresh.line(*line)))
            sim.step()
    assert held > 300 and len(lines) >= len(offsets)
    tracker = PointTracker(arm)
    for state, commanded in samples:
        measured, model = measure_stop(arm, DT, state, tracker), fresh.with_lag(commanded, 0.0)
        assert measured.distance_m <= model.distance_m and measured.time_s <= model.time_s, (measured, model)
    assert len(samples) >= 10


def test_the_braking_s_extrema_are_where_the_joints_go(sim: Sim) -> None:
    """How far each joint gets below and above its start over a braking (the quick bound's
    reach) holds every position of the braking, sampled finely, and is those positions' own
    extremes, also for a joint that hardly moves and after other brakings (ruckig's
    ``position_extrema`` there can count a final position the braking never sets: 0 rad, or an
    earlier braking's end)."""
    bound = BrakingBound.for_arm(sim.arm, DT)
    rng = np.random.default_rng(3)
    arm = sim.arm
    amax = np.array(arm.config.max_acceleration)
    for k in range(40):
        q = rng.uniform(-2.0, 2.0, len(amax))
        scale = 1e-3 if k % 4 == 0 else 1.0  # some states hardly moving
        velocity = scale * arm.model.max_velocity * rng.uniform(-1.0, 1.0, len(q))
        acceleration = scale * amax * rng.uniform(-1.0, 1.0, len(q))
        low, high, duration = bound.extrema(velocity.tolist(), acceleration.tolist())
        trajectory = bound._calculate(q.tolist(), velocity.tolist(), acceleration.tolist())
        assert trajectory.duration == pytest.approx(duration, abs=1e-12)
        sampled = np.array([trajectory.at_time(t)[0] for t in np.linspace(0.0, duration, 2001)]) - q
        assert np.all(np.array(low) <= sampled.min(axis=0) + 1e-12) and np.all(np.array(high) >= sampled.max(axis=0) - 1e-12)
        assert np.all(np.array(low) >= sampled.min(axis=0) - 1e-6) and np.all(np.array(high) <= sampled.max(axis=0) + 1e-6)
