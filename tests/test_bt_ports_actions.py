"""Blackboard scopes, port conversion, and the general action nodes."""

from __future__ import annotations

import numpy as np
import pytest
from py_trees.common import Status

from hri.bt import Blackboard, TreeContext, default_registry, load_tree
from hri.bt.value_types import Quaternion, Weights, coerce, convert
from hri.base.geometry import Area, Pose


def test_blackboard_scopes_remapping_and_autoremap():
    parent = Blackboard()
    parent.set("person", 1)
    child = Blackboard(parent, {"who": "person"})
    assert child.get("who") == 1
    child.set("who", 2)
    assert parent.get("person") == 2
    child.set("local", 3)
    assert not parent.has("local") and child.has("local")
    with pytest.raises(KeyError, match="'person' is not set"):
        child.get("person")
    auto = Blackboard(parent, autoremap=True)
    assert auto.get("person") == 2
    auto.set("new", 4)
    assert parent.get("new") == 4
    auto.set_local("mine", 5)
    assert not parent.has("mine") and auto.get("mine") == 5
    assert child.get("@person") == 2
    with pytest.raises(KeyError, match="'missing' .*remapped to 'nowhere'"):
        Blackboard(parent, {"missing": "nowhere"}).get("missing")
    assert not Blackboard().has("x")  # scopes never share entries


def test_converters():
    assert convert("1;2;3", Pose) == Pose(1, 2, 3)
    assert convert(" 1; 2;3;0;0;0.7071;0.7071", Pose) == Pose(1, 2, 3, 0, 0, 0.7071, 0.7071)
    assert convert("0;0;0;0", Quaternion) == Quaternion(0, 0, 0, 0)
    assert convert("0.95;0.05", Weights) == (0.95, 0.05)
    assert convert("true", bool) is True and convert("false", bool) is False
    assert convert("3", int) == 3 and convert("2.5", float) == 2.5
    assert convert("0,0;2,0;2,1", Area).points == [(0, 0), (2, 0), (2, 1)]
    for text, type_ in [("abc", float), ("1;2", Pose), ("1;2;3;4", Pose), ("yes", bool), ("0,0;1,1", Area),
                        ("0,0;1,0;0,1;1,1", Area), ("1;-1", Weights), ("1.5", int), ("nan", float)]:
        with pytest.raises(ValueError):
            convert(text, type_)
    pose = Pose(1, 2, 3)
    assert coerce(pose, Pose) is pose
    assert coerce("1;2;3", Pose) == pose
    assert coerce(2, float) == 2.0
    assert coerce(pose, Quaternion) == Quaternion(0, 0, 0, 1)
    with pytest.raises(ValueError):
        coerce(3.0, Pose)


class Called:
    """One person's flag, as CalledClient offers it to the nodes."""

    def __init__(self, value: bool = False):
        self.value = value

    def problem(self, person: str) -> str | None:
        return None if person == "person" else f"no person {person!r}"

    def get(self, person: str | None = None) -> bool:
        return self.value

    def set(self, value: bool, person: str | None = None) -> None:
        self.value = value


def run(tmp_path, body: str, seed: int = 0, services=None, **entries):
    path = tmp_path / "t.xml"
    path.write_text(f'<root BTCPP_format="4"><BehaviorTree ID="T">{body}</BehaviorTree></root>')
    ctx = TreeContext(rng=np.random.default_rng(seed), now=lambda: 0.0, services=services or {})
    bb = Blackboard()
    for key, value in entries.items():
        bb.set(key, value)
    root = load_tree(str(path), default_registry(), ctx, bb)
    return root.tick_once(), bb


def test_generate_xy_pose_samples_inside_the_area(tmp_path):
    area = Area([(0, 0), (4, 0), (4, 1), (1, 1), (1, 3), (0, 3)])  # an L shape
    path = tmp_path / "t.xml"
    path.write_text('<root BTCPP_format="4"><BehaviorTree ID="T">'
                    '<GenerateXYPose area="{area}" pose="{pose}"/></BehaviorTree></root>')
    ctx = TreeContext(rng=np.random.default_rng(7), now=lambda: 0.0)
    bb = Blackboard()
    bb.set("area", area)
    root = load_tree(str(path), default_registry(), ctx, bb)
    xs = []
    for _ in range(500):
        assert root.tick_once() == Status.SUCCESS
        pose = bb.get("pose")
        assert area.contains(pose.x, pose.y) and pose.z == 0.0 and pose.has_null_orientation
        xs.append(pose.x)
    assert max(xs) > 3.0 and min(xs) < 0.5
    status, bb = run(tmp_path, '<Sequence><GenerateXYPose area="0,0;1,0;1,1" pose="{p}"/>'
                               '<InAreaTest area="0,0;1,0;1,1" pose="{p}"/></Sequence>')
    assert status == Status.SUCCESS


def test_in_area_test(tmp_path):
    assert run(tmp_path, '<InAreaTest area="0,0;1,0;1,1;0,1" pose="2;0.5;0"/>')[0] == Status.FAILURE
    assert run(tmp_path, '<InAreaTest area="{a}" pose="{p}"/>', a="0,0;1,0;1,1;0,1",
               p=Pose(0.5, 0.5, 0))[0] == Status.SUCCESS


def test_offset_pose(tmp_path):
    status, bb = run(tmp_path, '<OffsetPose input="{p}" offset="1;2;0.5" output="{q}"/>',
                     p=Pose(1, 1, 0, 0, 0, 1, 0))
    assert status == Status.SUCCESS and bb.get("q") == Pose(2, 3, 0.5, 0, 0, 1, 0)
    _, bb = run(tmp_path, '<OffsetPose input="1;1;0" orientation="0;0;0;0" output="{q}"/>')
    assert bb.get("q") == Pose(1, 1, 0, 0, 0, 0, 0) and bb.get("q").has_null_orientation
    _, bb = run(tmp_path, '<OffsetPose input="1;1;0" offset="{o}" orientation="0;0;0.7071;0.7071" output="{q}"/>',
                o="0;0;1")
    assert bb.get("q") == Pose(1, 1, 1, 0, 0, 0.7071, 0.7071)


def test_called_nodes(tmp_path):
    called = Called(False)
    services = {"called": called}
    assert run(tmp_path, "<IsCalled/>", services=services)[0] == Status.FAILURE
    assert run(tmp_path, '<SetCalledTo state="true"/>', services=services)[0] == Status.SUCCESS
    assert called.value is True
    assert run(tmp_path, "<AmICalled/>", services=services)[0] == Status.SUCCESS


def test_random_failure_and_constants(tmp_path):
    assert run(tmp_path, '<RandomFailure failure_chance="1"/>')[0] == Status.FAILURE
    assert run(tmp_path, '<RandomFailure failure_chance="0"/>')[0] == Status.SUCCESS
    assert run(tmp_path, "<AlwaysSuccess/>")[0] == Status.SUCCESS
    assert run(tmp_path, "<AlwaysFailure/>")[0] == Status.FAILURE
    path = tmp_path / "r.xml"
    path.write_text('<root><BehaviorTree ID="T"><RandomFailure failure_chance="0.3"/></BehaviorTree></root>')
    ctx = TreeContext(rng=np.random.default_rng(1), now=lambda: 0.0)
    root = load_tree(str(path), default_registry(), ctx, Blackboard())
    failures = 0
    for _ in range(2000):
        failures += root.tick_once() == Status.FAILURE
    assert 500 < failures < 700


def test_set_blackboard(tmp_path):
    # the Pose port declares 'target' when the tree loads: SetBlackboard's text is parsed as a Pose
    status, bb = run(tmp_path, '<Sequence><SetBlackboard value="1;2;3" output_key="target"/>'
                               '<OffsetPose input="{target}" output="{out}"/>'
                               '<SetBlackboard value="{out}" output_key="copy"/></Sequence>')
    assert status == Status.SUCCESS
    assert bb.get("target") == Pose(1, 2, 3) and bb.get("copy") == Pose(1, 2, 3)


def test_set_blackboard_into_an_entry_without_type_leaves_it_empty(tmp_path):
    """BehaviorTree.CPP's behaviour: the text is parsed with the entry's converter, which an
    entry declared by an untyped port (here SetBlackboard's own value="{target}") has not."""
    status, bb = run(tmp_path, '<Sequence><SetBlackboard value="1;2;3" output_key="target"/>'
                               '<SetBlackboard value="{target}" output_key="copy"/></Sequence>')
    assert status == Status.FAILURE and not bb.has("target")


def test_missing_blackboard_entry_at_tick_is_a_located_error(tmp_path):
    from hri.base.errors import HriError

    with pytest.raises(HriError) as info:
        run(tmp_path, '<GenerateXYPose area="{nowhere}" pose="{p}"/>')
    assert str(info.value).startswith(f"{tmp_path / 't.xml'}:1: GenerateXYPose")
    assert "'nowhere' is not set" in str(info.value)


def test_a_port_declares_its_range_and_every_value_is_checked_against_it(tmp_path):
    """One declaration (Port low/high/above) checks a literal when the tree loads and a value
    read from the blackboard when the node ticks."""
    from hri.bt import BTNode, Port, load_tree_text
    from hri.base.errors import HriError

    class Gain(BTNode):
        PORTS = (Port("gain", "in", float, description="0..1", low=0.0, high=1.0),
                 Port("scale", "in", float, 1.0, "positive", above=0.0))

        def update(self) -> Status:
            self.get_input("gain")
            self.get_input("scale")
            return Status.SUCCESS

    registry = default_registry()
    registry.register("Gain", Gain, "action")
    ctx = TreeContext(rng=np.random.default_rng(0), now=lambda: 0.0)

    def tree(attributes: str, bb: Blackboard | None = None):
        return load_tree_text(f'<root BTCPP_format="4"><BehaviorTree ID="T"><Gain {attributes}/>'
                              '</BehaviorTree></root>', registry, ctx, bb or Blackboard(), file="t.xml")

    with pytest.raises(HriError, match=r"t.xml:1: Gain: port 'gain': must be within 0..1, got 1.5"):
        tree('gain="1.5"')
    with pytest.raises(HriError, match=r"port 'scale': must be positive, got 0.0"):
        tree('gain="0.5" scale="0"')
    bb = Blackboard()
    bb.set("g", 2.0)
    with pytest.raises(HriError, match=r"port 'gain': must be within 0..1, got 2.0 \(from \{g\}\)"):
        tree('gain="{g}"', bb).tick_once()
    assert tree('gain="1" scale="0.1"').tick_once() == Status.SUCCESS
