"""What the safety monitor asks of the person between its steps, answered without posing it.

The person is posed at its own rate (:mod:`hri.run.sim`), the safety monitor looks every physics
step. :class:`SafetyLookahead`, a part of :class:`~hri.actor.plugin.ActorPlugin`, answers
from the plugin's state: where the pelvis is at a time after the last step (the walk, turns,
the gait's sway, clips and blends, from the pelvis offsets alone: the same numbers a step
would pose), for the zones of every step; and how fast any point of the body may move while
the person does what its last step started, for the separation schedule's waits. Each
method mirrors a part of the plugin's stepping for the pelvis alone and must change nothing.
"""

from __future__ import annotations

import math

from hri.actor.body import pelvis_position
from hri.actor.pose import BodyPose, blend_root
from hri.actor.protocol import ActorState
from hri.actor.quaternions import smoothstep
from hri.base.geometry import Pose

#: How fast (m/s) any point of the body may move while walking, turning or blending from one
#: pose into another: a foot swinging forward while walking moves up to 4.4 m/s in the
#: presets (tests/test_separation_schedule.py keeps it below this). Clips played alone move at
#: their measured speed, and a walk faster than the walk clip's own by its measured speed too
#: (:meth:`SafetyLookahead.speed_bound`).
TOP_SPEED_M_S = 5.0


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
        px, py, pz = pelvis_position(root, x, y, heading)
        return Pose(px, py, pz, 0.0, 0.0, math.sin(heading / 2.0), math.cos(heading / 2.0))

    def pelvis_xy_at(self, t: float) -> tuple[float, float]:
        """``(x, y)`` of :meth:`pose_at` (the same numbers), for the zone checks of every step."""
        ahead = self._ahead(t)
        if ahead is None:
            pose = self.pose
            return pose.x, pose.y
        x, y, heading, (rx, ry, _rz) = ahead
        c, s = math.cos(heading), math.sin(heading)
        return x + c * rx - s * ry, y + s * rx + c * ry

    def _ahead(self, t: float) -> tuple[float, float, float, list[float]] | None:
        """Where the person stands and faces at ``t``, and the pose's root offset there; None
        where the pelvis is as last posed."""
        ahead = t - self._state_time
        if ahead <= 0.0 or self.state == ActorState.SETUP:
            return None
        if self.state == ActorState.MOVEMENT:
            return self._movement_ahead(ahead)
        if self.state == ActorState.ANIMATION:
            root = self._clip_root_ahead(ahead)
        elif self._blend_from is not None:  # IDLE, blending into its pose
            root = self._shown_root(self._root_of(self._idle_pose()), ahead)
        else:
            return None  # IDLE: nothing moves
        return (*self._xy, self._heading, root)

    def speed_bound(self) -> float:
        """How fast (m/s) any point of the body may move while the person does what its last
        step started: a clip alone at its measured speed times the speed asked, nothing while
        it stands still, :data:`TOP_SPEED_M_S` blending, and while moving (turning, walking)
        that or more for a walk faster than the walk clip's own (:meth:`_walking_bound`).
        For the safety monitor's separation schedule."""
        if self.state == ActorState.MOVEMENT:
            return self._movement_bound
        if self._blend_from is None:
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
        return max(TOP_SPEED_M_S, r * self._walk_top_speed + abs(speed - r * walk.natural_speed))

    def _movement_ahead(self, ahead: float) -> tuple[float, float, float, list[float]]:
        """:meth:`_step_movement` by ``ahead`` s for the pelvis alone, changing nothing: where
        the person stands, faces, and the pose's root offset."""
        m, index, elapsed, segment, xy = self._movement, self._leg_index, self._move_elapsed, self._segment, self._xy
        blend = self._blend_state()
        shown = None  # the root shown where the last segment ended (None: none ended)
        while segment >= 0:  # as _finish_segments
            end = m.segment_end(segment)
            left = end - elapsed
            if left >= ahead:
                break
            shown, _blend = self._show_root(blend, self._segment_root(m, segment, m.segment_done(segment)), left)
            _segment, x, y, _heading, _done = m.at(end, *xy)
            xy, elapsed, segment, blend = (x, y), end, m.segment_at(end), (shown, 0.0)
            ahead -= left
        t = elapsed + ahead
        if t >= m.duration:
            index, t, _done = self._leg_after(t)
            m = self._legs[index]
        new_segment, x, y, heading, done = m.at(t, *xy)
        if t >= m.duration:  # the movement ends: the rest pose, no blend
            return x, y, heading, self._rest_root
        if index != self._leg_index or new_segment != segment:  # a blend starts from what is shown
            blend = (shown if shown is not None else self._root_of(self._shown), 0.0)
        root, _blend = self._show_root(blend, self._segment_root(m, new_segment, done), ahead)
        return x, y, heading, root

    def _show_root(self, blend: tuple[list[float], float] | None, target: list[float],
                   dt: float) -> tuple[list[float], tuple[list[float], float] | None]:
        """:meth:`_show` for the root offset alone: ``blend`` is the root blended from and the
        time blended so far; returns the root shown and the blend after ``dt`` more."""
        if blend is not None and self.blend_time > 0.0:
            start, elapsed = blend
            elapsed += dt
            w = elapsed / self.blend_time
            if w < 1.0:
                return blend_root(start, target, smoothstep(w)), (start, elapsed)
        return target, None

    def _clip_root_ahead(self, ahead: float) -> list[float]:
        """The root offset :meth:`_step_animation` would show ``ahead`` s on."""
        clip_time = self._clip_time + ahead * self._clip_speed
        if clip_time >= self._clip.duration:  # played through: its end pose, no blend
            return self._clip.root_at(self._clip.duration)
        return self._shown_root(self._clip.root_at(clip_time), ahead)

    def _shown_root(self, target: list[float], ahead: float) -> list[float]:
        """The root offset :meth:`_show` would show ``ahead`` s on, for a target's root offset."""
        return self._show_root(self._blend_state(), target, ahead)[0]

    def _blend_state(self) -> tuple[list[float], float] | None:
        """The blend in progress for :meth:`_show_root`: the root blended from, the time so far."""
        return (self._root_of(self._blend_from), self._blend_elapsed) if self._blend_from is not None else None

    def _root_of(self, pose: BodyPose) -> list[float]:
        """``pose.root`` as plain floats, made once per pose (asked every step between posings)."""
        cached = self._root_cache
        if cached[0] is not pose:
            self._root_cache = cached = (pose, pose.root.tolist())
        return cached[1]
