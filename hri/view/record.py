"""Headless video of a run: ``hri run SCENARIO --record clip.mp4`` (or ``clip.gif``).

:class:`Recorder` is an :class:`hri.run.sim.Observer`. It renders the workcell with PyBullet's
software renderer (TinyRenderer: no display, no GPU) from one fixed camera that frames the
whole room, one frame at simulated time 0 and then every ``1/fps`` simulated seconds (frame
``k`` shows time ``k/fps``), draws the room's x and y axes at its origin corner and a small
status overlay in the bottom-left corner, and streams
the frames into an H.264 ``.mp4`` (the ffmpeg binary of ``imageio-ffmpeg``) or an animated
``.gif`` (Pillow). Rendering only reads the scene, so a recorded run has the same statistics
as one without ``--record``.

The video is written to a hidden temporary file beside the target and renamed into place in
``finish``; a run that failed or was interrupted still gets the video of what was recorded.
Memory stays bounded for both formats: mp4 frames go straight into ffmpeg's pipe, gif frames
are encoded one by one (only the previous frame is kept, to write the changed rectangle).

The camera maths (:func:`camera_matrices`, :func:`project`, :func:`render_frame`) lives
here and nowhere else; :mod:`hri.view.snapshot` uses it for still pictures.
"""

from __future__ import annotations

import math
import os
import re
import struct
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np
import pybullet as p
from PIL import GifImagePlugin, Image, ImageDraw, ImageFont

from hri.base.errors import HriError
from hri.base.files import check_writable, close_into_place, hidden_file, plain_file_mode
from hri.workcell.layout import Room
from hri.workcell.world import WALL_THICKNESS

if TYPE_CHECKING:
    from hri.run.sim import RunView

SIZE_RANGE = (16, 4096)     # pixels, each of width and height
MAX_FPS = 60.0              # frames per simulated second
MAX_GIF_FPS = 50.0          # gif delays are whole 1/100 s; browsers slow down delays below 2/100 s
MP4_QUALITY = 7             # imageio-ffmpeg's 0..10 scale; 7 is libx264's crf 15
LIGHT_DIRECTION = (2.0, -1.0, 5.0)

# The fixed camera: looking at the room from beyond its +y wall, a little to the +x side
# (so the robot in the scenarios' y = 0 corner faces the camera), 50 degrees down.
VIEW_AZIMUTH_DEG = 100.0    # direction from the room's centre towards the camera, from +x
VIEW_ELEVATION_DEG = 50.0   # camera above the horizontal, seen from the room's centre
FOV_Y_DEG = 45.0
NEAR_M, FAR_M = 0.1, 100.0
FRAME_MARGIN = 0.04         # of the half-width/height, kept free around the room
FRAMED_HEIGHT_M = 2.0       # this high above the floor is in the picture (people, robot, shelves) ...
PERSON_WALL_GAP_M = 0.5     # ... except close to the walls, where no one stands


# --- options ----------------------------------------------------------------------------

def parse_size(text: str) -> tuple[int, int]:
    """``"WxH"`` as (width, height) in pixels: each 16..4096 and even (H.264's yuv420p needs
    even sizes; odd sizes are rejected rather than silently changed)."""
    match = re.fullmatch(r"\s*(\d+)\s*[xX]\s*(\d+)\s*", text)
    if not match:
        raise HriError(f"--record-size: expected WIDTHxHEIGHT in pixels (e.g. 800x450), got {text!r}")
    width, height = int(match[1]), int(match[2])
    low, high = SIZE_RANGE
    if not (low <= width <= high and low <= height <= high):
        raise HriError(f"--record-size: width and height must be within {low}..{high}, got {width}x{height}")
    if width % 2 or height % 2:
        raise HriError(f"--record-size: width and height must be even (H.264 video), got {width}x{height}")
    return width, height


def _check_fps(fps: float, suffix: str) -> float:
    fps = float(fps)
    limit = MAX_GIF_FPS if suffix == ".gif" else MAX_FPS
    if not (0.0 < fps <= limit):  # also rejects NaN
        raise HriError(f"--record-fps: must be > 0 and <= {limit:g} for {suffix}, got {fps:g}")
    return fps


def _check_path(path: Path) -> Path:
    path = Path(path)
    if path.suffix.lower() not in (".mp4", ".gif"):
        raise HriError(f"--record: the video must end in .mp4 or .gif, got {str(path)!r}")
    folder = path.parent
    if not folder.is_dir():
        raise HriError(f"--record: the folder {str(folder)!r} does not exist")
    if path.is_dir():
        raise HriError(f"--record: {str(path)!r} is a folder")
    check_writable(folder, "--record")  # now, not after the run
    return path


# --- camera -----------------------------------------------------------------------------

def _look_at(eye: np.ndarray, target: np.ndarray) -> np.ndarray:
    """OpenGL view matrix (4x4, row-major maths) with +z as the world's up."""
    forward = (target - eye) / np.linalg.norm(target - eye)
    right = np.cross(forward, (0.0, 0.0, 1.0))
    right /= np.linalg.norm(right)
    up = np.cross(right, forward)
    view = np.eye(4)
    view[0, :3], view[1, :3], view[2, :3] = right, up, -forward
    view[:3, 3] = -view[:3, :3] @ eye
    return view


def _perspective(fov_y_deg: float, aspect: float) -> np.ndarray:
    """OpenGL projection matrix (4x4), as ``p.computeProjectionMatrixFOV`` makes it."""
    f = 1.0 / math.tan(math.radians(fov_y_deg) / 2.0)
    return np.array([[f / aspect, 0.0, 0.0, 0.0],
                     [0.0, f, 0.0, 0.0],
                     [0.0, 0.0, (FAR_M + NEAR_M) / (NEAR_M - FAR_M), 2.0 * FAR_M * NEAR_M / (NEAR_M - FAR_M)],
                     [0.0, 0.0, -1.0, 0.0]])


def _flat(matrix: np.ndarray) -> list[float]:
    """PyBullet's flat 16 floats: column-major (OpenGL's order)."""
    return [float(v) for v in matrix.T.reshape(-1)]


def _ndc(points: np.ndarray, view: np.ndarray, projection: np.ndarray) -> np.ndarray:
    homogeneous = np.column_stack([points, np.ones(len(points))])
    clip = homogeneous @ (projection @ view).T
    return clip[:, :2] / clip[:, 3:4]


def camera_matrices(room_size: tuple[float, float], width: int, height: int, wall_height: float = 1.0,
                    top_m: float = FRAMED_HEIGHT_M) -> tuple[list[float], list[float]]:
    """View and projection matrices (PyBullet's flat lists) of the fixed camera that frames
    the whole room in a ``width x height`` image, centred, ``FRAME_MARGIN`` to spare: the
    walls, and up to ``top_m`` above the floor wherever a person can stand."""
    sx, sy = float(room_size[0]), float(room_size[1])
    t, inset = WALL_THICKNESS, PERSON_WALL_GAP_M  # the walls stand outside the floor
    corners = np.array([(x, y, z) for x in (-t, sx + t) for y in (-t, sy + t) for z in (0.0, wall_height)]
                       + [(x, y, top_m) for x in (inset, sx - inset) for y in (inset, sy - inset)])
    azimuth, elevation = math.radians(VIEW_AZIMUTH_DEG), math.radians(VIEW_ELEVATION_DEG)
    direction = np.array([math.cos(elevation) * math.cos(azimuth), math.cos(elevation) * math.sin(azimuth),
                          math.sin(elevation)])
    projection = _perspective(FOV_Y_DEG, width / height)
    target = np.array([sx / 2.0, sy / 2.0, 0.0])
    for _ in range(4):  # fit the distance, then move the target to centre the room; repeat
        distance = _fitting_distance(corners, target, direction, projection)
        view = _look_at(target + distance * direction, target)
        ndc = _ndc(corners, view, projection)
        centre = (ndc.max(axis=0) + ndc.min(axis=0)) / 2.0
        # Shift in the camera's right/up plane by the offset seen at the target's depth.
        half_height = distance * math.tan(math.radians(FOV_Y_DEG) / 2.0)
        target = target + half_height * (view[0, :3] * centre[0] * width / height + view[1, :3] * centre[1])
    view = _look_at(target + _fitting_distance(corners, target, direction, projection) * direction, target)
    return _flat(view), _flat(projection)


def room_camera(room: Room, width: int, height: int) -> tuple[list[float], list[float]]:
    """:func:`camera_matrices` for a scenario's room (its size and wall height)."""
    return camera_matrices(room.size, width, height, room.wall_height, max(FRAMED_HEIGHT_M, room.wall_height))


def _fitting_distance(corners: np.ndarray, target: np.ndarray, direction: np.ndarray,
                      projection: np.ndarray) -> float:
    """The smallest camera distance at which every corner projects inside the margin."""
    def fits(distance: float) -> bool:
        view = _look_at(target + distance * direction, target)
        in_front = np.all(view[2, :3] @ corners.T + view[2, 3] < -NEAR_M)  # else the projection wraps
        return bool(in_front and np.all(np.abs(_ndc(corners, view, projection)) <= 1.0 - FRAME_MARGIN))

    near, far = 0.5, 1.0
    while not fits(far):
        near, far = far, far * 2.0
    for _ in range(40):
        middle = (near + far) / 2.0
        near, far = (near, middle) if fits(middle) else (middle, far)
    return far


def project(points_xyz: np.ndarray, view: list[float], projection: list[float], width: int,
            height: int) -> np.ndarray:
    """Pixel coordinates (column, row; row 0 at the top, as in the image) of world points,
    shape (N, 2); pixel (c, r) covers [c, c+1) x [r, r+1)."""
    points = np.atleast_2d(np.asarray(points_xyz, dtype=float))
    v = np.asarray(view, dtype=float).reshape(4, 4).T
    pr = np.asarray(projection, dtype=float).reshape(4, 4).T
    ndc = _ndc(points, v, pr)
    return np.column_stack([(ndc[:, 0] + 1.0) / 2.0 * width, (1.0 - ndc[:, 1]) / 2.0 * height])


def render_frame(client: int, view: list[float], projection: list[float], width: int,
                 height: int) -> np.ndarray:
    """What the camera sees: an RGB image (height x width x 3, uint8), TinyRenderer."""
    _, _, rgba, _, _ = p.getCameraImage(width, height, view, projection, renderer=p.ER_TINY_RENDERER,
                                        lightDirection=LIGHT_DIRECTION, physicsClientId=client)
    return np.asarray(rgba, dtype=np.uint8).reshape(height, width, 4)[:, :, :3]


# --- overlay ----------------------------------------------------------------------------

def _font(height: int) -> ImageFont.ImageFont | ImageFont.FreeTypeFont:
    size = max(10, round(height / 28))
    try:
        return ImageFont.load_default(size)  # Pillow's scalable built-in font (needs FreeType)
    except (TypeError, OSError, ImportError):
        return ImageFont.load_default()      # the fixed bitmap font


def draw_overlay(rgb: np.ndarray, lines: list[str], font, min_width: int = 0) -> np.ndarray:
    """``rgb`` with ``lines`` in white on a darkened box in the bottom-left corner, which lies
    outside the room in the fixed camera's picture (the person and the robot stay visible).
    ``min_width`` keeps the box from changing width as the text changes."""
    pad = max(3, rgb.shape[0] // 90)
    text = "\n".join(lines)
    probe = ImageDraw.Draw(Image.new("RGB", (1, 1)))
    left, top, right, bottom = probe.multiline_textbbox((0, 0), text, font=font, spacing=pad)
    box_w, box_h = max(right + 2 * pad, min_width), bottom + 2 * pad
    out = rgb.copy()
    y0 = max(0, rgb.shape[0] - box_h)
    out[y0:, :box_w] = (out[y0:, :box_w] * 0.3).astype(np.uint8)
    image = Image.fromarray(out)
    ImageDraw.Draw(image).multiline_text((pad - left, y0 + pad - top), text, fill=(255, 255, 255), font=font,
                                         spacing=pad)
    return np.asarray(image)


AXIS_COLOUR = (20, 90, 255)  # blue: apart from the zones (orange, red) and the floor
AXIS_LENGTH_M = 1.5


def draw_axes(rgb: np.ndarray, view: list[float], projection: list[float], font) -> np.ndarray:
    """``rgb`` with the room's x and y axes drawn from its origin corner, 1 m long and labelled,
    so that a frame can be matched with the floor-plan plots (whose axes are x and y too): the
    fixed camera looks at the room from beyond its +y wall, turned against a plot."""
    height, width = rgb.shape[:2]
    corner = np.array([[0.0, 0.0, 0.01], [AXIS_LENGTH_M, 0.0, 0.01], [0.0, AXIS_LENGTH_M, 0.01]])
    origin, x_tip, y_tip = (tuple(point) for point in project(corner, view, projection, width, height))
    image = Image.fromarray(rgb)
    draw = ImageDraw.Draw(image)
    line_width = max(1, height // 150)
    for tip, label in ((x_tip, "x"), (y_tip, "y")):
        draw.line([origin, tip], fill=AXIS_COLOUR, width=line_width)
        draw.text(tip, label, fill=AXIS_COLOUR, font=font, anchor="mm")
    return np.asarray(image)


def overlay_box(font, height: int) -> tuple[int, int]:
    """Width and height of the box that fits the widest overlay text this module writes."""
    widest = ["t = 00000.0 s", "person: warning zone", "robot: succeeded, velocity 100%"]
    pad = max(3, height // 90)
    probe = ImageDraw.Draw(Image.new("RGB", (1, 1)))
    _, _, right, bottom = probe.multiline_textbbox((0, 0), "\n".join(widest), font=font, spacing=pad)
    return int(right) + 2 * pad, int(bottom) + 2 * pad


# --- video files ------------------------------------------------------------------------

class _Writer(Protocol):
    def write(self, rgb: np.ndarray) -> None: ...

    def close(self) -> None: ...


class _Mp4Writer:
    """H.264 in an .mp4, frames piped into ffmpeg as they come."""

    def __init__(self, path: Path, size: tuple[int, int], fps: float) -> None:
        import imageio_ffmpeg

        self._frames = imageio_ffmpeg.write_frames(
            str(path), size, fps=fps, codec="libx264", pix_fmt_out="yuv420p", quality=MP4_QUALITY,
            macro_block_size=2,  # sizes are even already; never let it rescale
            ffmpeg_log_level="error", output_params=["-movflags", "+faststart", "-f", "mp4"])
        self._frames.send(None)

    def write(self, rgb: np.ndarray) -> None:
        try:
            self._frames.send(np.ascontiguousarray(rgb))
        except OSError as err:
            raise HriError(f"--record: ffmpeg stopped: {str(err).splitlines()[0]}") from None

    def close(self) -> None:
        self._frames.close()


class _GifWriter:
    """An animated .gif written frame by frame (Pillow encodes each one): memory holds one
    frame, whatever the length. One 256-colour palette, taken from the first frame (the scene
    looks the same throughout; colours that appear later get their nearest), no dithering, so
    unchanged pixels keep their index and each frame stores only the rectangle that changed."""

    def __init__(self, path: Path, size: tuple[int, int], fps: float) -> None:
        self._file = open(path, "wb")
        self._size = size
        self._fps = fps
        self._count = 0
        self._palette: Image.Image | None = None
        self._previous: np.ndarray | None = None
        self._pending: tuple[Image.Image, tuple[int, int]] | None = None
        self._pending_cs = 0

    def write(self, rgb: np.ndarray) -> None:
        image = Image.fromarray(rgb)
        if self._palette is None:
            self._palette = image.quantize(256, method=Image.Quantize.MEDIANCUT)
            self._write_header()
        indexed = image.quantize(palette=self._palette, dither=Image.Dither.NONE)
        indices = np.asarray(indexed)
        # Delays are whole hundredths: frame k ends at round(100 (k+1) / fps), so no drift.
        delay = round(100 * (self._count + 1) / self._fps) - round(100 * self._count / self._fps)
        self._count += 1
        if self._previous is not None:
            changed = indices != self._previous
            if not changed.any():  # show the pending frame longer instead
                self._pending_cs += delay
                return
            rows, cols = np.flatnonzero(changed.any(axis=1)), np.flatnonzero(changed.any(axis=0))
            box = (int(cols[0]), int(rows[0]), int(cols[-1]) + 1, int(rows[-1]) + 1)
            indexed = indexed.crop(box)
        else:
            box = (0, 0)
        self._flush()
        self._pending, self._pending_cs, self._previous = (indexed, box[:2]), delay, indices

    def _write_header(self) -> None:
        palette = bytes(self._palette.getpalette()[:768]).ljust(768, b"\0")
        width, height = self._size
        # Logical screen with a 256-colour global table; NETSCAPE2.0 loop forever.
        self._file.write(b"GIF89a" + struct.pack("<HHBBB", width, height, 0xF7, 0, 0) + palette
                         + b"!\xff\x0bNETSCAPE2.0\x03\x01" + struct.pack("<H", 0) + b"\0")

    def _flush(self) -> None:
        if self._pending is not None:
            image, offset = self._pending
            for chunk in GifImagePlugin.getdata(image, offset, duration=10 * max(self._pending_cs, 1)):
                self._file.write(chunk)
            self._pending = None

    def close(self) -> None:
        try:
            self._flush()
            self._file.write(b";")
        finally:
            self._file.close()


def _ready(path: Path) -> None:
    """The video on disk with a plain file's mode (the encoder may have made the file anew)."""
    _sync(path)
    os.chmod(path, plain_file_mode())


def _sync(path: Path) -> None:
    """Flush ``path`` to disk before it is renamed into place (as :func:`hri.base.files.write_atomic`)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


# --- the observer -----------------------------------------------------------------------

class Recorder:
    """Records a run into ``path`` (.mp4 or .gif): an :class:`hri.run.sim.Observer`.

    Frame ``k`` shows simulated time ``k / fps`` (rendered after the first physics step at or
    after that time). Set ``duration_s`` before the run to give the progress bar its total.
    """

    def __init__(self, path: Path, fps: float, size: tuple[int, int], duration_s: float | None = None) -> None:
        self.path = _check_path(path)
        self.fps = _check_fps(fps, self.path.suffix.lower())
        self.size = (int(size[0]), int(size[1]))
        self.duration_s = duration_s
        self.frames = 0
        self._writer: _Writer | None = None
        self._tmp: Path | None = None
        self._camera: tuple[list[float], list[float]] | None = None
        self._font = _font(self.size[1])
        box_w, box_h = overlay_box(self._font, self.size[1])
        # No overlay on frames too small to keep the scene visible beside it.
        self._overlay_width = box_w if box_w <= self.size[0] // 2 and box_h <= self.size[1] // 3 else None
        self._bar = None
        self._broken = False  # a frame failed to go into the file: never publish it

    def expected_frames(self) -> int | None:
        if self.duration_s is None:
            return None
        return math.floor(self.duration_s * self.fps + 1e-9) + 1

    def start(self, run: RunView) -> None:
        from tqdm import tqdm

        self._camera = room_camera(run.scenario.room, *self.size)
        fd, tmp = hidden_file(self.path, self.path.suffix)
        os.close(fd)
        self._tmp = Path(tmp)
        writer = _GifWriter if self.path.suffix.lower() == ".gif" else _Mp4Writer
        try:
            self._writer = writer(self._tmp, self.size, self.fps)
        except BaseException:
            self._tmp.unlink(missing_ok=True)
            raise
        # disable=None: a bar on a terminal only; on stderr, as stdout may carry --json.
        self._bar = tqdm(total=self.expected_frames(), unit=" frames", desc=f"recording {self.path.name}",
                         file=sys.stderr, disable=None, dynamic_ncols=True)
        self._record(run, 1)

    def after_step(self, run: RunView) -> None:
        due = 0
        while run.now() + 1e-9 >= (self.frames + due) / self.fps:  # integer count: no drift
            due += 1
        if due:
            self._record(run, due)

    def _record(self, run: RunView, copies: int) -> None:
        width, height = self.size
        run.place_riders()
        rgb = draw_axes(render_frame(run.client, *self._camera, width, height), *self._camera, self._font)
        if self._overlay_width is not None:
            rgb = draw_overlay(rgb, run.status_lines(), self._font, self._overlay_width)
        try:
            for _ in range(copies):  # more than one only when frames come faster than physics steps
                self._writer.write(rgb)
        except BaseException:
            self._broken = True
            raise
        self.frames += copies
        if self._bar is not None:
            self._bar.update(copies)
            self._bar.set_postfix_str(f"{run.now():.1f} s simulated", refresh=False)

    def finish(self, run: RunView) -> None:
        """Close the video and move it into place, also after a failed or interrupted run."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        writer, tmp = self._writer, self._tmp
        self._writer = self._tmp = None
        if writer is not None and tmp is not None:
            close_into_place(writer.close, tmp, self.path, keep=not self._broken, prepare=_ready)
