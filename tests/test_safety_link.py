"""The safety channel: the robot's tree sees the person's pose as the network delivers it."""

import pytest

from hri.base.geometry import Pose
from hri.net import Broker, Network, Node
from hri.run.safety_link import POSE_STREAM, QUERY, SafetyClient, SafetyService
from hri.scenario.load import load_scenario
from hri.run.sim import run_scenario
from test_cli import _one_error_line, hri

TICK = 0.05  # the trees' period (20 Hz)


def _link(network: Network, start: Pose) -> tuple[SafetyService, SafetyClient]:
    """The monitor's service and the robot tree's client, found through a broker."""
    broker = Broker()
    service = SafetyService()
    broker.register(Node(network.endpoint("simulation")).offer(service.service))
    tree = Node(network.endpoint("robot-tree"))
    subscription = tree.client(broker.discover(**QUERY)).subscribe(POSE_STREAM)
    return service, SafetyClient(subscription, start)


def _walk(network: Network, ticks: int) -> list[tuple[float, float, str | None]]:
    """Publish a person walking at 1 m/s along x, as the simulation does before each tick;
    return (t, x, zone) as the tree sees them, per tick."""
    service, client = _link(network, Pose(x=-1.0))
    seen = []
    for k in range(ticks):
        t = k * TICK
        network.advance(t)  # the subscription, made at start, reaches the service
        service.publish(Pose(x=t, y=0.0), "warning" if t >= 1.0 else "safe")
        network.advance(t)
        seen.append((t, client.person_pose().x, client.person_zone()))
    return seen


@pytest.mark.parametrize("latency", [0.0, 0.1, 0.25])
def test_the_tree_sees_the_pose_published_one_latency_ago(latency):
    for t, x, zone in _walk(Network({"safety": {"latency": latency}}, seed=1), 40):
        # the subscription itself travels one latency, so the first pose arrives after two
        expected = t - latency if t >= 2 * latency - 1e-9 else -1.0
        assert x == pytest.approx(expected, abs=1e-9), t
        if t >= 2 * latency - 1e-9:
            assert zone == ("warning" if expected >= 1.0 - 1e-9 else "safe")


def test_a_lost_channel_leaves_the_last_pose():
    assert {(x, zone) for _, x, zone in _walk(Network({"safety": {"loss": 1.0}}, seed=1), 20)} == {(-1.0, None)}


def test_latency_on_the_safety_channel_lets_the_person_in_deeper():
    """Seed 10: the person walks into the stop zone within seconds; the robot learns it later."""
    figures = {}
    for latency in (0.0, 0.25, 0.5):
        scenario = load_scenario("coexistence", [f"net.safety.latency={latency}"])
        stats = run_scenario(scenario, 12.0, seed=10)
        figures[latency] = (stats["max_stop_intrusion_m"], stats["safety_violations"])
    intrusions = [figures[lat][0] for lat in (0.0, 0.25, 0.5)]
    assert intrusions == sorted(intrusions) and intrusions[0] < intrusions[-1] - 0.05
    assert figures[0.0][1] == 0 and figures[0.5][1] > 0  # 0.5 s late breaks the 0.6 s reaction time


def test_bad_network_settings_are_one_line(tmp_path):
    error = _one_error_line(hri("run", "coexistence", "--duration", "1", "--set", "net.safety.latency=-1"))
    assert error.endswith("net.safety.latency: -1 is outside 0.0..inf")
    error = _one_error_line(hri("run", "coexistence", "--duration", "1", "--set", "net.safety={latncy: 1}"))
    assert error.endswith("net.safety.latncy: unknown key (did you mean 'latency'?)")


def test_the_robot_tree_is_sent_the_pelvis_where_the_monitor_sees_it():
    """Before the trees tick, the safety stream carries the person's pose now: the pelvis the
    monitor decided the zone from, not the last posing of the body (up to 50 ms old, or newer
    where the monitor posed the body for a query)."""
    from hri.run.sim import Simulation

    sent = []
    with Simulation(load_scenario("collaboration"), seed=0) as sim:
        publish = sim.services.safety.publish
        sim.services.safety.publish = lambda pose, zone, cap, person: (
            sent.append((pose.x, pose.y, sim.monitor.last_xy)), publish(pose, zone, cap, person))[1]
        sim.run(30.0)
    assert len(sent) == 600  # 20 ticks a second
    moving = [(x, y, seen) for x, y, seen in sent[1:] if seen is not None and seen != sent[0][2]]
    assert len(moving) > 100
    # the same up to the last bit (a posing sums its time steps in another order)
    assert all((x, y) == pytest.approx(seen, abs=1e-12) for x, y, seen in moving)
