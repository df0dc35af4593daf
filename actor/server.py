"""The actor server (thesis): turns goals into actions and follows the plugin's feedback.

Lockstep, no threads: the simulation calls :meth:`ActorServer.poll` once per physics step,
after ``ActorPlugin.step``. One goal at a time:

- ``send_animation`` / ``send_movement`` return a :class:`Goal`. While another goal is
  PENDING, ACTIVE or CANCELING the new one is returned REJECTED and nothing is sent.
- An accepted goal gets the next sequence number and is sent as an ActionMessage. It stays
  PENDING until feedback with its sequence shows the plugin switched to the goal's state
  (the thesis's mutex: until that confirmation no other command is taken); then ACTIVE.
- When the plugin goes IDLE by itself for the goal: SUCCEEDED if its progress reached 1.0
  (within 1e-9), else FAILED (an unknown animation is reported as IDLE with progress 0);
  the goal's ``failure`` is the reason the feedback gave.
- ``cancel(goal)`` sends IDLE with the goal's sequence: CANCELING, then CANCELED when the
  IDLE feedback for that sequence arrives.

Feedback carrying another sequence than the newest goal's is stale (the plugin has not read
the newest action yet): it does not change any goal and is counted in ``stale_dropped``.
Every decoded feedback, stale or not, updates ``plugin_state``, ``person_pose`` and
``sim_time``: the person's pose is a physical fact, the newest report is the best one.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field

from hri.base.errors import HriError
from hri.base.geometry import Pose

from .protocol import ActionMessage, ActorFailure, ActorState, FeedbackMessage

PROGRESS_TOLERANCE = 1e-9
FEEDBACK_TIMEOUT_S = 1.0  # simulated seconds a running goal may go without feedback
_SEQUENCE_MASK = 0xFFFFFFFF


class GoalStatus(enum.Enum):
    PENDING = "pending"  # sent; the plugin has not switched to it yet
    ACTIVE = "active"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELING = "canceling"
    CANCELED = "canceled"
    REJECTED = "rejected"


BUSY_STATUSES = frozenset({GoalStatus.PENDING, GoalStatus.ACTIVE, GoalStatus.CANCELING})


@dataclass
class Goal:
    """One animation or movement request and what became of it."""

    kind: str  # "animation" | "movement"
    sequence: int
    animation_name: str
    speed: float  # playback speed (animation) or metres per walk cycle (movement)
    target: Pose | None = None  # movement only
    status: GoalStatus = GoalStatus.PENDING
    progress: float = 0.0
    current_pose: Pose | None = None
    sim_time: float | None = None  # simulated time of the last feedback applied to it
    failure: ActorFailure = ActorFailure.NONE  # why the plugin did not take it (FAILED)
    history: list[GoalStatus] = field(default_factory=list)

    @property
    def done(self) -> bool:
        return self.status not in BUSY_STATUSES

    @property
    def state(self) -> ActorState:
        """The plugin state that carries this goal out."""
        return ActorState.MOVEMENT if self.kind == "movement" else ActorState.ANIMATION

    def _set(self, status: GoalStatus) -> None:
        if status is not self.status:
            self.history.append(self.status)
            self.status = status


class ActorServer:
    """Goals over a :class:`~hri.actor.queues.ServerEndpoint` (``send``/``receive``)."""

    def __init__(self, endpoint):
        self.endpoint = endpoint
        self.current_goal: Goal | None = None  # the newest accepted goal, done or not
        self.plugin_state: ActorState | None = None
        self.person_pose: Pose | None = None
        self.sim_time: float | None = None
        self.stale_dropped = 0
        self.feedback_count = 0
        self._next_sequence = 1  # 0 is the plugin's "no goal yet"
        self._silent_since: float | None = None

    # goals ----------------------------------------------------------------------------------

    @property
    def busy(self) -> bool:
        return self.current_goal is not None and not self.current_goal.done

    def send_animation(self, name: str, speed: float) -> Goal:
        """Play the animation ``name`` at ``speed`` times its normal speed."""
        return self._submit("animation", name, float(speed), None)

    def send_movement(self, animation_name: str, distance: float, target: Pose) -> Goal:
        """Walk to ``target`` with ``animation_name``, covering ``distance`` m per cycle."""
        return self._submit("movement", animation_name, float(distance), target)

    def _take_sequence(self) -> int:
        sequence = self._next_sequence
        self._next_sequence = (sequence + 1) & _SEQUENCE_MASK or 1
        return sequence

    def _submit(self, kind: str, name: str, speed: float, target: Pose | None) -> Goal:
        goal = Goal(kind, self._take_sequence(), name, speed, target)
        if self.busy:
            goal._set(GoalStatus.REJECTED)
            return goal
        message = ActionMessage(goal.state, name, speed, target if target is not None else Pose(),
                                goal.sequence)
        self.endpoint.send(message)  # ProtocolError (name too long) or QueueFullError: no goal
        self.current_goal = goal
        return goal

    def cancel(self, goal: Goal) -> bool:
        """Ask the plugin to stop ``goal``. False when there is nothing to cancel."""
        if goal is not self.current_goal or goal.status not in (GoalStatus.PENDING,
                                                                GoalStatus.ACTIVE):
            return False
        self.endpoint.send(ActionMessage(ActorState.IDLE, sequence=goal.sequence))
        goal._set(GoalStatus.CANCELING)
        return True

    # feedback -------------------------------------------------------------------------------

    def poll(self, now: float | None = None) -> int:
        """Drain the feedback queue and update the goal. Returns how many were read.

        With the simulated time ``now``: a goal that has heard nothing from the plugin for
        ``FEEDBACK_TIMEOUT_S`` raises :class:`~hri.base.errors.HriError` (the plugin hangs or is
        gone), instead of waiting for ever.
        """
        count = 0
        while True:
            feedback = self.endpoint.receive()
            if feedback is None:
                break
            count += 1
            self._apply(feedback)
        if now is not None:
            self._watch(now, count)
        return count

    def _watch(self, now: float, heard: int) -> None:
        if heard or not self.busy:
            self._silent_since = None
            return
        if self._silent_since is None:
            self._silent_since = now
        elif now - self._silent_since > FEEDBACK_TIMEOUT_S:
            goal = self.current_goal
            raise HriError(f"the actor plugin has not answered for {FEEDBACK_TIMEOUT_S:g} s of simulated time "
                           f"(goal #{goal.sequence}, {goal.kind} {goal.animation_name!r}, {goal.status.value}): "
                           "it hangs or is gone")

    def _apply(self, feedback: FeedbackMessage) -> None:
        self.feedback_count += 1
        self.plugin_state = feedback.state
        self.person_pose = feedback.current
        self.sim_time = feedback.sim_time
        goal = self.current_goal
        if goal is None:
            return
        if feedback.sequence != goal.sequence:
            self.stale_dropped += 1
            return
        if goal.done:
            return  # the plugin keeps reporting IDLE for the finished goal
        if feedback.state is goal.state:
            self._update(goal, feedback)
            if goal.status is GoalStatus.PENDING:
                goal._set(GoalStatus.ACTIVE)
        elif feedback.state is ActorState.IDLE:
            self._update(goal, feedback)
            if goal.status is GoalStatus.CANCELING:
                goal._set(GoalStatus.CANCELED)
            elif goal.progress >= 1.0 - PROGRESS_TOLERANCE:
                goal._set(GoalStatus.SUCCEEDED)
            else:
                goal.failure = feedback.failure
                goal._set(GoalStatus.FAILED)
        # SETUP or the other action state with this sequence: not a switch to this goal

    @staticmethod
    def _update(goal: Goal, feedback: FeedbackMessage) -> None:
        if not math.isnan(feedback.progress):
            goal.progress = min(1.0, max(0.0, feedback.progress))
        goal.current_pose = feedback.current
        goal.sim_time = feedback.sim_time
