"""The safety channel: the person's pose from the safety monitor to the robot's tree, over the service network.

The safety monitor offers the ``safety`` service (identifiers ``safety-monitor``, ``safety``)
with a keep-last ``person_pose`` stream; the robot's tree finds it through the broker by its
identifiers and reads the newest pose that has *arrived*. The ``safety`` channel's network
quality (scenario key ``net.safety``: latency, jitter, loss, bandwidth; see
``docs/network.md``) is therefore what the robot's reaction sees, in simulated time, while
the monitor's own checks (zones, speed limits, violations) keep using the true pose: a late
or lost pose shows up as a deeper intrusion and as violations.

With an ideal channel (the presets' default) a pose published before the trees tick arrives
in the same tick, so the robot sees the person as before.
"""

from __future__ import annotations

from typing import Callable

from hri.geometry import Pose
from hri.net import Broker, Network, Node, Service

SERVICE = "safety"
IDENTIFIERS = ["safety-monitor", SERVICE]
POSE_STREAM = "person_pose"


class SafetyLink:
    """Both ends of the safety channel in one process: publish on the monitor's side, read on the tree's."""

    def __init__(self, network: Network, clock: Callable[[], float], start: Pose) -> None:
        self.network = network
        broker = Broker()
        self._monitor_node = Node(network.endpoint("safety-monitor"), clock=clock)
        self._service = Service(SERVICE, IDENTIFIERS, {}, streams=[POSE_STREAM])
        broker.register(self._monitor_node.offer(self._service))
        self._tree_node = Node(network.endpoint("robot-tree"), clock=clock)
        record = broker.discover(all_of=[SERVICE])
        self._poses = self._tree_node.client(record).subscribe(POSE_STREAM)
        self._last = start
        self.received = 0

    def publish(self, now: float, pose: Pose) -> None:
        """The monitor's side: send the person's true pose and deliver what has arrived by ``now``."""
        self.network.advance(now)  # a subscription made at start has reached the service by now
        self._service.publish(POSE_STREAM, [pose.x, pose.y, pose.z, pose.qz, pose.qw])
        self.network.advance(now)  # an ideal channel delivers at once

    def person_pose(self) -> Pose:
        """The tree's side: the newest pose that has arrived (the start pose before the first)."""
        sample = self._poses.latest()
        if sample is not None:
            x, y, z, qz, qw = sample
            self._last = Pose(x, y, z, 0.0, 0.0, qz, qw)
        return self._last
