"""Still pictures of a running simulation, rendered headless (PyBullet's TinyRenderer).

``python -m hri.snapshot OUT.png [--time S] [--seed N]`` runs the coexistence preset for S
simulated seconds and saves what a camera above the workcell sees.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np
import pybullet as p

from hri.png import write_png


def render(client: int, target: tuple[float, float, float], distance: float, yaw: float, pitch: float,
           width: int = 960, height: int = 600) -> np.ndarray:
    """An RGB image (height x width x 3, uint8) from an orbit camera around ``target``."""
    view = p.computeViewMatrixFromYawPitchRoll(target, distance, yaw, pitch, 0.0, 2, physicsClientId=client)
    projection = p.computeProjectionMatrixFOV(50.0, width / height, 0.1, 50.0, physicsClientId=client)
    _, _, rgba, _, _ = p.getCameraImage(width, height, view, projection, renderer=p.ER_TINY_RENDERER,
                                        lightDirection=(2.0, -1.0, 5.0), physicsClientId=client)
    return np.asarray(rgba, dtype=np.uint8).reshape(height, width, 4)[:, :, :3]


def workcell_view(room_size: tuple[float, float]) -> dict:
    """A camera framing the whole room from above its far corner."""
    sx, sy = room_size
    return {"target": (sx * 0.45, sy * 0.45, 0.0), "distance": math.hypot(sx, sy) * 0.85, "yaw": 200.0,
            "pitch": -50.0}


def main(argv: list[str] | None = None) -> None:
    from hri.scenario import load_scenario
    from hri.sim import Simulation

    parser = argparse.ArgumentParser(prog="python -m hri.snapshot", description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--scenario", default="coexistence")
    parser.add_argument("--time", type=float, default=20.0, help="simulated seconds before the picture")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    scenario = load_scenario(args.scenario)
    with Simulation(scenario, seed=args.seed) as sim:
        sim.run(args.time)
        image = render(sim.client, **workcell_view(tuple(scenario.data["room"]["size"])))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_png(args.out, image)


if __name__ == "__main__":
    main()
