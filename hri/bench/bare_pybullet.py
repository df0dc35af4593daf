"""Bare PyBullet stepping the same world as a scenario's simulation: the physical limit.

:func:`build_bare_world` makes a DIRECT client with exactly the bodies :class:`hri.run.sim.Simulation`
creates, in the same order and by the same code: floor, walls and furniture
(:func:`hri.workcell.world.build_world`), the zone patches, the humanoid (:class:`hri.actor.body.HumanoidBody`,
posed once in its rest pose at the person's start), the robot URDF at its base holding its home
pose under position control (the gains and forces of :class:`hri.robot.arm.RobotArm`), and the
parts the feeders put out at the start (:class:`hri.workcell.parts.PartManager`, same seed). After that
only ``stepSimulation`` runs: no trees, no animation, no queries, no messages.

The arm holds still there, so the bare world pays nothing for its motion. For a second
figure, :func:`step_bare_moving` gives the arm the motor commands a run of the simulation
sent (:class:`ArmCommands` records them), on the same steps: the physics of the same bodies
with the arm moving as it did, which is what the simulation's physics costs at the least.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from types import SimpleNamespace
from typing import TYPE_CHECKING

import numpy as np
import pybullet as p

from hri.scenario.model import Scenario

if TYPE_CHECKING:
    from hri.robot.arm import RobotArm
    from hri.run.sim import RunView


@dataclass
class BareWorld:
    client: int
    dt: float
    robot_id: int
    humanoid_id: int
    motors: dict  # setJointMotorControlArray's arguments but the targets (RobotArm's)

    def close(self) -> None:
        p.disconnect(physicsClientId=self.client)

    def __enter__(self) -> "BareWorld":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _hold_robot(client: int, scenario: Scenario) -> tuple[int, dict]:
    """The robot URDF at its base, reset to and held at its home pose (RobotArm._command); its
    body and the motor command's arguments but the targets."""
    from hri.robot.scene import load_arm
    from hri.robot.scene import read_joint_model

    config, arm = scenario.robot.config, scenario.robot.model
    body = load_arm(client, arm.urdf, scenario.robot.base)
    model = read_joint_model(client, body, arm)
    joints = list(model.indices)
    for j, q in zip(joints, config.home):
        p.resetJointState(body, j, float(q), 0.0, physicsClientId=client)
    n = len(joints)
    motors = {"bodyUniqueId": body, "jointIndices": joints, "controlMode": p.POSITION_CONTROL,
              "forces": [float(f) for f in model.max_effort], "positionGains": [config.position_gain] * n,
              "velocityGains": [config.velocity_gain] * n, "physicsClientId": client}
    p.setJointMotorControlArray(targetPositions=list(config.home), targetVelocities=[0.0] * n, **motors)
    return body, motors


def build_bare_world(scenario: Scenario, seed: int = 0) -> BareWorld:
    """The scenario's world in a new DIRECT client (see the module's docstring)."""
    from hri.actor.animation import ClipLibrary
    from hri.actor.body import HumanoidBody
    from hri.workcell.parts import PartManager, PersonHand
    from hri.workcell.world import build_world, draw_zones

    dt = 1.0 / scenario.simulation.physics_rate_hz
    client = p.connect(p.DIRECT)
    try:
        p.setTimeStep(dt, physicsClientId=client)
        p.setGravity(0, 0, -9.81, physicsClientId=client)
        furniture = build_world(client, scenario.room, scenario.furniture)
        draw_zones(client, scenario.zones)
        start = scenario.person.start
        humanoid = HumanoidBody(client)
        heading = 0.0 if start.has_null_orientation else start.yaw
        humanoid.apply(ClipLibrary.default().rest_pose(), start.x, start.y, heading)
        robot, motors = _hold_robot(client, scenario)
        # The same parts as the simulation's at its start: Simulation spawns its seeds the same way.
        parts_seed = np.random.SeedSequence(int(seed)).spawn(5)[3]
        parts = PartManager(client, scenario.parts, scenario.areas, furniture, scenario.furniture,
                            np.random.default_rng(parts_seed), lambda *a, **k: None)
        parts.connect(SimpleNamespace(body_id=robot), {scenario.person.name: PersonHand(humanoid.body_id, lambda: start,
                                                                                         humanoid.hand_pose)},
                      lambda: 0.0)
    except BaseException:
        p.disconnect(physicsClientId=client)
        raise
    return BareWorld(client, dt, robot, humanoid.body_id, motors)


def step_bare(world: BareWorld, steps: int) -> float:
    """Step ``steps`` times; return the wall time in seconds."""
    step, client = p.stepSimulation, world.client
    start = time.perf_counter()
    for _ in range(steps):
        step(physicsClientId=client)
    return time.perf_counter() - start


class ArmCommands:
    """An observer of a :class:`hri.run.sim.Simulation` run (it changes nothing): the arm's motor
    commands, each with the index of the first physics step it was in force for."""

    def __init__(self) -> None:
        self.changes: list[tuple[int, list[float], list[float]]] = []
        self._last: tuple | None = None
        self.robot: RobotArm | None = None  # the arm whose commands it notes, set before the run

    def start(self, run: RunView) -> None:
        pass

    def after_step(self, run: RunView) -> None:
        command = self.robot.command
        if command is not self._last and command is not None:
            self._last = command
            self.changes.append((run.step_count - 1, list(command[0]), list(command[1])))

    def finish(self, run: RunView) -> None:
        pass


def record_arm_commands(scenario: Scenario, duration_s: float, seed: int) -> list[tuple[int, list, list]]:
    """The arm's motor commands in a run of ``scenario`` (see :class:`ArmCommands`)."""
    from hri.run.sim import Simulation

    commands = ArmCommands()
    with Simulation(scenario, seed, observers=[commands]) as sim:
        commands.robot = sim.robot
        sim.run(duration_s)
    return commands.changes


def step_bare_moving(world: BareWorld, steps: int, commands: list[tuple[int, list, list]]) -> float:
    """As :func:`step_bare`, the arm given ``commands`` (from :func:`record_arm_commands`) on
    their steps, as the simulation gave them; the wall time in seconds."""
    step, control, client, motors = p.stepSimulation, p.setJointMotorControlArray, world.client, world.motors
    pending = iter(commands)
    change = next(pending, None)
    start = time.perf_counter()
    for k in range(steps):
        if change is not None and change[0] == k:
            control(targetPositions=change[1], targetVelocities=change[2], **motors)
            change = next(pending, None)
        step(physicsClientId=client)
    return time.perf_counter() - start


def world_counts(client: int) -> dict[str, int]:
    """Bodies and joints of a client (to check that two worlds hold the same things)."""
    bodies = [p.getBodyUniqueId(i, physicsClientId=client) for i in range(p.getNumBodies(physicsClientId=client))]
    joints = [p.getNumJoints(b, physicsClientId=client) for b in bodies]
    return {"bodies": len(bodies), "joints": sum(joints), "multi_link_bodies": sum(1 for j in joints if j)}
