"""Why an action failed: the reason travels from where the failure is decided (the actor
plugin, the arm, the network) to the failure's event, and the run's statistics count it."""

from __future__ import annotations

import json
import math
from pathlib import Path
from types import SimpleNamespace

import pybullet
import pytest

from hri.actor.animation import ClipLibrary
from hri.actor.plugin import ActorPlugin
from hri.actor.protocol import ActionMessage, ActorFailure, ActorState, FeedbackMessage
from hri.actor.server import ActorServer, GoalStatus
from hri.actor.service import ActorClient
from hri.bt import default_registry
from hri.base.geometry import Pose
from hri.net import Future
from hri.net.goals import GoalHandle
from hri.net.errors import (CallTimeout, Cancelled, CodecError, DiscoveryError, QueueFull, RemoteError,
                            failure_reason)
from hri.scenario.load import load_scenario
from hri.run.sim import run_scenario
from hri.run.stats import RunStats, format_table
from hri.cli.validate import validate_tree

DT = 1.0 / 240.0
PRESETS = Path(__file__).resolve().parents[1] / "scenarios"

# The person asks for a clip that does not exist, named on the blackboard; the robot moves to a
# target far out of its reach, also from the blackboard. Both pass validation.
PERSON_TREE = """<root BTCPP_format="4" main_tree_to_execute="Person">
  <BehaviorTree ID="Person">
    <Sequence>
      <SetBlackboard value="wave_hello" output_key="clip"/>
      <ActorAnimation name="Wave" animation_name="{clip}"/>
    </Sequence>
  </BehaviorTree>
</root>
"""
ROBOT_TREE = """<root BTCPP_format="4" main_tree_to_execute="Robot">
  <BehaviorTree ID="Robot">
    <Sequence>
      <SetBlackboard value="5;5;0.9;1;0;0;0" output_key="far"/>
      <RobotMove name="MoveFar" target="{far}"/>
    </Sequence>
  </BehaviorTree>
</root>
"""


class FakeEndpoint:
    """In-memory queue endpoint: what one side receives and what it sent."""

    def __init__(self) -> None:
        self.inbox: list = []
        self.sent: list = []

    def receive(self):
        return self.inbox.pop(0) if self.inbox else None

    def send(self, message) -> None:
        self.sent.append(message)


@pytest.fixture
def client():
    cid = pybullet.connect(pybullet.DIRECT)
    yield cid
    pybullet.disconnect(cid)


# --- the actor plugin decides, the protocol carries ------------------------------------------

@pytest.mark.parametrize("message, failure", [
    (ActionMessage(ActorState.ANIMATION, "wave_hello", 1.0, sequence=3), ActorFailure.UNKNOWN_ANIMATION),
    (ActionMessage(ActorState.ANIMATION, "walk", 1.0, sequence=3), ActorFailure.NOT_AN_ANIMATION),
    (ActionMessage(ActorState.ANIMATION, "stand", 0.0, sequence=3), ActorFailure.INVALID_SPEED),
    (ActionMessage(ActorState.ANIMATION, "stand", math.nan, sequence=3), ActorFailure.INVALID_SPEED),
    (ActionMessage(ActorState.MOVEMENT, "moonwalk", 1.2, Pose(1.0, 0.0, 0.0), 3), ActorFailure.NOT_WALK_CYCLE),
    (ActionMessage(ActorState.SETUP, sequence=3), ActorFailure.INVALID_STATE),
])
def test_the_plugin_says_why_it_did_not_take_an_action(client, message, failure):
    endpoint = FakeEndpoint()
    plugin = ActorPlugin(client, ClipLibrary.default(), Pose(0.0, 0.0, 0.0), endpoint)
    plugin.step(0.0, DT)
    endpoint.inbox.append(message)
    plugin.step(DT, DT)
    last = endpoint.sent[-1]
    assert (last.state, last.progress, last.sequence, last.failure) == (ActorState.IDLE, 0.0, 3, failure)
    endpoint.inbox.append(ActionMessage(ActorState.ANIMATION, "stand", 1.0, sequence=4))
    plugin.step(2 * DT, DT)
    assert endpoint.sent[-1].state is ActorState.ANIMATION and endpoint.sent[-1].failure is ActorFailure.NONE


def test_the_failure_code_sits_in_the_feedback_padding():
    feedback = FeedbackMessage(ActorState.IDLE, 0.0, Pose(1.0, 2.0, 0.0), 7, 1.5, ActorFailure.UNKNOWN_ANIMATION)
    data = feedback.encode()
    assert data[12:16] == b"\x01\x00\x00\x00"
    assert FeedbackMessage.decode(data) == feedback
    # a feedback without a failure is byte for byte what it was before the field existed
    assert FeedbackMessage(ActorState.MOVEMENT, 0.5, sequence=7).encode()[12:16] == bytes(4)
    # a code this reader does not know: no reason given, the record is still read
    unknown = data[:12] + (999).to_bytes(2, "little") + data[14:]
    assert FeedbackMessage.decode(unknown).failure is ActorFailure.NONE
    assert ActorFailure.NONE.reason == "unspecified"
    assert ActorFailure.UNKNOWN_ANIMATION.reason == "unknown_animation"


def test_the_server_keeps_the_reason_with_the_failed_goal():
    endpoint = FakeEndpoint()
    server = ActorServer(endpoint)
    goal = server.send_animation("wave_hello", 1.0)
    endpoint.inbox.append(FeedbackMessage(ActorState.IDLE, 0.0, Pose(), goal.sequence, 0.1,
                                          ActorFailure.UNKNOWN_ANIMATION))
    server.poll()
    assert goal.status is GoalStatus.FAILED and goal.failure is ActorFailure.UNKNOWN_ANIMATION
    done = server.send_animation("stand", 1.0)
    endpoint.inbox.append(FeedbackMessage(ActorState.ANIMATION, 0.5, Pose(), done.sequence, 0.2))
    endpoint.inbox.append(FeedbackMessage(ActorState.IDLE, 1.0, Pose(), done.sequence, 0.3))
    server.poll()
    assert done.status is GoalStatus.SUCCEEDED and done.failure is ActorFailure.NONE


# --- the tree's side: every way a goal ends without success has its reason --------------------

def _actor(latest: dict | None = None) -> ActorClient:
    return ActorClient(SimpleNamespace(node=SimpleNamespace(id=1)), SimpleNamespace(latest=lambda: latest))


def _answered(value: dict) -> SimpleNamespace:
    return SimpleNamespace(failed=False, pending=False, done=True, value=value)


def test_the_actor_client_says_why_a_goal_ended():
    failed = _actor({"goal": 5, "client": 1, "status": "failed", "reason": "unknown_animation"})
    handle = GoalHandle(5, _answered({"status": "pending", "in_the_way": None}))
    assert failed.why(handle, GoalStatus.FAILED, "wave_hello") == {
        "reason": "unknown_animation", "error": "the actor plugin has no animation 'wave_hello'"}
    assert failed.why(handle, GoalStatus.SUCCEEDED, "wave_hello") == {}
    busy = GoalHandle(6, _answered({"status": "rejected", "in_the_way": "active"}))
    assert _actor().why(busy, GoalStatus.REJECTED, "stand") == {
        "reason": "rejected", "error": "refused by the actor server: another goal is active"}
    assert _actor().why(handle, GoalStatus.CANCELED, "stand")["reason"] == "cancelled"
    lost = GoalHandle(7, Future.failed_now(CallTimeout("actor.animate #7: no answer within 1 s")))
    assert _actor().why(lost, GoalStatus.FAILED, "stand") == {
        "reason": "timeout", "error": "actor.animate #7: no answer within 1 s"}
    # the stream shows another goal: no reason to borrow from it
    other = _actor({"goal": 9, "client": 1, "status": "failed", "reason": "invalid_speed"})
    assert other.why(handle, GoalStatus.FAILED, "stand")["reason"] == "unspecified"


@pytest.mark.parametrize("error, reason", [
    (CallTimeout("lost"), "timeout"), (QueueFull("full"), "queue_full"), (DiscoveryError("none"), "no_service"),
    (Cancelled("halted"), "cancelled"), (CodecError("bad frame"), "corrupt_message"),
    (RemoteError("parts: no such surface"), "refused"),
])
def test_a_failed_call_names_its_reason(error, reason):
    assert failure_reason(error) == reason


# --- the statistics --------------------------------------------------------------------------

def test_the_statistics_count_reasons_most_frequent_first():
    stats = RunStats("s", 1)
    for event, fields in [("person_action_finished", {"result": "failed", "reason": "timeout"}),
                          ("person_action_finished", {"result": "succeeded"}),
                          ("person_action_finished", {"result": "failed", "reason": "unknown_animation"}),
                          ("person_action_finished", {"result": "rejected", "reason": "unknown_animation"}),
                          ("robot_move_finished", {"result": "failed", "reason": "unreachable"}),
                          ("robot_move_finished", {"result": "succeeded"}),
                          ("service_call_failed", {"reason": "refused", "error": "..."}),
                          ("person_action_finished", {"result": "failed"}),
                          ("zone_enter", {"zone": "stop"})]:
        stats.count_failure(event, fields)
    result = stats.as_dict()
    assert list(result["person_action_failures"].items()) == [("unknown_animation", 2), ("timeout", 1),
                                                               ("unspecified", 1)]
    assert result["robot_move_failures"] == {"unreachable": 1}
    assert result["service_call_failures"] == {"refused": 1}
    table = format_table(result)
    assert "person_action_failures  unknown_animation 2, timeout 1, unspecified 1" in table
    assert "robot_move_failures     unreachable 1" in table
    assert "robot_move_failures     none" in format_table(RunStats("s", 1).as_dict())


# --- a run: the reasons in the events and the summary ----------------------------------------

@pytest.fixture
def failing_scenario(tmp_path: Path) -> Path:
    text = (PRESETS / "coexistence.yaml").read_text()
    text = text.replace("../trees/coexistence_person.xml", "person.xml").replace(
        "../trees/coexistence_robot.xml", "robot.xml").replace("name: coexistence", "name: failing_actions")
    (tmp_path / "person.xml").write_text(PERSON_TREE)
    (tmp_path / "robot.xml").write_text(ROBOT_TREE)
    (tmp_path / "failing.yaml").write_text(text)
    return tmp_path / "failing.yaml"


def test_validation_warns_of_a_literal_clip_a_port_refuses(failing_scenario, tmp_path):
    registry = default_registry()
    [warning] = validate_tree(str(tmp_path / "person.xml"), registry)
    assert str(warning).startswith(f"{tmp_path / 'person.xml'}:4: warning: 'wave_hello' written to 'clip' here is "
                                   "read by ActorAnimation port 'animation_name' (person.xml:5): unknown animation "
                                   "'wave_hello' (animations: ")
    # a script's literal, through a SubTree's remapping; a known clip and a reference are no warning
    (tmp_path / "scripted.xml").write_text("""<root BTCPP_format="4" main_tree_to_execute="Main">
  <BehaviorTree ID="Main">
    <Sequence>
      <Script code="name := 'stand'; other := 'moonwalk'; speed := 0"/>
      <SubTree ID="Play" clip="{other}" rate="{speed}"/>
      <ActorAnimation animation_name="{name}"/>
      <SetBlackboard value="{name}" output_key="copy"/>
      <ActorAnimation animation_name="{copy}"/>
    </Sequence>
  </BehaviorTree>
  <BehaviorTree ID="Play">
    <ActorAnimation animation_name="{clip}" animation_speed="{rate}"/>
  </BehaviorTree>
</root>
""")
    warnings = [str(w).split("warning: ")[1] for w in validate_tree(str(tmp_path / "scripted.xml"), registry)]
    assert warnings == [
        "'0' written to 'speed' here is read by ActorAnimation port 'animation_speed' (scripted.xml:12): "
        "must be positive, got 0.0",
        "'moonwalk' written to 'other' here is read by ActorAnimation port 'animation_name' (scripted.xml:12): "
        "unknown animation 'moonwalk' (animations: low_grab, low_inspect, low_put, low_to_standing, stand, "
        "standing_extend_arm, standing_retract_arm, standing_to_low)"]


def test_a_run_says_why_its_actions_failed(failing_scenario, tmp_path):
    stats = run_scenario(load_scenario(str(failing_scenario)), 1.0, seed=1, out_dir=tmp_path / "run")
    events = [json.loads(line) for line in (tmp_path / "run" / "events.jsonl").read_text().splitlines()]
    person = [e for e in events if e["event"] == "person_action_finished"]
    robot = [e for e in events if e["event"] == "robot_move_finished"]
    assert person and robot
    assert all(e["result"] == "failed" and e["reason"] == "unknown_animation"
               and e["error"] == "the actor plugin has no animation 'wave_hello'" for e in person)
    assert all(e["result"] == "failed" and e["reason"] == "unreachable" and "reaches the target" in e["error"]
               for e in robot)
    assert stats["person_actions_failed"] == len(person)
    assert stats["person_action_failures"] == {"unknown_animation": len(person)}
    assert stats["robot_move_failures"] == {"unreachable": len(robot)}
    assert json.loads((tmp_path / "run" / "stats.json").read_text())["person_action_failures"] == {
        "unknown_animation": len(person)}


def test_a_lost_answer_is_a_timeout_and_the_retry_is_refused(tmp_path):
    # cooperation with a lossy actor channel: the first two walks' answers are lost (timeout);
    # the third request is refused, as the walk the server did take is still under way
    scenario = load_scenario("cooperation", ["net.actor.loss=0.3"])
    stats = run_scenario(scenario, 2.5, seed=1, out_dir=tmp_path)
    events = [json.loads(line) for line in (tmp_path / "events.jsonl").read_text().splitlines()]
    failed = [(e["result"], e["reason"], e["error"]) for e in events if e["event"] == "person_action_finished"]
    assert [(result, reason) for result, reason, _ in failed] == [
        ("failed", "timeout"), ("failed", "timeout"), ("rejected", "rejected")]
    assert "no answer within 1 s of simulated time" in failed[0][2]
    assert failed[2][2] == "refused by the actor server: another goal is active"
    assert stats["person_action_failures"] == {"timeout": 2, "rejected": 1}
