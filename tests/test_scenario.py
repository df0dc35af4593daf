"""Scenario files: the presets load; mistakes give FILE:LINE: message."""

from pathlib import Path

import pytest

from hri.base.errors import HriError
from hri.scenario.load import load_scenario, preset_path

PRESET = preset_path("coexistence")


def test_preset_loads_with_zones_areas_poses_and_trees():
    scenario = load_scenario("coexistence")
    assert set(scenario.zones) == {"warning", "stop"}
    assert {"table_left", "table_right", "inspection_area"} <= set(scenario.areas)
    assert {"bench_front", "shelf_section_1", "shelf_section_2", "shelf_section_3"} <= set(scenario.poses)
    assert scenario.trees["person"].is_file() and scenario.trees["robot"].is_file()
    entries = scenario.blackboard_entries()
    assert {"stop_zone", "warning_zone", "reduced_velocity", "walk_stride"} <= set(entries)


def _broken(tmp_path: Path, old: str, new: str) -> Path:
    text = PRESET.read_text()
    assert old in text
    path = tmp_path / "broken.yaml"
    path.write_text(text.replace(old, new, 1))
    # keep the tree paths valid from the temporary folder
    trees = PRESET.parent.parent / "trees"
    path.write_text(path.read_text().replace("../trees/", f"{trees}/"))
    return path


def _line_of(path: Path, needle: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if needle in line)


@pytest.mark.parametrize("old,new,needle,message", [
    ("  tree_rate_hz: 20", "  tree_rate_hz: fast", "tree_rate_hz", "'simulation.tree_rate_hz' must be a number"),
    ("  reduced_velocity: 0.1", "  reduced_velocity: 1.5", "reduced_velocity", "robot.reduced_velocity must be within 0..1"),
    ("  wall_height: 1.0", "  wall_height: 1.0\n  colour: red", "colour", "unknown key 'room.colour'"),
    ("  stop:    [[0.0, 0.0], [3.0, 0.0], [3.0, 2.3], [0.0, 2.3]]",
     "  stop:    [[0.0, 0.0], [3.0, 2.3], [3.0, 0.0], [0.0, 2.3]]", "  stop:", "zones.stop: the area's polygon intersects itself"),
    ("  stop:    [[0.0, 0.0], [3.0, 0.0], [3.0, 2.3], [0.0, 2.3]]",
     "  stop:    [[0.0, 0.0], [5.0, 0.0], [5.0, 2.3], [0.0, 2.3]]", "  stop:", "zones.stop must lie inside zones.warning"),
    ("  person: ../trees/coexistence_person.xml", "  person: nowhere.xml", "  person: nowhere", "trees.person: no such file"),
    ("  safety: {latency: 0.0, loss: 0.0}", "  saftey: {latency: 0.6}", "saftey",
     "unknown channel 'net.saftey' (did you mean 'safety'?)"),
    ("  speed_tolerance: 0.02", "  speed_tolerance: 0.02\n  ssm: {reaction_time_s: 0.004}", "ssm:",
     "safety.ssm.reaction_time_s must be at least one physics step, 0.00416667 s (1/physics_rate_hz): "
     "the SSM controller acts once a step, got 0.004"),
])
def test_mistakes_point_at_their_line(tmp_path, old, new, needle, message):
    path = _broken(tmp_path, old, new)
    with pytest.raises(HriError) as info:
        load_scenario(str(path))
    assert str(info.value) == f"{path}:{_line_of(path, needle)}: {message}" or str(info.value).startswith(
        f"{path}:{_line_of(path, needle)}: {message}")


def test_malformed_yaml(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("name: x\nzones: [1, 2\n")
    with pytest.raises(HriError) as info:
        load_scenario(str(path))
    assert str(info.value).startswith(f"{path}:") and "malformed YAML" in str(info.value)


def test_set_overrides_and_rejects_unknown_keys():
    scenario = load_scenario("coexistence", ["robot.reduced_velocity=0.25", "zones.stop=[[0,0],[2,0],[2,1.5],[0,1.5]]"])
    assert scenario.blackboard_entries()["reduced_velocity"] == 0.25
    assert scenario.zones["stop"].contains(1.9, 1.4) and not scenario.zones["stop"].contains(2.5, 1.0)
    with pytest.raises(HriError, match=r"^--set robot.speed: unknown key 'robot.speed'$"):
        load_scenario("coexistence", ["robot.speed=2"])
    with pytest.raises(HriError, match=r"^--set robot: expected KEY=VALUE$"):
        load_scenario("coexistence", ["robot"])


def test_set_reaches_optional_keys_a_file_leaves_out():
    """``simulation.person_rate_hz`` is not in the presets, yet ``--set`` may give it (and is
    checked like a value in the file); a key the schema does not know stays an error."""
    assert "person_rate_hz" not in PRESET.read_text()
    assert load_scenario("coexistence", ["simulation.person_rate_hz=60"]).simulation.person_rate_hz == 60
    with pytest.raises(HriError, match=r"^--set simulation.person_rate_hz: must be positive"):
        load_scenario("coexistence", ["simulation.person_rate_hz=-1"])
    with pytest.raises(HriError, match=r"^--set simulation.rate: unknown key 'simulation.rate'$"):
        load_scenario("coexistence", ["simulation.rate=1"])
    with pytest.raises(HriError, match=r"^--set name.first: unknown key 'name.first'$"):
        load_scenario("coexistence", ["name.first=1"])


def test_a_number_with_an_exponent_is_a_number_in_set_and_in_a_file():
    """``1e-2`` is a float as in YAML 1.2 and JSON, not the text PyYAML's YAML 1.1 makes of it,
    in a ``--set`` value and in a scenario file; text that only looks like one stays text."""
    assert load_scenario("coexistence", ["safety.rest_speed_m_s=1e-2"]).safety.rest_speed_m_s == 0.01
    assert load_scenario("coexistence", ["simulation.person_rate_hz=3E1"]).simulation.person_rate_hz == 30
    from hri.base.yaml_values import load
    assert load("notes: {speed: 2.5e-1, name: 1e3x, big: -1E+9, dot: .5e1}\n", "x.yaml")["notes"] == {
        "speed": 0.25, "name": "1e3x", "big": -1e9, "dot": 5.0}
    with pytest.raises(HriError, match=r"^--set safety.rest_speed_m_s: must be a number, got '1e'$"):
        load_scenario("coexistence", ["safety.rest_speed_m_s=1e"])


def test_a_scenario_plugin_adds_a_node_its_tree_uses(tmp_path):
    """`plugins:` in a scenario: a user's module registers a node type, no project change."""
    from hri.run.sim import Simulation

    (tmp_path / "wave_nodes.py").write_text(
        "from py_trees.common import Status\n"
        "from hri.bt.node import BTNode\n"
        "from hri.bt.ports import Port\n\n"
        "class Wave(BTNode):\n"
        "    PORTS = (Port('times', 'in', int, 1, 'how often'),)\n"
        "    def update(self):\n"
        "        self.ctx.events('waved', times=self.get_input('times'))\n"
        "        return Status.SUCCESS\n\n"
        "def register_nodes(registry):\n"
        "    registry.register('Wave', Wave, 'action')\n")
    (tmp_path / "person.xml").write_text(
        '<root BTCPP_format="4"><BehaviorTree ID="P"><Sequence>'
        '<Wave times="3"/><ActorAnimation animation_name="standing_extend_arm"/>'
        '</Sequence></BehaviorTree></root>\n')
    text = PRESET.read_text().replace("../trees/", f"{PRESET.parent.parent / 'trees'}/")
    text = text.replace("  person: " + str(PRESET.parent.parent / "trees") + "/coexistence_person.xml",
                        "  person: person.xml")
    (tmp_path / "scenario.yaml").write_text(text + "\nplugins: [wave_nodes.py]\n")
    scenario = load_scenario(str(tmp_path / "scenario.yaml"))
    with Simulation(scenario, seed=1) as sim:
        sim.run(3.0)
        waves = [e for e in sim.events.events if e["event"] == "waved"]
    assert waves and waves[0]["times"] == 3


def test_the_channels_a_scenario_may_name_are_those_a_run_uses():
    """``net`` names channels (NET_CHANNELS), so a misspelt one is an error; a run's network
    carries exactly these (collaboration uses all: parts too)."""
    from hri.run.sim import Simulation
    from hri.scenario.model import NET_CHANNELS

    with Simulation(load_scenario("collaboration"), seed=1) as sim:
        sim.run(2.0)
        assert {channel for channel, _direction in sim.network._links} == set(NET_CHANNELS)
