"""Nodes that address a person, parts in any person's hand, and PFL's person with a real contact,
in runs with two people:

- tests/data/people/carry.yaml: the robot calls the second person by name (``SetCalledTo
  person="visitor"``); the visitor answers (``AmICalled``: their own flag), carries a part
  from the tray to the cart in their own hand and ends the call; the worker, who would walk
  off if called, is not;
- tests/data/pfl/touch.yaml: no zone near the robot (PFL alone), the arm swings through the
  second person's reach: every contact is theirs, with its body region.

Mutations these tests catch (each tried by hand):
* SetCalledTo's ``person`` ignored (the robot calls the first person): the worker walks, the
  visitor never answers;
* a person's AmICalled reading the first person's flag: the visitor never answers;
* a person's GrabPart/ReleasePart acting with the first person's hand: no part is taken;
* every PFL contact tagged with the first person: the contacts name the worker.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hri.base.errors import HriError
from hri.run.sim import run_scenario
from hri.scenario.load import load_scenario
from hri.workcell.called import CalledFlags, CalledService
from hri.net import Request

DATA = Path(__file__).parent / "data"
CARRY = DATA / "people" / "carry.yaml"
TOUCH = DATA / "pfl" / "touch.yaml"


def _events(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def carry_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("carry")
    return run_scenario(load_scenario(str(CARRY)), 11.0, seed=1, out_dir=out), _events(out)


def test_the_robot_calls_the_second_person_by_name_and_only_they_answer(carry_run):
    stats, events = carry_run
    calls = [(e["event"], e.get("person")) for e in events if e["event"] in ("person_called", "person_released")]
    assert calls == [("person_called", "visitor"), ("person_released", "visitor")]
    assert not [e for e in events if e.get("tree") == "worker" and e["event"].startswith("person_action")]
    worker, visitor = stats["people"]["worker"], stats["people"]["visitor"]
    assert (worker["human_calls"], worker["human_response_s"]) == (0, None)
    released = next(e for e in events if e["event"] == "person_released")
    assert visitor["human_calls"] == stats["human_calls"] == 1
    assert visitor["human_response_s"] == stats["human_response_s"] == released["response_s"] > 5.0
    assert stats["recoveries"] == 1 and stats["complete"] and stats["safety_violations"] == 0


def test_the_second_person_carries_a_part_in_their_own_hand(carry_run):
    stats, events = carry_run
    picked = [e for e in events if e["event"] == "part_picked"]
    placed = [e for e in events if e["event"] == "part_placed"]
    assert [(e["by"], e["person"]) for e in picked] == [("person", "visitor")]
    assert [(e["by"], e["person"], e["surface"]) for e in placed] == [("person", "visitor", "cart")]
    # put down 0.7 m ahead of the visitor at the cart (5.0, 3.85, facing +y), give or take the spread
    assert abs(placed[0]["x"] - 5.0) <= 0.25 + 1e-9 and placed[0]["y"] == pytest.approx(3.85 + 0.7, abs=1e-3)
    assert stats["parts"]["taken_by_person"] == 1 and stats["parts_shelved"] == 1
    assert stats["people"]["visitor"]["parts"] == {"taken": 1, "put": {"cart": 1}}  # each person's tally
    assert stats["people"]["worker"]["parts"] == {"taken": 0, "put": {}}


def test_a_person_port_naming_nobody_is_a_load_time_error_at_its_line(tmp_path):
    tree = tmp_path / "robot.xml"
    tree.write_text('<root BTCPP_format="4">\n  <BehaviorTree ID="T">\n'
                    '    <SetCalledTo state="true" person="nobody"/>\n  </BehaviorTree>\n</root>\n')
    with pytest.raises(HriError) as caught:
        load_scenario(str(CARRY), [f"trees.robot={tree}"])
    assert caught.value.file == str(tree) and caught.value.line == 3
    assert "no person 'nobody' in the scenario (people: worker, visitor)" in str(caught.value)
    # a one-person scenario's person is "person"
    tree.write_text('<root BTCPP_format="4"><BehaviorTree ID="T"><IsCalled person="person"/></BehaviorTree></root>')
    load_scenario("coexistence", [f"trees.robot={tree}"])


def test_a_blackboard_value_naming_nobody_is_an_error_at_the_scenarios_line(tmp_path):
    tree = tmp_path / "robot.xml"
    tree.write_text('<root BTCPP_format="4"><BehaviorTree ID="T"><IsCalled person="{whom}"/></BehaviorTree></root>')
    with pytest.raises(HriError, match=r"blackboard\.whom: no person 'nobody'.*IsCalled port 'person'"):
        load_scenario(str(CARRY), [f"trees.robot={tree}", "blackboard.whom=nobody"])
    load_scenario(str(CARRY), [f"trees.robot={tree}", "blackboard.whom=worker"])


def test_a_name_made_at_run_time_naming_nobody_ends_the_run_with_one_line(tmp_path):
    tree = tmp_path / "robot.xml"
    tree.write_text('<root BTCPP_format="4"><BehaviorTree ID="T"><Sequence>\n'
                    '<Script code="whom:=\'nobody\'"/>\n<SetCalledTo state="true" person="{whom}"/>\n'
                    '</Sequence></BehaviorTree></root>\n')
    with pytest.raises(HriError) as caught:
        run_scenario(load_scenario(str(CARRY), [f"trees.robot={tree}"]), 1.0, seed=1)
    assert (caught.value.file, caught.value.line) == (str(tree), 3)
    assert "SetCalledTo" in str(caught.value) and "no person 'nobody'" in str(caught.value)


def _set(service: CalledService, payload) -> bool:
    return service._set(Request(None, 0, 1, "called", "set", payload, 0.0))


def test_each_person_has_a_flag_of_their_own_and_the_stream_names_those_called():
    log = []
    flags = CalledFlags(["worker", "visitor"], lambda t, event, **fields: log.append((event, fields)), lambda: 1.0)
    service = CalledService(flags)
    assert flags.state() == []
    assert _set(service, {"person": "visitor", "state": True}) is True
    assert flags.state() == ["visitor"] and not flags.flag("worker").get()
    assert _set(service, True) is True  # a bare value: the first person's
    assert flags.state() == ["worker", "visitor"] and flags.calls == 2
    with pytest.raises(HriError, match="no person 'nobody'"):
        _set(service, {"person": "nobody", "state": True})
    assert log == [("person_called", {"person": "visitor"}), ("person_called", {"person": "worker"})]
    one = CalledFlags(["person"], lambda t, event, **fields: log.append((event, fields)), lambda: 1.0)
    assert one.state() is False and not one.several


def test_pfl_contacts_with_the_second_person_name_them_and_the_body_region(tmp_path):
    stats = run_scenario(load_scenario(str(TOUCH)), 2.0, seed=1, out_dir=tmp_path)
    contacts = [e for e in _events(tmp_path) if e["event"] == "pfl_contact"]
    assert len(contacts) == stats["pfl_contacts"] >= 1
    assert {e["person"] for e in contacts} == {"visitor"}
    assert all(e["region"] and e["person_link"] for e in contacts)
    visitor, worker = stats["people"]["visitor"], stats["people"]["worker"]
    assert (worker["pfl_contacts"], worker["pfl_violations"], worker["pfl_worst_region"]) == (0, 0, None)
    assert (visitor["pfl_contacts"], visitor["pfl_violations"]) == (stats["pfl_contacts"], stats["pfl_violations"])
    assert visitor["pfl_worst_region"] == stats["pfl_worst_region"] in {e["region"] for e in contacts}
    assert visitor["pfl_worst_ratio"] == stats["pfl_worst_ratio"] == max(e["ratio"] for e in contacts)
