"""The Foxglove layout shipped with hri (:mod:`hri.view.foxglove_layout`): the file is the one
the SDK builds, and every topic and field it shows is one the MCAP writer writes."""

from __future__ import annotations

import json
import re

import pytest

from hri.view.foxglove_layout import PRESET_TREES, layout_json, main, shipped_path
from hri.view.channel_writer import SAFETY_SCHEMA, TOPICS, TREE_SCHEMA


def _paths(node) -> list[str]:
    """Every message path ("value") and rendered topic in a layout's JSON."""
    if isinstance(node, dict):
        found = [node[key] for key in ("value", "topicToRender") if isinstance(node.get(key), str)]
        return found + [path for value in node.values() for path in _paths(value)]
    if isinstance(node, list):
        return [path for value in node for path in _paths(value)]
    return []


def test_the_shipped_layout_is_the_one_the_sdk_builds():
    assert shipped_path().read_text() == layout_json()


def test_every_path_of_the_layout_is_a_topic_and_field_the_mcap_writer_writes():
    paths = _paths(json.loads(layout_json(("worker", "inspector", "robot"))))
    assert len(paths) >= 9
    trees = {f"/trees/{name}" for name in ("worker", "inspector", "robot")}
    for path in paths:
        topic, _, field = path.partition(".")
        assert topic in TOPICS or topic in trees, path
        if topic == "/safety":
            assert field in SAFETY_SCHEMA["properties"], path
        elif topic in trees:
            assert re.fullmatch(r"nodes\[0\]\.(\w+)", field) and field.split(".")[1] in \
                TREE_SCHEMA["properties"]["nodes"]["items"]["properties"], path
    assert {"/trees/worker.nodes[0].status", "/safety.separation_m", "/safety.required_m", "/events"} <= set(paths)


def test_the_layout_writer_names_other_trees_and_overwrites_nothing(tmp_path, capsys):
    out = tmp_path / "two.json"
    assert main([str(out), "--trees", "worker", "inspector", "robot"]) == 0
    assert "/trees/inspector.nodes[0].status" in _paths(json.loads(out.read_text()))
    assert "/trees/person.nodes[0].status" in _paths(json.loads(layout_json(PRESET_TREES)))
    with pytest.raises(SystemExit) as refused:
        main([str(out)])
    assert refused.value.code == 2 and "exists, not overwritten" in capsys.readouterr().err
