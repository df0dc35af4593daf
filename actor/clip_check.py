"""Checks of a keyframe clip file (``assets/actor/clips/*.yaml``) with line numbers.

:func:`check_clip` reads the YAML node tree (not just the values) so every problem is reported
as ``FILE:LINE: message`` before a clip is built (:class:`hri.actor.animation.KeyframeClip`
calls it), and ``hri validate clip.yaml`` runs the same check.
"""

from __future__ import annotations


import yaml

from hri.actor.pose import BALL_JOINTS, HINGE_JOINTS, HINGE_SIGN, JOINT_NAMES
from hri.base.errors import HriError
from hri.base.numbers import is_number
from hri.base.yaml_values import check_collections, scalar_value

_CLIP_KEYS = ("name", "duration", "keyframes", "anchor_feet")
_KEYFRAME_KEYS = ("time", "root", "joints")
_ROOT_KEYS = ("forward", "left", "rotation")
_AXES = ("forward", "left", "up")
WALK = "walk"  # the walk cycle's name (ClipLibrary.WALK): no keyframe clip may take it


def check_clip(data: bytes | str, file: str) -> None:
    """Check the text of a keyframe clip file (format: the comment in ``assets/actor/clips``).

    Raises :class:`~hri.base.errors.HriError` ``FILE:LINE: message`` on the first problem:
    malformed YAML, unknown or missing keys, wrong types, negative durations, keyframe
    times that do not run from 0 up to the duration, unknown joints or rotation axes.
    """
    from hri.bt.yaml_format import compose

    node = compose(data, file)
    check_collections(node, file)
    _ClipCheck(file).clip(node)


class _ClipCheck:
    """Walks the composed YAML nodes of a clip, which keep their lines."""

    def __init__(self, file: str):
        self.file = file

    def fail(self, message: str, node: yaml.Node | None) -> None:
        raise HriError(message, self.file, node.start_mark.line + 1 if node is not None else 1)

    def value(self, node: yaml.Node):
        return scalar_value(node, self.file)

    def mapping(self, node: yaml.Node, where: str, keys: tuple[str, ...]) -> dict[str, yaml.Node]:
        if not isinstance(node, yaml.MappingNode):
            self.fail(f"{where} must be a mapping ({', '.join(keys)}), got {self.value(node)!r}", node)
        out: dict[str, yaml.Node] = {}
        for key_node, value_node in node.value:
            key = str(key_node.value)
            dotted = f"{where}.{key}" if where != "a clip" else key
            if key not in keys:
                self.fail(f"unknown key '{dotted}' (known: {', '.join(keys)})", key_node)
            if key in out:
                self.fail(f"duplicate key '{dotted}' (first on line {out[key].start_mark.line})", key_node)
            out[key] = value_node
        return out

    def number(self, node: yaml.Node, where: str, unit: str = "") -> float:
        value = self.value(node) if isinstance(node, yaml.ScalarNode) else None
        if not is_number(value):
            shown = self.value(node) if node is not None else None
            self.fail(f"{where} must be a number{unit}, got {shown!r}", node)
        return float(value)

    def clip(self, node: yaml.Node | None) -> None:
        if node is None:
            self.fail("a clip must be a YAML mapping (name, duration, keyframes), the file is empty", None)
        top = self.mapping(node, "a clip", _CLIP_KEYS)
        for key in ("duration", "keyframes"):
            if key not in top:
                self.fail(f"missing required key '{key}'", node)
        if "name" in top:
            name = self.value(top["name"])
            if not isinstance(name, str) or not name:
                self.fail(f"name must be a string, got {name!r}", top["name"])
            if name == WALK:
                self.fail("name 'walk' is the walk cycle's: choose another name", top["name"])
        if "anchor_feet" in top and not isinstance(self.value(top["anchor_feet"]), bool):
            self.fail(f"anchor_feet must be true or false, got {self.value(top['anchor_feet'])!r}", top["anchor_feet"])
        duration = self.number(top["duration"], "duration", " of seconds")
        if duration < 0:
            self.fail(f"duration must not be negative, got {duration:g}", top["duration"])
        self.keyframes(top["keyframes"], duration)

    def keyframes(self, node: yaml.Node, duration: float) -> None:
        if not isinstance(node, yaml.SequenceNode) or not node.value:
            self.fail("keyframes must be a non-empty list of {time, root, joints}", node)
        previous = None
        for i, entry in enumerate(node.value):
            where = f"keyframes[{i}]"
            frame = self.mapping(entry, where, _KEYFRAME_KEYS)
            if "time" not in frame:
                self.fail(f"{where}: missing required key 'time'", entry)
            time = self.number(frame["time"], f"{where}.time", " of seconds")
            if i == 0 and time != 0.0:
                self.fail(f"{where}.time must be 0 (the first keyframe), got {time:g}", frame["time"])
            if previous is not None and time <= previous:
                self.fail(f"{where}.time must be later than the keyframe before ({previous:g}), got {time:g}",
                          frame["time"])
            last = i == len(node.value) - 1
            if last and i > 0 and abs(time - duration) > 1e-9:
                self.fail(f"{where}.time must equal the duration ({duration:g}) in the last keyframe, got {time:g}",
                          frame["time"])
            previous = time
            if "root" in frame:
                self.root(frame["root"], f"{where}.root")
            if "joints" in frame:
                self.joints(frame["joints"], f"{where}.joints")

    def root(self, node: yaml.Node, where: str) -> None:
        if isinstance(node, yaml.ScalarNode) and self.value(node) is None:
            return
        root = self.mapping(node, where, _ROOT_KEYS)
        for key in ("forward", "left"):
            if key in root:
                self.number(root[key], f"{where}.{key}", " of metres")
        if "rotation" in root:
            self.angles(root["rotation"], f"{where}.rotation")

    def joints(self, node: yaml.Node, where: str) -> None:
        if isinstance(node, yaml.ScalarNode) and self.value(node) is None:
            return
        if not isinstance(node, yaml.MappingNode):
            self.fail(f"{where} must be a mapping of joint: angles, got {self.value(node)!r}", node)
        for key_node, value_node in node.value:
            joint = str(key_node.value)
            if joint not in JOINT_NAMES:
                known = ", ".join(BALL_JOINTS + HINGE_JOINTS)
                self.fail(f"{where}: unknown joint '{joint}' (joints: {known})", key_node)
            if joint in HINGE_SIGN:
                self.number(value_node, f"{where}.{joint}", " of degrees (a hinge's bend)")
            else:
                self.angles(value_node, f"{where}.{joint}")

    def angles(self, node: yaml.Node, where: str) -> None:
        if isinstance(node, yaml.ScalarNode) and self.value(node) is None:
            return  # no rotation: the rest pose
        for key, value in self.mapping(node, where, _AXES).items():
            self.number(value, f"{where}.{key}", " of degrees")


