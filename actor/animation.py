"""Animation clips and posing of the humanoid (the person's body).

The body is PyBullet's DeepMimic humanoid (``humanoid/humanoid.urdf`` from ``pybullet_data``,
``globalScaling`` 0.25, about 1.6 m tall). It is authored Y-up; the model's frame is
x forward, y up, z to the person's right. Our world is z up, so the base orientation always
contains :data:`Q_MODEL_TO_WORLD` (+90 deg about x: model y -> world z, model z -> world -y).
The body is kinematic: fixed base, posed each step with ``resetBasePositionAndOrientation``
and one ``resetJointStatesMultiDof`` call; it collides with nothing (group 0, mask 0) but
``getClosestPoints`` against it still works.

A :class:`~hri.actor.pose.BodyPose` (:mod:`hri.actor.pose`) is everything a clip says about
the body, independent of where the person stands: the pelvis offset in the person's frame
(forward, left, height above the floor), the pelvis rotation in the person's frame (x forward,
y left, z up) and the joint rotations (quaternions ``(x, y, z, w)`` in the model's joint
frames; hinge angles in radians).

Clips:

* ``walk`` (:class:`WalkClip`): the motion-capture cycle ``data/motions/humanoid3d_walk.txt``
  from ``pybullet_data`` (DeepMimic format, read at run time). Its forward root travel is
  removed (the plugin moves the person); what remains of the root motion is the periodic
  residual around a constant speed (vertical bob, sway, and the small fore-aft surge that
  keeps the stance foot planted). Its phase is driven by the distance walked.
* keyframe clips (:class:`KeyframeClip`) from ``assets/actor/clips/*.yaml`` (format in the
  comment at the top of each file). The pelvis height is computed so that the lowest point of
  the feet (and knees) is on the floor, and the pelvis is shifted horizontally so that the feet
  stay where they stood in the rest pose (precomputed tables, interpolated at run time).

Both kinds are sampled densely once, when loaded (:class:`~hri.actor.pose.PoseTable`: the walk cycle at
``WALK_TABLE_SAMPLES`` phases, keyframe clips at ``CLIP_TABLE_RATE`` per second), and read
back by normalised linear interpolation between neighbouring samples; at that spacing it
differs from slerping the clip itself by less than 1e-5 rad, and it costs a few microseconds
instead of tens.

The body in PyBullet is :mod:`hri.actor.body`; rotation helpers are in
:mod:`hri.actor.quaternions`; ``python -m hri.actor.pictures docs/images`` draws the clips.
"""

from __future__ import annotations

import functools
import importlib.resources
import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pybullet_data
from defusedxml import ElementTree

from hri.actor.clip_check import WALK, check_clip
from hri.actor.pose import BALL_JOINTS, HINGE_JOINTS, HINGE_SIGN, JOINT_NAMES, BodyPose, PoseTable, blend
from hri.actor.quaternions import (Q_IDENTITY, Q_MODEL_TO_WORLD, model_to_person, person_euler, person_to_model,
                                   qaxis, qconj, qmatrix, qmul, qslerp, qyaw, smoothstep)
from hri.base.errors import HriError
from hri.base.yaml_values import load as load_yaml

#: the fastest a person walks, m/s: the preferred walk-to-run transition speed of adults,
#: 2.06 m/s in A. Hreljac, "Preferred and energetically optimal gait transition speeds in human
#: locomotion", Medicine and Science in Sports and Exercise 25 (1993) 1158-1162 (faster, people
#: run), rounded down to ISO 13855's approach speed of the body, K = 2000 mm/s: a scenario's
#: walking_speed_mps and a tree's stride (ActorMovement) are held to it
MAX_WALKING_SPEED_M_S = 2.0
SCALE = 0.25
URDF_PATH = "humanoid/humanoid.urdf"
WALK_MOTION_PATH = "data/motions/humanoid3d_walk.txt"

#: Order of the joints in a DeepMimic frame (after duration, root position, root rotation).
DEEPMIMIC_ORDER = ("chest", "neck", "right_hip", "right_knee", "right_ankle", "right_shoulder",
                   "right_elbow", "left_hip", "left_knee", "left_ankle", "left_shoulder",
                   "left_elbow")

#: Model (Y-up, z right) -> person/world (Z-up, y left): +90 degrees about x.

# Foot: the ankle link's box (centre, half extents, model units before scaling).
_FOOT_CENTRE = np.array([0.18, -0.09, 0.0])
_FOOT_HALF = np.array([0.354, 0.11, 0.18])
FOOT_CORNERS = SCALE * (_FOOT_CENTRE + _FOOT_HALF * np.array(
    [[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]))
#: The sole's centre in the ankle link frame (what :meth:`HumanoidBody.foot_positions` reports).
FOOT_SOLE = SCALE * np.array([0.18, -0.09 - 0.11, 0.0])
# Knee: the top sphere of the shin capsule (centre in the knee link frame, radius).
_KNEE_CENTRE = SCALE * np.array([0.0, -0.18, 0.0])
_KNEE_RADIUS = SCALE * 0.2
#: How densely clips are sampled into their pose tables (:class:`~hri.actor.pose.PoseTable`).
WALK_TABLE_SAMPLES = 512  # per walk cycle
CLIP_TABLE_RATE = 240.0  # per second of a keyframe clip


# --------------------------------------------------------------------------- skeleton / FK
class Skeleton:
    """The humanoid's joint tree from the URDF, for forward kinematics without PyBullet."""

    def __init__(self, urdf_file: Path):
        text = Path(urdf_file).read_text(errors="replace")
        root = ElementTree.fromstring(text[:text.rindex("</robot>") + len("</robot>")])
        self.joints: dict[str, tuple[str, str, np.ndarray]] = {}
        self.child_of_joint: dict[str, str] = {}
        for joint in root.findall("joint"):
            name = joint.get("name")
            parent = joint.find("parent").get("link")
            child = joint.find("child").get("link")
            xyz = np.array([float(v) for v in joint.find("origin").get("xyz").split()]) * SCALE
            self.joints[name] = (parent, child, xyz)
        self.order = [name for name, _ in sorted(self.joints.items(), key=lambda kv: self._depth(kv[0]))]

    def _depth(self, joint: str) -> int:
        parent = self.joints[joint][0]
        depth = 0
        while True:
            owner = [n for n, (_, child, _) in self.joints.items() if child == parent]
            if not owner:
                return depth
            parent = self.joints[owner[0]][0]
            depth += 1

    def link_frames(self, pose: BodyPose, base_position: np.ndarray, base_rotation: np.ndarray
                    ) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """World (position, rotation matrix) of each link frame, base given in the world."""
        rotations = {name: pose.balls[i] for i, name in enumerate(BALL_JOINTS)}
        for i, name in enumerate(HINGE_JOINTS):
            rotations[name] = qaxis((0, 0, 1), pose.hinges[i])
        frames = {"base": (np.asarray(base_position, float), qmatrix(base_rotation))}
        for name in self.order:
            parent, child, xyz = self.joints[name]
            p, r = frames[parent]
            q = rotations.get(name)
            frames[child] = (p + r @ xyz, r if q is None else r @ qmatrix(q))
        return frames

    def ground_points(self, pose: BodyPose) -> tuple[float, np.ndarray]:
        """Lowest point (feet, knees) and mean ankle position, pelvis at the person-frame origin.

        Returns (lowest z, mean (x, y) of the two feet's sole centres) in the person's frame.
        """
        base_rotation = qmul(pose.root_rotation, Q_MODEL_TO_WORLD)
        frames = self.link_frames(pose, np.zeros(3), base_rotation)
        lowest = math.inf
        soles = []
        for side in ("left", "right"):
            p, r = frames[f"{side}_ankle"]
            lowest = min(lowest, float((p + FOOT_CORNERS @ r.T)[:, 2].min()))
            soles.append(p + r @ FOOT_SOLE)
            kp, kr = frames[f"{side}_knee"]
            lowest = min(lowest, float((kp + kr @ _KNEE_CENTRE)[2] - _KNEE_RADIUS))
        return lowest, np.mean(soles, axis=0)[:2]


def data_path(relative: str) -> Path:
    return Path(pybullet_data.getDataPath()) / relative


_SKELETON: Skeleton | None = None


def skeleton() -> Skeleton:
    global _SKELETON
    if _SKELETON is None:
        _SKELETON = Skeleton(data_path(URDF_PATH))
    return _SKELETON


# --------------------------------------------------------------------------- clips
class Clip:
    """A named animation: ``sample(t)`` for 0 <= t <= ``duration`` (seconds at speed 1)."""

    name: str
    duration: float

    def sample(self, t: float) -> BodyPose:  # pragma: no cover - interface
        raise NotImplementedError

    def start_pose(self) -> BodyPose:
        return self.sample(0.0)

    def end_pose(self) -> BodyPose:
        return self.sample(self.duration)

    def root_at(self, t: float) -> list[float]:
        """The root (pelvis offset) of ``sample(t)``."""
        return self.sample(t).root.tolist()


class WalkClip(Clip):
    """The DeepMimic walk cycle; phase 0..1 per cycle, driven by distance walked.

    ``stride`` is the root's forward travel per cycle (m), ``duration`` the cycle's duration,
    ``natural_speed`` = stride / duration.
    """

    def __init__(self, motion_file: Path | None = None, name: str = "walk"):
        self.name = name
        motion_file = motion_file or data_path(WALK_MOTION_PATH)
        frames = np.array(json.loads(Path(motion_file).read_text())["Frames"], float)
        if frames.shape[1] != 44:
            raise ValueError(f"{motion_file}: expected 44 numbers per frame, got {frames.shape[1]}")
        durations = frames[:-1, 0]
        self.duration = float(durations.sum())
        self._times = np.concatenate([[0.0], np.cumsum(durations)])
        # the last frame closes the loop (the first pose, moved on by one stride)
        # root: Y-up -> Z-up
        pos = np.stack([frames[:, 1], -frames[:, 3], frames[:, 2]], axis=1)
        wxyz = frames[:, 4:8]
        q_root = model_to_person(np.concatenate([wxyz[:, 1:], wxyz[:, :1]], axis=1))
        travel = pos[-1, :2] - pos[0, :2]
        heading = math.atan2(travel[1], travel[0])
        self.stride = float(np.hypot(*travel))
        unyaw = qyaw(-heading)
        q_root = qmul(unyaw, q_root)
        rel = (pos - pos[0]) @ qmatrix(unyaw).T
        balls = np.zeros((len(frames), len(BALL_JOINTS), 4))
        hinges = np.zeros((len(frames), len(HINGE_JOINTS)))
        col = 8
        for joint in DEEPMIMIC_ORDER:
            if joint in HINGE_SIGN:
                hinges[:, HINGE_JOINTS.index(joint)] = frames[:, col]
                col += 1
            else:
                w, x, y, z = frames[:, col:col + 4].T
                balls[:, BALL_JOINTS.index(joint)] = np.stack([x, y, z, w], axis=1)
                col += 4
        # Close the loop exactly: spread the small mismatch of the last frame over the cycle.
        f = self._times / self.duration
        q_root = qmul(qslerp(np.tile(Q_IDENTITY, (len(f), 1)),
                             np.tile(qmul(q_root[0], qconj(q_root[-1])), (len(f), 1)), f), q_root)
        for j in range(len(BALL_JOINTS)):
            fix = qmul(qconj(balls[-1, j]), balls[0, j])
            balls[:, j] = qmul(balls[:, j], qslerp(np.tile(Q_IDENTITY, (len(f), 1)),
                                                   np.tile(fix, (len(f), 1)), f))
        hinges += f[:, None] * (hinges[0] - hinges[-1])
        # Root: forward travel at constant speed removed, periodic residual kept; the height
        # stays the motion capture's (bob), corrected by one constant so that the lowest foot
        # point over the cycle is on the floor.
        residual = rel.copy()
        residual[:, 0] -= f * self.stride
        residual[:, 1] -= f * rel[-1, 1]
        residual[:, 2] = pos[:, 2]
        self._root = residual
        self._q_root, self._balls, self._hinges = q_root, balls, hinges
        skel = skeleton()
        lowest = min(self._root[k, 2] + skel.ground_points(self._frame_pose(k))[0]
                     for k in range(len(frames)))
        self._root[:, 2] -= lowest
        self._table = PoseTable(self._slerped, 1.0, WALK_TABLE_SAMPLES + 1)

    @property
    def natural_speed(self) -> float:
        return self.stride / self.duration

    def _frame_pose(self, k: int) -> BodyPose:
        return BodyPose(self._root[k].copy(), self._q_root[k], self._balls[k], self._hinges[k])

    def sample_phase(self, phase: float) -> BodyPose:
        """The pose at a phase (cycles; only the fractional part matters)."""
        return self._table.at(phase % 1.0)

    def root_at_phase(self, phase: float) -> list[float]:
        """The root of :meth:`sample_phase`."""
        return self._table.root_at(phase % 1.0)

    def _slerped(self, phase: float) -> BodyPose:
        """The cycle itself: its frames slerped (what the table is sampled from)."""
        t = (phase % 1.0) * self.duration
        k = int(np.searchsorted(self._times, t, side="right")) - 1
        k = min(max(k, 0), len(self._times) - 2)
        a = (t - self._times[k]) / (self._times[k + 1] - self._times[k])
        root = self._root[k] + a * (self._root[k + 1] - self._root[k])
        return BodyPose(root, qslerp(self._q_root[k], self._q_root[k + 1], a),
                        qslerp(self._balls[k], self._balls[k + 1], a),
                        self._hinges[k] + a * (self._hinges[k + 1] - self._hinges[k]))

    def sample(self, t: float) -> BodyPose:
        return self.sample_phase(t / self.duration)

    def end_pose(self) -> BodyPose:
        return self.sample_phase(0.0)


_GROUND_TABLE_RATE = 120.0  # samples per second of the precomputed height/offset tables


@dataclass
class Keyframe:
    time: float
    pose: BodyPose


class KeyframeClip(Clip):
    """A clip of keyframes (see the YAML files in ``assets/actor/clips``).

    Between keyframes, rotations are slerped with a smoothstep ease. The pelvis height (feet
    grounded) and horizontal offset (feet kept in place) are precomputed in tables.
    """

    def __init__(self, name: str, duration: float, keyframes: list[Keyframe],
                 anchor_feet: bool = True, ground: bool = True):
        if not keyframes:
            raise ValueError(f"clip {name}: no keyframes")
        times = [k.time for k in keyframes]
        if any(b <= a for a, b in zip(times, times[1:])):
            raise ValueError(f"clip {name}: keyframe times must increase")
        if times[0] != 0.0 or (len(times) > 1 and abs(times[-1] - duration) > 1e-9):
            raise ValueError(f"clip {name}: keyframes must start at 0 and end at the duration")
        self.name = name
        self.duration = float(duration)
        self.keyframes = keyframes
        self._times = np.array(times)
        skel = skeleton()
        _, rest_feet = skel.ground_points(BodyPose.rest())
        n = max(2, int(math.ceil(self.duration * _GROUND_TABLE_RATE)) + 1)
        self._table_t = np.linspace(0.0, self.duration, n) if self.duration > 0 else np.zeros(2)
        heights, offsets = [], []
        for t in self._table_t:
            lowest, feet = skel.ground_points(self._raw(t))
            heights.append(-lowest if ground else 0.0)
            offsets.append(rest_feet - feet if anchor_feet else np.zeros(2))
        self._heights = np.array(heights)
        self._offsets = np.array(offsets)
        self._table = PoseTable(self._grounded, self.duration, int(math.ceil(self.duration * CLIP_TABLE_RATE)) + 1)

    def _raw(self, t: float) -> BodyPose:
        k = int(np.searchsorted(self._times, t, side="right")) - 1
        if k >= len(self.keyframes) - 1:
            return self.keyframes[-1].pose
        k = max(k, 0)
        t0, t1 = self._times[k], self._times[k + 1]
        return blend(self.keyframes[k].pose, self.keyframes[k + 1].pose,
                     smoothstep((t - t0) / (t1 - t0)))

    def sample(self, t: float) -> BodyPose:
        return self._table.at(min(max(t, 0.0), self.duration))

    def root_at(self, t: float) -> list[float]:
        return self._table.root_at(min(max(t, 0.0), self.duration))

    def _grounded(self, t: float) -> BodyPose:
        """The clip itself: keyframes slerped, feet on the floor (what the table is sampled from)."""
        pose = self._raw(t).copy()
        height = np.interp(t, self._table_t, self._heights)
        ox = np.interp(t, self._table_t, self._offsets[:, 0])
        oy = np.interp(t, self._table_t, self._offsets[:, 1])
        pose.root = pose.root + np.array([ox, oy, height])
        return pose

    @staticmethod
    def from_yaml(path: Path) -> "KeyframeClip":
        text = Path(path).read_text()
        check_clip(text, str(path))  # HriError FILE:LINE: message, before anything is built
        data = load_yaml(text, str(path), aliases=False)
        name = str(data.get("name", Path(path).stem))
        keyframes = [Keyframe(float(k["time"]), _pose_from_yaml(k, f"{path}: t={k.get('time')}"))
                     for k in data["keyframes"]]
        return KeyframeClip(name, float(data["duration"]), keyframes,
                            anchor_feet=bool(data.get("anchor_feet", True)))


def _pose_from_yaml(entry: dict, where: str) -> BodyPose:
    pose = BodyPose.rest()
    root = entry.get("root") or {}
    unknown = set(root) - {"forward", "left", "rotation"}
    if unknown:
        raise ValueError(f"{where}: unknown root keys {sorted(unknown)}")
    pose.root = np.array([float(root.get("forward", 0.0)), float(root.get("left", 0.0)), 0.0])
    pose.root_rotation = person_euler(root.get("rotation"))
    for joint, value in (entry.get("joints") or {}).items():
        if joint not in JOINT_NAMES:
            raise ValueError(f"{where}: unknown joint {joint!r}")
        if joint in HINGE_SIGN:
            pose.hinges[HINGE_JOINTS.index(joint)] = HINGE_SIGN[joint] * math.radians(float(value))
        else:
            pose.balls[BALL_JOINTS.index(joint)] = person_to_model(person_euler(value))
    return pose


def default_clips_dir():
    return importlib.resources.files("hri.assets") / "actor" / "clips"


class ClipLibrary:
    """Named clips: the keyframe clips of a folder and the walk cycle (``walk``)."""

    WALK = WALK
    REST = "stand"

    def __init__(self, clips: dict[str, Clip] | None = None):
        self._clips: dict[str, Clip] = dict(clips or {})

    @staticmethod
    def load(clips_dir) -> "ClipLibrary":
        library = ClipLibrary()
        for entry in sorted(Path(str(clips_dir)).glob("*.yaml")):
            clip = KeyframeClip.from_yaml(entry)
            library._clips[clip.name] = clip
        library._clips[ClipLibrary.WALK] = WalkClip()
        return library

    @staticmethod
    @functools.cache
    def default() -> "ClipLibrary":
        """The shipped clips, loaded once per process (clips are read-only once built)."""
        with importlib.resources.as_file(default_clips_dir()) as folder:
            return ClipLibrary.load(folder)

    def has(self, name: str) -> bool:
        return name in self._clips

    def get(self, name: str) -> Clip:
        try:
            return self._clips[name]
        except KeyError:
            raise KeyError(f"unknown animation {name!r}; known: {sorted(self._clips)}") from None

    def names(self) -> list[str]:
        return sorted(self._clips)

    @property
    def walk(self) -> WalkClip:
        return self._clips[self.WALK]  # type: ignore[return-value]

    def rest_pose(self) -> BodyPose:
        if self.REST in self._clips:
            return self._clips[self.REST].end_pose()
        return BodyPose.rest()


@functools.cache
def clip_names() -> frozenset[str]:
    """The animation names of the default library (keyframe files and ``walk``), read from
    the files' ``name`` keys without building the clips: what a tree may ask the person for."""
    names = {ClipLibrary.WALK}
    with importlib.resources.as_file(default_clips_dir()) as folder:
        for entry in Path(folder).glob("*.yaml"):
            try:
                data = load_yaml(entry.read_bytes(), str(entry), aliases=False)
            except (OSError, HriError):
                data = None  # loading the library reports it
            name = data.get("name") if isinstance(data, dict) else None
            names.add(str(name) if name else entry.stem)
    return frozenset(names)
