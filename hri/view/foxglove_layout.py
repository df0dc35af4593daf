"""The Foxglove layout shipped with hri: the 3D scene, the safety signals and the trees' states
of a run's MCAP file (:mod:`hri.view.mcap_file`) side by side, on one timeline.

Built with Foxglove's own SDK (``foxglove.layouts``), so the file is what Foxglove reads. The
shipped file, ``assets/foxglove/hri_layout.json``, is the layout of the one-person presets
(trees ``person`` and ``robot``); ``python -m hri.view.foxglove_layout OUT.json --trees
worker inspector robot`` writes one for other trees (a run with several people has a tree per
person, named after them). In Foxglove: Layouts, Import from file.

- left, the 3D panel: the scene in the ``world`` frame, seen from above the room's corner;
- right, top: the separation against S_p (``required_m``) and the fastest robot point's
  speed; the velocity fraction and the safety cap;
- right, middle: the zone, the protective stop and each tree's root status as state
  transitions;
- right, bottom: the event log, warnings and errors by their level.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from importlib import resources
from pathlib import Path

from foxglove.layouts import (Layout, LogConfig, LogPanel, PlotConfig, PlotPanel, PlotSeries, SplitContainer,
                              SplitItem, StateTransitionsConfig, StateTransitionsPanel, StateTransitionsSeries,
                              ThreeDeeConfig, ThreeDeePanel)

from hri.base.quiet import import_pybullet_quietly

import_pybullet_quietly()  # before hri.view.mcap_file imports it (the zones' shapes): no build-time banner
from hri.view.channel_writer import WORLD  # noqa: E402

#: the trees of the one-person presets, whose layout is shipped
PRESET_TREES = ("person", "robot")
#: the shipped file, inside the installed package
SHIPPED = ("hri.assets", "foxglove/hri_layout.json")


def _plot(title: str, paths: dict[str, str]) -> PlotPanel:
    return PlotPanel(title=title, config=PlotConfig(
        paths=[PlotSeries(value=path, label=label, enabled=True) for label, path in paths.items()],
        show_legend=True, is_synced=True))


def layout(trees: Sequence[str] = PRESET_TREES) -> Layout:
    """The layout for a run whose trees are ``trees`` (their ``/trees/NAME`` topics)."""
    states = [StateTransitionsSeries(value="/safety.zone", label="zone"),
              StateTransitionsSeries(value="/safety.protective_stop", label="protective stop"),
              *(StateTransitionsSeries(value=f"/trees/{name}.nodes[0].status", label=f"{name} tree")
                for name in trees)]
    right = SplitContainer(direction="column", items=[
        SplitItem(content=_plot("separation and S_p (m), robot speed (m/s)", {
            "separation": "/safety.separation_m", "S_p": "/safety.required_m",
            "fastest robot point": "/safety.fastest_point_m_s"})),
        SplitItem(content=_plot("velocity fraction and safety cap", {
            "velocity fraction": "/safety.velocity_fraction", "cap": "/safety.cap",
            "joints' speed fraction": "/safety.speed_fraction"})),
        SplitItem(content=StateTransitionsPanel(title="zone, stop and trees", config=StateTransitionsConfig(
            paths=states, is_synced=True, show_points=True))),
        SplitItem(content=LogPanel(title="events", config=LogConfig(topic_to_render="/events", show_level=True,
                                                                     show_name=True))),
    ])
    scene = ThreeDeePanel(title="workcell", config=ThreeDeeConfig(fixed_frame=WORLD, follow_tf=WORLD))
    return Layout(content=SplitContainer(direction="row", items=[
        SplitItem(proportion=3, content=scene), SplitItem(proportion=2, content=right)]))


def layout_json(trees: Sequence[str] = PRESET_TREES) -> str:
    """:func:`layout` as Foxglove's layout file, indented, ending in a newline."""
    return json.dumps(json.loads(layout(trees).to_json()), indent=2) + "\n"


def shipped_path() -> Path:
    """Where the shipped layout file is (in a checkout, ``assets/foxglove/hri_layout.json``)."""
    package, name = SHIPPED
    return Path(str(resources.files(package).joinpath(name)))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m hri.view.foxglove_layout",
                                     description="Write a Foxglove layout for hri's MCAP files.")
    parser.add_argument("out", type=Path, help="the layout file to write (not overwritten)")
    parser.add_argument("--trees", nargs="+", default=list(PRESET_TREES),
                        help="the run's trees: each person's name and robot (default: person robot)")
    args = parser.parse_args(argv)
    if args.out.exists():
        parser.error(f"{args.out}: exists, not overwritten")
    args.out.write_text(layout_json(args.trees))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
