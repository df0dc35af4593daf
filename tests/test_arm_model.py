"""The robot comes from the scenario: ``robot.model`` names a shipped arm or a URDF file, the
scenario names its base and tool links, and an arm of any number of revolute joints runs
(the Franka Panda of PyBullet's data, 7 joints). ``python -m hri.kinematics`` takes the model
the same way and runs from an installed package."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pybullet as p
import pytest
import yaml

from hri.base.errors import HriError
from hri.base.geometry import Pose
from hri.kinematics import Chain, IkSettings, solve
from hri.kinematics import arm_model
from hri.cli.main import main
from hri.kinematics.arm_model import KINDS, SHIPPED, resolve_model
from hri.robot.arm import MotionStatus, RobotArm, RobotConfig, arm_reach
from hri.robot.scene import quaternion_angle
from hri.run.run_dir import MANIFEST, SCENARIO, kept_scenario
from hri.run.sim import Simulation
from hri.run.stats import WALL_CLOCK_KEYS
from hri.scenario.load import load_scenario, preset_path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "bad_inputs"
DT = 1.0 / 240.0
BASE = Pose.from_xy_yaw(1.3, 0.45, math.pi / 2.0, z=0.75)


def test_the_shipped_arms_and_their_chains():
    iisy, panda = resolve_model("lbr_iisy"), resolve_model("panda")
    assert (iisy.base_link, iisy.tool_link, iisy.joints) == ("base_link", "tool0", tuple(f"A{i}" for i in range(1, 7)))
    assert (panda.base_link, panda.tool_link) == ("panda_link0", "panda_grasptarget")
    assert panda.joints == tuple(f"panda_joint{i}" for i in range(1, 8))
    for model in (iisy, panda):  # each shipped setting has one value per joint
        assert all(len(values) == model.joint_count for values in model.settings.values())
    assert arm_reach(iisy) == (0.4, 1.3)  # the LBR iisy's, as before
    assert arm_reach(panda) == pytest.approx((0.333, 1.0913), abs=1e-4)  # pybullet_data's panda.urdf offsets


def test_a_scenario_without_robot_model_runs_the_lbr_iisy_and_one_key_swaps_the_arm():
    default = load_scenario("coexistence")
    assert default.robot.model == resolve_model("lbr_iisy")
    assert default.robot.config == RobotConfig()  # the presets' settings, unchanged
    panda = load_scenario("coexistence", ["robot.model=panda"])
    assert panda.robot.model.joint_count == 7
    assert panda.robot.config.home == SHIPPED["panda"].settings["home"]
    assert len(panda.robot.config.max_jerk) == 7
    scalar = load_scenario("coexistence", ["robot.model=panda", "robot.config.max_jerk=500"])
    assert scalar.robot.config.max_jerk == (500.0,) * 7


def test_a_urdf_file_relative_to_the_scenario_with_its_links_and_settings(tmp_path):
    shutil.copy(CORPUS / "_model_arm.urdf", tmp_path / "arm.urdf")
    text = (CORPUS / "_good_scenario.yaml").read_text().replace("../../trees/", f"{ROOT}/trees/")
    text = text.replace("  reduced_velocity: 0.1\n", "  reduced_velocity: 0.1\n  model: arm.urdf\n  base_link: base\n"
                        "  tool_link: tool\n  config: {home: [0.0, 0.5], max_acceleration: 10, max_jerk: [100, 200]}\n")
    (tmp_path / "cell.yaml").write_text(text)
    scenario = load_scenario(str(tmp_path / "cell.yaml"), check_trees=False)
    model = scenario.robot.model
    assert (model.urdf, model.base_link, model.tool_link, model.joints) == (tmp_path / "arm.urdf", "base", "tool", ("j1", "j2"))
    assert scenario.robot.config.max_acceleration == (10.0, 10.0)
    assert scenario.robot.config.max_jerk == (100.0, 200.0)
    with pytest.raises(HriError, match=r"robot.config.home: 2.5 rad for joint 'j2' is outside its limits -2..2"):
        load_scenario(str(tmp_path / "cell.yaml"), ["robot.config.home=[0.0, 2.5]"], check_trees=False)


def test_joint_limits_come_from_the_model_or_the_scenario(tmp_path):
    """A URDF joint without a velocity limit is refused unless robot.limits gives one; the
    scenario's limits replace the model's in the body's joint model and in the planner's chain."""
    with pytest.raises(ValueError, match="joint 'j2' has no position and velocity limits"):
        resolve_model("_model_no_limits.urdf", CORPUS)
    given = resolve_model("_model_no_limits.urdf", CORPUS, limits={"velocity": 1.5})
    assert given.limits == ((-3.0, 3.0, 1.5), (-2.0, 2.0, 1.5))
    narrow = [[-1.0, 1.0]] * 7
    overrides = [f"robot.limits.position={narrow}", "robot.limits.velocity=[1, 1, 1, 1, 2, 2, 2]"]
    with pytest.raises(HriError, match=r"robot.config.home: -2.2 rad for joint 'panda_joint4' is outside its limits -1..1"):
        load_scenario("coexistence_panda", overrides, check_trees=False)  # the shipped home is outside them
    scenario = load_scenario("coexistence_panda", [*overrides, "robot.config.home=[0, -0.3, 0, -0.9, 0, 0.9, 0]"],
                             check_trees=False)
    client = p.connect(p.DIRECT)
    try:
        arm = RobotArm(client, BASE, lambda c: [], scenario.robot.config, scenario.robot.model)
        for joints in (arm.model, arm.scene.model):
            assert joints.lower.tolist() == [-1.0] * 7 and joints.upper.tolist() == [1.0] * 7
            assert joints.max_velocity.tolist() == [1, 1, 1, 1, 2, 2, 2]
        assert arm.scene.chain.lower.tolist() == [-1.0] * 7
        assert arm.scene.chain.velocity_limits.tolist() == [1, 1, 1, 1, 2, 2, 2]
        arm.move_to_joints([0.0, -0.3, 0.0, -1.5, 0.0, 0.9, 0.0])  # within the URDF's, not the scenario's
        assert arm.failure == "invalid_joints"
        arm.close()
    finally:
        p.disconnect(client)


def test_a_denavit_hartenberg_table_is_an_arm_of_its_own(tmp_path, monkeypatch):
    """``robot.model: FILE.yaml`` is a DH table: its URDF body is generated into the cache
    (once per table: the same text, the same file), its limits come from the table, its links
    from the table's base and tool; a mistake in the table is one line at the table's line."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    table = tmp_path / "my_arm.yaml"
    shutil.copy(ROOT / "assets" / "robot" / "ur5.yaml", table)
    home = "robot.config.home=[0, -0.6, -1.6, -2.5, -1.57, 0]"  # a file of the user's has no home
    scenario = load_scenario("coexistence_ur5", [f"robot.model={table}", home], check_trees=False)
    model = scenario.robot.model
    assert (model.base_link, model.tool_link, model.joint_count) == ("base_link", "tool0", 6)
    assert model.urdf.parent == tmp_path / "cache" / "hri" / "robots" and model.urdf.name.startswith("my_arm-")
    assert scenario.robot.config.max_jerk == (80.0, 80.0, 100.0, 150.0, 150.0, 200.0)
    again = load_scenario("coexistence_ur5", [f"robot.model={table}", home], check_trees=False)
    assert again.robot.model.urdf == model.urdf and len(list(model.urdf.parent.iterdir())) == 1
    assert resolve_model("ur5").joints == model.joints
    table.write_text(table.read_text().replace("d: 0.10915", "d: .nan", 1))
    with pytest.raises(HriError) as error:
        load_scenario("coexistence_ur5", [f"robot.model={table}", home], check_trees=False)
    line = next(n for n, text in enumerate(table.read_text().splitlines(), 1) if ".nan" in text)
    assert str(error.value).startswith(f"{table}:{line}: "), error.value


def test_a_file_kind_is_one_entry_of_the_lookup(tmp_path, monkeypatch):
    """How a Denavit-Hartenberg table comes in: a KINDS entry turns its file into a URDF, and a
    SHIPPED entry names such a file; here a made-up kind that copies a URDF."""
    made = tmp_path / "made.urdf"

    def build(path: Path) -> arm_model.ModelFile:
        made.write_text(path.read_text())
        return arm_model.ModelFile(made, {"max_jerk": (50.0, 60.0), "home": (0.1, 0.1)})

    table = tmp_path / "two.table"
    table.write_text((CORPUS / "_model_arm.urdf").read_text())
    monkeypatch.setitem(KINDS, ".table", build)
    model = resolve_model("two.table", tmp_path)
    assert (model.urdf, model.joints) == (made, ("j1", "j2"))
    assert model.settings == {"max_jerk": (50.0, 60.0), "home": (0.1, 0.1)}  # the file's own settings
    monkeypatch.setitem(SHIPPED, "two", arm_model.Shipped(lambda: table, "base", "tool", {"home": (0.0, 0.0)}))
    assert resolve_model("two").settings == {"max_jerk": (50.0, 60.0), "home": (0.0, 0.0)}  # the shipped entry's win
    with pytest.raises(ValueError, match="unknown robot 'two.tabel'"):
        resolve_model("two.tabel", tmp_path)


def test_power_and_force_limiting_takes_the_masses_from_the_model_or_the_scenario():
    assert load_scenario("coexistence").robot.moving_mass_kg == pytest.approx(27.001)  # the URDF's
    assert load_scenario("coexistence_panda").robot.moving_mass_kg == pytest.approx(15.06)
    assert load_scenario("cooperation").robot.payload_kg == 0.3  # one part, where parts are fed
    scenario = load_scenario("coexistence", ["robot.moving_mass_kg=30", "robot.payload_kg=2.5"])
    assert (scenario.robot.moving_mass_kg, scenario.robot.payload_kg) == (30.0, 2.5)
    with Simulation(scenario, seed=1) as sim:
        assert sim.monitor.pfl.setup.robot_mass_kg == 30.0 / 2 + 2.5  # m_R = M/2 + m_L


@pytest.fixture(scope="module")
def panda_arm():
    client = p.connect(p.DIRECT)
    p.setGravity(0.0, 0.0, -9.81, physicsClientId=client)
    p.setTimeStep(DT, physicsClientId=client)
    model = resolve_model("panda")
    config = RobotConfig(**model.settings)
    arm = RobotArm(client, BASE, lambda c: [], config, model)
    yield arm
    arm.close()
    p.disconnect(client)


def _until_done(arm: RobotArm, seconds: float) -> MotionStatus:
    for _ in range(int(seconds / DT)):
        arm.step(DT)
        p.stepSimulation(physicsClientId=arm.client)
        if arm.status in (MotionStatus.SUCCEEDED, MotionStatus.FAILED):
            break
    return arm.status


def test_a_seven_joint_arm_moves_to_a_tool_pose_and_to_joint_values(panda_arm):
    arm = panda_arm
    assert len(arm.joint_positions()) == 7
    target = Pose(1.1, 0.85, 0.95, 1.0, 0.0, 0.0, 0.0)  # 0.45 m in front of the base, tool down
    arm.move_to(target)
    assert _until_done(arm, 10.0) == MotionStatus.SUCCEEDED, arm.failure
    pose = arm.tool_pose()
    assert np.linalg.norm(np.subtract(pose.position, target.position)) < 0.01
    assert quaternion_angle(pose.orientation, target.orientation) < 0.06
    chain = Chain.from_urdf(arm.urdf, "panda_link0", "panda_grasptarget", base_pose=(BASE.position, BASE.orientation))
    position, _ = chain.tip_pose(arm.joint_positions())  # the kinematics core agrees with PyBullet's link
    assert np.linalg.norm(np.subtract(position, pose.position)) < 1e-6
    arm.move_to_joints(list(arm.home))
    assert _until_done(arm, 10.0) == MotionStatus.SUCCEEDED, arm.failure
    arm.move_to_joints(list(arm.home[:6]))  # six values for seven joints
    assert arm.status == MotionStatus.FAILED and arm.failure == "invalid_joints"


def test_links_off_the_chain_count_in_the_sweeps(panda_arm):
    """The Panda's hand and fingers hang off the chain (panda_joint7 -> grasptarget): the
    planner's sweep bounds must move them with the wrist, else a path is checked as if they
    stood still and a finger scrapes the table."""
    scene = panda_arm.scene
    names = {p.getJointInfo(scene.body, k, physicsClientId=scene.client)[12].decode(): k
             for k in range(scene.model.num_links)}
    wrist, hand, finger = names["panda_link7"], names["panda_hand"], names["panda_leftfinger"]
    for reach in (scene._reach, scene._axis_reach):
        assert np.all(reach[:, hand] > 0.0) and np.all(reach[:, finger] > 0.0)
        assert np.all(reach[:, finger] >= reach[:, wrist])  # farther out than the link it hangs from


def test_config_values_per_joint_must_match_the_arm():
    client = p.connect(p.DIRECT)
    try:
        with pytest.raises(ValueError, match="'max_acceleration' has 6 values, the arm panda 7 joints"):
            RobotArm(client, BASE, lambda c: [], RobotConfig(), resolve_model("panda"))
    finally:
        p.disconnect(client)


ZONE_WALK = ROOT / "tests" / "data" / "zone_walk_person.xml"  # into the warning zone, the stop zone, out


@pytest.mark.parametrize("variant", ["coexistence_panda", "coexistence_ur5"])
def test_the_arm_variants_work_their_table_without_a_violation(variant):
    """The coexistence preset with the Panda (7 joints, a URDF) and with the UR-5 (6 joints,
    built from its DH table), the person walking into the warning and the stop zone: cycles of
    the robot's task, no move failing, no safety violation (600 s of it and of the preset are
    the slow tests below)."""
    scenario = load_scenario(variant, [f"trees.person={ZONE_WALK}"])
    with Simulation(scenario, seed=1) as sim:
        stats = sim.run(30.0)
    assert stats["zone_entries"] == {"warning": 1, "stop": 1}, stats
    assert stats["robot_cycles"] >= 2, stats
    assert stats["robot_move_failures"] == {} and stats["safety_violations"] == 0, stats


def test_the_panda_is_too_short_for_the_coexistence_table_and_its_variant_draws_the_areas_in():
    """Why coexistence_panda differs from coexistence by more than robot.model: the trees move
    the tool, pointing down, 0.10 m above the base's plane (OffsetPose 0.85 on a 0.75-m table),
    where the Panda reaches 0.805 m from its base at most; the preset's table areas reach
    0.97 m. The LBR iisy reaches every corner of the preset's areas, the Panda none of their
    outer corners nor the place the seed-1 run of the swapped preset draws first (0.84 m out),
    and every corner of the variant's areas."""
    def reached(scenario, points) -> list[bool]:
        model, base = scenario.robot.model, scenario.robot.base
        chain, home = model.chain((base.position, base.orientation)), np.array(scenario.robot.config.home)
        settings = IkSettings(restarts=60)
        return [solve(chain, ((x, y, 0.85), (1.0, 0.0, 0.0, 0.0)), home, settings).valid for x, y in points]

    preset, panda = load_scenario("coexistence"), load_scenario("coexistence", ["robot.model=panda"])
    corners = [c for name in ("table_left", "table_right") for c in preset.areas[name].points]
    outer = [(0.5, 1.0), (2.1, 1.0)]
    assert set(outer) <= set(corners) and all(reached(preset, corners))
    assert not any(reached(panda, [*outer, (0.6034, 0.9188)]))
    variant = load_scenario("coexistence_panda")
    assert all(reached(variant, [c for name in ("table_left", "table_right") for c in variant.areas[name].points]))
    # two_workers' table areas lie within 0.64 m of the base: there one key swaps the arm
    swapped = load_scenario("two_workers", ["robot.model=panda"])
    assert all(reached(swapped, [c for name in ("table_left", "table_right") for c in swapped.areas[name].points]))


@pytest.mark.slow
@pytest.mark.parametrize("overrides", [[], [f"trees.person={ZONE_WALK}"],
                                       [f"trees.person={ZONE_WALK}", "safety.mode=ssm"]])
@pytest.mark.parametrize("variant", ["coexistence_panda", "coexistence_ur5"])
def test_the_arm_variants_run_ten_minutes_without_a_violation(variant, overrides):
    with Simulation(load_scenario(variant, overrides), seed=1) as sim:
        stats = sim.run(600.0)
    assert stats["complete"] and stats["safety_violations"] == 0 and stats["pfl_violations"] == 0, stats
    assert stats["robot_cycles"] >= 50 and stats["robot_move_failures"] == {}, stats


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["zones", "ssm"])
def test_two_workers_with_the_panda_by_one_key_runs_ten_minutes_without_a_violation(mode):
    """The Panda variant of two_workers is the preset and one key, robot.model=panda."""
    with Simulation(load_scenario("two_workers", ["robot.model=panda", f"safety.mode={mode}"]), seed=1) as sim:
        stats = sim.run(600.0)
    assert stats["complete"] and stats["safety_violations"] == 0 and stats["pfl_violations"] == 0, stats
    assert stats["robot_cycles"] >= 50 and stats["robot_move_failures"] == {}, stats


def _run(capsys: pytest.CaptureFixture, *argv: str) -> dict:
    capsys.readouterr()
    assert main(["run", *argv, "--json"]) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


def _outputs(run: Path) -> tuple[dict, bytes, list]:
    """stats.json less the wall clock, trajectory.csv, and events.jsonl less the tree files'
    paths (the tree_nodes events name the tree file that ran: the copy, in a rerun)."""
    stats = {k: v for k, v in json.loads((run / "stats.json").read_text()).items() if k not in WALL_CLOCK_KEYS}
    events = [json.loads(line) for line in (run / "events.jsonl").read_text().splitlines()]
    return stats, (run / "trajectory.csv").read_bytes(), [{k: v for k, v in e.items() if k != "file"} for e in events]


def _own_arm(folder: Path, kind: str) -> Path:
    """A preset as a user's own scenario whose arm is a file of theirs next to it: the LBR
    iisy's URDF (``urdf``), the UR-5's Denavit-Hartenberg table (``dh``), each as
    ``my_arm.*`` with the shipped robot's settings in ``robot.config``."""
    folder.mkdir()
    preset, shipped = {"urdf": ("coexistence", "lbr_iisy"), "dh": ("coexistence_ur5", "ur5")}[kind]
    model = folder / f"my_arm{SHIPPED[shipped].locate().suffix}"
    shutil.copy(SHIPPED[shipped].locate(), model)
    data = yaml.safe_load(preset_path(preset).read_text())
    data["trees"] = {role: str(path) for role, path in load_scenario(preset).trees.items()}
    data["robot"].update(model=model.name, tool_link="tool0",
                         config={key: list(values) for key, values in SHIPPED[shipped].settings.items()})
    scenario = folder / "cell.yaml"
    scenario.write_text(yaml.safe_dump(data, sort_keys=False))
    return scenario


@pytest.mark.parametrize("kind", ["urdf", "dh"])
def test_a_run_of_your_own_arm_keeps_its_file_and_reruns_from_the_copy_bit_for_bit(tmp_path, capsys, kind):
    """The run folder keeps a copy of the arm's file (inputs/robot/, its SHA-256 in the
    manifest, the kept scenario pointing at it); with the original gone, --from runs the
    copy into another folder with the same statistics, trajectory and events. A copy edited
    afterwards is refused in one line."""
    own, first, again = tmp_path / "mine", tmp_path / "first", tmp_path / "again"
    scenario = _own_arm(own, kind)
    original = (own / f"my_arm.{'urdf' if kind == 'urdf' else 'yaml'}").read_bytes()
    _run(capsys, str(scenario), "--duration", "3", "--seed", "4", "--out", str(first))
    kept = f"inputs/robot/my_arm.{'urdf' if kind == 'urdf' else 'yaml'}"
    manifest = json.loads((first / MANIFEST).read_text())
    assert manifest["files"][kept]["sha256"] == hashlib.sha256(original).hexdigest()
    assert (first / kept).read_bytes() == original
    assert kept_scenario(first).robot.model.name == kept  # the copy inside the folder
    assert yaml.safe_load((first / SCENARIO).read_text())["robot"]["model"] == kept
    shutil.rmtree(own)  # the rerun needs only the copy
    _run(capsys, "--from", str(first), "--out", str(again))
    assert _outputs(again) == _outputs(first)
    rows = list(csv.DictReader(io.StringIO((first / "trajectory.csv").read_text())))
    assert max(float(row["robot_speed_fraction"]) for row in rows) > 0.5  # the arm moved
    with (first / kept).open("a") as copy:
        copy.write("\n<!-- edited -->\n" if kind == "urdf" else "\n# edited\n")
    assert main(["run", "--from", str(first), "--out", str(tmp_path / "third")]) == 1
    assert capsys.readouterr().err.strip() == (f"--from {first}: {first / kept} was changed after the run "
                                               f"(its SHA-256 differs from {MANIFEST})")


CUBE_OBJ = "v 0 0 0\nv 0.1 0 0\nv 0 0.1 0\nv 0 0 0.1\nf 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n"
IDLE_TREE = """<root BTCPP_format="4" main_tree_to_execute="Idle">
  <BehaviorTree ID="Idle"><Sleep msec="1000"/></BehaviorTree>
</root>
"""


def test_a_urdf_naming_mesh_files_is_not_kept_and_from_refuses_it_in_one_line(tmp_path, capsys):
    """A URDF arm whose link is a mesh runs; its run folder keeps no copy (the kept scenario
    names the original by its absolute path, which `hri run DIR/scenario.yaml` still runs),
    and --from refuses it in one line. A folder made to hold such a URDF as its copy, with a
    manifest to match, is refused too: PyBullet would read the mesh from wherever it points."""
    urdf = tmp_path / "arm.urdf"
    urdf.write_text((CORPUS / "_model_arm.urdf").read_text().replace(
        '<link name="upper">', '<link name="upper"><visual><geometry><mesh filename="cube.obj"/></geometry></visual>'))
    (tmp_path / "cube.obj").write_text(CUBE_OBJ)
    (tmp_path / "idle.xml").write_text(IDLE_TREE)
    text = (CORPUS / "_good_scenario.yaml").read_text().replace("../../trees/", f"{ROOT}/trees/")
    text = text.replace(f"  robot: {ROOT}/trees/coexistence_robot.xml", "  robot: idle.xml")
    text = text.replace("  reduced_velocity: 0.1\n", "  reduced_velocity: 0.1\n  model: arm.urdf\n"
                        "  config: {home: 0, max_acceleration: 10, max_jerk: 100}\n")
    (tmp_path / "cell.yaml").write_text(text)
    run = tmp_path / "run"
    _run(capsys, str(tmp_path / "cell.yaml"), "--duration", "1", "--out", str(run))
    manifest = json.loads((run / MANIFEST).read_text())
    assert not any(key.startswith("inputs/robot") for key in manifest["files"])
    assert yaml.safe_load((run / SCENARIO).read_text())["robot"]["model"] == str(urdf)
    assert main(["run", "--from", str(run), "--out", str(tmp_path / "again")]) == 1
    assert capsys.readouterr().err.strip() == (
        f"--from {run}: {SCENARIO}: robot.model {json.dumps(str(urdf))} is not kept in the run folder (a run keeps "
        "a copy of the arm's file in inputs/robot/, but not of a URDF that names mesh files): run its scenario "
        "file again instead")
    # what reads a kept run's floor plan (hri render --run, hri stats' plots) holds the arm's file
    # to the same rule: no file outside the folder (mutation: loading the kept scenario as it is)
    with pytest.raises(HriError, match=r"robot.model .* is an absolute path \(a run folder names its files"):
        kept_scenario(run)
    (run / "inputs" / "robot").mkdir()
    shutil.copy(urdf, run / "inputs" / "robot" / "arm.urdf")
    kept = (run / SCENARIO).read_text().replace(str(urdf), "inputs/robot/arm.urdf")
    (run / SCENARIO).write_text(kept)
    for key, data in ((SCENARIO, kept.encode()), ("inputs/robot/arm.urdf", urdf.read_bytes())):
        manifest["files"][key] = {"sha256": hashlib.sha256(data).hexdigest(), "source": "made up"}
    (run / MANIFEST).write_text(json.dumps(manifest))
    assert main(["run", "--from", str(run), "--out", str(tmp_path / "again")]) == 1
    assert capsys.readouterr().err.strip() == (f"--from {run}: inputs/robot/arm.urdf names files besides itself "
                                               "(\"cube.obj\"), which a run folder does not keep")
    assert not (tmp_path / "again").exists()


def _installed(tmp_path: Path) -> Path:
    """The package as pip installs it (a wheel built from a copy of the sources, unpacked):
    the files it ships and nothing else of the checkout."""
    source = tmp_path / "source"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(".*", "build", "runs", "__pycache__", "*.egg-info"))
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp_path / "wheel"),
                            str(source)], capture_output=True, text=True, timeout=600)
    if built.returncode != 0:
        pytest.skip(f"cannot build a wheel here: {built.stderr.strip().splitlines()[-1:]}")
    site = tmp_path / "site"
    with zipfile.ZipFile(next((tmp_path / "wheel").glob("hri-*.whl"))) as wheel:
        wheel.extractall(site)
    return site


def test_the_kinematics_demo_runs_from_an_installed_package(tmp_path):
    site = _installed(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(site), "PYTHONWARNINGS": "ignore"}

    def demo(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "hri.kinematics", *args], capture_output=True, text=True,
                              cwd=tmp_path, env=env, timeout=120)

    shipped = demo()
    assert shipped.returncode == 0, shipped.stderr
    assert shipped.stdout.startswith("robot lbr_iisy, chain base_link -> tool0: joints A1, A2, A3, A4, A5, A6\n")
    assert f"{site}/hri/kinematics/__main__.py" in subprocess.run(
        [sys.executable, "-c", "import hri.kinematics.__main__ as m; print(m.__file__)"],
        capture_output=True, text=True, cwd=tmp_path, env=env).stdout  # the installed copy ran
    shutil.copy(CORPUS / "_model_arm.urdf", tmp_path / "arm.urdf")
    own = demo("arm.urdf", "--tool-link", "tool")
    assert own.returncode == 0, own.stderr
    assert own.stdout.startswith("robot arm.urdf, chain base -> tool: joints j1, j2\n")
    missing = demo("nowhere.urdf")
    assert (missing.returncode, missing.stderr) == (2, "python -m hri.kinematics: nowhere.urdf: no such file "
                                                       "'nowhere.urdf' (nowhere.urdf)\n")
