"""Contact sheets of the person's clips: start, middle and end, from two sides.

``python -m hri.actor.pictures docs/images`` writes ``clip_<name>.png`` for every clip.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pybullet

from hri.actor.animation import ClipLibrary, WalkClip, data_path
from hri.actor.body import HumanoidBody
from hri.actor.pose import BodyPose
from hri.base.png import write_png


def render_pose(client: int, body: HumanoidBody, pose: BodyPose, eye, size=(240, 320)) -> np.ndarray:
    """Render a pose of a person standing at the origin facing +x, camera at ``eye``."""
    body.apply(pose, 0.0, 0.0, 0.0)
    w, h = size
    view = pybullet.computeViewMatrix(eye, [0.1, 0.0, 0.7], [0.0, 0.0, 1.0],
                                      physicsClientId=client)
    proj = pybullet.computeProjectionMatrixFOV(45.0, w / h, 0.1, 10.0, physicsClientId=client)
    img = pybullet.getCameraImage(w, h, view, proj, renderer=pybullet.ER_TINY_RENDERER,
                                  physicsClientId=client)
    return np.reshape(np.array(img[2], dtype=np.uint8), (h, w, 4))[:, :, :3]


def render_contact_sheets(out_dir: Path, library: ClipLibrary | None = None) -> list[Path]:
    """Render each clip at start, middle and end: right side view (top row), 3/4 front (bottom).

    The walk cycle is shown at phases 0, 1/4 and 1/2.
    """
    library = library or ClipLibrary.default()
    client = pybullet.connect(pybullet.DIRECT)
    try:
        pybullet.loadURDF(str(data_path("plane.urdf")), physicsClientId=client)
        body = HumanoidBody(client)
        out_dir = Path(out_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
        written = []
        for name in library.names():
            clip = library.get(name)
            times = [0.0, clip.duration / 2.0, clip.duration]
            if isinstance(clip, WalkClip):
                times = [0.0, clip.duration / 4.0, clip.duration / 2.0]
            rows = []
            for eye in ([0.1, -3.3, 0.9], [2.4, -2.4, 1.2]):  # right side; 3/4 front-right
                tiles = [render_pose(client, body, clip.sample(t), eye) for t in times]
                sep = np.full((tiles[0].shape[0], 4, 3), 40, np.uint8)
                rows.append(np.concatenate([x for tile in tiles for x in (tile, sep)][:-1], axis=1))
            sheet = np.concatenate([rows[0], np.full((4, rows[0].shape[1], 3), 40, np.uint8),
                                    rows[1]], axis=0)
            path = out_dir / f"clip_{name}.png"
            write_png(path, sheet)
            written.append(path)
        return written
    finally:
        pybullet.disconnect(client)


if __name__ == "__main__":  # pragma: no cover
    import sys

    for p in render_contact_sheets(Path(sys.argv[1] if len(sys.argv) > 1 else "docs/images")):
        print(p)
