"""The safety channel: the person's pose and zone from the safety monitor to the robot's tree,
and in SSM mode the speed cap of the robot's controller.

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

With several people each sample is of the person in the strictest zone of any (``stop``
before ``warning`` before ``safe``: the zone the robot must obey; of several there, the
nearest to the robot by the safety monitor's newest separation): their pose, their zone and
``person``, their name, which the tree finds as ``human_name``. A tree that tests the pose
against the zones' areas then obeys the strictest zone too.

In SSM mode (``safety.mode: ssm``) each sample also carries ``speed_cap``, the velocity
fraction the speed and separation monitoring allows the arm now (0: a protective stop); the
tree finds it as ``ssm_speed_cap``. The cap acts below the tree whatever the tree does; the
entry lets a tree do its own thing about it, e.g. call the person.
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

    def publish(self, pose: Pose, zone: str | None, speed_cap: float | None = None,
                person: str | None = None) -> None:
        """One sample: the pelvis pose (x, y, z and the yaw quaternion's qz, qw), the zone,
        with several people whose pose it is, and, in SSM mode, the controller's speed cap."""
        sample: dict = {"pose": [pose.x, pose.y, pose.z, pose.qz, pose.qw], "zone": zone}
        if person is not None:
            sample["person"] = person
        if speed_cap is not None:
            sample["speed_cap"] = speed_cap
        self.service.publish(POSE_STREAM, sample)


class SafetyClient:
    """The tree's side: the newest pose that has arrived (``start`` before the first)."""

    def __init__(self, subscription: Subscription, start: Pose) -> None:
        self._poses = subscription
        self._pose = start
        self._zone: str | None = None
        self._speed_cap: float | None = None
        self._person: str | None = None

    def _read(self) -> None:
        sample = self._poses.take()
        if sample is not None:
            x, y, z, qz, qw = sample["pose"]
            self._pose = Pose(x, y, z, 0.0, 0.0, qz, qw)
            self._zone = sample["zone"]
            self._speed_cap = sample.get("speed_cap")
            self._person = sample.get("person")

    def person_pose(self) -> Pose:
        self._read()
        return self._pose

    def person_zone(self) -> str | None:
        """The zone the monitor had when it sent the newest pose (None before the first)."""
        self._read()
        return self._zone

    def person_name(self) -> str | None:
        """Whose pose the newest sample is (None: a run with one person, or none yet)."""
        self._read()
        return self._person

    def speed_cap(self) -> float | None:
        """The SSM controller's cap with the newest sample (None: not SSM, or none yet)."""
        self._read()
        return self._speed_cap
