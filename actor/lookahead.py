"""What the safety monitor asks of the person between its steps, answered without posing it.

The person is posed at its own rate (:mod:`hri.run.sim`), the safety monitor looks every physics
step. :class:`SafetyLookahead`, a part of :class:`~hri.actor.plugin.ActorPlugin`, answers
from the plugin's state: where the pelvis is at a time after the last step, for the zones of
every step: the plugin's own stepping (the walk, turns, the gait's sway, clips and blends) on
a copy of its :class:`~hri.actor.plugin.Motion` showing the pelvis offsets alone (the same
numbers a step would pose), which changes nothing; and how fast any point of the body may
move while the person does what its last step started, for the separation schedule's waits.
"""

from __future__ import annotations

import math

from hri.actor.body import pelvis_position
from hri.actor.pose import BodyPose
from hri.actor.protocol import ActorState
from hri.base.geometry import Pose

#: How fast (m/s) any point of the body may move while walking, turning or blending from one
#: pose into another: a foot swinging forward while walking moves up to 4.4 m/s in the
#: presets (tests/test_separation_schedule.py keeps it below this). Clips played alone move at
#: their measured speed, and a walk faster than the walk clip's own by its measured speed too
#: (:meth:`SafetyLookahead.speed_bound`).
TOP_SPEED_M_S = 5.0
#: The states in which the body moves only while it blends into a pose.
STANDING = frozenset((ActorState.SETUP, ActorState.IDLE))
#: How many poses' root offsets :meth:`SafetyLookahead._root_of` keeps.
ROOT_CACHE_SIZE = 8


class SafetyLookahead:
    """The pelvis ahead and the body's speed bound, from :class:`~hri.actor.plugin.ActorPlugin`'s
    state (a base class of it: the attributes are the plugin's)."""

    def pose_at(self, t: float) -> Pose:
        """Where the pelvis is at simulated time ``t`` (after the last step), without posing
        the body: where a step (or a preview) to ``t`` would put it, walk, turns, sway, clips
        and blends included, from the pelvis offsets alone (a few microseconds; a preview
        costs a hundred). For the safety monitor between the person's steps: its zones must
        not flicker when the body is posed again."""
        ahead = self._ahead(t)
        if ahead is None:
            return self.pose
        x, y, heading, root = ahead
        px, py, pz = pelvis_position(self._body.scaled(root), x, y, heading)
        return Pose(px, py, pz, 0.0, 0.0, math.sin(heading / 2.0), math.cos(heading / 2.0))

    def pelvis_xy_at(self, t: float) -> tuple[float, float]:
        """``(x, y)`` of :meth:`pose_at` (the same numbers), for the zone checks of every step."""
        ahead = self._ahead(t)
        if ahead is None:
            pose = self.pose
            return pose.x, pose.y
        x, y, heading, (rx, ry, _rz) = ahead
        scale = self._body.scale
        if scale != 1.0:  # HumanoidBody.scaled, inline: this runs every physics step
            rx, ry = scale * rx, scale * ry
        c, s = math.cos(heading), math.sin(heading)
        return x + c * rx - s * ry, y + s * rx + c * ry

    def _ahead(self, t: float) -> tuple[float, float, float, list[float]] | None:
        """Where the person stands and faces at ``t``, and the pose's root offset there: the
        plugin's own stepping on a copy of its motion, showing root offsets alone; None where
        the pelvis is as last posed."""
        ahead = t - self._state_time
        if ahead <= 0.0 or self._motion.blend_from is None and self.state in STANDING:
            return None
        s = self._motion.showing(self._root_of)
        if self.state == ActorState.MOVEMENT:
            self._walk(s, self._roots, ahead)
        elif self.state == ActorState.ANIMATION:
            self._play(s, self._roots, ahead)
        else:  # IDLE, blending into its pose
            self._show(s, self._roots, self._root_of(self._idle_pose()), ahead)
        return (*s.xy, s.heading, s.shown)

    def speed_bound(self) -> float:
        """How fast (m/s) any point of the body may move while the person does what its last
        step started: a clip alone at its measured speed times the speed asked, nothing while
        it stands still, :data:`TOP_SPEED_M_S` blending, and while moving (turning, walking)
        that or more for a walk faster than the walk clip's own (:meth:`_walking_bound`).
        For the safety monitor's separation schedule."""
        if self.state == ActorState.MOVEMENT:
            return self._movement_bound
        if self._motion.blend_from is None:
            if self.state == ActorState.ANIMATION:
                return self._clip_top_speed[self._clip.name] * self._clip_speed
            if self.state in (ActorState.IDLE, ActorState.SETUP):
                return 0.0
        return TOP_SPEED_M_S

    def _walking_bound(self, stride: float, speed: float) -> float:
        """The bound of a movement walking ``stride`` m per cycle at ``speed`` m/s. The walk
        clip's top speed was measured at its own stride and speed (v0); this walk plays its
        poses r times as fast and carries the body at ``speed``, so no point moves faster than
        r times that plus ``|speed - r v0|``. Never below :data:`TOP_SPEED_M_S` (the turns and
        blends of a movement)."""
        walk = self.clips.walk
        r = speed * walk.duration / stride
        natural = walk.natural_speed * self._body.scale  # the poses' own travel, as tall as the body
        return max(TOP_SPEED_M_S, r * self._walk_top_speed + abs(speed - r * natural))

    def _root_of(self, pose: BodyPose) -> list[float]:
        """``pose.root`` as plain floats, made once per pose: asked every step between posings,
        of the pose shown, the one blended from and the one blended into."""
        cache = self._root_cache
        cached = cache.get(id(pose))
        if cached is None:
            if len(cache) >= ROOT_CACHE_SIZE:
                cache.clear()
            cache[id(pose)] = cached = (pose, pose.root.tolist())  # the pose kept: its id stays its own
        return cached[1]
