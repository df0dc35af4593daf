"""actor/actor_protocol.h describes the same bytes as actor/protocol.py.

A small C program includes the header, prints sizeof/offsetof of every field, and encodes a
message with known values; Python compares the layout computed from its struct formats and
decodes the C bytes.
"""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from hri.actor import protocol
from hri.actor.protocol import (ACTION_FORMAT, ACTION_SIZE, FEEDBACK_FORMAT, FEEDBACK_SIZE,
                                ActionMessage, ActorFailure, ActorState, FeedbackMessage)
from hri.base.geometry import Pose

HEADER = Path(protocol.__file__).with_name("actor_protocol.h")

# field names in the order of the struct format's items (a repeat count like "3d" is one field)
ACTION_FIELDS = ["magic", "version", "state", "sequence", "reserved", "animation_speed",
                 "target_position", "target_orientation", "animation_name"]
FEEDBACK_FIELDS = ["magic", "version", "state", "sequence", "failure", "reserved", "sim_time", "progress",
                   "current_position", "current_orientation"]

PROGRAM = r"""
#include <stdio.h>
#include <string.h>
#include "actor_protocol.h"

#define FIELD(type, name) \
    printf("%s %s %zu %zu\n", #type, #name, offsetof(struct type, name), \
           sizeof(((struct type *)0)->name))

static void set_pose(double *position, double *orientation) {
    position[0] = 1.25; position[1] = -2.5; position[2] = 0.0078125;
    orientation[0] = 0.0; orientation[1] = 0.0; orientation[2] = 0.6; orientation[3] = 0.8;
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "action") == 0) {
        struct hri_action_message m;
        memset(&m, 0, sizeof m);
        m.magic = HRI_ACTION_MAGIC;
        m.version = HRI_PROTOCOL_VERSION;
        m.state = HRI_ACTOR_MOVEMENT;
        m.sequence = 0x01020304u;
        m.animation_speed = 1.75;
        set_pose(m.target_position, m.target_orientation);
        strcpy(m.animation_name, "walk \xc3\xa4");
        fwrite(&m, sizeof m, 1, stdout);
        return 0;
    }
    if (argc > 1 && strcmp(argv[1], "feedback") == 0) {
        struct hri_feedback_message m;
        memset(&m, 0, sizeof m);
        m.magic = HRI_FEEDBACK_MAGIC;
        m.version = HRI_PROTOCOL_VERSION;
        m.state = HRI_ACTOR_ANIMATION;
        m.sequence = 4000000000u;
        m.failure = HRI_FAILURE_NOT_WALK_CYCLE;
        m.sim_time = 12.5;
        m.progress = 0.375;
        set_pose(m.current_position, m.current_orientation);
        fwrite(&m, sizeof m, 1, stdout);
        return 0;
    }
    printf("size hri_action_message %zu\n", sizeof(struct hri_action_message));
    printf("size hri_feedback_message %zu\n", sizeof(struct hri_feedback_message));
    printf("define HRI_ACTION_SIZE %d\n", HRI_ACTION_SIZE);
    printf("define HRI_FEEDBACK_SIZE %d\n", HRI_FEEDBACK_SIZE);
    printf("define HRI_ACTION_MAGIC %u\n", HRI_ACTION_MAGIC);
    printf("define HRI_FEEDBACK_MAGIC %u\n", HRI_FEEDBACK_MAGIC);
    printf("define HRI_PROTOCOL_VERSION %u\n", HRI_PROTOCOL_VERSION);
    printf("define HRI_ANIMATION_NAME_SIZE %d\n", HRI_ANIMATION_NAME_SIZE);
    printf("enum SETUP %d\nenum IDLE %d\nenum MOVEMENT %d\nenum ANIMATION %d\n",
           HRI_ACTOR_SETUP, HRI_ACTOR_IDLE, HRI_ACTOR_MOVEMENT, HRI_ACTOR_ANIMATION);
    printf("failure NONE %d\nfailure UNKNOWN_ANIMATION %d\nfailure NOT_AN_ANIMATION %d\n"
           "failure INVALID_SPEED %d\nfailure NOT_WALK_CYCLE %d\nfailure INVALID_STATE %d\nfailure BLOCKED %d\n",
           HRI_FAILURE_NONE, HRI_FAILURE_UNKNOWN_ANIMATION, HRI_FAILURE_NOT_AN_ANIMATION,
           HRI_FAILURE_INVALID_SPEED, HRI_FAILURE_NOT_WALK_CYCLE, HRI_FAILURE_INVALID_STATE,
           HRI_FAILURE_BLOCKED);
    FIELD(hri_action_message, magic);
    FIELD(hri_action_message, version);
    FIELD(hri_action_message, state);
    FIELD(hri_action_message, sequence);
    FIELD(hri_action_message, reserved);
    FIELD(hri_action_message, animation_speed);
    FIELD(hri_action_message, target_position);
    FIELD(hri_action_message, target_orientation);
    FIELD(hri_action_message, animation_name);
    FIELD(hri_feedback_message, magic);
    FIELD(hri_feedback_message, version);
    FIELD(hri_feedback_message, state);
    FIELD(hri_feedback_message, sequence);
    FIELD(hri_feedback_message, failure);
    FIELD(hri_feedback_message, reserved);
    FIELD(hri_feedback_message, sim_time);
    FIELD(hri_feedback_message, progress);
    FIELD(hri_feedback_message, current_position);
    FIELD(hri_feedback_message, current_orientation);
    return 0;
}
"""

KNOWN_POSE = Pose(1.25, -2.5, 0.0078125, 0.0, 0.0, 0.6, 0.8)


def python_layout(fmt: str, names: list[str]) -> dict[str, tuple[int, int]]:
    """offset and size of every field, from struct.calcsize of prefixes of the format."""
    byte_order, items = fmt[0], re.findall(r"\d*[a-zA-Z]", fmt[1:])
    assert len(items) == len(names), (items, names)
    layout = {}
    for index, (name, item) in enumerate(zip(names, items)):
        offset = struct.calcsize(byte_order + "".join(items[:index]))
        layout[name] = (offset, struct.calcsize(byte_order + item))
    return layout


def _compile(tmp_path: Path, compiler_names: tuple[str, ...], source_name: str, flags: list[str]):
    compiler = next((shutil.which(name) for name in compiler_names if shutil.which(name)), None)
    if compiler is None:
        pytest.skip(f"no C/C++ compiler found ({', '.join(compiler_names)}): header not checked")
    source = tmp_path / source_name
    source.write_text(PROGRAM)
    binary = tmp_path / "layout"
    result = subprocess.run([compiler, *flags, "-Wall", "-Wextra", "-Werror", "-I",
                             str(HEADER.parent), str(source), "-o", str(binary)],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return binary


@pytest.fixture(scope="module")
def program(tmp_path_factory) -> Path:
    return _compile(tmp_path_factory.mktemp("header"), ("cc", "gcc", "clang"), "layout.c",
                    ["-std=c11", "-pedantic"])


def _run(binary: Path, *args: str) -> bytes:
    return subprocess.run([str(binary), *args], capture_output=True, check=True).stdout


def _c_layout(binary: Path) -> list[list[str]]:
    return [line.split() for line in _run(binary).decode().splitlines()]


def test_sizes_offsets_and_constants_match(program):
    lines = _c_layout(program)
    sizes = {words[1]: int(words[2]) for words in lines if words[0] == "size"}
    defines = {words[1]: int(words[2]) for words in lines if words[0] == "define"}
    enums = {words[1]: int(words[2]) for words in lines if words[0] == "enum"}
    failures = {words[1]: int(words[2]) for words in lines if words[0] == "failure"}
    fields = {(words[0], words[1]): (int(words[2]), int(words[3]))
              for words in lines if words[0].startswith("hri_")}

    assert sizes == {"hri_action_message": ACTION_SIZE, "hri_feedback_message": FEEDBACK_SIZE}
    assert ACTION_SIZE == 336 and FEEDBACK_SIZE == 88
    assert defines == {"HRI_ACTION_SIZE": ACTION_SIZE, "HRI_FEEDBACK_SIZE": FEEDBACK_SIZE,
                       "HRI_ACTION_MAGIC": protocol.ACTION_MAGIC,
                       "HRI_FEEDBACK_MAGIC": protocol.FEEDBACK_MAGIC,
                       "HRI_PROTOCOL_VERSION": protocol.PROTOCOL_VERSION,
                       "HRI_ANIMATION_NAME_SIZE": protocol.ANIMATION_NAME_SIZE}
    assert enums == {state.name: state.value for state in ActorState}
    assert failures == {failure.name: failure.value for failure in ActorFailure}

    for struct_name, fmt, names in (("hri_action_message", ACTION_FORMAT, ACTION_FIELDS),
                                    ("hri_feedback_message", FEEDBACK_FORMAT, FEEDBACK_FIELDS)):
        expected = python_layout(fmt, names)
        actual = {name: fields[(struct_name, name)] for name in names}
        assert actual == expected, struct_name
        # every byte belongs to exactly one field: no hidden padding anywhere
        covered = sorted(expected.values())
        end = 0
        for offset, size in covered:
            assert offset == end
            end = offset + size
        assert end == struct.calcsize(fmt)


def test_c_encoded_action_decodes_in_python(program):
    data = _run(program, "action")
    assert len(data) == ACTION_SIZE
    expected = ActionMessage(ActorState.MOVEMENT, "walk ä", 1.75, KNOWN_POSE, 0x01020304)
    assert ActionMessage.decode(data) == expected
    assert expected.encode() == data  # byte for byte, padding and name tail included


def test_c_encoded_feedback_decodes_in_python(program):
    data = _run(program, "feedback")
    assert len(data) == FEEDBACK_SIZE
    expected = FeedbackMessage(ActorState.ANIMATION, 0.375, KNOWN_POSE, 4000000000, 12.5,
                               ActorFailure.NOT_WALK_CYCLE)
    assert FeedbackMessage.decode(data) == expected
    assert expected.encode() == data


def test_header_compiles_as_cplusplus(tmp_path):
    binary = _compile(tmp_path, ("c++", "g++", "clang++"), "layout.cpp", ["-std=c++11"])
    assert _c_layout(binary)[0] == ["size", "hri_action_message", str(ACTION_SIZE)]
