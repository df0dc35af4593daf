"""The robot arm in the simulation: the public API the robot's tree nodes and the loop use.

:class:`RobotArm` loads the scenario's arm (:class:`~hri.kinematics.arm_model.ArmModel`, the LBR iisy
by default) into the simulation client and a second copy into a private planning client
(:class:`~hri.robot.scene.PlanningScene`). ``move_to`` plans (IK for the tool link's pose,
then a collision-free joint path), ``step`` advances the
jerk-limited online trajectory (:class:`~hri.robot.motion.JointMotion`) by one physics
step and commands the joint motors, ``halt`` brakes to rest, ``set_velocity_fraction``
scales the speed of the motion in progress. Everything measured (joint states, point
speeds) is read back from PyBullet, never taken from the command. Deterministic: no
wall clock, the planner's random numbers come from ``RobotConfig.seed``.
"""

from __future__ import annotations

import functools
import math
import numbers
import operator
from collections.abc import Callable, Iterator
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np
import pybullet as p

from hri.base.geometry import Pose
from hri.kinematics.arm_model import DEFAULT_MODEL, LBR_IISY_SETTINGS, ArmModel, resolve_model
from hri.robot.motion import JointMotion, MotionStatus, Progress
from hri.robot.planner import PlannerSettings, plan_joint_path
from hri.robot.scene import DEFAULT_TOOL, PlanningScene, ToolShape, add_tool_body, has_own_tool, load_arm, read_joint_model
from hri.base.numbers import brief, is_number

#: the LBR iisy's home: elbow up, tool pointing down over the table in front of the robot
HOME = LBR_IISY_SETTINGS["home"]


def default_model() -> ArmModel:
    """The arm a scenario without ``robot.model`` runs (the LBR iisy)."""
    return _default_model()


@functools.cache
def _default_model() -> ArmModel:
    return resolve_model(DEFAULT_MODEL)


@functools.cache
def arm_reach(model: ArmModel | None = None) -> tuple[float, float]:
    """``(shoulder_height, reach)`` in metres, from the URDF's joint offsets.

    The shoulder is the second revolute joint, ``shoulder_height`` (the offsets up to it)
    above the base; ``reach`` is the sum of the offsets from there to the tool link: no tool
    pose is farther than that from the shoulder, whatever the joint angles (the arm stretched
    straight). A bound used to reject scenario targets the arm can never reach, not an IK
    check: a target within it may still be unreachable (joint limits, orientation).
    """
    from hri.kinematics.urdf import read_urdf

    model = model or default_model()
    joints = read_urdf(model.urdf).path(model.root, model.tool_link)
    shoulder = [joint.name for joint in joints].index(model.joints[min(1, len(model.joints) - 1)]) + 1
    lengths = [float(np.linalg.norm(joint.origin[:3, 3])) for joint in joints]
    return sum(lengths[:shoulder]), sum(lengths[shoulder:])


def per_joint(value: Any, joints: int = 6) -> tuple[float, ...]:
    """A scalar (same for all joints) or one value per joint, as a tuple of ``joints`` floats."""
    if is_number(value):
        return (float(value),) * joints
    if not isinstance(value, (list, tuple)) or not all(is_number(v) for v in value):
        raise ValueError(f"must be a number or a list of {joints} numbers, got {brief(value)}")
    if len(value) != joints:
        raise ValueError(f"needs 1 or {joints} values (the arm has {joints} joints), got {len(value)}")
    return tuple(float(v) for v in value)


PER_JOINT = ("max_acceleration", "max_jerk", "home")
# name -> (minimum, maximum): the counts bound the planner's work per move (the defaults are
# 12, 2000 and 60), the seed numpy's generator
_INTEGERS = {"ik_restarts": (1, 1000), "rrt_max_iterations": (1, 1_000_000), "shortcut_iterations": (0, 100_000),
             "seed": (0, 2**64 - 1)}
# The other numbers are plain floats; these must be > 0, those >= 0 (0..1: velocity_fraction).
_POSITIVE = ("goal_tolerance", "rest_velocity", "settle_timeout", "position_tolerance", "orientation_tolerance",
             "check_resolution", "rrt_step", "position_gain", "velocity_gain")
_NOT_NEGATIVE = ("collision_margin", "self_collision_margin")


def parse_parameter(name: str, value: Any, joints: int = 6) -> Any:
    """One robot parameter of a scenario (``robot.config``), typed and range-checked; a per-joint
    one for an arm of ``joints`` joints.

    ValueError with a message to follow the parameter's name ("must be positive, got -1");
    ``name`` must be a known field.
    """
    if name in PER_JOINT:
        values = per_joint(value, joints)
        if name != "home" and min(values) <= 0.0:
            raise ValueError(f"must be positive, got {brief(value)}")
        if name == "home" and max(abs(v) for v in values) > 2 * math.pi:  # joint angles, rad: one turn
            raise ValueError(f"must be joint angles within -2pi..2pi rad, got {brief(value)}")
        return values
    if name in _INTEGERS:
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise ValueError(f"must be an integer, got {brief(value)}")
        least, most = _INTEGERS[name]
        if value < least:
            raise ValueError(f"must be {least} or more, got {brief(value)}")
        if value > most:
            raise ValueError(f"must be at most {most}, got {brief(value)}")
        return int(value)
    if not is_number(value):
        raise ValueError(f"must be a number, got {brief(value)}")
    if name == "velocity_fraction" and not 0.0 <= value <= 1.0:
        raise ValueError(f"must be within 0..1, got {value}")
    if name in _POSITIVE and value <= 0.0:
        raise ValueError(f"must be positive, got {value}")
    if name in _NOT_NEGATIVE and value < 0.0:
        raise ValueError(f"must not be negative, got {value}")
    return float(value)


@dataclass(frozen=True)
class RobotConfig:
    """The robot's scenario parameters (SI units, radians)."""

    # per joint; the defaults are the LBR iisy's (hri.kinematics.arm_model.SHIPPED has each shipped arm's)
    max_acceleration: tuple[float, ...] = LBR_IISY_SETTINGS["max_acceleration"]  # rad/s^2
    max_jerk: tuple[float, ...] = LBR_IISY_SETTINGS["max_jerk"]                  # rad/s^3
    velocity_fraction: float = 1.0          # initial fraction of the joint speed limits
    home: tuple[float, ...] = HOME          # rad
    goal_tolerance: float = 0.005           # rad, measured joints vs goal for SUCCEEDED
    rest_velocity: float = 0.01             # rad/s, measured joint speed counted as rest
    settle_timeout: float = 2.0             # s after the command arrived, else FAILED
    position_tolerance: float = 0.005       # m, IK check by forward kinematics
    orientation_tolerance: float = 0.05     # rad, IK check by forward kinematics
    ik_restarts: int = 12                   # deterministic random IK seeds
    collision_margin: float = 0.02          # m, clearance to the static scene
    self_collision_margin: float = 0.01     # m, clearance between links
    check_resolution: float = 0.02          # rad between collision checks on a segment
    rrt_step: float = 0.25                  # rad
    rrt_max_iterations: int = 2000
    shortcut_iterations: int = 60
    position_gain: float = 0.3              # PyBullet POSITION_CONTROL gains
    velocity_gain: float = 1.0
    seed: int = 0                           # planner randomness

    @classmethod
    def from_dict(cls, d: dict[str, Any] | None) -> "RobotConfig":
        """From scenario parameters; missing keys keep defaults, unknown keys raise."""
        d = dict(d or {})
        known = {f.name: f for f in fields(cls)}
        unknown = sorted(set(d) - set(known))
        if unknown:
            raise ValueError(f"unknown robot parameter {unknown[0]!r} "
                             f"(known: {', '.join(sorted(known))})")
        values = {}
        for name, value in d.items():
            try:
                values[name] = parse_parameter(name, value)
            except ValueError as err:
                raise ValueError(f"robot parameter {name!r} {err}") from None
        return cls(**values)

    @property
    def planner_settings(self) -> PlannerSettings:
        return PlannerSettings(self.check_resolution, self.rrt_step,
                               self.rrt_max_iterations, self.shortcut_iterations)


class RobotArm:
    """The arm ``model`` (default: the LBR iisy) in simulation client ``client``, mounted at
    ``base_pose``; ``config``'s per-joint settings have one value per joint of the model."""

    def __init__(self, client: int, base_pose: Pose,
                 build_obstacles: Callable[[int], list[int]], config: RobotConfig,
                 model: ArmModel | None = None) -> None:
        self.client = client
        self.config = config
        self.base_pose = base_pose
        self.arm_model = arm_model = model or default_model()
        self.urdf: Path = arm_model.urdf
        for name in PER_JOINT:
            if len(getattr(config, name)) != arm_model.joint_count:
                raise ValueError(f"robot parameter {name!r} has {len(getattr(config, name))} values, "
                                 f"the arm {arm_model.name} {arm_model.joint_count} joints")
        self.body_id: int = load_arm(client, self.urdf, base_pose)
        self.model = read_joint_model(client, self.body_id, arm_model)
        self._joints = list(self.model.indices)
        self._links = list(range(self.model.num_links))
        n = len(self._joints)  # the motor command's constant parts, made once
        self._forces = self.model.max_effort.tolist()
        self._max_velocity = self.model.max_velocity.tolist()
        self._position_gains = [config.position_gain] * n
        self._velocity_gains = [config.velocity_gain] * n
        self.home = np.array(config.home, dtype=float)
        for j, q in zip(self._joints, self.home):
            p.resetJointState(self.body_id, j, float(q), 0.0, physicsClientId=client)
        self.scene = PlanningScene(arm_model, base_pose, build_obstacles, self.home,
                                   config.collision_margin, config.self_collision_margin)
        self._rng = np.random.default_rng(config.seed)
        self._ik_seeds = [self._rng.uniform(self.model.lower, self.model.upper)
                          for _ in range(config.ik_restarts)]
        self._speed_capability = self.scene.speed_capability()
        self._joint_reach = self.scene.joint_reach.tolist()
        self.tool_reach_m = 0.0  # how far a point of the tool or a carried part can be from the tool frame (add_tool)
        self.tool_body: int | None = None  # the tool's body for the safety functions (add_tool)
        self.tool_mass_kg = 0.0
        self._status = MotionStatus.IDLE
        self.failure: str | None = None  # why the last command FAILED (robot.service names them)
        self.velocity_fraction: float = float(config.velocity_fraction)
        self.safety_cap: float = 1.0  # set by a safety function below the trees (SSM)
        self.cycles = 0  # control cycles run (step calls): how old a bound taken from the state is
        self._motion: JointMotion | None = None
        self._target: Pose | None = None
        self._goal: np.ndarray | None = None
        self._plans = 0
        self._pending_path: list[np.ndarray] | None = None
        self._settle_time = 0.0
        self._hold = self.home.copy()
        self._commanded: tuple[list[float], list[float]] | None = None
        self._command(self.home.tolist(), [0.0] * n)

    def close(self) -> None:
        """Disconnect the private planning client."""
        self.scene.close()

    # -- status -----------------------------------------------------------------------

    @property
    def status(self) -> MotionStatus:
        return self._status

    @property
    def target(self) -> Pose | None:
        """The last target given to :meth:`move_to`."""
        return self._target

    # -- commands ---------------------------------------------------------------------

    def move_to(self, target: Pose) -> None:
        """Plan to the tool link's pose ``target`` and start moving; same unreached target resumes."""
        resume = (target == self._target and self._goal is not None
                  and self._status not in (MotionStatus.SUCCEEDED, MotionStatus.FAILED))
        if resume and self._status == MotionStatus.MOVING:
            return
        self._target = target
        start = self._commanded_position()
        others: Iterator[np.ndarray] = iter(())
        if not resume:
            seeds = [start, self.home, *self._ik_seeds]
            others = self.scene.ik_solutions(target, seeds, self.config.position_tolerance,
                                             self.config.orientation_tolerance)
            self._goal = next(others, None)
        self._plan_from(start, "unreachable", others)

    def move_to_joints(self, q: Any) -> None:
        """Plan to the joint values ``q`` (radians) and start moving (FAILED if they are not
        within the limits or collide)."""
        goal = np.asarray(q, dtype=float)
        self._target = None
        self._goal = goal if goal.shape == self.home.shape and self.scene.configuration_valid(goal) else None
        self._plan_from(self._commanded_position(), "invalid_joints")

    def _plan_from(self, start: np.ndarray, no_goal: str, others: Iterator[np.ndarray] = iter(())) -> None:
        """Plan from ``start`` to the goal; ``no_goal``: the failure when there is none.

        When no path leads to the goal, the ``others`` (the target's other IK solutions, best
        first) are tried in turn: a solution can be valid yet cut off from the arm's joints by
        collisions (the elbow folded the other way round), where another one is a move away.
        """
        if self._goal is None:
            self._fail(no_goal)
            return
        path = self._plan(start, self._goal)
        while path is None:
            goal = next(others, None)
            if goal is None:
                self._fail("no_path")
                return
            path = self._plan(start, goal)
            if path is not None:
                self._goal = goal
        if self._motion is not None:
            self._motion.follow(path[1:])
        else:
            self._pending_path = path[1:]
        self._settle_time = 0.0
        self._status = MotionStatus.MOVING
        self.failure = None

    def _plan(self, start: np.ndarray, goal: np.ndarray) -> list[np.ndarray] | None:
        """A collision-free path from ``start`` to ``goal``, or None; each plan draws its own
        random numbers (the arm's seed and the plan's count)."""
        rng = np.random.default_rng([self.config.seed, self._plans])
        self._plans += 1
        return plan_joint_path(self.scene, start, goal, rng, self.config.planner_settings)

    def halt(self) -> None:
        """Controlled stop (STOPPING, then STOPPED at rest); the target is kept for resuming."""
        if self._status != MotionStatus.MOVING:
            return
        if self._motion is not None:
            self._motion.brake()
        self._pending_path = None
        self._status = MotionStatus.STOPPING

    def set_velocity_fraction(self, fraction: float) -> None:
        """Scale the joint speed limits to ``fraction`` (0..1); applies to the motion in progress."""
        if not 0.0 <= fraction <= 1.0 or math.isnan(fraction):
            raise ValueError(f"velocity fraction {fraction} is not within 0..1")
        self.velocity_fraction = float(fraction)

    def set_safety_cap(self, cap: float) -> None:
        """Cap the velocity fraction at ``cap`` (0..1) whatever the trees set: a safety function
        of the controller (speed and separation monitoring); 0 brakes to rest and holds, keeping
        the motion, which goes on when the cap rises."""
        if not 0.0 <= cap <= 1.0 or math.isnan(cap):
            raise ValueError(f"safety cap {cap} is not within 0..1")
        self.safety_cap = float(cap)

    @property
    def motion_line(self) -> tuple[np.ndarray, np.ndarray, float] | None:
        """The straight segment the command runs now (:attr:`JointMotion.line`), if any."""
        return None if self._motion is None else self._motion.line

    @property
    def effective_fraction(self) -> float:
        """The velocity fraction the motion runs at: the trees', capped by :attr:`safety_cap`."""
        return min(self.velocity_fraction, self.safety_cap)

    # -- one physics step -------------------------------------------------------------

    def step(self, dt: float) -> None:
        """Advance the online trajectory by ``dt`` and command the motors (before stepSimulation)."""
        self.cycles += 1
        motion = self._ensure_motion(dt)
        if self._status in (MotionStatus.MOVING, MotionStatus.STOPPING):
            progress = motion.update(self.effective_fraction)
            if progress == Progress.ERROR:
                self._fail("trajectory_error")
            elif self._status == MotionStatus.STOPPING and progress in (Progress.STOPPED,
                                                                         Progress.ARRIVED):
                self._status = MotionStatus.STOPPED
            elif progress == Progress.ARRIVED and self._status == MotionStatus.MOVING:
                self._check_settled(dt)
        elif self._status == MotionStatus.FAILED and not motion.at_rest:
            motion.update(1.0)  # brake to rest after a failure
        self._command(motion.position_list, motion.velocity_list)

    # -- measurements -----------------------------------------------------------------

    def _joint_states(self) -> tuple:
        """PyBullet's joint states of the arm now."""
        return p.getJointStates(self.body_id, self._joints, physicsClientId=self.client)

    def joint_positions(self) -> np.ndarray:
        return np.array([s[0] for s in self._joint_states()])

    def joint_position_list(self) -> list[float]:
        """The measured joint positions, as plain floats."""
        return [state[0] for state in self._joint_states()]

    def reach_from(self, reference: list[float]) -> float:
        """How far any point of the arm (its tool and a carried part included) can be from where
        it was at the joint positions ``reference``: ``sum_i reach_i |q_i - reference_i|`` with
        the measured joints now (a turn of joint i moves a point along an arc no longer than
        its reach times the angle)."""
        return self._reach(self._joint_states(), reference)

    def lag_m(self) -> float:
        """How far the measured arm's points can be from where the command has them
        (:meth:`reach_from` the commanded joint positions)."""
        return self.reach_from(self._motion.position_list if self._motion is not None else self._hold.tolist())

    def joint_speeds_and_reach(self, reference: list[float] | None) -> tuple[float, float, float]:
        """:meth:`joint_speeds` and :meth:`reach_from` ``reference`` (0 for None) from one read."""
        states = self._joint_states()
        speeds = [abs(state[1]) for state in states]
        reach = 0.0 if reference is None else self._reach(states, reference)
        return (max(map(operator.truediv, speeds, self._max_velocity)),
                sum(map(operator.mul, speeds, self._joint_reach)), reach)

    def _reach(self, states: tuple, reference: list[float]) -> float:
        """``sum_i reach_i |q_i - reference_i|`` for the joint states ``states``."""
        return sum(r * abs(state[0] - q) for r, state, q in zip(self._joint_reach, states, reference))

    def joint_velocities(self) -> np.ndarray:
        return np.array([s[1] for s in self._joint_states()])

    def joint_speed_fraction(self) -> float:
        """max_i |qdot_i| / vmax_i, measured."""
        return self.joint_speeds()[0]

    def joint_speeds(self) -> tuple[float, float]:
        """From the measured joint speeds: max_i |qdot_i| / vmax_i, and an upper bound (m/s) of
        any robot point's speed, sum_i reach_i |qdot_i| (cheaper than :meth:`fastest_point_speed`)."""
        states = self._joint_states()
        speeds = [abs(state[1]) for state in states]
        # map with operator's functions: the same arithmetic as generators, 40 % faster (every
        # step while the person is guarded)
        return (max(map(operator.truediv, speeds, self._max_velocity)),
                sum(map(operator.mul, speeds, self._joint_reach)))

    def fastest_point_speed(self) -> float:
        """The largest linear speed (m/s) of the link frames (the tool link's included), measured."""
        states = p.getLinkStates(self.body_id, self._links, computeLinkVelocity=1,
                                 physicsClientId=self.client)
        best = 0.0
        # Plain floats: this runs every physics step, and per-link NumPy calls cost ~15x more.
        for s in states:
            # s[6] is the centre of mass velocity; move it to the link frame origin: v + w x r
            (vx, vy, vz), (wx, wy, wz) = s[6], s[7]
            rx, ry, rz = s[4][0] - s[0][0], s[4][1] - s[0][1], s[4][2] - s[0][2]
            ux, uy, uz = vx + wy * rz - wz * ry, vy + wz * rx - wx * rz, vz + wx * ry - wy * rx
            best = max(best, ux * ux + uy * uy + uz * uz)
        return math.sqrt(best)

    def commanded_state(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The commanded joint positions, velocities and accelerations (what the online
        trajectory brakes from)."""
        motion = self._motion
        if motion is None:
            zeros = np.zeros(len(self._joints))
            return self._hold.copy(), zeros, zeros.copy()
        return motion.position, motion.velocity, motion.acceleration

    def set_state(self, position: np.ndarray, velocity: np.ndarray, acceleration: np.ndarray,
                  dt: float) -> None:
        """Put the arm (joints and command) at this joint state, moving without a path (it
        brakes unless told otherwise): the braking tests start from sampled states this way."""
        for j, q, v in zip(self._joints, position, velocity):
            p.resetJointState(self.body_id, j, float(q), float(v), physicsClientId=self.client)
        self._motion = JointMotion(np.asarray(position, dtype=float), self.model.max_velocity,
                                   np.array(self.config.max_acceleration), np.array(self.config.max_jerk), dt,
                                   velocity=velocity, acceleration=acceleration)
        self._pending_path = None
        self._goal = None
        self._target = None
        self._status = MotionStatus.MOVING
        self._commanded = None  # the motors may have been commanded otherwise (a brake test's)
        self._command(self._motion.position_list, self._motion.velocity_list)

    def floor_footprints(self) -> list[tuple[float, float, float, float]]:
        """Where the arm stands over the floor now: each link's bounding box seen from above,
        as (x_min, y_min, x_max, y_max); for the person's walks (:mod:`hri.actor.route`)."""
        boxes = []
        for link in self._links:
            (x0, y0, _), (x1, y1, _) = p.getAABB(self.body_id, link, physicsClientId=self.client)
            boxes.append((x0, y0, x1, y1))
        return boxes

    def tool_pose(self) -> Pose:
        position, orientation = self.tool_frame()
        return Pose(*position, *orientation)

    def tool_frame(self) -> tuple[tuple[float, float, float], tuple[float, float, float, float]]:
        """The tool link's frame in the world as PyBullet gives it (a carried part asks every step)."""
        state = p.getLinkState(self.body_id, self.model.tool_link, computeForwardKinematics=1,
                               physicsClientId=self.client)
        return state[4], state[5]

    @property
    def joint_reach(self) -> np.ndarray:
        """Per joint, how far from its axis a point it moves can be, the tool's and a carried
        part's points included (:meth:`add_tool`): a change of dq_i rad moves no robot point
        farther than ``joint_reach[i] * |dq_i|``."""
        return np.array(self._joint_reach)

    def speed_capability(self) -> float:
        """An upper bound (m/s) of any robot point's speed at full joint speed."""
        return self._speed_capability

    def add_tool(self, shape: ToolShape | None, beyond_m: float) -> None:
        """Give the arm its tool for the safety functions: a body of ``shape`` (None: the default
        gripper, unless the arm's file models a tool of its own), and count points up to
        ``beyond_m`` beyond the tool frame (the tool's, a carried part's) in the speed bounds
        (:meth:`speed_capability`, :meth:`joint_speeds`): a turn of joint i moves such a point
        no faster than (its reach + ``beyond_m``) times the joint's speed. Neither the physics
        nor the planner sees the tool."""
        if shape is None and not has_own_tool(self.client, self.body_id, self.model):
            shape = DEFAULT_TOOL
        if shape is not None:
            self.tool_body = add_tool_body(self.client, shape)
            self.tool_mass_kg = shape.mass_kg
            beyond_m = max(beyond_m, math.hypot(shape.length_m, shape.radius_m))
        self.tool_reach_m = beyond_m
        self._joint_reach = (self.scene.joint_reach + beyond_m).tolist()
        self._speed_capability = self.scene.speed_capability() + beyond_m * float(np.sum(self.model.max_velocity))

    def is_reachable(self, target: Pose) -> bool:
        """IK succeeds within tolerance and the goal configuration is collision free."""
        seeds = [self._commanded_position(), self.home, *self._ik_seeds]
        return self.scene.solve_ik(target, seeds, self.config.position_tolerance,
                                   self.config.orientation_tolerance) is not None

    # -- internals --------------------------------------------------------------------

    def _commanded_position(self) -> np.ndarray:
        if self._motion is not None:
            return self._motion.position
        return self._hold.copy()

    def _ensure_motion(self, dt: float) -> JointMotion:
        if self._motion is None or self._motion.dt != dt:
            old = self._motion
            q0 = old.position if old is not None else self._hold
            self._motion = JointMotion(q0, self.model.max_velocity,
                                       np.array(self.config.max_acceleration),
                                       np.array(self.config.max_jerk), dt)
            pending = self._pending_path
            if pending is not None and self._status == MotionStatus.MOVING:
                self._motion.follow(pending)
            self._pending_path = None
        return self._motion

    def _check_settled(self, dt: float) -> None:
        assert self._goal is not None
        self._settle_time += dt
        error = float(np.max(np.abs(self.joint_positions() - self._goal)))
        speed = float(np.max(np.abs(self.joint_velocities())))
        if error <= self.config.goal_tolerance and speed <= self.config.rest_velocity:
            self._status = MotionStatus.SUCCEEDED
        elif self._settle_time > self.config.settle_timeout:
            self._status = MotionStatus.FAILED
            self.failure = "not_settled"

    def _fail(self, failure: str) -> None:
        if self._motion is not None:
            self._motion.brake()
        self._status = MotionStatus.FAILED
        self.failure = failure

    @property
    def command(self) -> tuple[list[float], list[float]] | None:
        """The last motor command sent (target positions and velocities), None before the first;
        a new tuple whenever the command changes."""
        return self._commanded

    def _command(self, q: list[float], qdot: list[float]) -> None:
        """Position control towards ``q`` with feed-forward ``qdot``. A command equal to the last
        one is not sent again: the motors keep their targets, and the arm rests in many steps."""
        if self._commanded is not None and q == self._commanded[0] and qdot == self._commanded[1]:
            return
        self._commanded = (q, qdot)
        p.setJointMotorControlArray(
            self.body_id, self._joints, p.POSITION_CONTROL,
            targetPositions=q, targetVelocities=qdot, forces=self._forces,
            positionGains=self._position_gains, velocityGains=self._velocity_gains,
            physicsClientId=self.client)
