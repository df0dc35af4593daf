"""The command line's small helps: ``--version``, ``hri list``, validate's summary, help texts."""

from __future__ import annotations

import argparse

import pytest

from hri.cli.main import _build_parser, main


def test_version(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0 and capsys.readouterr().out.startswith("hri ")


@pytest.mark.parametrize("what, expected", [
    ("scenarios", "coexistence    Coexistence (Koexistenz)"),
    ("clips", "walk                  1.27 s  walk cycle (ActorMovement)"),
    ("nodes", "Script                   action  (BehaviorTree.CPP)"),
])
def test_list_what_exists(capsys, what, expected):
    assert main(["list", what]) == 0
    assert expected in capsys.readouterr().out


def test_validate_says_what_it_checked(tmp_path, capsys):
    tree = tmp_path / "t.xml"
    tree.write_text('<root BTCPP_format="4"><BehaviorTree ID="M"><Repeat num_cycles="{n}">'
                    '<AlwaysSuccess/></Repeat></BehaviorTree></root>')
    assert main(["validate", str(tree)]) == 0
    out = capsys.readouterr()
    assert out.out == "1 file OK (1 warning)\n" and "warning: blackboard entry 'n'" in out.err


def test_every_positional_argument_has_help():
    parser = _build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    missing = [f"{name} {action.dest}" for name, sub in commands.choices.items() for action in sub._actions
               if not action.option_strings and not isinstance(action, argparse._SubParsersAction) and not action.help]
    assert missing == []


@pytest.mark.parametrize("argv, line", [
    (["run", "coexistance"], "unknown scenario 'coexistance' (did you mean 'coexistence'? presets: "),
    (["run", "coexistence", "--set", "robot.reduced_velocty=0.2"],
     "--set robot.reduced_velocty: unknown key 'robot.reduced_velocty' (did you mean 'robot.reduced_velocity'?)"),
    (["run", "coexistence", "--set", "robto.reduced_velocity=0.2"],
     "--set robto.reduced_velocity: unknown key 'robto' (did you mean 'robot'?)"),
])
def test_did_you_mean_for_scenario_names_and_set_keys(capsys, argv, line):
    assert main(argv) == 1
    assert capsys.readouterr().err.startswith(line)


def test_validate_and_render_say_the_same_of_a_missing_file(tmp_path, capsys):
    missing = tmp_path / "missing.xml"
    assert main(["validate", str(missing)]) == 1
    validate_line = capsys.readouterr().err
    assert main(["render", str(missing)]) == 1
    assert capsys.readouterr().err == validate_line == f"{missing}: file not found\n"


def test_run_help_says_what_out_writes(capsys):
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    assert "trajectory.csv" in " ".join(capsys.readouterr().out.split())


def test_an_entry_nobody_writes_is_warned_once_however_often_it_is_read(tmp_path, capsys):
    tree = tmp_path / "t.xml"
    tree.write_text('<root BTCPP_format="4"><BehaviorTree ID="M"><Sequence>\n'
                    + '<Repeat num_cycles="{walk_stride_m}"><AlwaysSuccess/></Repeat>\n' * 4
                    + '</Sequence></BehaviorTree></root>\n')
    assert main(["validate", str(tree)]) == 0
    assert capsys.readouterr().err.splitlines() == [
        f"{tree}:2: warning: blackboard entry 'walk_stride_m' is read but never written (it must come from the "
        "scenario); read at 4 places, also lines 3, 4, 5"]
