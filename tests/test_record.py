"""``hri run ... --record``: headless videos whose frames show the person and the robot where
the camera's projection of their poses says, at the simulated time each frame claims."""

import json
import os

import imageio_ffmpeg
import numpy as np
import pybullet as p
import pytest
from PIL import Image

from hri.base.errors import HriError
from hri.view.record import Recorder, parse_size, project, render_frame, room_camera
from hri.scenario.load import load_scenario
from hri.run.sim import Simulation
from hri.run.stats import WALL_CLOCK_KEYS
from hri.workcell.layout import Room
from hri.workcell.world import build_world, draw_zones
from test_cli import _one_error_line as one_error_line
from test_cli import hri

WIDTH, HEIGHT, FPS, DURATION = 800, 450, 15, 30  # the CLI's defaults, and the 30 s
OVERLAY = (240, 80)  # at most this wide and high in the bottom-left corner at 800x450


def patch(image: np.ndarray, pixel: np.ndarray, half: int = 1) -> np.ndarray:
    """Mean colour of the (2 half + 1)^2 pixels around ``pixel`` (column, row): robust to H.264."""
    col, row = int(pixel[0]), int(pixel[1])
    return image[row - half:row + half + 1, col - half:col + half + 1].reshape(-1, 3).astype(float).mean(axis=0)


def difference(a: np.ndarray, b: np.ndarray, pixel: np.ndarray) -> float:
    return float(np.abs(patch(a, pixel) - patch(b, pixel)).mean())


def empty_workcell(scenario, width: int, height: int) -> np.ndarray:
    """The same camera on the room, furniture and zones only: no person, no robot."""
    client = p.connect(p.DIRECT)
    try:
        build_world(client, scenario.room, scenario.furniture)
        draw_zones(client, scenario.zones)
        return render_frame(client, *room_camera(scenario.room, width, height), width, height)
    finally:
        p.disconnect(physicsClientId=client)


def body_points(sim: Simulation) -> tuple[np.ndarray, np.ndarray]:
    """World points inside the person (pelvis, chest, neck) and the robot (every link's centre of mass)."""
    c, person, robot = sim.client, sim.plugin.body_id, sim.robot.body_id
    person_points = [p.getBasePositionAndOrientation(person, physicsClientId=c)[0]]
    person_points += [p.getLinkState(person, link, physicsClientId=c)[0] for link in (1, 2)]
    robot_points = [p.getLinkState(robot, link, physicsClientId=c)[0]
                    for link in range(p.getNumJoints(robot, physicsClientId=c))]
    return np.array(person_points), np.array(robot_points)


# --- the acceptance command ------------------------------------------------------

@pytest.fixture(scope="module")
def clip(tmp_path_factory):
    """``hri run coexistence --duration 30 --record clip.mp4``, decoded: one frame a second kept."""
    folder = tmp_path_factory.mktemp("record")
    result = hri("run", "coexistence", "--duration", str(DURATION), "--record", "clip.mp4", cwd=folder)
    assert result.returncode == 0, result.stderr
    reader = imageio_ffmpeg.read_frames(str(folder / "clip.mp4"))
    meta = next(reader)
    kept, count, changes = {}, 0, []
    previous = None
    for raw in reader:
        frame = np.frombuffer(raw, np.uint8).reshape(HEIGHT, WIDTH, 3)
        if count % FPS == 0:
            kept[count // FPS] = frame
            if previous is not None:
                changes.append(int(np.abs(frame.astype(int) - previous).max()))
            previous = frame.astype(int)
        count += 1
    return {"folder": folder, "result": result, "meta": meta, "seconds": kept, "count": count, "changes": changes}


def test_record_writes_an_h264_mp4_frame_by_frame(clip):
    assert sorted(os.listdir(clip["folder"])) == ["clip.mp4"]  # no temporary file left behind
    assert "Traceback" not in clip["result"].stderr
    assert clip["result"].stdout.strip()  # the statistics table, as without --record
    meta = clip["meta"]
    assert meta["codec"] == "h264" and meta["size"] == (WIDTH, HEIGHT) and meta["fps"] == FPS
    assert clip["count"] == DURATION * FPS + 1  # frame k at t = k / fps, both ends included
    assert len(clip["changes"]) == DURATION and min(clip["changes"]) > 50  # the picture moves every second


@pytest.fixture(scope="module")
def poses():
    """Where the person's and the robot's points are at each whole second of the same run."""
    scenario = load_scenario("coexistence")
    points = {}
    with Simulation(scenario, seed=0) as sim:
        points[0] = body_points(sim)
        for second in range(1, DURATION + 1):
            sim.run(1.0)  # 240 physics steps: frame 15 s is rendered right after the last
            points[second] = body_points(sim)
    return scenario, points


def test_frames_show_the_person_and_the_robot_where_their_poses_project(clip, poses):
    scenario, points = poses
    camera = room_camera(scenario.room, WIDTH, HEIGHT)
    background = empty_workcell(scenario, WIDTH, HEIGHT)
    frames = clip["seconds"]

    def pixels(xyz: np.ndarray) -> np.ndarray:
        px = project(xyz, *camera, WIDTH, HEIGHT)
        assert np.all((px >= 2) & (px < (WIDTH - 2, HEIGHT - 2))), px
        assert not np.any((px[:, 0] < OVERLAY[0]) & (px[:, 1] > HEIGHT - OVERLAY[1])), "under the overlay"
        return px

    floor = pixels(np.array([(3.5, 4.8, 0.0)]))[0]  # open floor, far from everyone's path
    for second, frame in frames.items():
        assert difference(frame, background, floor) < 6, second

    def pelvis(second: int) -> np.ndarray:
        return points[second][0][0][:2]

    # Seconds in which the person walks: 2 s earlier and later they stood over 1 m away, so a
    # video off by a second or two (or a mirrored camera) puts the person somewhere else.
    walking = [s for s in range(2, DURATION - 1)
               if min(np.linalg.norm(pelvis(s) - pelvis(s + d)) for d in (-2, 2)) > 1.0]
    assert len(walking) >= 3, walking
    for second in walking:
        person, robot = (pixels(xyz) for xyz in points[second])
        frame = frames[second]
        person_diff = [difference(frame, background, px) for px in person]
        assert max(person_diff) > 35, (second, person_diff)
        robot_diff = [difference(frame, background, px) for px in robot]
        assert sum(d > 30 for d in robot_diff) >= 3, (second, robot_diff)
        for other in (second - 2, second + 2):  # the person has walked away from these pixels
            away = [difference(frames[other], background, px) for px in person]
            assert max(away) < 12, (second, other, away)


def test_project_matches_the_renderer_pixel_for_pixel():
    width, height = 320, 180
    view, projection = room_camera(Room((8.0, 6.0), 1.0), width, height)
    marks = {(1.0, 0.0, 0.0): (1.0, 1.0, 0.5), (0.0, 1.0, 0.0): (7.0, 5.0, 0.2), (0.0, 0.0, 1.0): (6.5, 1.0, 1.5)}
    client = p.connect(p.DIRECT)
    try:
        for color, centre in marks.items():
            shape = p.createVisualShape(p.GEOM_BOX, halfExtents=(0.06,) * 3, rgbaColor=(*color, 1.0),
                                        physicsClientId=client)
            p.createMultiBody(0.0, -1, shape, centre, physicsClientId=client)
        image = render_frame(client, view, projection, width, height).astype(int)
    finally:
        p.disconnect(physicsClientId=client)
    for color, centre in marks.items():
        channel = int(np.argmax(color))
        others = np.delete(image, channel, axis=2).max(axis=2)
        rows, cols = np.nonzero((image[:, :, channel] > 60) & (others < 30))
        assert len(rows) >= 4, color
        expected = project(np.array([centre]), view, projection, width, height)[0]
        assert np.hypot(cols.mean() + 0.5 - expected[0], rows.mean() + 0.5 - expected[1]) < 1.5, (color, expected)


def test_camera_frames_the_whole_room():
    for width, height in ((800, 450), (480, 270), (400, 400), (270, 480)):
        camera = room_camera(Room((8.0, 6.0), 1.0), width, height)
        corners = np.array([(x, y, z) for x in (-0.1, 8.1) for y in (-0.1, 6.1) for z in (0.0, 1.0)])
        px = project(corners, *camera, width, height)
        assert np.all(px >= 0) and np.all(px <= (width, height))
        assert px[:, 0].max() - px[:, 0].min() > 0.8 * width or px[:, 1].max() - px[:, 1].min() > 0.8 * height


# --- gif, failed runs, determinism ---------------------------------------------------------

def read_gif(path) -> tuple[list[np.ndarray], list[int], dict]:
    with Image.open(path) as gif:
        info = dict(gif.info)
        frames, durations = [], []
        for index in range(gif.n_frames):
            gif.seek(index)
            frames.append(np.asarray(gif.convert("RGB")))
            durations.append(gif.info["duration"])
    return frames, durations, info


def test_record_gif_small(tmp_path):
    result = hri("run", "coexistence", "--duration", "3", "--json", "--record", "small.gif",
                 "--record-size", "320x180", "--record-fps", "10", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["sim_time_s"] == pytest.approx(3.0)  # stdout stays JSON
    assert sorted(os.listdir(tmp_path)) == ["small.gif"]
    frames, durations, info = read_gif(tmp_path / "small.gif")
    assert frames[0].shape == (180, 320, 3) and info.get("loop") == 0
    assert sum(durations) == 31 * 100 and len(frames) > 10  # 31 frames of 0.1 s (equal ones merged)
    assert np.abs(frames[0].astype(int) - frames[-1]).max() > 50
    # The last frame (drawn from the changed rectangles of all before it) is what the camera sees at 3 s.
    scenario = load_scenario("coexistence")
    with Simulation(scenario, seed=0) as sim:
        sim.run(3.0)
        expected = render_frame(sim.client, *room_camera(scenario.room, 320, 180), 320, 180)
    mask = np.ones((180, 320), bool)
    mask[180 - 50:, :160] = False  # the overlay
    error = np.abs(frames[-1].astype(int) - expected)[mask]
    assert error.mean() < 4 and np.percentile(error, 99) < 40


class Interrupt:
    """An observer that presses Ctrl-C at ``at_s``, after checking nothing is under the final name yet."""

    def __init__(self, video, at_s: float) -> None:
        self.video, self.at_s = video, at_s
        self.temporary: list[str] = []

    def start(self, run) -> None:
        pass

    def after_step(self, run) -> None:
        if run.now() >= self.at_s:
            assert not self.video.exists()
            self.temporary = [n for n in os.listdir(self.video.parent) if n.startswith(f".{self.video.name}.")]
            raise KeyboardInterrupt

    def finish(self, run) -> None:
        pass


def test_interrupted_run_still_gets_its_video(tmp_path):
    video = tmp_path / "cut.gif"
    recorder, interrupt = Recorder(video, 15.0, (160, 90)), Interrupt(video, 1.0)
    with Simulation(load_scenario("coexistence"), seed=0, observers=[recorder, interrupt]) as sim:
        with pytest.raises(KeyboardInterrupt):
            sim.run(10.0)
        assert sim.stats.complete is False
    assert len(interrupt.temporary) == 1  # written beside the target, under a hidden name
    assert sorted(os.listdir(tmp_path)) == ["cut.gif"] and recorder.frames == 16  # t = 0 .. 1 s
    assert sum(read_gif(video)[1]) == 1070  # 16 frames of 1/15 s, in whole hundredths


def test_recording_does_not_change_the_run(tmp_path):
    def run(observers):
        with Simulation(load_scenario("coexistence"), seed=3, observers=observers) as sim:
            stats = sim.run(5.0)
            return ({k: v for k, v in stats.items() if k not in WALL_CLOCK_KEYS}, sim.trajectory.items,
                    sim.events.events)

    recorder = Recorder(tmp_path / "same.mp4", 15.0, (160, 90))
    assert run([recorder]) == run([])
    assert recorder.frames == 76 and (tmp_path / "same.mp4").stat().st_size > 1000


# --- options ------------------------------------------------------------------------------

@pytest.mark.parametrize("args, start", [
    (["--record", "clip.avi"], "--record: "),
    (["--record", "missing/clip.mp4"], "--record: "),
    (["--record", "clip.mp4", "--record-size", "800x451"], "--record-size: "),
    (["--record", "clip.mp4", "--record-fps", "0"], "--record-fps: "),
    (["--record", "clip.gif", "--record-fps", "55"], "--record-fps: "),
])
def test_bad_record_options_give_one_line(tmp_path, args, start):
    error = one_error_line(hri("run", "coexistence", "--duration", "1", *args, cwd=tmp_path))
    assert error.startswith(start)
    assert os.listdir(tmp_path) == []  # refused before the simulation started


@pytest.mark.parametrize("text", ["800", "800x", "x450", "-800x450", "800x450x2", "8x8", "5000x450", "801x450",
                                  "1e3x500"])
def test_parse_size_rejects(text):
    with pytest.raises(HriError, match="^--record-size: "):
        parse_size(text)


def test_parse_size_accepts():
    assert parse_size("800x450") == (800, 450)
    assert parse_size(" 16X4096 ") == (16, 4096)


@pytest.mark.parametrize("fps", [0.0, -1.0, 61.0, float("nan"), float("inf")])
def test_recorder_rejects_fps(tmp_path, fps):
    with pytest.raises(HriError, match="^--record-fps: "):
        Recorder(tmp_path / "v.mp4", fps, (160, 90))


class Clock:
    """Just enough of a Simulation for the recorder's timing: ``now()`` after each physics step."""

    def __init__(self, rate_hz: int) -> None:
        self.steps, self.rate_hz = 0, rate_hz

    def now(self) -> float:
        return self.steps * (1.0 / self.rate_hz)


@pytest.mark.parametrize("fps, rate_hz", [(15.0, 240), (7.0, 240), (60.0, 50)])
def test_frame_k_is_taken_at_the_first_step_at_or_after_k_over_fps(tmp_path, monkeypatch, fps, rate_hz):
    recorder, clock, taken = Recorder(tmp_path / "t.mp4", fps, (160, 90)), Clock(rate_hz), []

    def record(sim, copies):
        taken.extend([sim.now()] * copies)
        recorder.frames += copies

    monkeypatch.setattr(recorder, "_record", record)
    record(clock, 1)  # what start() does at t = 0
    for _ in range(100 * rate_hz):  # 100 simulated seconds: no drift from adding up 1/fps
        clock.steps += 1
        recorder.after_step(clock)
    expected = [np.ceil(k / fps * rate_hz - 1e-6) / rate_hz for k in range(round(100 * fps) + 1)]
    assert taken == pytest.approx(expected, abs=1e-9)
