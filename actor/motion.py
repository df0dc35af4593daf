"""Where the person is in what it does, and what it shows there: the state the actor plugin's
steps advance showing whole body poses, and its look-ahead advances on a copy showing the
pelvis offset alone (:class:`Motion`, with :class:`Poses` or :class:`Roots`).
"""

from __future__ import annotations

from typing import Callable, Generic, TypeVar

from hri.actor.animation import Clip, WalkClip
from hri.actor.leg import Leg
from hri.actor.pose import BodyPose, blend, blend_root

#: Amplitude of the stepping animation while turning in place (fraction of the walk cycle).
TURN_STEP_AMPLITUDE = 0.35
#: Effective radius (m) that converts the turned angle into walk-cycle distance while turning.
TURN_STEP_RADIUS = 0.3

T = TypeVar("T")  # what is shown: a whole BodyPose, or its root offset
U = TypeVar("U")


class Motion(Generic[T]):
    """Where the person is in what it does, and what it shows there: the value
    :class:`ActorPlugin`'s steps advance showing whole poses, and its look-ahead advances on a
    copy showing the pelvis offset alone (:meth:`ActorPlugin._walk`, :meth:`~ActorPlugin._play`,
    :meth:`~ActorPlugin._show`)."""

    __slots__ = ("xy", "heading", "shown", "blend_from", "blend_elapsed", "leg", "legs_done", "elapsed",
                 "segment", "clip_time")

    def __init__(self, xy: tuple[float, float], heading: float, shown: T, blend_from: T | None = None,
                 blend_elapsed: float = 0.0, leg: int = 0, legs_done: float = 0.0, elapsed: float = 0.0,
                 segment: int = -1, clip_time: float = 0.0):
        self.xy = xy  # where the person stands
        self.heading = heading
        self.shown = shown
        self.blend_from = blend_from  # what is cross-faded from into what is shown (None: nothing)
        self.blend_elapsed = blend_elapsed  # in the cross-fade
        self.leg = leg  # the index of the movement's leg walked now
        self.legs_done = legs_done  # seconds of the legs before it
        self.elapsed = elapsed  # in the leg
        self.segment = segment  # of the leg (-1: none yet)
        self.clip_time = clip_time  # in the clip played

    def showing(self, of: Callable[[T], U]) -> Motion[U]:
        """A copy of this motion showing ``of`` what this one shows and blends from."""
        blend_from = None if self.blend_from is None else of(self.blend_from)
        return Motion(self.xy, self.heading, of(self.shown), blend_from, self.blend_elapsed, self.leg,
                      self.legs_done, self.elapsed, self.segment, self.clip_time)

    def start_blend(self) -> None:
        """Cross-fade from what is shown now into whatever is shown next."""
        self.blend_from = self.shown
        self.blend_elapsed = 0.0


class Shows(Generic[T]):
    """What a :class:`Motion` shows, :class:`Poses` or :class:`Roots`: what a segment of a leg
    shows (:meth:`segment`), a clip at a time (:meth:`clip`), the rest pose, and ``blend``,
    which blends two of them."""

    def __init__(self, rest: T, walk_at: Callable[[float], T], walk_stride: float,
                 blend: Callable[[T, T, float], T]):
        self.rest = rest
        self.walk_at = walk_at  # the walk cycle at a phase
        self.walk_stride = walk_stride
        self.blend = blend

    def segment(self, m: Leg, segment: int, done: float) -> T:
        """What ``segment`` of leg ``m`` shows when it has got ``done`` far."""
        if segment == 1:  # walk: the cycle's phase is the distance walked per stride
            return self.walk_at(done / m.stride)
        if segment in (0, 2):  # turning in place, stepping on from where the walk left the cycle
            phase0 = 0.0 if segment == 0 else m.distance / m.stride
            phase = phase0 + abs(done) * TURN_STEP_RADIUS / self.walk_stride
            return self.blend(self.rest, self.walk_at(phase), TURN_STEP_AMPLITUDE)
        return self.rest  # legs back to the rest pose

    def clip(self, clip: Clip, t: float) -> T:  # pragma: no cover - interface
        raise NotImplementedError


class Poses(Shows[BodyPose]):
    """Whole body poses: what the plugin's steps pose."""

    def __init__(self, walk: WalkClip, rest: BodyPose):
        super().__init__(rest, walk.sample_phase, walk.stride, blend)

    def clip(self, clip: Clip, t: float) -> BodyPose:
        return clip.sample(t)


class Roots(Shows[list[float]]):
    """The root offsets of those poses alone (the same numbers, a few times cheaper): what the
    look-ahead follows."""

    def __init__(self, walk: WalkClip, rest: BodyPose):
        super().__init__(rest.root.tolist(), walk.root_at_phase, walk.stride, blend_root)

    def clip(self, clip: Clip, t: float) -> list[float]:
        return clip.root_at(t)
