"""``hri run --mcap``: the MCAP file of a seeded 60-s coexistence run read back with the ``mcap``
library and the protobuf schemas the file itself holds (independently of the writer), and
the same run without it: the same bits."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pybullet as p
import pytest
from mcap.reader import make_reader
from mcap_protobuf.decoder import DecoderFactory

from hri.base.errors import HriError
from hri.bt.status import statuses_at
from hri.cli.main import main
from hri.base.bodies import link_names
from hri.run.sim import Simulation, run_scenario
from hri.scenario.load import load_scenario
from hri.view.mcap_file import ChannelPublisher, McapFile

DURATION_S = 60.0
SEED = 10  # the person walks into the warning and stop zones within the 60 s
SCHEMAS = {"/scene": "foxglove.SceneUpdate", "/tf": "foxglove.FrameTransforms",
           "/robot/joint_states": "foxglove.JointStates", "/safety": "hri.Safety", "/events": "foxglove.Log",
           "/trees/person": "hri.TreeStatus", "/trees/robot": "hri.TreeStatus"}


class Truth:
    """The simulation's own tool pose and pelvis after every step, asked of its objects."""

    def __init__(self) -> None:
        self.at: dict[int, tuple] = {}

    def start(self, run) -> None:
        self.after_step(run)

    def after_step(self, run) -> None:
        sim = run._sim
        person = sim.people[0]
        root = person.plugin.pose if person.monitor.posed_in_step else person.plugin.pose_at(sim.now())
        self.at[round(sim.now() * 1e9)] = (sim.robot.tool_pose(), root)

    def finish(self, run) -> None: ...


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("mcap")
    truth = Truth()
    scenario = load_scenario("coexistence")
    run_scenario(scenario, DURATION_S, seed=SEED, out_dir=root / "with",
                 observers=[ChannelPublisher([McapFile(root / "run.mcap")]), truth])
    run_scenario(scenario, DURATION_S, seed=SEED, out_dir=root / "without")
    return root, truth


def _messages(path: Path) -> list[tuple[str, str, int, object]]:
    with path.open("rb") as stream:
        reader = make_reader(stream, decoder_factories=[DecoderFactory()])
        out = []
        for schema, channel, message in reader.iter_messages(log_time_order=False):
            out.append((channel.topic, schema.name, message.log_time, message))
        return out


def _decoded(path: Path, topic: str) -> list[tuple[int, object]]:
    with path.open("rb") as stream:
        reader = make_reader(stream, decoder_factories=[DecoderFactory()])
        return [(message.log_time, decoded)
                for _s, _c, message, decoded in reader.iter_decoded_messages(topics=[topic])]


def _json(path: Path, topic: str) -> list[dict]:
    with path.open("rb") as stream:
        return [json.loads(m.data) for _s, _c, m in make_reader(stream).iter_messages(topics=[topic])]


def test_every_channel_is_there_with_its_schema_in_time_order(runs) -> None:
    root, _truth = runs
    messages = _messages(root / "run.mcap")
    schemas = {topic: name for topic, name, _t, _m in messages}
    assert schemas == SCHEMAS
    for topic in SCHEMAS:
        times = [t for name, _s, t, _m in messages if name == topic]
        assert times == sorted(times), topic
        assert times[-1] <= DURATION_S * 1e9
    samples = [t for name, _s, t, _m in messages if name == "/tf"]
    assert len(samples) == int(DURATION_S * 30) + 1  # 30 Hz from time 0


def test_tool_and_pelvis_at_sampled_times_are_the_simulations(runs) -> None:
    root, truth = runs
    samples = _decoded(root / "run.mcap", "/tf")
    picked = samples[:: len(samples) // 20][:20]
    assert len(picked) == 20
    for log_time, message in picked:
        frames = {tf.child_frame_id: tf for tf in message.transforms}
        tool, pelvis = truth.at[log_time]
        for frame, pose in (("robot/tool", tool), ("person/pelvis", pelvis)):
            tf = frames[frame]
            rotation = (tf.rotation.x, tf.rotation.y, tf.rotation.z, tf.rotation.w)
            if sum(a * b for a, b in zip(rotation, pose.orientation)) < 0.0:  # q and -q: one rotation
                rotation = tuple(-c for c in rotation)
            got = (tf.translation.x, tf.translation.y, tf.translation.z, *rotation)
            assert got == pytest.approx(pose.position + pose.orientation, abs=1e-6), (log_time, frame)


def test_the_events_are_those_of_events_jsonl(runs) -> None:
    root, _truth = runs
    logged = [json.loads(line) for line in (root / "with" / "events.jsonl").read_text().splitlines()]
    read = _decoded(root / "run.mcap", "/events")
    assert [json.loads(message.message) for _t, message in read] == logged
    assert [t for t, _m in read] == [round(event["t"] * 1e9) for event in logged]
    assert all(message.name == event["event"] for (_t, message), event in zip(read, logged))


def test_the_tree_statuses_at_sampled_times_are_what_render_run_draws(runs) -> None:
    """At 20 times, each tree's newest /trees message gives every node the status ``hri render
    --run`` replays from events.jsonl (hri.bt.status.statuses_at)."""
    root, _truth = runs
    events = [json.loads(line) for line in (root / "with" / "events.jsonl").read_text().splitlines()]
    for tree in ("person", "robot"):
        with (root / "run.mcap").open("rb") as stream:
            messages = [(m.log_time, json.loads(m.data)) for _s, _c, m in
                        make_reader(stream).iter_messages(topics=[f"/trees/{tree}"])]
        legend, _ = statuses_at(events, tree, 0.0)
        assert [node["id"] for node in messages[0][1]["nodes"]] == legend["nodes"]
        for k in range(20):
            t = DURATION_S * (k + 0.5) / 20
            newest = [nodes for log_time, nodes in messages if log_time <= round(t * 1e9)][-1]
            assert [node["status"] for node in newest["nodes"]] == statuses_at(events, tree, t)[1], (tree, t)


def test_safety_and_trees_are_plottable_and_complete(runs) -> None:
    root, _truth = runs
    safety, trees = _json(root / "run.mcap", "/safety"), _json(root / "run.mcap", "/trees/robot")
    assert {"zone_level", "velocity_fraction", "separation_m", "protective_stop"} <= set(safety[-1])
    assert all(isinstance(row["velocity_fraction"], float) and row["zone_level"] in (0, 1, 2) for row in safety[1:])
    assert {row["zone_level"] for row in safety} == {0, 1, 2}
    assert any(row["protective_stop"] for row in safety)
    assert trees and all(len(message["nodes"]) == len(trees[0]["nodes"]) for message in trees)
    assert {node["status"] for message in trees for node in message["nodes"]} >= {"RUNNING", "SUCCESS"}


def test_the_same_bits_with_and_without_mcap(runs) -> None:
    root, _truth = runs
    with_, without = root / "with", root / "without"
    clock = ("wall_time_s", "real_time_factor")
    stats = [{k: v for k, v in json.loads((d / "stats.json").read_text()).items() if k not in clock}
             for d in (with_, without)]
    assert stats[0] == stats[1]
    for name in ("events.jsonl", "trajectory.csv"):
        assert (with_ / name).read_bytes() == (without / name).read_bytes(), name


def test_an_existing_file_or_a_folder_is_refused(tmp_path) -> None:
    (tmp_path / "old.mcap").write_bytes(b"mine")
    with pytest.raises(HriError, match="exists"):
        McapFile(tmp_path / "old.mcap")
    with pytest.raises(HriError, match="is a folder"):
        McapFile(tmp_path)
    assert (tmp_path / "old.mcap").read_bytes() == b"mine"
    assert McapFile(tmp_path / "old.mcap", force=True).path == tmp_path / "old.mcap"


def _world_point(transform, position) -> np.ndarray:
    q = transform.rotation
    rotation = np.array(p.getMatrixFromQuaternion((q.x, q.y, q.z, q.w))).reshape(3, 3)
    t = transform.translation
    return rotation @ np.array(position) + np.array([t.x, t.y, t.z])


def test_the_scene_shapes_placed_by_the_transforms_lie_in_their_links(tmp_path) -> None:
    """Every robot and person link's primitives, put where the last /tf puts their frame,
    have their centres inside PyBullet's bounding box of that link at the end of the run."""
    path = tmp_path / "scene.mcap"
    boxes = {}
    with Simulation(load_scenario("collaboration"), seed=1, observers=[ChannelPublisher([McapFile(path)])]) as sim:
        sim.run(3.0)
        for owner, body in (("robot", sim.robot.body_id), (sim.people[0].name, sim.people[0].plugin.body_id)):
            for link, name in link_names(sim.client, body).items():
                boxes[f"{owner}/{name}"] = tuple(map(np.array, p.getAABB(body, link, physicsClientId=sim.client)))
    scene = _decoded(path, "/scene")[0][1]
    frames = {tf.child_frame_id: tf for tf in _decoded(path, "/tf")[-1][1].transforms}
    checked = 0
    for entity in scene.entities:
        if entity.frame_id not in boxes:
            continue
        low, high = boxes[entity.frame_id]
        for shape in (*entity.cubes, *entity.spheres, *entity.cylinders):
            centre = _world_point(frames[entity.frame_id], (shape.pose.position.x, shape.pose.position.y,
                                                            shape.pose.position.z))
            assert np.all(centre >= low - 1e-3) and np.all(centre <= high + 1e-3), entity.frame_id
            checked += 1
    assert checked >= 30  # the arm's links and the person's (spheres, capsules, boxes)


@pytest.fixture(scope="module")
def kept_run(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("kept") / "run"
    assert main(["run", "coexistence", "--seed", "10", "--duration", "15", "--out", str(folder), "--json"]) == 0
    return folder


def test_export_writes_the_kept_runs_mcap(kept_run, tmp_path, capsys) -> None:
    capsys.readouterr()
    assert main(["export", str(kept_run), "-o", str(tmp_path / "run.mcap")]) == 0
    assert "rerun with the same statistics" in capsys.readouterr().out
    def unplaced(event: dict) -> dict:  # the rerun reads the trees from the folder's inputs/
        return {k: v for k, v in event.items() if k != "file"}

    logged = [unplaced(json.loads(line)) for line in (kept_run / "events.jsonl").read_text().splitlines()]
    read = _decoded(tmp_path / "run.mcap", "/events")
    assert [unplaced(json.loads(message.message)) for _t, message in read] == logged


def test_export_of_a_run_this_hri_does_not_repeat_writes_nothing(kept_run, tmp_path, capsys) -> None:
    """A kept run whose statistics the rerun does not give (here: stats.json changed by hand)."""
    copy = tmp_path / "run"
    shutil.copytree(kept_run, copy)
    stats = json.loads((copy / "stats.json").read_text())
    stats["robot_cycles"] += 1
    (copy / "stats.json").write_text(json.dumps(stats))
    assert main(["export", str(copy), "-o", str(tmp_path / "run.mcap")]) == 1
    assert "the rerun's statistics differ from stats.json (robot_cycles)" in capsys.readouterr().err
    assert not (tmp_path / "run.mcap").exists() and not list(tmp_path.glob(".run.mcap*"))


def test_a_bare_mcap_goes_into_the_out_folder_with_the_run(tmp_path) -> None:
    """``--out DIR --mcap``: DIR/run.mcap is one of the run's files, so a later run put there
    with --force and no --mcap takes it away with the rest of the earlier run."""
    folder = tmp_path / "run"
    assert main(["run", "coexistence", "--duration", "1", "--out", str(folder), "--mcap", "--json"]) == 0
    assert (folder / "run.mcap").is_file() and not [f for f in folder.iterdir() if f.name.startswith(".")]
    assert {name for name, *_ in _messages(folder / "run.mcap")} == set(SCHEMAS)
    assert main(["run", "coexistence", "--duration", "1", "--out", str(folder), "--force", "--json"]) == 0
    assert not (folder / "run.mcap").exists()
    assert main(["run", "coexistence", "--duration", "1", "--mcap"]) == 1  # no --out: a path is needed


def test_a_writer_that_fails_to_start_leaves_no_file(tmp_path, monkeypatch) -> None:
    """Set-up fails after the file was opened (here: the scene): the run's error, no file."""
    def broken(self, run) -> None:
        raise HriError("the scene cannot be drawn")

    monkeypatch.setattr(ChannelPublisher, "_write_scene", broken)
    with pytest.raises(HriError, match="the scene"):
        with Simulation(load_scenario("coexistence"), seed=1, observers=[ChannelPublisher([McapFile(tmp_path / "x.mcap")])]) as sim:
            sim.run(0.1)
    assert list(tmp_path.iterdir()) == []
