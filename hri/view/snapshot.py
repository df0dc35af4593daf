"""Still pictures of a running simulation, rendered headless (PyBullet's TinyRenderer).

``python -m hri.view.snapshot OUT.png [--scenario X] [--time S] [--seed N]`` runs a scenario for S
simulated seconds and saves what the fixed workcell camera of :mod:`hri.view.record` (the one
``hri run --record`` films with) sees.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from hri.base.quiet import import_pybullet_quietly

import_pybullet_quietly()  # before hri.view.record imports it: no build-time banner
from hri.base.png import write_png  # noqa: E402
from hri.view.record import render_frame, room_camera  # noqa: E402

WIDTH, HEIGHT = 960, 600


def main(argv: list[str] | None = None) -> None:
    from hri.scenario.load import load_scenario
    from hri.run.sim import Simulation

    parser = argparse.ArgumentParser(prog="python -m hri.view.snapshot", description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--scenario", default="coexistence")
    parser.add_argument("--time", type=float, default=20.0, help="simulated seconds before the picture")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    scenario = load_scenario(args.scenario)
    view, projection = room_camera(scenario.room, WIDTH, HEIGHT)
    with Simulation(scenario, seed=args.seed) as sim:
        sim.run(args.time)
        image = render_frame(sim.client, view, projection, WIDTH, HEIGHT)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_png(args.out, image)


if __name__ == "__main__":
    main()
