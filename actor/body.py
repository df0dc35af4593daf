"""The person's body in PyBullet: the humanoid loaded kinematically and posed every step.

It collides with nothing (group 0, mask 0) but ``getClosestPoints`` against it still works;
its joint motors are switched off, so posing it is all it costs the physics step. Where its
right hand is comes from the shared kinematics core (:mod:`hri.kinematics`) on the same
URDF's arm chain, fed with the pose the body was given. A body of another height is the same
humanoid scaled (``scale``): its links, collision shapes and hand chain, and the pelvis offsets
of every pose, so that the same joint angles put its feet on the floor.
"""

from __future__ import annotations

import math

import numpy as np
import pybullet

from hri.actor.animation import CLIP_TABLE_RATE, FOOT_SOLE, SCALE, URDF_PATH, Clip, ClipLibrary, data_path
from hri.actor.pose import BALL_JOINTS, HINGE_JOINTS, BodyPose
from hri.kinematics import Chain
from hri.actor.quaternions import Q_MODEL_TO_WORLD, qrotate
from hri.base.quiet import c_output_silenced


HAND_LINK = "right_wrist"
_MODEL_TO_WORLD = tuple(Q_MODEL_TO_WORLD.tolist())


def _qmul(a, b) -> tuple[float, float, float, float]:
    """The Hamilton product of two ``(x, y, z, w)`` quaternions given as plain numbers."""
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return (aw * bx + ax * bw + ay * bz - az * by, aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw, aw * bw - ax * bx - ay * by - az * bz)


def pelvis_position(root: list[float], x: float, y: float, heading: float) -> tuple[float, float, float]:
    """Where the pelvis is in the world for a pose's ``root`` offset, the person standing at
    (x, y) facing ``heading``."""
    c, s = math.cos(heading), math.sin(heading)
    rx, ry, rz = root
    return (x + c * rx - s * ry, y + s * rx + c * ry, rz)


_CHEST, _SHOULDER, _ELBOW = BALL_JOINTS.index("chest"), BALL_JOINTS.index("right_shoulder"), HINGE_JOINTS.index("right_elbow")


#: the standing height (m) of the humanoid at scale 1, head to sole in the rest pose
BODY_HEIGHT_M = 1.619
FASTEST_POINT_MARGIN = 1.1  # a posing between two of a clip's samples, interpolated, moves a little unevenly
_FASTEST_POINT: dict = {}  # (clip, travel speed) -> m/s (HumanoidBody.fastest_point)


def _reach_from_centre(client: int, body: int, link: int) -> float:
    """How far any point of ``link``'s collision shapes is from its centre of mass (m)."""
    reach = 0.0
    for shape in pybullet.getCollisionShapeData(body, link, physicsClientId=client):
        kind, size, offset = shape[2], shape[3], shape[5]
        extent = {pybullet.GEOM_SPHERE: size[0], pybullet.GEOM_CAPSULE: size[0] / 2 + size[1],
                  pybullet.GEOM_BOX: 0.5 * math.hypot(*size)}.get(kind, max(size))
        reach = max(reach, math.hypot(*offset) + extent)
    return reach


class HumanoidBody:
    """The humanoid loaded kinematically into one PyBullet client, ``scale`` times
    :data:`BODY_HEIGHT_M` tall."""

    def __init__(self, client: int, scale: float = 1.0):
        self.client = client
        self.scale = float(scale)
        with c_output_silenced():  # the URDF lacks joint axes for ball joints: harmless warnings
            self.body_id = pybullet.loadURDF(
                str(data_path(URDF_PATH)), [0, 0, 0], [0, 0, 0, 1], globalScaling=SCALE * self.scale,
                useFixedBase=True, flags=pybullet.URDF_MAINTAIN_LINK_ORDER, physicsClientId=client)
        self.joint_index: dict[str, int] = {}
        for j in range(pybullet.getNumJoints(self.body_id, physicsClientId=client)):
            info = pybullet.getJointInfo(self.body_id, j, physicsClientId=client)
            self.joint_index[info[1].decode()] = j
        for link in range(-1, len(self.joint_index)):
            pybullet.setCollisionFilterGroupMask(self.body_id, link, 0, 0, physicsClientId=client)
            pybullet.changeDynamics(self.body_id, link, linearDamping=0.0, angularDamping=0.0,
                                    physicsClientId=client)
        self._switch_off_joint_motors()
        self._keep_asleep()
        self._indices = ([self.joint_index[n] for n in BALL_JOINTS]
                         + [self.joint_index[n] for n in HINGE_JOINTS])
        self._ankles = [self.joint_index["left_ankle"], self.joint_index["right_ankle"]]
        self.arm = Chain.from_urdf(data_path(URDF_PATH), "base", HAND_LINK, scale=SCALE * self.scale)
        self._pose = BodyPose.rest()
        self._base = ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0))
        self.posings = 0  # how often the body was posed: a reader of its link frames may keep them until then
        self._hand: tuple | None = None  # hand_pose of the current posing, once asked
        self._reach: list[float] | None = None  # per link (base first): moved_at_most

    def _switch_off_joint_motors(self) -> None:
        """PyBullet gives every joint a default motor; the ball-joint motors alone cost ~150 us
        per physics step. The body is posed kinematically every step, so it needs none."""
        for j in self.joint_index.values():
            kind = pybullet.getJointInfo(self.body_id, j, physicsClientId=self.client)[2]
            if kind == pybullet.JOINT_SPHERICAL:
                pybullet.setJointMotorControlMultiDof(self.body_id, j, pybullet.POSITION_CONTROL,
                                                      targetPosition=[0, 0, 0, 1], force=[0, 0, 0],
                                                      physicsClientId=self.client)
            elif kind == pybullet.JOINT_REVOLUTE:
                pybullet.setJointMotorControl2(self.body_id, j, pybullet.VELOCITY_CONTROL, force=0,
                                               physicsClientId=self.client)

    def _keep_asleep(self) -> None:
        """The body is posed, never pushed, and collides with nothing: asleep for good (posing
        does not wake it), the physics step skips it (awake, it cost about half of a bare
        step) and it does not sag under gravity between posings. Poses, distance queries and
        views see it where it is put."""
        pybullet.changeDynamics(self.body_id, -1, activationState=pybullet.ACTIVATION_STATE_ENABLE_SLEEPING
                                | pybullet.ACTIVATION_STATE_SLEEP | pybullet.ACTIVATION_STATE_DISABLE_WAKEUP,
                                physicsClientId=self.client)

    def apply(self, pose: BodyPose, x: float, y: float, heading: float) -> tuple[tuple, tuple]:
        """Place the body: the person stands at (x, y) facing ``heading``.

        Returns the pelvis (base) world position and the base orientation. Plain floats, not
        NumPy: this runs whenever the person is posed, and small-array NumPy calls cost more
        than the arithmetic.
        """
        position = pelvis_position(self.scaled(pose.root.tolist()), x, y, heading)
        half = 0.5 * heading
        orientation = _qmul(_qmul((0.0, 0.0, math.sin(half), math.cos(half)), pose.root_rotation.tolist()),
                            _MODEL_TO_WORLD)
        pybullet.resetBasePositionAndOrientation(self.body_id, position, orientation, physicsClientId=self.client)
        targets = pose.balls.tolist() + [[h] for h in pose.hinges.tolist()]
        # No velocities: the body never moves by itself, so they stay zero (and asking PyBullet
        # to set them as well costs a third more)
        pybullet.resetJointStatesMultiDof(self.body_id, self._indices, targets, physicsClientId=self.client)
        self._base = (position, orientation)
        self._pose = pose
        self._hand = None
        self.posings += 1
        return position, orientation

    def scaled(self, root: list[float]) -> list[float]:
        """A pose's pelvis offset for this body (the clips' are the body's at scale 1)."""
        scale = self.scale
        return root if scale == 1.0 else [scale * v for v in root]

    def hand_pose(self) -> tuple[tuple[float, float, float], tuple[float, float, float, float]]:
        """The right hand's frame (the ``right_wrist`` link) in the world: position and
        quaternion, by forward kinematics of the arm chain (chest, shoulder, elbow); computed
        once per posing (a carried part asks every physics step)."""
        if self._hand is None:
            self.arm.base_pose = self._base
            pose = self._pose
            q = np.concatenate([pose.balls[_CHEST], pose.balls[_SHOULDER], [pose.hinges[_ELBOW]]])
            position, orientation = self.arm.tip_pose(q)
            self._hand = (tuple(position), tuple(orientation))
        return self._hand

    def foot_positions(self) -> tuple[np.ndarray, np.ndarray]:
        """World positions of the left and right soles' centres (from PyBullet's kinematics)."""
        states = pybullet.getLinkStates(self.body_id, self._ankles, computeForwardKinematics=1,
                                        physicsClientId=self.client)
        out = []
        for state in states:
            pos, orn = np.array(state[4]), np.array(state[5])
            out.append(pos + qrotate(orn, self.scale * FOOT_SOLE))
        return out[0], out[1]

    # ------------------------------------------------------------------ how fast it moves
    def link_frames(self) -> list[tuple[tuple[float, float, float], tuple[float, float, float, float]]]:
        """Every link's centre of mass and orientation in the world as posed, the base first."""
        client = self.client
        frames = [pybullet.getBasePositionAndOrientation(self.body_id, physicsClientId=client)]
        states = pybullet.getLinkStates(self.body_id, list(range(len(self.joint_index))), physicsClientId=client)
        return frames + [(state[0], state[1]) for state in states]

    def moved_at_most(self, before: list, after: list) -> float:
        """An upper bound (m) of how far any point of the body's collision shapes moved between
        two :meth:`link_frames`: per link, its centre's move plus the shapes' reach from the
        centre times the angle the link turned."""
        if self._reach is None:
            self._reach = [_reach_from_centre(self.client, self.body_id, link)
                           for link in range(-1, len(self.joint_index))]
        farthest = 0.0
        for reach, (p0, q0), (p1, q1) in zip(self._reach, before, after):
            turned = 2.0 * math.acos(min(1.0, abs(sum(a * b for a, b in zip(q0, q1)))))
            farthest = max(farthest, math.dist(p0, p1) + reach * turned)
        return farthest

    def fastest_point(self, clip: "Clip", rate: float = CLIP_TABLE_RATE, travel_speed: float = 0.0) -> float:
        """How fast (m/s) any point of the body moves while ``clip`` plays at speed 1 and the
        person moves on at ``travel_speed`` (the walk: its forward travel is taken out of its
        poses), from its samples ``rate`` times a second, times ``FASTEST_POINT_MARGIN``
        (posings between two samples interpolate them). Poses the body: the caller poses it
        again. Once per clip, speed and process."""
        cached = _FASTEST_POINT.get((clip, travel_speed))
        if cached is None:
            dt, frames = 1.0 / rate, None
            fastest = 0.0
            for i in range(int(math.floor(clip.duration * rate)) + 1):
                t = min(i * dt, clip.duration)
                self.apply(clip.sample(t), travel_speed * t, 0.0, 0.0)
                now = self.link_frames()
                if frames is not None:
                    fastest = max(fastest, self.moved_at_most(frames, now) / dt)
                frames = now
            cached = _FASTEST_POINT[(clip, travel_speed)] = fastest * FASTEST_POINT_MARGIN
        return cached

    def remove(self) -> None:
        pybullet.removeBody(self.body_id, physicsClientId=self.client)


def clip_speeds(clips: ClipLibrary) -> tuple[dict[str, float], float]:
    """:meth:`HumanoidBody.fastest_point` of every clip of ``clips`` but the walk, by name, and
    of the walk at its natural speed: what a person's plugin asks at set-up. What this
    process has not measured yet (about 0.3 s for the default library) is measured on a
    PyBullet client of its own, disconnected before returning: the run's body, perhaps in a
    window, is not posed through every clip, and a process that forks the workers of a batch
    (:mod:`hri.batch.worker_preload`) can measure them once for all of them, with nothing open."""
    wanted = {name: (clips.get(name), 0.0) for name in clips.names() if name != clips.WALK}
    walk = (clips.walk, clips.walk.natural_speed)
    missing = [key for key in (*wanted.values(), walk) if key not in _FASTEST_POINT]
    if missing:
        client = pybullet.connect(pybullet.DIRECT)
        try:
            body = HumanoidBody(client)
            for clip, travel_speed in missing:
                body.fastest_point(clip, travel_speed=travel_speed)
        finally:
            pybullet.disconnect(client)
    return {name: _FASTEST_POINT[key] for name, key in wanted.items()}, _FASTEST_POINT[walk]
