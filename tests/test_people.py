"""Several people: each an actor, a tree and a safety monitor of their own, the robot's safety
over all of them, and figures per person (tests/data/people/coexistence_pair.yaml: the
coexistence worker and a visitor who walks into the warning and the stop zone)."""

import json
import math
from pathlib import Path

import numpy as np
import pybullet as p
import pytest

from hri.base.errors import HriError
from hri.run.monitor import strictest
from hri.run.sim import Simulation, run_queue_plan, run_scenario
from hri.scenario.load import load_scenario
from test_cli import hri

PAIR = Path(__file__).parent / "data" / "people" / "coexistence_pair.yaml"


@pytest.fixture(scope="module")
def pair_run(tmp_path_factory):
    """A 40-s seeded run of the two-person scenario, with its folder."""
    out = tmp_path_factory.mktemp("pair")
    stats = run_scenario(load_scenario(str(PAIR)), 40.0, seed=1, out_dir=out)
    return stats, out


def test_people_load_with_their_names_trees_and_strides():
    scenario = load_scenario(str(PAIR))
    assert [person.name for person in scenario.people] == ["worker", "visitor"]
    assert list(scenario.trees) == ["worker", "visitor", "robot"]
    assert scenario.trees["visitor"].name == "visitor.xml"
    assert [person.walk_stride_m for person in scenario.people] == [1.239, 1.0]
    one = load_scenario("coexistence")
    assert [person.name for person in one.people] == ["person"] and not one.several


def test_each_person_has_queues_of_their_own():
    plan = run_queue_plan(True, load_scenario(str(PAIR)))
    assert {"actor-worker-action", "actor-worker-feedback", "actor-visitor-action", "actor-visitor-feedback",
            "tree-worker-in", "tree-visitor-out", "tree-robot-in"} <= set(plan)
    assert set(run_queue_plan(False, load_scenario("coexistence"))) == {"actor-action", "actor-feedback"}


def test_strictest_zone_of_any_person_holds():
    assert strictest(["safe", "stop", "warning"]) == "stop"
    assert strictest([None, "warning", "safe"]) == "warning"
    assert strictest([None]) is None


def test_both_people_act_and_get_figures_of_their_own(pair_run):
    stats, out = pair_run
    worker, visitor = stats["people"]["worker"], stats["people"]["visitor"]
    assert stats["safety_violations"] == 0 and stats["person_contacts"] == 0 and stats["complete"]
    assert worker["person_actions"] > 0 and visitor["person_actions"] > 0
    assert stats["person_actions"] == worker["person_actions"] + visitor["person_actions"]
    # the visitor goes into the warning and the stop zone, the worker stays at the bench
    assert visitor["zone_entries"]["stop"] >= 1 and worker["zone_entries"] == {"warning": 0, "stop": 0}
    assert stats["min_separation_m"] == min(worker["min_separation_m"], visitor["min_separation_m"])
    # the run's zone time is the strictest zone's: the visitor's here
    assert stats["zone_time_s"] == visitor["zone_time_s"]
    assert sum(stats["zone_time_s"].values()) == pytest.approx(40.0)
    assert {path.name for path in out.glob("*.btlog")} == {"worker.btlog", "visitor.btlog", "robot.btlog"}


def test_events_and_trajectory_name_the_person(pair_run):
    _, out = pair_run
    events = [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines()]
    entered = {(e["person"], e["zone"]) for e in events if e["event"] == "zone_enter"}
    assert ("visitor", "stop") in entered and ("worker", "stop") not in entered
    finished = {e["tree"] for e in events if e["event"] == "person_action_finished"}
    assert finished == {"worker", "visitor"}
    lines = (out / "trajectory.csv").read_text().splitlines()
    header = lines[0].split(",")
    assert header[:9] == ["t", "person_x", "person_y", "person_yaw", "zone", "robot_velocity_fraction",
                          "robot_speed_fraction", "robot_fastest_point_m_s", "separation_m"]
    assert header[9:19] == [f"person_{name}_{c}" for name in ("worker", "visitor")
                            for c in ("x", "y", "yaw", "zone", "separation_m")]
    assert header[19:] == [f"robot_q_A{joint}" for joint in range(1, 7)]  # the joint positions end a row
    for line in lines[1:]:
        row = dict(zip(header, line.split(",")))
        assert row["person_x"] == row["person_worker_x"]  # the first person's columns as with one
        assert row["zone"] == strictest([row["person_worker_zone"], row["person_visitor_zone"]])
        assert float(row["separation_m"]) == min(float(row["person_worker_separation_m"]),
                                                 float(row["person_visitor_separation_m"]))


def test_the_robot_sees_the_nearest_person_in_the_strictest_zone():
    """The pose the robot's tree gets is of a person in the strictest zone of any (its trees
    test the pose against the zones' areas), of them the nearest. Mutation: choosing the
    nearest of all (or the first) fails here."""
    with Simulation(load_scenario(str(PAIR)), seed=1) as sim:
        seen = set()
        for _ in range(int(12.0 / sim.dt)):
            ticks = sim.step_count % sim.tree_every == 0 and sim.step_count > 0
            if ticks:  # what the monitors have when the sample is published, before this step's tick
                zone = strictest(person.monitor.zone for person in sim.people)
                nearest = min((person for person in sim.people if person.monitor.zone == zone),
                              key=lambda person: person.monitor.last_separation).name
            sim.step()
            if ticks:
                board = sim.trees["robot"].blackboard
                seen.add(board.get("human_name"))
                assert (board.get("human_name"), board.get("human_zone")) == (nearest, zone)
        assert seen == {"visitor"}  # nearer to the robot than the worker at the bench throughout


def test_two_people_inside_each_other_are_a_violation():
    """Mutation: PeopleWatch ignoring the overlap (or the sim never calling it) fails here."""
    with Simulation(load_scenario(str(PAIR)), seed=1) as sim:
        sim.step()
        worker, visitor = sim.people
        pose = worker.plugin.pose
        for body in (worker.plugin.body_id, visitor.plugin.body_id):  # the visitor moved onto the worker
            position, orientation = p.getBasePositionAndOrientation(worker.plugin.body_id, physicsClientId=sim.client)
            p.resetBasePositionAndOrientation(visitor.plugin.body_id, position, orientation, physicsClientId=sim.client)
        before = sim.stats.safety_violations
        sim.people_watch.check(sim.now(), {"worker": (pose.x, pose.y), "visitor": (pose.x, pose.y)})
        assert sim.stats.person_contacts == 1 and sim.stats.safety_violations == before + 1
        apart = {"worker": (pose.x, pose.y), "visitor": (pose.x + 3.0, pose.y)}  # never asked when far apart
        sim.people_watch.check(sim.now(), apart)
        assert sim.stats.person_contacts == 1


def test_the_run_folder_keeps_each_persons_tree(tmp_path):
    """The scenario a run folder keeps names each person's copied tree in their entry."""
    out = tmp_path / "run"
    result = hri("run", str(PAIR), "--duration", "0.5", "--seed", "1", "--out", str(out))
    assert result.returncode == 0, result.stderr
    again = load_scenario(str(out / "scenario.yaml"))
    assert list(again.trees) == ["worker", "visitor", "robot"]
    assert all(out / "inputs" in tree.parents for tree in again.trees.values())


def test_a_fault_breaks_the_actor_of_the_person_it_names(tmp_path):
    """Mutation: FaultTargets.actor giving the first person's plugin whatever the name fails here."""
    scenario = load_scenario(str(PAIR)).with_faults(["actor_hang:visitor@1"])
    with Simulation(scenario, seed=1) as sim:
        with pytest.raises(HriError, match="actor plugin has not answered"):
            sim.run(10.0)
        worker, visitor = sim.people
        assert visitor.plugin._hung and not worker.plugin._hung
    with pytest.raises(HriError, match="--fault actor_hang:nobody@1: no person 'nobody' \\(people: worker, visitor\\)"):
        load_scenario(str(PAIR)).with_faults(["actor_hang:nobody@1"])


def test_split_gives_the_same_run_with_two_people(tmp_path):
    """Each person's tree in a process of its own: the same statistics and trajectory."""
    runs = {}
    for split in (False, True):
        out = tmp_path / f"split{split}"
        stats = run_scenario(load_scenario(str(PAIR)), 8.0, seed=2, out_dir=out, split=split)
        runs[split] = ({k: v for k, v in stats.items() if k not in ("wall_time_s", "real_time_factor")},
                       (out / "trajectory.csv").read_bytes())
    assert runs[True] == runs[False]
    assert runs[True][0]["people"]["visitor"]["person_actions"] > 0


def test_each_tree_has_groot2_ports_of_its_own():
    from hri.run.groot2 import tree_ports

    trees = list(load_scenario(str(PAIR)).trees)
    assert tree_ports(1667, trees) == {"worker": 1667, "visitor": 1669, "robot": 1671}
    assert tree_ports(1667) == {"person": 1667, "robot": 1669}


def test_the_path_plot_and_the_heatmap_show_every_person(pair_run):
    """Mutation: people_paths giving only person_x/person_y draws one path and fails here."""
    from hri.batch import plots

    _, out = pair_run
    traj = plots.read_trajectory(out / "trajectory.csv")
    paths = plots.people_paths(traj)
    assert list(paths) == ["worker", "visitor"]
    assert np.array_equal(paths["worker"][0], traj["person_x"])
    figure = plots.run_path_figure(traj, None)
    drawn = [c for c in figure.axes[0].collections if hasattr(c, "get_segments")]
    assert [len(c.get_segments()) for c in drawn] == [len(traj["t"]) - 1] * 2
    assert figure.axes[0].get_title() == "the people's paths"


def test_time_within_halls_distances_is_what_a_query_every_step_gives():
    """Each person's time within Hall's distances of the robot, against the separation queried
    on every physics step (the body posed where it is, as the monitor poses it for a query).
    Mutation: not scheduling a query before the gap can cross a bound (the proxemics term of
    the wait) leaves the visitor's personal and social times off by far more than a step."""
    from hri.run.monitor import proxemic_zone

    with Simulation(load_scenario(str(PAIR)), seed=1) as sim:
        brute = {person.name: dict.fromkeys(("intimate", "personal", "social", "public"), 0.0) for person in sim.people}
        for _ in range(int(25.0 / sim.dt)):
            sim.step()
            for person in sim.people:
                person.plugin.preview(sim.now() - sim.dt, sim.dt)
                points = p.getClosestPoints(person.plugin.body_id, sim.robot.body_id, 50.0, physicsClientId=sim.client)
                brute[person.name][proxemic_zone(min(pt[8] for pt in points))] += sim.dt
        for person in sim.people:
            kept = person.figures.proxemic_time_s
            assert sum(kept.values()) == pytest.approx(25.0)
            for zone, seconds in brute[person.name].items():
                assert kept[zone] == pytest.approx(seconds, abs=3 * sim.dt), (person.name, zone)
        assert brute["visitor"]["personal"] > 1.0 and brute["visitor"]["social"] > 1.0


def test_replay_serves_every_persons_tree(pair_run):
    from hri.run.replay import read_run

    _, out = pair_run
    trees = read_run(out)
    assert list(trees) == ["visitor", "worker", "robot"]  # the people by name, then the robot
    assert all(tree.times_us for tree in trees.values())


def test_a_person_in_a_stricter_zone_wins_over_a_nearer_one():
    """Mutation: publishing the nearest person of all sends the worker here and fails."""
    with Simulation(load_scenario(str(PAIR)), seed=1) as sim:
        sim.step()
        worker, visitor = sim.people
        sent = []
        sim.services.safety.publish = lambda pose, zone, cap, person: sent.append((zone, person))
        worker.monitor.last_separation, visitor.monitor.last_separation = 0.5, 2.0  # the worker nearer
        worker.monitor.zone, visitor.monitor.zone = "safe", "warning"
        sim._tick_trees()
        worker.monitor.zone = "warning"  # both in the warning zone: the nearer
        sim._tick_trees()
        assert sent == [("warning", "visitor"), ("warning", "worker")]


def test_a_walk_keeps_clear_of_where_another_person_is_walking():
    """While the worker walks to the bench, what the visitor's walks go around covers the rest
    of the worker's walk, up to its end (mutation: only where the worker stands fails here)."""
    from shapely.geometry import Point

    with Simulation(load_scenario(str(PAIR)), seed=1) as sim:
        worker = sim.people[0]
        for _ in range(int(5.0 / sim.dt)):  # the worker's first walk: to the bench
            if len(worker.plugin.walk_ahead()) >= 2:
                break
            sim.step()
        ahead = worker.plugin.walk_ahead()
        assert len(ahead) >= 2 and math.dist(ahead[0], ahead[-1]) > 1.0  # walking, the bench still ahead
        assert ahead[-1] == pytest.approx((6.7, 4.45))
        (shape,) = sim._others_footprints(1)
        assert shape.contains(Point(ahead[-1])) and shape.contains(Point(ahead[0]))
        assert shape.area > 2 * 0.3 * math.dist(ahead[0], ahead[-1])
        assert len(sim.people[1].plugin.walk_ahead()) >= 1


def test_two_workers_share_the_ur5_workcell_without_a_violation():
    """The two_workers preset (the UR-5 built from its DH table, a worker and an inspector),
    a simulated minute: the robot works, both people act and have figures of their own, no
    safety violation, nobody inside anybody (an hour of it in zones and SSM mode and with
    --split is the slow test below)."""
    stats = run_scenario(load_scenario("two_workers"), 60.0, seed=1)
    assert stats["complete"] and stats["robot_cycles"] >= 8, stats
    assert stats["safety_violations"] == 0 and stats["person_contacts"] == 0, stats
    assert set(stats["people"]) == {"worker", "inspector"}
    assert all(person["person_actions"] > 0 for person in stats["people"].values()), stats["people"]
    assert stats["people"]["inspector"]["zone_entries"]["warning"] > 0  # the inspector checks the table


@pytest.mark.slow
def test_two_workers_run_an_hour_without_a_violation_in_every_mode(tmp_path):
    """An hour of two_workers at seed 1: 0 safety violations and 0 person-person contacts with
    the zones, with SSM and with --split; --split gives the statistics of one process."""
    runs = {}
    for mode, overrides, split in (("zones", [], False), ("ssm", ["safety.mode=ssm"], False), ("split", [], True)):
        stats = run_scenario(load_scenario("two_workers", overrides), 3600.0, seed=1, split=split)
        assert stats["complete"] and stats["safety_violations"] == 0 and stats["person_contacts"] == 0, (mode, stats)
        assert stats["robot_move_failures"] == {} and set(stats["people"]) == {"worker", "inspector"}, (mode, stats)
        runs[mode] = {k: v for k, v in stats.items() if k not in ("wall_time_s", "real_time_factor")}
    assert runs["split"] == runs["zones"]
