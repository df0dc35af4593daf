"""The kinematics core as a network service: seed 000's requests over hri.net, with latency."""

from pathlib import Path

import pytest

from hri.base.errors import HriError
from hri.kinematics import Chain
from hri.kinematics.service import AXIS_STREAM, kinematics_service
from hri.net import Broker, Network, Node

URDF = Path(__file__).resolve().parents[1] / "assets" / "robot" / "lbr_iisy.urdf"
HOME = [0.0, 0.2, 2.0, 0.0, 0.94, 0.0]
LATENCY = 0.05


@pytest.fixture
def rig():
    """The robot's kinematics service and a client one latency away; returns (client, call, joints)."""
    chain = Chain.from_urdf(str(URDF), "base_link", "tool0")
    joints = list(HOME)
    clock = [0.0]
    net = Network({"kinematics": {"latency": LATENCY}}, seed=1)
    broker = Broker()
    robot = Node(net.endpoint("robot"), clock=lambda: clock[0])
    service = kinematics_service(chain, "kinematics", ["lbr-iisy-1", "lbr-iisy", "kinematics"],
                                 joints=lambda: joints, set_joints=lambda q: joints.__setitem__(slice(None), q))
    broker.register(robot.offer(service))
    tree = Node(net.endpoint("tree"), clock=lambda: clock[0], timeout=1.0)
    client = tree.client(broker.discover(all_of=["kinematics", "lbr-iisy"]))

    def call(op, payload=None):
        future = client.call(op, payload)
        start = clock[0]
        while future.pending:
            clock[0] += 0.01
            net.advance(clock[0])
        if future.failed:
            raise future.error
        assert clock[0] - start >= 2 * LATENCY - 1e-9  # a round trip over the channel
        return future.value

    return chain, call, joints, service, client, net, clock


def test_forward_and_inverse_match_the_core(rig):
    chain, call, joints, *_ = rig
    fk = call("GET_FORWARD_KINEMATIC")
    position, orientation = chain.tip_pose(HOME)
    assert fk["position"] == pytest.approx(list(position), abs=1e-12)
    assert fk["orientation"] == pytest.approx(list(orientation), abs=1e-12)
    target = {"position": [position[0] + 0.05, position[1], position[2]], "orientation": list(orientation)}
    ik = call("GET_INVERSE_KINEMATIC", target)
    assert ik["valid"] is True and ik["position_error_m"] < 1e-4
    reached = chain.tip_pose(ik["q"])[0]
    assert list(reached) == pytest.approx(target["position"], abs=1e-4)
    far = call("GET_INVERSE_KINEMATIC", {"position": [3.0, 0.0, 0.5], "orientation": [0, 0, 0, 1]})
    assert far["valid"] is False


def test_interpolate_and_axis_angles(rig):
    chain, call, joints, service, client, net, clock = rig
    start = chain.tip_pose(HOME)
    end = ([start[0][0], start[0][1] + 0.1, start[0][2]], list(start[1]))
    path = call("INTERPOLATE", {"points": [[list(start[0]), list(start[1])], end], "v_max": 0.25, "a_max": 1.0,
                                "rate_hz": 50})
    assert path["valid"] and len(path["times"]) == len(path["q"]) > 10
    assert list(chain.tip_pose(path["q"][-1])[0]) == pytest.approx(end[0], abs=1e-4)
    assert call("GET_AXIS_ANGLES") == pytest.approx(HOME)
    assert call("SET_AXIS_ANGLES", {"q": [0.1] * 6}) is True and joints == [0.1] * 6
    angles = client.subscribe(AXIS_STREAM)
    for _ in range(20):
        clock[0] += 0.05
        net.advance(clock[0])
        service.publish(AXIS_STREAM, list(joints))
    net.advance(clock[0] + LATENCY)
    assert angles.latest() == pytest.approx([0.1] * 6)


@pytest.mark.parametrize("op,payload,message", [
    ("GET_INVERSE_KINEMATIC", {"position": [1, 2], "orientation": [0, 0, 0, 1]}, "position: expected 3 numbers"),
    ("GET_FORWARD_KINEMATIC", {"q": "home"}, "q: expected a list of 6 numbers"),
    ("INTERPOLATE", {"points": [], "v_max": 1, "a_max": 1, "rate_hz": 50}, "points: expected a list"),
])
def test_bad_requests_are_refused_with_a_message(rig, op, payload, message):
    call = rig[1]
    with pytest.raises(HriError, match=message):
        call(op, payload)
