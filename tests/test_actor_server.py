"""ActorServer goal handling against a hand-driven fake plugin, and protocol properties."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hri.actor.protocol import (ACTION_MAGIC, ACTION_SIZE, FEEDBACK_MAGIC, FEEDBACK_SIZE,
                                PROTOCOL_VERSION, ActionMessage, ActorState, FeedbackMessage,
                                ProtocolError)
from hri.actor.queues import ActorLink
from hri.actor.server import ActorServer, Goal, GoalStatus
from hri.base.geometry import Pose
from hri.base.mqueue import RunQueues


class FakePlugin:
    """Drives the plugin endpoint by hand: read actions, answer with chosen feedback."""

    def __init__(self, endpoint):
        self.endpoint = endpoint
        self.sequence = 0
        self.state = ActorState.IDLE

    def take(self) -> list[ActionMessage]:
        actions = []
        while (action := self.endpoint.receive()) is not None:
            actions.append(action)
            self.sequence, self.state = action.sequence, action.state
        return actions

    def report(self, progress: float = 0.0, state: ActorState | None = None,
               sequence: int | None = None, pose: Pose = Pose(1.0, 2.0, 0.0)) -> None:
        self.endpoint.send(FeedbackMessage(state if state is not None else self.state, progress,
                                           pose, self.sequence if sequence is None else sequence,
                                           0.5))


@pytest.fixture
def setup(tmp_path):
    with RunQueues(tmp_path / "registry") as rq:
        link = ActorLink(rq)
        yield ActorServer(link.server_endpoint()), FakePlugin(link.plugin_endpoint())


def test_goal_is_pending_until_the_plugin_switched(setup):
    server, plugin = setup
    goal = server.send_animation("wave", 1.5)
    assert (goal.kind, goal.status, goal.done, goal.progress) == ("animation", GoalStatus.PENDING,
                                                                 False, 0.0)
    plugin.report()  # still IDLE with the old sequence: the action is not read yet
    server.poll()
    assert goal.status is GoalStatus.PENDING
    assert server.plugin_state is ActorState.IDLE

    [action] = plugin.take()
    assert action == ActionMessage(ActorState.ANIMATION, "wave", 1.5, Pose(), goal.sequence)
    plugin.report(0.25, pose=Pose(3.0, 4.0, 0.0))
    assert server.poll() == 1
    assert goal.status is GoalStatus.ACTIVE
    assert goal.progress == 0.25
    assert goal.current_pose == Pose(3.0, 4.0, 0.0) == server.person_pose
    assert server.plugin_state is ActorState.ANIMATION


def test_new_goal_rejected_while_busy_and_accepted_after(setup):
    server, plugin = setup
    first = server.send_movement("walk", 1.4, Pose(2.0, 1.0))
    assert first.kind == "movement" and first.target == Pose(2.0, 1.0)
    second = server.send_animation("wave", 1.0)
    assert second.status is GoalStatus.REJECTED and second.done
    assert second.sequence > first.sequence
    [action] = plugin.take()  # the rejected goal was never sent
    assert action.state is ActorState.MOVEMENT and action.target == Pose(2.0, 1.0)
    assert action.animation_speed == 1.4

    plugin.report(0.5)
    server.poll()
    assert server.send_animation("wave", 1.0).status is GoalStatus.REJECTED  # ACTIVE: busy
    plugin.state = ActorState.IDLE
    plugin.report(1.0)
    server.poll()
    assert first.status is GoalStatus.SUCCEEDED
    third = server.send_animation("wave", 1.0)
    assert third.status is GoalStatus.PENDING and third.sequence > second.sequence


def test_success_on_idle_with_full_progress(setup):
    server, plugin = setup
    goal = server.send_animation("bow", 1.0)
    plugin.take()
    plugin.report(0.6)
    plugin.state = ActorState.IDLE
    plugin.report(1.0 - 1e-12)  # within the tolerance
    server.poll()
    assert goal.status is GoalStatus.SUCCEEDED and goal.done
    assert goal.history == [GoalStatus.PENDING, GoalStatus.ACTIVE]
    plugin.report(1.0)  # the plugin keeps reporting IDLE for the finished goal: not stale
    server.poll()
    assert goal.status is GoalStatus.SUCCEEDED and server.stale_dropped == 0


def test_failure_on_idle_with_zero_progress_unknown_animation(setup):
    server, plugin = setup
    goal = server.send_animation("no-such-clip", 1.0)
    plugin.take()
    plugin.state = ActorState.IDLE  # unknown animation: straight back to IDLE, progress 0
    plugin.report(0.0)
    server.poll()
    assert goal.status is GoalStatus.FAILED and goal.done


def test_failure_when_idle_before_the_end(setup):
    server, plugin = setup
    goal = server.send_movement("walk", 1.4, Pose(5.0, 0.0))
    plugin.take()
    plugin.report(0.7)
    plugin.state = ActorState.IDLE
    plugin.report(0.7)
    server.poll()
    assert goal.status is GoalStatus.FAILED and goal.progress == 0.7


def test_cancel_is_canceling_until_the_idle_feedback(setup):
    server, plugin = setup
    goal = server.send_animation("wave", 1.0)
    plugin.take()
    plugin.report(0.3)
    server.poll()
    assert goal.status is GoalStatus.ACTIVE

    assert server.cancel(goal)
    assert goal.status is GoalStatus.CANCELING and not goal.done
    assert server.send_animation("wave", 1.0).status is GoalStatus.REJECTED
    assert not server.cancel(goal)  # already canceling: nothing sent twice
    plugin.report(0.4)  # the plugin has not read the cancel yet
    server.poll()
    assert goal.status is GoalStatus.CANCELING and goal.progress == 0.4

    [action] = plugin.take()
    assert action == ActionMessage(ActorState.IDLE, sequence=goal.sequence)
    plugin.report(0.4)
    server.poll()
    assert goal.status is GoalStatus.CANCELED and goal.done
    assert not server.cancel(goal)


def test_cancel_while_pending(setup):
    server, plugin = setup
    goal = server.send_animation("wave", 1.0)
    assert server.cancel(goal)
    assert [a.state for a in plugin.take()] == [ActorState.ANIMATION, ActorState.IDLE]
    plugin.report(0.0)
    server.poll()
    assert goal.status is GoalStatus.CANCELED


def test_stale_feedback_is_dropped_and_counted(setup):
    server, plugin = setup
    old = server.send_animation("wave", 1.0)
    plugin.take()
    server.cancel(old)
    plugin.take()
    plugin.report(0.0)
    server.poll()
    assert old.status is GoalStatus.CANCELED

    new = server.send_animation("bow", 1.0)
    # feedback of the old goal still in flight, one even claiming the new goal's state
    plugin.report(0.9, state=ActorState.ANIMATION, sequence=old.sequence)
    plugin.report(1.0, state=ActorState.IDLE, sequence=old.sequence, pose=Pose(7.0, 7.0))
    server.poll()
    assert server.stale_dropped == 2
    assert new.status is GoalStatus.PENDING and new.progress == 0.0
    assert old.status is GoalStatus.CANCELED
    assert server.person_pose == Pose(7.0, 7.0)  # the pose is always the newest report

    plugin.take()
    plugin.report(0.1)
    server.poll()
    assert new.status is GoalStatus.ACTIVE and server.stale_dropped == 2


def test_progress_is_clamped_and_movement_state_must_match(setup):
    server, plugin = setup
    goal = server.send_animation("wave", 1.0)
    plugin.take()
    plugin.report(0.2, state=ActorState.MOVEMENT)  # wrong state for this goal: not a switch
    server.poll()
    assert goal.status is GoalStatus.PENDING
    plugin.report(1.7)
    server.poll()
    assert goal.status is GoalStatus.ACTIVE and goal.progress == 1.0


def test_too_long_name_raises_and_leaves_server_free(setup):
    server, plugin = setup
    with pytest.raises(ProtocolError):
        server.send_animation("x" * 256, 1.0)
    assert not server.busy and plugin.take() == []
    assert isinstance(server.send_animation("x" * 255, 1.0), Goal)


# ------------------------------------------------------------------------------------------
# Protocol properties

finite = st.floats(allow_nan=False, allow_infinity=False)
poses = st.builds(Pose, finite, finite, finite, finite, finite, finite, finite)
states = st.sampled_from(list(ActorState))
sequences = st.integers(0, 2**32 - 1)
names = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\0"),
                max_size=255).filter(lambda s: len(s.encode("utf-8")) <= 255)


@given(st.builds(ActionMessage, states, names, finite, poses, sequences))
def test_action_roundtrip(message):
    data = message.encode()
    assert len(data) == ACTION_SIZE
    assert ActionMessage.decode(data) == message


@given(st.builds(FeedbackMessage, states, finite, poses, sequences, finite))
def test_feedback_roundtrip(message):
    data = message.encode()
    assert len(data) == FEEDBACK_SIZE
    assert FeedbackMessage.decode(data) == message


def _decodes_or_protocol_error(decode, data):
    try:
        decode(data)
    except ProtocolError:
        pass


@settings(max_examples=300)
@given(st.binary(min_size=ACTION_SIZE, max_size=ACTION_SIZE),
       st.binary(min_size=FEEDBACK_SIZE, max_size=FEEDBACK_SIZE))
def test_random_bytes_decode_or_raise_protocol_error(action_bytes, feedback_bytes):
    _decodes_or_protocol_error(ActionMessage.decode, action_bytes)
    _decodes_or_protocol_error(FeedbackMessage.decode, feedback_bytes)


@settings(max_examples=300)
@given(st.integers(0, 7), st.binary(min_size=ACTION_SIZE - 8, max_size=ACTION_SIZE - 8),
       st.binary(min_size=FEEDBACK_SIZE - 8, max_size=FEEDBACK_SIZE - 8))
def test_random_bodies_behind_a_valid_magic_decode_or_raise(state, action_tail, feedback_tail):
    # with a valid magic and version the state, floats and name bytes are exercised too
    head = struct.pack("<IHH", ACTION_MAGIC, PROTOCOL_VERSION, state)
    _decodes_or_protocol_error(ActionMessage.decode, head + action_tail)
    head = struct.pack("<IHH", FEEDBACK_MAGIC, PROTOCOL_VERSION, state)
    _decodes_or_protocol_error(FeedbackMessage.decode, head + feedback_tail)


@given(st.binary(max_size=400).filter(lambda b: len(b) not in (ACTION_SIZE, FEEDBACK_SIZE)))
def test_wrong_sizes_raise_protocol_error(data):
    with pytest.raises(ProtocolError):
        ActionMessage.decode(data)
    with pytest.raises(ProtocolError):
        FeedbackMessage.decode(data)
