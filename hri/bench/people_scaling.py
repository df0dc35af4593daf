"""Figure: how the cost of a run grows with the number of people.

The coexistence workcell (its robot and its robot's tree) with 1, 2, 4 and 8 people, each
walking to and fro on a lane of their own in the safe zone (0.6 m of walk, a stretch of the
arm at each end), so that every person is an actor, a tree, a body and a safety monitor that
work all the time, and no two of them meet. Each repeat runs the counts in turn (in reverse
order every other repeat: the machine's speed drifts on a shared host); the figure is the wall
time per simulated second, and per person beyond the first: growing no faster than linearly
means the cost per added person does not grow with the count.
"""

from __future__ import annotations

import importlib.resources
import statistics
import tempfile
from pathlib import Path
from typing import Any

from hri.bench.common import BenchSettings, Say, sig, summary

COUNTS = (1, 2, 4, 8)
#: the lanes, in the order people are added: the walk from (x, y) to (x + LANE_M, y) and back,
#: in the coexistence room's safe zone (the warning zone ends at x 4.3 and y 3.3)
LANES = ((0.6, 3.9), (2.0, 5.1), (3.4, 3.9), (4.8, 5.1), (2.0, 3.9), (0.6, 5.1), (4.8, 3.9), (3.4, 5.1))
LANE_M = 0.6

_WALKER = """<?xml version="1.0" encoding="UTF-8"?>
<root BTCPP_format="4" main_tree_to_execute="Walk">
  <BehaviorTree ID="Walk">
    <Repeat num_cycles="-1">
      <Sequence>
        <ActorMovement animation_name="walk" animation_distance="{{walk_stride}}" target="{x2};{y};0;0;0;0;0"/>
        <ActorAnimation animation_name="standing_extend_arm"/>
        <ActorMovement animation_name="walk" animation_distance="{{walk_stride}}" target="{x1};{y};0;0;0;0;0"/>
        <ActorAnimation animation_name="standing_retract_arm"/>
      </Sequence>
    </Repeat>
  </BehaviorTree>
</root>
"""


def write_scenario(folder: Path, count: int) -> Path:
    """The coexistence preset with ``count`` walkers instead of its person, written to ``folder``."""
    import yaml

    from hri.scenario.load import preset_path

    data = yaml.safe_load(preset_path("coexistence").read_text())
    data["name"] = f"people_{count}"
    del data["person"]
    robot_tree = Path(str(importlib.resources.files("hri.trees") / "coexistence_robot.xml"))
    data["trees"] = {"robot": str(robot_tree)}
    data["people"] = []
    for i, (x, y) in enumerate(LANES[:count]):
        tree = folder / f"walker{i}.xml"
        tree.write_text(_WALKER.format(x1=x, x2=x + LANE_M, y=y))
        data["people"].append({"name": f"walker{i}", "tree": tree.name, "walk_stride_m": 1.239,
                               "start": {"position": [x, y, 0.0], "yaw_deg": 0}})
    path = folder / f"people_{count}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def run(settings: BenchSettings, say: Say) -> dict[str, Any]:
    from hri.bench.realtime_factor import run_full
    from hri.scenario.load import load_scenario

    with tempfile.TemporaryDirectory(prefix="hri-people-") as folder:
        scenarios = {n: load_scenario(str(write_scenario(Path(folder), n)), list(settings.sets)) for n in COUNTS}
        walls: dict[int, list[float]] = {n: [] for n in COUNTS}
        for k in range(settings.repeat):
            for n in COUNTS if k % 2 == 0 else reversed(COUNTS):
                say(f"people: {n} {'person' if n == 1 else 'people'}, {k + 1}/{settings.repeat}")
                figures = run_full(scenarios[n], settings.duration_s, settings.seed)
                walls[n].append(figures["wall_s"] / (figures["steps"] / scenarios[n].simulation.physics_rate_hz))
    per_sim_s = {n: statistics.median(walls[n]) for n in COUNTS}
    first = per_sim_s[COUNTS[0]]
    return {
        "sim_s": sig(settings.duration_s),
        "counts": {str(n): {"wall_per_sim_s": summary(walls[n]),
                            "per_added_person_s": None if n == 1 else sig((per_sim_s[n] - first) / (n - 1))}
                   for n in COUNTS},
    }
