"""The safety channel: the person's pose and zone from the safety monitor to the robot's tree.

The simulation's safety monitor offers the ``safety`` service (identifiers
``safety-monitor``, ``safety``) with a keep-last ``person_pose`` stream: the person's pelvis
pose and zone, published before the trees tick. The robot's tree executor finds it through
the broker and writes the newest sample that has *arrived* to its blackboard (``human_pose``,
``human_zone``). The ``safety`` channel's network quality (scenario key ``net.safety``:
latency, jitter, loss, bandwidth; see ``docs/network.md``) is therefore what the robot's
reaction sees, in simulated time, while the monitor's own checks (zones, speed limits,
violations) keep using the true pose: a late or lost pose shows up as a deeper intrusion
and as violations.

With an ideal channel (the presets' default) a pose published before the trees tick arrives
in the same tick, so the robot sees the person as it is.
"""

from __future__ import annotations

from hri.base.geometry import Pose
from hri.net import Service, Subscription

SERVICE = "safety"
IDENTIFIERS = ("safety-monitor", SERVICE)
POSE_STREAM = "person_pose"
QUERY = {"all_of": [SERVICE], "stream": POSE_STREAM}


class SafetyService:
    """The monitor's side: the ``safety`` service and its ``person_pose`` stream."""

    def __init__(self) -> None:
        self.service = Service(SERVICE, IDENTIFIERS, {}, streams=[POSE_STREAM])

    def publish(self, pose: Pose, zone: str | None) -> None:
        """One sample: the pelvis pose (x, y, z and the yaw quaternion's qz, qw) and the zone."""
        self.service.publish(POSE_STREAM, {"pose": [pose.x, pose.y, pose.z, pose.qz, pose.qw], "zone": zone})


class SafetyClient:
    """The tree's side: the newest pose that has arrived (``start`` before the first)."""

    def __init__(self, subscription: Subscription, start: Pose) -> None:
        self._poses = subscription
        self._pose = start
        self._zone: str | None = None

    def _read(self) -> None:
        sample = self._poses.take()
        if sample is not None:
            x, y, z, qz, qw = sample["pose"]
            self._pose = Pose(x, y, z, 0.0, 0.0, qz, qw)
            self._zone = sample["zone"]

    def person_pose(self) -> Pose:
        self._read()
        return self._pose

    def person_zone(self) -> str | None:
        """The zone the monitor had when it sent the newest pose (None before the first)."""
        self._read()
        return self._zone
