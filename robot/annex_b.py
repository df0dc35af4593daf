"""The stopping test of ISO 10218-1, Annex B, in the simulation: each of the arm's three main
joints, alone, from its home configuration, stopped from 33, 66 and 100 % of its top speed with
33, 66 and 100 % of the rated payload, in stop category 0 and 1; the joint's stopping angle and
time (:class:`~hri.robot.stop_table.StopTable`).

- **Category 1** (a controlled stop, then power off): :meth:`~hri.robot.arm.RobotArm.halt`, the
  arm's own braking along the path within its acceleration and jerk limits, as SSM's
  protective stop brakes.
- **Category 0** (power removed, the brakes act): the arm's fastest stop. Every motor becomes a
  brake at once: velocity control towards 0 with the joint's effort limit (the URDF's
  ``effort``) as its largest torque, no trajectory.

The joint moves at the speed alone (the others at rest) in the direction with more room to its
limit; the payload is a point mass at the tool frame (added to the tool link, whose centre of
mass is its frame). The stop ends when every link frame is slower than
:data:`~hri.robot.stopping.REST_SPEED_M_S`; the angle is the joint's measured travel from the
moment of the stop, the time the simulated time until then.
"""

from __future__ import annotations

import math

import numpy as np
import pybullet as p

from hri.base.geometry import Pose
from hri.robot.arm import RobotArm, RobotConfig
from hri.robot.braking import JointState
from hri.robot.stop_table import CATEGORIES, MAIN_JOINTS, PAYLOAD_SHARES, SPEEDS, StopTable
from hri.robot.stopping import REST_SPEED_M_S, _MAX_BRAKING_S

class Bench:
    """The arm of a scenario alone in a DIRECT client with gravity, for the stopping tests."""

    def __init__(self, base: Pose, config: RobotConfig, model, dt: float):  # model: ArmModel
        self.dt = dt
        self.client = p.connect(p.DIRECT)
        p.setGravity(0.0, 0.0, -9.81, physicsClientId=self.client)
        p.setTimeStep(dt, physicsClientId=self.client)
        self.arm = RobotArm(self.client, base, lambda client: [], config, model)
        self._tool: tuple[float, tuple[float, ...]] | None = None  # its own mass and inertia

    def close(self) -> None:
        self.arm.close()
        p.disconnect(physicsClientId=self.client)

    def carry(self, mass_kg: float) -> None:
        """A point mass of ``mass_kg`` at the tool frame: the tool link's mass, whose centre is
        its frame on the shipped arms (checked), with a 1-cm sphere's inertia."""
        arm = self.arm
        if self._tool is None:
            info = p.getDynamicsInfo(arm.body_id, arm.model.tool_link, physicsClientId=self.client)
            if any(abs(v) > 1e-9 for v in info[3]):
                raise ValueError(f"the tool link of {arm.arm_model.name} has its centre of mass off its frame: "
                                 "a payload there is not a point mass at the tool")
            self._tool = (info[0], tuple(info[2]))
        mass, inertia = self._tool
        sphere = 0.4 * mass_kg * 0.01 ** 2
        p.changeDynamics(arm.body_id, arm.model.tool_link, mass=mass + mass_kg,
                         localInertiaDiagonal=[i + sphere for i in inertia], physicsClientId=self.client)

    def stop(self, joint: int, fraction: float, category: str) -> tuple[float, float]:
        """(stopping angle in degrees, time in s) of ``joint`` from ``fraction`` of its top speed."""
        arm = self.arm
        home = np.array(arm.config.home, dtype=float)
        room_up, room_down = arm.model.upper[joint] - home[joint], home[joint] - arm.model.lower[joint]
        velocity = np.zeros(len(home))
        velocity[joint] = fraction * arm.model.max_velocity[joint] * (1.0 if room_up >= room_down else -1.0)
        arm.set_state(home, velocity, np.zeros(len(home)), self.dt)
        start = arm.joint_positions()[joint]
        if category == "category_1":
            arm.halt()
        else:
            p.setJointMotorControlArray(arm.body_id, list(arm.model.indices), p.VELOCITY_CONTROL,
                                        targetVelocities=[0.0] * len(home), forces=arm.model.max_effort.tolist(),
                                        physicsClientId=self.client)
        steps = 0
        while True:
            if category == "category_1":
                arm.step(self.dt)
            p.stepSimulation(physicsClientId=self.client)
            steps += 1
            if arm.fastest_point_speed() < REST_SPEED_M_S and (category == "category_0"
                                                                or arm.status.value == "stopped"):
                break
            if steps * self.dt > _MAX_BRAKING_S:
                raise RuntimeError(f"joint {joint + 1} did not come to rest within {_MAX_BRAKING_S} s")
        return math.degrees(abs(arm.joint_positions()[joint] - start)), steps * self.dt


def measure_stop_table(base: Pose, config: RobotConfig, model, dt: float, rating_kg: float) -> StopTable:
    """The Annex B table of the arm ``model`` mounted at ``base`` (physics steps of ``dt``)."""
    bench = Bench(base, config, model, dt)
    try:
        payloads = tuple(round(share * rating_kg, 3) for share in PAYLOAD_SHARES)
        distance = {c: np.zeros((MAIN_JOINTS, len(payloads), len(SPEEDS))) for c in CATEGORIES}
        time = {c: np.zeros((MAIN_JOINTS, len(payloads), len(SPEEDS))) for c in CATEGORIES}
        for i, payload in enumerate(payloads):
            bench.carry(payload)
            for joint in range(MAIN_JOINTS):
                for category in CATEGORIES:
                    for k, fraction in enumerate(SPEEDS):
                        distance[category][joint, i, k], time[category][joint, i, k] = \
                            bench.stop(joint, fraction, category)
        return StopTable(rating_kg, SPEEDS, payloads, bench.arm.model.names[:MAIN_JOINTS], distance, time,
                         model.name)
    finally:
        bench.close()
