"""The actor plugin: the person's state machine inside the simulation (thesis "ActorPlugin").

States (:class:`~hri.actor.protocol.ActorState`):

* SETUP: only at start; the first :meth:`ActorPlugin.step` finishes it and goes IDLE.
* IDLE: after an action completed or failed, or after a cancel. Holds the last pose.
* MOVEMENT: turn in place towards the target (bounded turn rate, small steps from the walk
  cycle), walk to it (walk cycle phase = distance walked / animation distance: no foot sliding
  at the natural stride), turn to the target orientation unless it is the null quaternion,
  bring the legs to the rest pose, IDLE. A target closer than ``min_distance`` only turns.
  With a :class:`~hri.actor.route.WalkingArea`, the walk goes around the furniture and the
  robot arm: one leg per corner of the route, turning in place at each corner.
* ANIMATION: play a named clip in place at ``animation_speed``; IDLE when it has played through.

With a :class:`~hri.actor.yielding.Yielding` (several people), a walking person decides after
each step whether to go on, wait (the walk pauses, the body blends into the rest pose and
back) or walk around someone standing in the way (the rest of the movement planned anew from
where they are); a wait that lasts too long ends the walk, failed as ``BLOCKED``.

Messages come from ``endpoint.receive()`` (drained every step), feedback goes to
``endpoint.send()``: on every state change, and every step while in MOVEMENT or ANIMATION.
Where the person is in what it does (:class:`Motion`) moves on in one piece of code for both
its steps, which pose the whole body, and the safety monitor's look-ahead between them
(:mod:`hri.actor.lookahead`), which follows the pelvis offset alone (:class:`Poses`,
:class:`Roots`).
The simulation steps the plugin at the person's rate (every physics step while the person is
near the robot; see :mod:`hri.run.sim`); a step after a pause first catches up.
A failed action (unknown animation, invalid speed) answers at once with IDLE and progress 0,
and the feedback's ``failure`` says why (:class:`~hri.actor.protocol.ActorFailure`).
An ActionMessage with state IDLE cancels the running action.
"""

from __future__ import annotations

import copy
import math

import numpy as np
from shapely.geometry import box

from hri.actor.animation import Clip, ClipLibrary
from hri.actor.body import HumanoidBody, clip_speeds
from hri.actor.leg import Leg
from hri.actor.lookahead import TOP_SPEED_M_S, SafetyLookahead
from hri.actor.motion import Motion, Poses, Roots, Shows, T
from hri.actor.pose import BodyPose
from hri.actor.quaternions import smoothstep, wrap_angle
from hri.actor.protocol import ActionMessage, ActorFailure, ActorState, FeedbackMessage
from hri.actor.route import WalkingArea
from hri.actor.yielding import LOOKAHEAD_M, PASSING_DISTANCE_M, Decision, Neighbour, Yielding, clip_path
from hri.base.geometry import Pose


class ActorPlugin(SafetyLookahead):
    """Animates the humanoid from ActionMessages and reports FeedbackMessages.

    ``walk_speed``: walking speed in m/s; by default the walk clip's natural speed scaled so
    that one cycle covers the requested animation distance (cycle duration unchanged).
    ``turn_rate``: rad/s when turning in place. ``min_distance``: targets closer than this are
    not walked to. ``blend_time``: cross-fade (s) between poses of successive activities.
    ``walking_area``: walk around its obstacles; without one, straight to the target.
    ``yielding``: give way to other people on the way (:mod:`hri.actor.yielding`).
    ``body_scale``: the body's height as a multiple of :data:`~hri.actor.body.BODY_HEIGHT_M`.
    """

    def __init__(self, client: int, clips: ClipLibrary, start_pose: Pose, endpoint,
                 walk_speed: float | None = None, turn_rate: float = 2.5,
                 min_distance: float = 0.05, blend_time: float = 0.25,
                 walking_area: WalkingArea | None = None, yielding: Yielding | None = None,
                 body_scale: float = 1.0):
        if turn_rate <= 0.0:
            raise ValueError("turn_rate must be positive")
        if walk_speed is not None and walk_speed <= 0.0:
            raise ValueError("walk_speed must be positive")
        self.client = client
        self.clips = clips
        self.endpoint = endpoint
        self.walk_speed = walk_speed
        self.turn_rate = float(turn_rate)
        self.min_distance = float(min_distance)
        self.blend_time = float(blend_time)
        self.walking_area = walking_area
        self.yielding = yielding
        self._waiting = False  # a walk paused for another person (yielding)
        self._walk_asked: tuple | None = None  # the movement's (target, stride, speed): a new way keeps them
        self.state = ActorState.SETUP
        self._body = HumanoidBody(client, body_scale)
        self._rest = clips.rest_pose()
        self._poses = Poses(clips.walk, self._rest)
        self._roots = Roots(clips.walk, self._rest)
        heading = 0.0 if start_pose.has_null_orientation else start_pose.yaw
        self._motion: Motion[BodyPose] = Motion((float(start_pose.x), float(start_pose.y)), heading, self._rest)
        self._sequence = 0
        self._failure = ActorFailure.NONE  # why the last action was not taken
        self._progress = 0.0
        self._time = 0.0
        self._state_time = 0.0  # the simulated time the person's state is at
        self._legs: list[Leg] = []  # of the movement walked
        self._move_total_s = 0.0  # all legs
        self._clip: Clip | None = None  # played
        self._clip_speed = 1.0
        self._posed: tuple = (np.zeros(3), 0.0, 0.0, 0.0)  # pelvis, and the x, y, heading it was posed at
        self._pose_cache: tuple | None = None  # (posed, Pose) of the last pose asked
        self._root_cache: dict[int, tuple[BodyPose, list[float]]] = {}  # _root_of's: by id(pose)
        self._previewing = False
        self._hung = False  # hang(): neither steps nor previews any more
        self._idle_target: BodyPose | None = None
        # how fast each clip moves the body, measured once per clip and process
        self._clip_top_speed, self._walk_top_speed = clip_speeds(clips)
        if body_scale != 1.0:  # every point of a scaled body moves the scaled way in the same time
            self._clip_top_speed = {name: body_scale * v for name, v in self._clip_top_speed.items()}
            self._walk_top_speed *= body_scale
        self._movement_bound = TOP_SPEED_M_S  # speed_bound() while moving: set by each movement
        self._apply()

    # ------------------------------------------------------------------ public
    @property
    def body_id(self) -> int:
        return self._body.body_id

    @property
    def posings(self) -> int:
        """How often the body was posed so far (its link frames change only then)."""
        return self._body.posings

    @property
    def pose(self) -> Pose:
        """The person's pose: pelvis position and heading (yaw-only quaternion) where the body
        was last posed (by a step or a preview); made once per posing (the safety monitor and
        the trees ask many times in between)."""
        posed = self._posed
        cached = self._pose_cache
        if cached is None or cached[0] is not posed:
            pelvis, h = posed[0], posed[3]
            pose = Pose(float(pelvis[0]), float(pelvis[1]), float(pelvis[2]), 0.0, 0.0, math.sin(h / 2.0),
                        math.cos(h / 2.0))
            self._pose_cache = cached = (posed, pose)
        return cached[1]

    @property
    def progress(self) -> float:
        return self._progress

    def foot_positions(self) -> tuple[np.ndarray, np.ndarray]:
        """World positions (left, right) of the soles' centres."""
        return self._body.foot_positions()

    def hand_pose(self) -> tuple[tuple[float, float, float], tuple[float, float, float, float]]:
        """The right hand's frame in the world (position, quaternion), by the shared kinematics."""
        return self._body.hand_pose()

    def hang(self) -> None:
        """Stop for good, as a plugin whose process hangs: no action read, no feedback sent, the
        body still (fault injection: ``actor_hang``; the actor server's watchdog notices)."""
        self._hung = True

    def step(self, sim_time: float, dt: float) -> None:
        """Read the actions that arrived by ``sim_time``, and animate the person to ``sim_time + dt``.

        The plugin need not be stepped every physics step: when it was last stepped to an
        earlier time, it first catches up to ``sim_time`` with what it was doing, so an action
        read now starts now.
        """
        if self._hung:
            return
        if self.state == ActorState.SETUP:
            self._setup(sim_time)
        self._time = sim_time
        messages = []
        while (message := self.endpoint.receive()) is not None:
            messages.append(message)
        gap = self._gap(sim_time)
        if messages:
            if gap:
                self._advance(gap)
            for message in messages:
                self._handle(message)
            self._advance(dt)
        else:
            self._advance(gap + dt)
        self._state_time = sim_time + dt
        if self.yielding is not None and self.state == ActorState.MOVEMENT:
            self._give_way(sim_time + dt)
        self._apply()
        if self.state in (ActorState.MOVEMENT, ActorState.ANIMATION):
            self._feedback()

    def preview(self, sim_time: float, dt: float) -> None:
        """Pose the body as :meth:`step` would at ``sim_time``, without acting: no action is
        read, no feedback sent, and the person's state stays where the last step left it.

        For the safety monitor, which needs the body where it is at a query between steps:
        when it asks must not change what the person does (a step there would read actions
        and end activities on the query's step instead of the person's own).
        """
        if self.state == ActorState.SETUP or self._hung:
            return
        kept = self.__dict__.copy()
        self._motion = copy.copy(self._motion)  # the steps change it in place
        self._previewing = True
        try:
            self._advance(self._gap(sim_time) + dt)
            self._apply()
        finally:
            posed = self._posed
            self.__dict__.update(kept)
            self._posed = posed  # the body is where the preview put it

    def _gap(self, sim_time: float) -> float:
        """How far the person's state is behind ``sim_time`` (it is not stepped every physics step)."""
        return sim_time - self._state_time if sim_time > self._state_time + 1e-12 else 0.0

    def _advance(self, dt: float) -> None:
        if self.state == ActorState.MOVEMENT:
            self._step_movement(dt)
        elif self.state == ActorState.ANIMATION:
            self._step_animation(dt)
        else:
            self._show(self._motion, self._poses, self._idle_pose(), dt)

    def _idle_pose(self) -> BodyPose:
        return self._idle_target if self._idle_target is not None else self._motion.shown

    # ------------------------------------------------------------------ states
    def _setup(self, sim_time: float) -> None:
        # Everything the plugin needs from the simulation is the body (loaded in __init__) and
        # the clips; SETUP ends at the first step.
        self._state_time = sim_time
        self._enter(ActorState.IDLE, progress=0.0)

    def _enter(self, state: ActorState, progress: float) -> None:
        self.state = state
        self._progress = progress
        self._feedback()

    def _feedback(self) -> None:
        if self._previewing:
            return
        self.endpoint.send(FeedbackMessage(self.state, float(self._progress), self.pose,
                                           self._sequence, float(self._time), self._failure))

    def _fail(self, message: ActionMessage, failure: ActorFailure) -> None:
        """The action cannot be done: answer IDLE with progress 0 and why (the server sees failure)."""
        self._sequence = message.sequence
        self._failure = failure
        self._clip = None
        self._enter(ActorState.IDLE, progress=0.0)

    def _handle(self, message: ActionMessage) -> None:
        self._failure = ActorFailure.NONE
        self._stop_waiting()
        if message.state == ActorState.IDLE:  # cancel
            self._sequence = message.sequence
            was_walking = self.state == ActorState.MOVEMENT
            self._clip = None
            self._idle_target = self._rest if was_walking else self._motion.shown
            self._motion.start_blend()
            self._enter(ActorState.IDLE, progress=self._progress)
        elif message.state == ActorState.ANIMATION:
            failure = self._animation_failure(message)
            if failure is not ActorFailure.NONE:
                self._fail(message, failure)
                return
            name = message.animation_name
            self._sequence = message.sequence
            self._clip = self.clips.get(name)
            self._motion.clip_time = 0.0
            self._clip_speed = float(message.animation_speed)
            self._motion.start_blend()
            self._enter(ActorState.ANIMATION, progress=0.0)
        elif message.state == ActorState.MOVEMENT:
            name = message.animation_name or ClipLibrary.WALK
            if name != ClipLibrary.WALK or not self.clips.has(name):
                self._fail(message, ActorFailure.NOT_WALK_CYCLE)
                return
            self._sequence = message.sequence
            self._clip = None
            self._walk_asked = self._asked(message)
            self._legs = self._plan(*self._walk_asked)
            self._movement_bound = self._walking_bound(self._legs[0].stride, self._legs[0].speed)
            self._move_total_s = sum(leg.duration for leg in self._legs)
            now = self._motion
            now.leg, now.legs_done, now.elapsed, now.segment = 0, 0.0, 0.0, -1
            self._enter(ActorState.MOVEMENT, progress=0.0)
        else:  # SETUP is not an action
            self._fail(message, ActorFailure.INVALID_STATE)

    def _animation_failure(self, message: ActionMessage) -> ActorFailure:
        """Why the animation ``message`` asks for cannot be played (NONE: it can)."""
        name = message.animation_name
        if name == ClipLibrary.WALK:
            return ActorFailure.NOT_AN_ANIMATION
        if not self.clips.has(name):
            return ActorFailure.UNKNOWN_ANIMATION
        if not message.animation_speed > 0.0 or not math.isfinite(message.animation_speed):
            return ActorFailure.INVALID_SPEED
        return ActorFailure.NONE

    # ------------------------------------------------------------------ movement
    def walk_ahead(self) -> list[tuple[float, float]]:
        """Where the person stands and, while walking, the corners still ahead of the walk (the
        ends of the legs not done yet): what another person's walk keeps clear of."""
        here = (float(self._motion.xy[0]), float(self._motion.xy[1]))
        if self.state is not ActorState.MOVEMENT or not self._legs:
            return [here]
        ahead = [leg.start_xy + leg.distance * leg.direction for leg in self._legs[self._motion.leg:]]
        return [here, *((float(x), float(y)) for x, y in ahead)]

    def neighbour(self, name: str, rank: int) -> Neighbour:
        """This person as another walking person sees them (:class:`~hri.actor.yielding.Neighbour`)."""
        here = (float(self._motion.xy[0]), float(self._motion.xy[1]))
        stretch = () if self._waiting or self.state is not ActorState.MOVEMENT else self.stretch_ahead()
        return Neighbour(name, rank, here, len(stretch) >= 2, stretch)

    def stretch_ahead(self, length: float = LOOKAHEAD_M) -> tuple[tuple[float, float], ...]:
        """The next ``length`` metres of the walk from where the person stands (empty when no
        walk is left: turning at its end, settling, or not walking)."""
        s = self._motion
        legs = self._legs[s.leg:]
        if not legs or (s.elapsed >= legs[0].ends[1] and len(legs) == 1):
            return ()
        here = (float(s.xy[0]), float(s.xy[1]))
        ends = [tuple(map(float, leg.start_xy + leg.distance * leg.direction)) for leg in legs]
        if s.elapsed >= legs[0].ends[1]:
            ends = ends[1:]  # this leg walked: turning towards the next
        return clip_path([here, *ends], length)

    def _give_way(self, t: float) -> None:
        """After a step of a walk: go on, wait, or walk around who stands in the way
        (:meth:`Yielding.decide <hri.actor.yielding.Yielding.decide>`)."""
        y = self.yielding
        here = (float(self._motion.xy[0]), float(self._motion.xy[1]))
        decision, whom = y.decide(t, here, self.stretch_ahead())
        if decision is Decision.REPLAN:
            self._replan(whom)
            y.replanned(t, whom)
            decision, whom = y.decide(t, here, self.stretch_ahead())
            if decision is Decision.REPLAN:  # the new way still passes them
                decision = Decision.WAIT
        if decision is Decision.GO:
            y.going(t)
            if self._waiting:
                self._waiting = False
                self._motion.start_blend()
            return
        if not y.waiting(t, whom):
            self._give_up()
        elif not self._waiting:
            self._waiting = True
            self._motion.start_blend()

    def _replan(self, around: list[Neighbour]) -> None:
        """The rest of the movement planned anew from where the person stands, around the
        standing people ``around`` (each a square that the walk's clearance grows to
        :data:`~hri.actor.yielding.PASSING_DISTANCE_M` from them)."""
        s = self._motion
        clearance = self.walking_area.clearance if self.walking_area is not None else 0.0
        half = max(PASSING_DISTANCE_M - clearance, 0.05)
        avoid = [box(o.xy[0] - half, o.xy[1] - half, o.xy[0] + half, o.xy[1] + half) for o in around]
        done = s.legs_done + s.elapsed
        self._legs = self._plan(*self._walk_asked, avoid=avoid)  # its first leg turns from where they face
        self._move_total_s = done + sum(leg.duration for leg in self._legs)
        s.leg, s.legs_done, s.elapsed, s.segment = 0, done, 0.0, -1
        s.start_blend()

    def _give_up(self) -> None:
        """The wait has lasted too long: the walk ends where the person stands, failed as BLOCKED."""
        self._stop_waiting()
        self._legs = []
        self._idle_target = self._rest
        self._motion.start_blend()
        self._failure = ActorFailure.BLOCKED
        self._enter(ActorState.IDLE, progress=self._progress)

    def _stop_waiting(self) -> None:
        if self._waiting:
            self._waiting = False
            self._motion.start_blend()
        if self.yielding is not None:
            self.yielding.clear()

    def _asked(self, message: ActionMessage) -> tuple[Pose, float, float]:
        """A movement's target, metres per walk cycle and speed (m/s)."""
        walk = self.clips.walk
        stride = message.animation_speed if message.animation_speed > 0.0 else walk.stride
        return message.target, stride, self.walk_speed or stride / walk.duration

    def _plan(self, target: Pose, stride: float, speed: float, avoid: list | None = None) -> list[Leg]:
        """The legs of a movement: one per corner of the route to the target (around
        ``avoid`` instead of the walking area's other people, for a new way on the walk)."""
        goal = (float(target.x), float(target.y))
        here = self._motion.xy
        far = math.dist(goal, here) > self.min_distance
        corners = self.walking_area.route(here, goal, avoid) \
            if far and self.walking_area is not None else [goal]
        legs: list[Leg] = []
        xy, heading = np.array(here), self._motion.heading
        for k, corner in enumerate(corners):
            last = k == len(corners) - 1
            leg = self._leg(xy, heading, np.array(corner), target if last else None, stride, speed)
            legs.append(leg)
            xy, heading = xy + leg.distance * leg.direction, leg.final_heading
        return legs

    def _leg(self, start_xy: np.ndarray, heading: float, end_xy: np.ndarray, target: Pose | None,
             stride: float, speed: float) -> Leg:
        """A straight leg; ``target`` (the movement's last leg): turn to its orientation and settle."""
        delta = end_xy - start_xy
        distance = float(np.hypot(*delta))
        if distance > self.min_distance:
            walk_heading = math.atan2(delta[1], delta[0])
            direction = delta / distance
        else:
            walk_heading = heading
            direction = np.array([math.cos(walk_heading), math.sin(walk_heading)])
            distance = 0.0
        final = walk_heading if target is None or target.has_null_orientation else target.yaw
        turn1 = abs(wrap_angle(walk_heading - heading)) / self.turn_rate
        turn2 = abs(wrap_angle(final - walk_heading)) / self.turn_rate
        return Leg(start_xy.copy(), direction, distance, heading, walk_heading, final,
                    float(stride), float(speed), turn1, distance / speed, turn2,
                    self.blend_time if target is not None else 0.0)

    def _step_movement(self, dt: float) -> None:
        now = self._motion
        if self._walk(now, self._poses, dt):
            self._legs = []
            self._stop_waiting()
            self._idle_target = self._rest
            self._apply()
            self._enter(ActorState.IDLE, progress=1.0)
            return
        total = self._move_total_s
        self._progress = min((now.legs_done + now.elapsed) / total, 0.999) if total > 0 else 0.999

    def _walk(self, s: Motion[T], shows: Shows[T], dt: float) -> bool:
        """Advance ``s`` by ``dt`` through the movement's segments and legs, showing ``shows``;
        True when the movement has ended (``s`` shows the rest pose, no blend). Paused for
        another person (:meth:`_give_way`), it stands where it is, blending into the rest pose."""
        if self._waiting:
            self._show(s, shows, shows.rest, dt)
            return False
        dt = self._finish_segments(s, shows, dt)
        legs, t = self._legs, s.elapsed + dt
        while t >= legs[s.leg].duration and s.leg + 1 < len(legs):
            t -= legs[s.leg].duration  # on to the next leg, with the time left over
            s.legs_done += legs[s.leg].duration
            s.leg, s.segment = s.leg + 1, -1
        m = legs[s.leg]
        segment, x, y, s.heading, done = m.at(t, *s.xy)
        s.xy, s.elapsed = (x, y), t
        if t >= m.duration:
            s.shown, s.blend_from = shows.rest, None
            return True
        if segment != s.segment:
            s.segment = segment
            s.start_blend()
        self._show(s, shows, shows.segment(m, segment, done), dt)
        return False

    def _finish_segments(self, s: Motion[T], shows: Shows[T], dt: float) -> float:
        """Show each segment of the leg that ends within ``dt`` to its end, and start the blend
        into the next one there; return the time left. A blend from where the last step left
        the body, as if the segment had ended then, would throw it back from where the previews
        between the steps (the safety monitor's posings) had shown it on its way: a foot by up
        to 10 cm in one physics step."""
        m = self._legs[s.leg]
        while s.segment >= 0:
            end = m.segment_end(s.segment)
            left = end - s.elapsed
            if left >= dt:
                break
            self._show(s, shows, shows.segment(m, s.segment, m.segment_done(s.segment)), left)
            _segment, x, y, s.heading, _done = m.at(end, *s.xy)
            s.xy, s.elapsed, s.segment = (x, y), end, m.segment_at(end)
            s.start_blend()
            dt -= left
        return dt

    # ------------------------------------------------------------------ animation
    def _step_animation(self, dt: float) -> None:
        now = self._motion
        if self._play(now, self._poses, dt):
            self._idle_target = now.shown
            self._clip = None
            self._apply()
            self._enter(ActorState.IDLE, progress=1.0)
            return
        self._progress = now.clip_time / self._clip.duration

    def _play(self, s: Motion[T], shows: Shows[T], dt: float) -> bool:
        """Advance ``s`` by ``dt`` in the clip, showing ``shows``; True when it has played
        through (``s`` shows its end, no blend)."""
        clip = self._clip
        s.clip_time += dt * self._clip_speed
        if s.clip_time >= clip.duration:
            s.shown, s.blend_from = shows.clip(clip, clip.duration), None
            return True
        self._show(s, shows, shows.clip(clip, s.clip_time), dt)
        return False

    # ------------------------------------------------------------------ posing
    def _show(self, s: Motion[T], shows: Shows[T], target: T, dt: float) -> None:
        """Show ``target`` in ``s`` ``dt`` s on: cross-faded into from ``s.blend_from`` while the
        blend lasts."""
        if s.blend_from is not None and self.blend_time > 0.0:
            s.blend_elapsed += dt
            w = s.blend_elapsed / self.blend_time
            if w < 1.0:
                s.shown = shows.blend(s.blend_from, target, smoothstep(w))
                return
            s.blend_from = None
        s.shown = target

    def _apply(self) -> None:
        now = self._motion
        (x, y), heading = now.xy, now.heading
        position, _ = self._body.apply(now.shown, x, y, heading)
        self._posed = (position, x, y, heading)
