"""Every seeded example output the README and ``docs/*.md`` quote is what its command prints
now: the console blocks (``$ COMMAND`` and its output) and the quotes of ``QUOTES``, run and
compared as ``tests/docs_examples.py`` says (exactly, but for the wall-clock figures, the
temporary folders and the Groot2 ports). A document whose output drifted fails here with the
difference; ``.venv/bin/python tests/docs_examples.py --update`` writes the new outputs in.

The documents run side by side, each one's commands in its order: about 20 s of processor
time. The quotes of long runs (the batch of docs/statistics.md, about 80 s) and the figures of
seeded hours (the README's table of the presets, docs/safety.md's hour of SSM: four one-hour
runs, about 6 minutes) run with ``-m slow``.
"""

from __future__ import annotations

import json
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import docs_examples
from docs_examples import Example, Printed

EXAMPLES = docs_examples.all_examples()
CHECKED = [example for examples in EXAMPLES.values() for example in examples]
SLOW_EXAMPLES = docs_examples.all_examples(slow=True)
SLOW = [example for examples in SLOW_EXAMPLES.values() for example in examples]


def _run_all(examples: dict[str, list[Example]], folder: Path) -> list[Printed]:
    """What every example's command printed, in order: the documents side by side."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        done = [pool.submit(docs_examples.run_document, doc, found, folder / doc.replace("/", "_"))
                for doc, found in examples.items()]
        return [output for future in done for output in future.result()]


@pytest.fixture(scope="module")
def printed(tmp_path_factory: pytest.TempPathFactory) -> list[Printed]:
    return _run_all(EXAMPLES, tmp_path_factory.mktemp("docs"))


@pytest.fixture(scope="module")
def printed_slowly(tmp_path_factory: pytest.TempPathFactory) -> list[Printed]:
    return _run_all(SLOW_EXAMPLES, tmp_path_factory.mktemp("slow_docs"))


def _check(example: Example, printed: Printed) -> None:
    problem = docs_examples.problem(example, printed)
    if problem is not None:
        pytest.fail(problem, pytrace=False)


@pytest.mark.parametrize("index", range(len(CHECKED)), ids=[example.id for example in CHECKED])
def test_the_document_shows_what_its_command_prints(index: int, printed: list[Printed]):
    _check(CHECKED[index], printed[index])


@pytest.mark.slow
@pytest.mark.parametrize("index", range(len(SLOW)), ids=[example.id for example in SLOW])
def test_the_document_shows_what_its_long_command_prints(index: int, printed_slowly: list[Printed]):
    _check(SLOW[index], printed_slowly[index])


@pytest.fixture(scope="module")
def hour_stats(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    """The statistics of every run of ``FIGURES``, by command (two at a time)."""
    commands = sorted({command for figures in docs_examples.FIGURES for command in figures.runs.values()})
    folder = tmp_path_factory.mktemp("figures")
    with ThreadPoolExecutor(max_workers=2) as pool:
        done = list(pool.map(lambda command: docs_examples.run(Example("", command, ""), folder, {}), commands))
    assert all(printed.exit_status == 0 for printed in done), done
    return {command: json.loads(printed.output) for command, printed in zip(commands, done)}


@pytest.mark.slow
@pytest.mark.parametrize("figures", docs_examples.FIGURES, ids=[figures.doc for figures in docs_examples.FIGURES])
def test_the_figures_of_seeded_hours_are_what_the_runs_give(figures, hour_stats: dict[str, dict]):
    stats = {name: hour_stats[command] for name, command in figures.runs.items()}
    missing = docs_examples.missing_figures(figures, stats)
    assert not missing, f"{figures.doc} should say (what its runs give now):\n" + "\n".join(missing)


def test_the_examples_the_documents_quote_are_all_checked():
    """The examples named in the issue and the docs are among the checked ones, so that none
    is skipped silently by a change of the block's form."""
    commands = {(example.doc, example.command) for example in CHECKED + SLOW}
    must = {("docs/faults.md", "--strict --set net.safety.latency=0.6 --seed 10"),
            ("docs/tutorial_btcpp.md", "--duration 60 --seed 1 --json --out runs/tutorial"),
            ("docs/tutorial_btcpp.md", "--duration 60 --seed 1 --json --set blackboard.bench_rounds=3"),
            ("docs/tutorial_btcpp.md", "render docs/examples/btcpp_tutorial/person.xml --run runs/tutorial --at 14"),
            ("docs/visualisation.md", "render trees/coexistence_robot.xml --run runs/moment --at 120"),
            ("docs/visualisation.md", "--show-trees"),
            ("docs/visualisation.md", "replay runs/replay --groot2"),
            ("docs/visualisation.md", "--groot2 > /dev/null"),
            ("docs/trees.md", "validate tree.xml"),
            ("docs/statistics.md", "stats runs/batch --format markdown"),
            ("docs/tutorial_workcell.md", "hri.kinematics docs/examples/workcell/my_arm.urdf --tool-link flange"),
            ("docs/tutorial_workcell.md", "my_workcell.yaml --duration 120 --seed 1 --json --out runs/workcell"),
            ("docs/tutorial_workcell.md", "stats runs/workcell"),
            ("docs/tutorial_workcell.md", "validate runs/twins.yaml")}
    for doc, part in must:
        assert any(d == doc and part in command for d, command in commands), (doc, part)
    shown = sum(bool(example.shown) for example in CHECKED)
    assert shown >= len(must) - 1  # each of those shows output (the replay's run does not)


def test_every_console_block_of_the_documents_has_a_command():
    """A ``console`` block whose ``$`` lost its space would check nothing."""
    for doc in docs_examples.DOCUMENTS:
        for block in re.findall(r"^```console\n(.*?)^```", docs_examples.text(doc), re.DOTALL | re.MULTILINE):
            assert block.startswith("$ "), (doc, block[:80])


def test_a_changed_digit_fails(tmp_path: Path):
    """A document whose quoted output is one digit off fails, with the difference and how to
    take the new output (the check cannot pass whatever the document says)."""
    example = next(e for e in CHECKED if e.doc == "docs/faults.md")
    good = docs_examples.run_document(example.doc, [example], tmp_path)[0]
    assert docs_examples.problem(example, good) is None
    digit = re.search(r"\d", example.shown)
    assert digit is not None
    wrong = str((int(digit.group()) + 1) % 10)
    edited = Example(example.doc, example.command, example.shown[:digit.start()] + wrong
                     + example.shown[digit.end():], example.exit_status, example.quote)
    message = docs_examples.problem(edited, good)
    assert message is not None and docs_examples.UPDATE in message


def test_the_time_an_inverse_kinematics_took_is_not_compared_but_its_result_is():
    """``python -m hri.kinematics`` prints how long its IK took (milliseconds of the wall
    clock): another time passes, another iteration count does not."""
    example = next(e for e in CHECKED if "hri.kinematics" in e.command and "--tool-link flange" in e.command)
    line = re.search(r"^IK to \(.*, (\d+) iterations, ([0-9.]+) ms$", example.shown, re.MULTILINE)
    assert line is not None, example.shown
    at = example.shown.index(line.group(0))
    def printed(text: str) -> Printed:
        return Printed(0, example.shown[:at] + text + example.shown[at + len(line.group(0)):])
    slower = line.group(0)[:line.start(2) - line.start()] + "123.45 ms"
    assert docs_examples.problem(example, printed(slower)) is None
    more = line.group(0).replace(f"{line.group(1)} iterations", f"{int(line.group(1)) + 1} iterations")
    assert docs_examples.problem(example, printed(more)) is not None


def test_a_figure_one_digit_off_is_missing():
    """The check of ``FIGURES`` finds a figure the document does not say (here with the
    --strict line's figures, which the quick check above runs)."""
    line = docs_examples.Figures("docs/faults.md", {"run": ""}, ("at t = {run:t:.3f} s (step {run:step}, warning zone)",))
    assert docs_examples.missing_figures(line, {"run": {"t": 1.504, "step": 361}}) == []
    assert docs_examples.missing_figures(line, {"run": {"t": 1.504, "step": 362}}) == [
        "at t = 1.504 s (step 362, warning zone)"]
