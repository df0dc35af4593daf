"""The actor protocol: ActionMessage and FeedbackMessage as fixed-size binary records.

These are the thesis's messages between the actor server and the actor plugin. Each is one
little-endian record of fixed size, documented byte for byte in ``actor/actor_protocol.h``
(a test compiles that header and compares sizes and offsets with this module).

Every record starts with a header: ``magic`` (4 bytes, tells the record type), ``version``
(2 bytes), ``state`` (2 bytes, :class:`ActorState`), ``sequence`` (4 bytes: the goal number
the server gave the action; the plugin echoes it in its feedback so stale feedback is
recognised) and 4 bytes that put the doubles that follow on 8-byte boundaries: explicit
padding in an ActionMessage; in a FeedbackMessage 2 bytes ``failure`` (:class:`ActorFailure`,
why the plugin did not take an action; 0 otherwise) and 2 bytes of padding. A plugin that
writes 0 there reports failures without a reason, as before the field existed.
"""

from __future__ import annotations

import enum
import struct
from dataclasses import dataclass

from hri.base.geometry import Pose

PROTOCOL_VERSION = 1
ACTION_MAGIC = 0x41495248  # b"HRIA" read as little-endian uint32
FEEDBACK_MAGIC = 0x46495248  # b"HRIF"
ANIMATION_NAME_SIZE = 256  # at most 255 characters and a terminating NUL

_HEADER = "<IHHII"
ACTION_FORMAT = _HEADER + "d3d4d" + f"{ANIMATION_NAME_SIZE}s"
FEEDBACK_FORMAT = "<IHHIHH" + "dd3d4d"  # the header with ``failure`` in the padding
ACTION_SIZE = struct.calcsize(ACTION_FORMAT)
FEEDBACK_SIZE = struct.calcsize(FEEDBACK_FORMAT)
_ACTION = struct.Struct(ACTION_FORMAT)
_FEEDBACK = struct.Struct(FEEDBACK_FORMAT)


class ActorState(enum.IntEnum):
    """ActorPluginState of the thesis."""

    SETUP = 0
    IDLE = 1
    MOVEMENT = 2
    ANIMATION = 3


class ActorFailure(enum.IntEnum):
    """Why the plugin answered an action with IDLE at progress 0, or gave a walk up on the way
    (``BLOCKED``, at the progress it had): ``failure`` of a feedback.

    A reader that does not know a code takes it as :attr:`NONE`: no reason given.
    """

    NONE = 0
    UNKNOWN_ANIMATION = 1  # no clip of that name in the plugin's library
    NOT_AN_ANIMATION = 2  # the walk cycle asked as an animation in place
    INVALID_SPEED = 3  # animation speed not positive or not finite
    NOT_WALK_CYCLE = 4  # a movement with another clip than the walk cycle
    INVALID_STATE = 5  # an action to enter SETUP
    BLOCKED = 6  # a walk given up where it stood: another person in the way (hri.actor.yielding)

    @property
    def reason(self) -> str:
        """The name in events and statistics, e.g. ``unknown_animation``."""
        return self.name.lower() if self is not ActorFailure.NONE else "unspecified"


class ProtocolError(ValueError):
    """A record that is not a valid message of this protocol (wrong size, magic, version)."""


def _pose_fields(pose: Pose) -> tuple[float, ...]:
    return (*pose.position, *pose.orientation)


@dataclass(frozen=True)
class ActionMessage:
    """Server -> plugin: the state to enter and what to do in it.

    ``animation_speed`` is the playback speed factor of an animation, or for a movement the
    distance in metres covered by one cycle of the walk animation.
    """

    state: ActorState
    animation_name: str = ""
    animation_speed: float = 1.0
    target: Pose = Pose()
    sequence: int = 0

    def encode(self) -> bytes:
        name = self.animation_name.encode("utf-8")
        if len(name) >= ANIMATION_NAME_SIZE:
            raise ProtocolError(f"animation name longer than {ANIMATION_NAME_SIZE - 1} bytes")
        return _ACTION.pack(ACTION_MAGIC, PROTOCOL_VERSION, int(self.state), self.sequence, 0,
                            self.animation_speed, *_pose_fields(self.target), name)

    @staticmethod
    def decode(data: bytes) -> "ActionMessage":
        fields = _unpack(_ACTION, data, ACTION_MAGIC)
        state, sequence, speed = fields[2], fields[3], fields[5]
        pose = Pose(*fields[6:13])
        name = fields[13].split(b"\0", 1)[0].decode("utf-8", errors="replace")
        return ActionMessage(ActorState(state), name, speed, pose, sequence)


@dataclass(frozen=True)
class FeedbackMessage:
    """Plugin -> server: the plugin's state, progress 0..1 of the action, the person's pose,
    and why the action failed (``failure``, with IDLE at progress 0)."""

    state: ActorState
    progress: float = 0.0
    current: Pose = Pose()
    sequence: int = 0
    sim_time: float = 0.0
    failure: ActorFailure = ActorFailure.NONE

    def encode(self) -> bytes:
        return _FEEDBACK.pack(FEEDBACK_MAGIC, PROTOCOL_VERSION, int(self.state), self.sequence,
                              int(self.failure), 0, self.sim_time, self.progress, *_pose_fields(self.current))

    @staticmethod
    def decode(data: bytes) -> "FeedbackMessage":
        fields = _unpack(_FEEDBACK, data, FEEDBACK_MAGIC)
        failure = ActorFailure(fields[4]) if fields[4] in ActorFailure._value2member_map_ else ActorFailure.NONE
        return FeedbackMessage(ActorState(fields[2]), fields[7], Pose(*fields[8:15]), fields[3], fields[6],
                               failure)


def _unpack(layout: struct.Struct, data: bytes, magic: int) -> tuple:
    if len(data) != layout.size:
        raise ProtocolError(f"record of {len(data)} bytes, expected {layout.size}")
    fields = layout.unpack(data)
    if fields[0] != magic:
        raise ProtocolError(f"bad magic 0x{fields[0]:08x}")
    if fields[1] != PROTOCOL_VERSION:
        raise ProtocolError(f"unsupported protocol version {fields[1]}")
    if fields[2] not in ActorState._value2member_map_:
        raise ProtocolError(f"unknown actor state {fields[2]}")
    return fields
