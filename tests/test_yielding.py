"""People who meet on the way give way to each other (hri.actor.yielding): the rule, the
plugin's waiting and giving up, and two people meeting head-on in a corridor
(tests/data/people/corridor.yaml)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from hri.actor.protocol import ActionMessage, ActorFailure, ActorState
from hri.actor.yielding import (GIVE_UP_S, LOOKAHEAD_M, PASSING_DISTANCE_M, REPLAN_PERIOD_S, Decision, Neighbour,
                                Yielding, clip_path, distance_between_paths, distance_to_path)
from hri.base.geometry import Pose
from hri.run.sim import Simulation, run_scenario
from hri.scenario.load import load_scenario
from test_actor_plugin import DT, Runner, clips, client  # noqa: F401 (fixtures)

CORRIDOR = Path(__file__).parent / "data" / "people" / "corridor.yaml"
CLOSE = Path(__file__).parent / "data" / "people" / "close.yaml"
PAIR = Path(__file__).parent / "data" / "people" / "coexistence_pair.yaml"


def _yielding(rank: int, *others: Neighbour) -> Yielding:
    events = []
    y = Yielding("me", rank, lambda: list(others), lambda t, event, fields: events.append((t, event, fields)))
    y.events = events
    return y


AHEAD = ((0.0, 0.0), (1.0, 0.0))  # walking east, a metre ahead


def test_the_paths_geometry():
    assert distance_to_path((0.5, 0.3), AHEAD) == pytest.approx(0.3)
    assert distance_to_path((2.0, 0.0), AHEAD) == pytest.approx(1.0)
    assert distance_to_path((0.0, 0.0), ()) == math.inf
    assert clip_path([(0.0, 0.0), (0.6, 0.0), (0.6, 2.0)], 1.0) == ((0.0, 0.0), (0.6, 0.0), (0.6, 0.4))
    assert distance_between_paths(AHEAD, ((0.5, -1.0), (0.5, 1.0))) == 0.0  # crossing
    assert distance_between_paths(AHEAD, ((2.0, 1.0), (3.0, 2.0))) == pytest.approx(math.sqrt(2.0))
    assert distance_between_paths(((0.5, 0.4),), AHEAD) == pytest.approx(0.4)
    assert distance_between_paths((), AHEAD) == math.inf


def test_head_on_the_lower_one_waits_and_the_higher_one_goes_on():
    """Two walkers with each other in their stretches: the first in the scenario goes on, the
    other waits; a walker crossing ahead who does not have this one in their stretch is
    waited for whatever the order."""
    towards = Neighbour("other", 1, (1.5, 0.0), True, ((1.5, 0.0), (0.5, 0.0)))
    assert _yielding(0, towards).decide(0.0, (0.0, 0.0), AHEAD)[0] is Decision.GO
    towards_first = Neighbour("other", 0, (1.5, 0.0), True, ((1.5, 0.0), (0.5, 0.0)))
    decision, whom = _yielding(1, towards_first).decide(0.0, (0.0, 0.0), AHEAD)
    assert decision is Decision.WAIT and whom == [towards_first]
    crossing = Neighbour("other", 1, (0.8, 0.3), True, ((0.8, 0.3), (0.8, 1.3)))
    assert _yielding(0, crossing).decide(0.0, (0.0, 0.0), AHEAD)[0] is Decision.WAIT
    far = Neighbour("other", 0, (1.0, PASSING_DISTANCE_M + 0.01), True, ((1.0, 0.9), (0.0, 0.9)))
    assert _yielding(1, far).decide(0.0, (0.0, 0.0), AHEAD)[0] is Decision.GO


def test_someone_standing_in_the_way_is_walked_around_once_a_period():
    standing = Neighbour("other", 1, (0.9, 0.1), False)
    y = _yielding(0, standing)
    assert y.decide(0.0, (0.0, 0.0), AHEAD)[0] is Decision.REPLAN
    y.replanned(0.0, [standing])
    assert y.decide(0.5, (0.0, 0.0), AHEAD)[0] is Decision.WAIT  # the new way still passes them
    assert y.decide(REPLAN_PERIOD_S, (0.0, 0.0), AHEAD)[0] is Decision.REPLAN
    assert y.counts.replans == 1 and y.events[0][1:] == ("person_yield", {"person": "me", "how": "replan",
                                                                          "to": ["other"]})


def test_someone_already_close_blocks_only_a_way_that_comes_closer():
    """Someone standing 0.7 m away, inside the passing distance: walking away from them or
    past them at a right angle is no reason to wait; walking towards them is (mutation: judging
    the stretch by the passing distance alone makes every way blocked, the deadlock of two
    people who stopped close)."""
    standing = Neighbour("other", 0, (0.0, 0.7), False)
    away, past, towards = ((0.0, 0.0), (0.0, -1.0)), AHEAD, ((0.0, 0.0), (0.6, 0.6))
    assert _yielding(1, standing).decide(0.0, (0.0, 0.0), away)[0] is Decision.GO
    assert _yielding(1, standing).decide(0.0, (0.0, 0.0), past)[0] is Decision.GO
    assert _yielding(1, standing).decide(0.0, (0.0, 0.0), towards)[0] is Decision.REPLAN


def test_two_close_walkers_on_converging_ways_the_lower_one_waits():
    """Two people 0.75 m apart walk side by side on ways that converge (the way each one's
    stretch passes the other's stand point never comes closer): the later in the scenario
    waits, the first goes on (mutation: judging only the other's stand point lets both walk
    into each other)."""
    mine = ((0.0, 0.0), (-1.0, 0.2))
    theirs = ((0.0, 0.75), (-1.0, 0.55))
    first = Neighbour("first", 0, theirs[0], True, theirs)
    decision, whom = _yielding(1, first).decide(0.0, mine[0], mine)
    assert decision is Decision.WAIT and whom == [first]
    second = Neighbour("second", 1, mine[0], True, mine)
    assert _yielding(0, second).decide(0.0, theirs[0], theirs)[0] is Decision.GO


def test_a_walker_who_starts_close_to_someone_standing_walks_away_and_back_past_them():
    """tests/data/people/close.yaml: the walker starts 0.7 m from someone who stands there for
    ever, walks away to the east end and back west past them, three times in 40 s: no wait,
    no walk given up, no contact (before the rule above, the first walk waited 20 s and
    failed as blocked)."""
    stats = run_scenario(load_scenario(str(CLOSE)), 40.0, seed=1)
    walker = stats["people"]["walker"]
    assert stats["person_contacts"] == 0 and stats["safety_violations"] == 0, stats
    assert walker["person_actions"] >= 5 and walker["person_actions_failed"] == 0, walker
    assert walker["yields"]["gave_up"] == 0 and walker["yields"]["waits"] == 0, walker


def test_a_wait_is_given_up_after_the_bound():
    standing = Neighbour("other", 1, (0.9, 0.1), False)
    y = _yielding(0, standing)
    t = 0.0
    while y.waiting(t, [standing]):
        t += 0.05
        assert t < GIVE_UP_S + 1.0
    assert t == pytest.approx(GIVE_UP_S)
    assert y.counts.waits == 1 and y.counts.gave_up == 1 and y.counts.wait_s == pytest.approx(GIVE_UP_S)
    assert [event for _t, event, _f in y.events] == ["person_yield", "person_yield_gave_up"]


def _walk_east(runner: Runner, sequence: int = 1) -> None:
    runner.send(ActionMessage(ActorState.MOVEMENT, "walk", 1.239, Pose(4.0, 0.0, 0.0), sequence))


def test_a_walker_waits_standing_and_gives_up_with_blocked(client, clips):  # noqa: F811
    """Someone stands in the way with no way around (no walking area): the walker stops
    before them, stands while waiting (the look-ahead says so too), and after GIVE_UP_S the
    walk fails as BLOCKED where they stand (mutation: ignoring the decision walks into them)."""
    blocker = Neighbour("other", 0, (2.0, 0.0), False)
    runner = Runner(client, clips, Pose(0.0, 0.0, 0.0), yielding=Yielding("me", 1, lambda: [blocker]))
    _walk_east(runner)
    while not runner.plugin._waiting:
        runner.step()
        assert runner.t < 5.0
    stopped = runner.plugin._motion.xy
    assert 2.0 - stopped[0] >= PASSING_DISTANCE_M + LOOKAHEAD_M - 0.2  # seen a stretch ahead
    assert runner.plugin.pelvis_xy_at(runner.t + 0.4)[0] == pytest.approx(runner.plugin.pose.x, abs=0.02)
    runner.run_until_idle(GIVE_UP_S + 2.0)
    assert runner.plugin._motion.xy == stopped
    last = runner.endpoint.feedback[-1]
    assert last.state is ActorState.IDLE and last.failure is ActorFailure.BLOCKED and 0.0 < last.progress < 1.0
    assert runner.plugin.yielding.counts.gave_up == 1


def test_a_walker_goes_on_once_the_way_is_clear(client, clips):  # noqa: F811
    others = [Neighbour("other", 0, (2.0, 0.0), True, ((2.0, 0.0), (2.0, 1.0)))]  # crossing ahead
    runner = Runner(client, clips, Pose(0.0, 0.0, 0.0), yielding=Yielding("me", 1, lambda: others))
    _walk_east(runner)
    while not runner.plugin._waiting:
        runner.step()
        assert runner.t < 5.0
    for _ in range(int(1.0 / DT)):
        runner.step()
    assert runner.plugin._waiting
    others[:] = [Neighbour("other", 0, (2.0, 3.0), True, ((2.0, 3.0), (2.0, 4.0)))]  # gone by
    runner.run_until_idle(10.0)
    assert runner.endpoint.feedback[-1].progress == 1.0 and runner.plugin._motion.xy == pytest.approx((4.0, 0.0))
    assert runner.plugin.yielding.counts.waits == 1 and runner.plugin.yielding.counts.wait_s > 1.0


def test_two_people_meeting_head_on_in_a_corridor_pass_each_other():
    """East and west walk to each other's start along a corridor 2.5 m wide, and back: west
    (the second in the scenario) waits at the side, east walks around them, both arrive each
    time, and nobody is inside anybody (mutation: a Yielding that always says GO gives
    person-person contacts; without the new way round, east waits for ever: the walks fail)."""
    stats = run_scenario(load_scenario(str(CORRIDOR)), 16.0, seed=1)
    assert stats["person_contacts"] == 0 and stats["safety_violations"] == 0, stats
    east, west = stats["people"]["east"], stats["people"]["west"]
    assert east["person_actions"] == 2 and west["person_actions"] == 2  # there and back, both
    assert east["person_actions_failed"] == 0 and west["person_actions_failed"] == 0
    assert west["yields"]["waits"] == 2 and east["yields"]["replans"] == 2, stats["people"]
    assert east["yields"]["waits"] == 0 and west["yields"]["gave_up"] == 0


def test_one_person_has_no_yielding():
    with Simulation(load_scenario("coexistence"), seed=1) as sim:
        assert sim.people[0].plugin.yielding is None
    with Simulation(load_scenario(str(PAIR)), seed=1) as sim:
        assert [person.plugin.yielding.rank for person in sim.people] == [0, 1]


@pytest.mark.slow
def test_an_hour_of_two_people_has_no_contact():
    """An hour of coexistence_pair (the worker and a visitor who crosses the room): 0 person-person
    contacts (9 before people gave way on the way), no safety violation, no walk given up."""
    stats = run_scenario(load_scenario(str(PAIR)), 3600.0, seed=1)
    assert stats["complete"] and stats["person_contacts"] == 0 and stats["safety_violations"] == 0, stats
    assert all(person["yields"]["gave_up"] == 0 for person in stats["people"].values()), stats["people"]
    assert sum(person["yields"]["waits"] + person["yields"]["replans"] for person in stats["people"].values()) > 0


def test_a_person_walks_at_their_walking_speed(tmp_path):
    """``walking_speed_mps`` of a person in ``people:`` sets how fast they walk; the others
    keep the walk clip's pace at their stride (mutation: a run that ignores the key fails)."""
    for name in ("corridor_east.xml", "corridor_west.xml"):
        (tmp_path / name).write_text((CORRIDOR.parent / name).read_text())
    text = CORRIDOR.read_text().replace("../../../trees/", str(CORRIDOR.parents[3] / "trees") + "/")
    text = text.replace("    walk_stride_m: 1.239\n  - name: west", "    walk_stride_m: 1.239\n    walking_speed_mps: 1.6\n"
                        "  - name: west", 1)
    (tmp_path / "corridor.yaml").write_text(text)
    scenario = load_scenario(str(tmp_path / "corridor.yaml"))
    assert [person.walking_speed_mps for person in scenario.people] == [1.6, None]
    with Simulation(scenario, seed=1) as sim:
        at = {}
        for k in range(int(1.0 / sim.dt) + 1):
            sim.step()
            if k in (int(0.5 / sim.dt), int(1.0 / sim.dt)):
                at[k] = [person.plugin._motion.xy[0] for person in sim.people]
        (east0, west0), (east1, west1) = at.values()
        assert east1 - east0 == pytest.approx(0.8, abs=0.01)  # 1.6 m/s for half a second
        natural = sim.people[1].plugin.clips.walk.duration
        assert west0 - west1 == pytest.approx(0.5 * 1.239 / natural, abs=0.01)
