"""The example outputs the README and ``docs/*.md`` quote, their commands, and how a test checks
them (``tests/test_docs_examples.py``); run as a script, it writes what the commands print now
into the documents::

    .venv/bin/python tests/docs_examples.py --update          # then review with git diff
    .venv/bin/python tests/docs_examples.py --update --slow   # the quotes of long runs (minutes)

**Console blocks.** Every fenced block marked ``console`` in ``README.md`` and ``docs/*.md`` is
checked: each ``$ COMMAND`` line runs and the lines after it, up to the next ``$`` line, are
what it must print (its stdout, then its stderr, as a terminal shows them). ``# exit N`` at the
end of the command line is its exit status (else 0). The commands run with bash from the
repository's root, those of one document one after the other, in its order; ``.venv/bin/hri``
and ``.venv/bin/python`` are this environment's, ``runs/...`` is a temporary folder of the
document's, as is a file that the document writes out for its commands: a fenced block right
after a line ``<!-- file: NAME -->`` is the file ``NAME``.

**Quotes.** An output quoted in a sentence, a table cell or in part is listed in
:data:`QUOTES`, with the commands that print it and the patterns that find it in its document:
every line of the quote must be a line of the output. Those of long runs are ``slow``
(``pytest -m slow tests/test_docs_examples.py``).

**What is not compared** (the only differences a seeded command shows from one run to the
next): the wall-clock figures ``wall_time_s`` and ``real_time_factor`` (in a JSON object or a
line of the statistics table) and the milliseconds an inverse kinematics took in ``python -m
hri.kinematics``; the temporary folder, shown as the document's ``runs/`` (or
file name); the repository's absolute path, shown as ``/…``; and the ports of ``--groot2``,
which the check takes free ones for and shows as the document's (1667 unless it names one).
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from hri.bench.groot2_cost import free_base_port
from hri.run.stats import WALL_CLOCK_KEYS

ROOT = Path(__file__).resolve().parent.parent
DOCUMENTS = ("README.md", *sorted(f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md")))
BIN = Path(sys.executable).parent
HRI = shutil.which("hri", path=str(BIN)) or str(BIN / "hri")
MASKED = "(wall clock)"
DEFAULT_GROOT2_PORT = 1667


@functools.cache
def installed_package() -> str | None:
    """Where the ``hri`` the commands run is installed, when not in this checkout (``pip
    install .``, as CI does): its ``trees/``, ``scenarios/`` and ``assets/`` are the
    checkout's, so a path into them is shown as the checkout's."""
    found = subprocess.run([str(ROOT / ".venv" / "bin" / "python"), "-c", "import hri, os; print(os.path.dirname(hri.__file__))"],
                           cwd="/", capture_output=True, text=True, check=False).stdout.strip()
    return found if found and Path(found) != ROOT / "hri" else None
TIMEOUT_S = 600
UPDATE = ".venv/bin/python tests/docs_examples.py --update"


@dataclass(frozen=True)
class Example:
    """One command of a document and what the document shows it print (``shown``: a console
    block's lines, or a quoted text that must be one line of the output)."""

    doc: str
    command: str
    shown: str
    exit_status: int = 0
    quote: str | None = None  # a quote's pattern (one group: the quoted text); None for a console line

    @property
    def id(self) -> str:
        return f"{self.doc}: {self.command}"


@dataclass(frozen=True)
class Quote:
    """Output quoted in prose or a table: the document, the commands (the last one prints it,
    the ones before make what it reads), its exit status, and the patterns that find the
    quotes in the document (one group each: the quoted text, whose every line must be a line
    of the output). ``slow``: its commands take minutes, checked with ``-m slow``."""

    doc: str
    commands: tuple[str, ...]
    patterns: tuple[str, ...]
    exit_status: int = 0
    slow: bool = False


QUOTES = (
    Quote("docs/faults.md", (".venv/bin/hri run coexistence --strict --set net.safety.latency=0.6 --seed 10 > /dev/null",),
          (r"`(--strict: safety violation at t = [^`]*)`",), exit_status=3),
    Quote("docs/statistics.md",
          (".venv/bin/hri batch cooperation --runs 5 --duration 300 --set 'robot.reduced_velocity=0.1,0.3' "
           "--out runs/batch > /dev/null",
           ".venv/bin/hri stats runs/batch --format markdown"),
          (r"Part of the output [^\n]*\n\n(\| metric \| n \|.*?)\n\n",
           r"\n`(0 in every run \(not shown\): [^`]*)`\n",
           r"\n(\| metric \| reduced_velocity=0\.1 mean.*?)\n\n",
           r"\n(\| safety figure \| worse \| n \|.*?)\n\n"), slow=True),
)

@dataclass(frozen=True)
class Figures:
    """Figures of seeded runs written into prose or a table: ``runs`` names each run's command
    (``--json``: its statistics), ``templates`` are the document's text with ``{RUN:KEY}`` or
    ``{RUN:KEY:SPEC}`` where a figure stands (KEY dotted into the statistics, SPEC a format
    spec); each template filled in must be in the document (whitespace as one space). Their
    runs take minutes: checked with ``-m slow``."""

    doc: str
    runs: dict[str, str]
    templates: tuple[str, ...]


_PRESET_HOUR = ".venv/bin/hri run {} --duration 3600 --seed 1 --json"
FIGURES = (
    Figures("README.md", {name: _PRESET_HOUR.format(name) for name in ("coexistence", "cooperation", "collaboration")}, (
        "| robot cycles | {coexistence:robot_cycles} | {cooperation:robot_cycles} ({cooperation:parts_good} good, "
        "{cooperation:parts_bad} bad parts) | {collaboration:robot_cycles} |",
        "| person in safe / warning / stop zone (s) | " + " | ".join(
            " / ".join(f"{{{name}:zone_time_s.{zone}:.0f}}" for zone in ("safe", "warning", "stop"))
            for name in ("coexistence", "cooperation", "collaboration")) + " |",
        "| entries into the stop zone / protective stops | " + " | ".join(
            f"{{{name}:zone_entries.stop}} / {{{name}:protective_stops}}"
            for name in ("coexistence", "cooperation", "collaboration")) + " |",
        "| calls of the person, mean response (s) | — | {cooperation:human_calls}, {cooperation:human_response_s:.1f} "
        "({cooperation:parts_shelved} parts shelved) | {collaboration:human_calls}, "
        "{collaboration:human_response_s:.1f} ({collaboration:robot_failures} robot failures) |",
        "| minimum separation (m) | {coexistence:min_separation_m:.2f} | {cooperation:min_separation_m:.2f} | "
        "{collaboration:min_separation_m:.2f} |",
        "| deepest intrusion into the stop zone before the robot rested (m) | {coexistence:max_stop_intrusion_m:.2f} | "
        "{cooperation:max_stop_intrusion_m:.2f} | {collaboration:max_stop_intrusion_m:.2f} |",
        "| safety violations | {coexistence:safety_violations} | {cooperation:safety_violations} | "
        "{collaboration:safety_violations} |",
    )),
    Figures("docs/safety.md", {"ssm": ".venv/bin/hri run collaboration --set safety.mode=ssm --duration 3600 --seed 1 --json",
                               "zones": _PRESET_HOUR.format("collaboration")}, (
        "`hri run collaboration --set safety.mode=ssm --duration 3600 --seed 1 --json`: {ssm:robot_cycles} robot cycles "
        "({zones:robot_cycles} with the zones), {ssm:safety_violations} safety violations, smallest separation "
        "{ssm:min_separation_m:.3f} m, `ssm_margin_min_m` {ssm:ssm_margin_min_m:.3f} m, {ssm:ssm_stops} `ssm_stops` "
        "(brief: {ssm:speed_band_time_s.0:.0f} s at rest in all), `speed_band_time_s` {ssm:speed_band_time_s.0:.0f} s "
        "at 0, {ssm:speed_band_time_s.0-25%:.0f} s up to 25 %, {ssm:speed_band_time_s.25-50%:.0f} s to 50 %, "
        "{ssm:speed_band_time_s.50-75%:.0f} s to 75 %, {ssm:speed_band_time_s.75-100%:.0f} s below full and "
        "{ssm:speed_band_time_s.100%:.0f} s at full speed; `pfl_contacts` {ssm:pfl_contacts}.",
    )),
    Figures("docs/tutorial_workcell.md",
            {"run": ".venv/bin/hri run docs/examples/workcell/my_workcell.yaml --duration 120 --seed 1 --json"}, (
        "{run:robot_cycles} robot cycles, {run:safety_violations} safety violations, {run:person_contacts} person "
        "contacts (nobody inside anybody)",
        "({run:people.worker.zone_time_s.safe:.0f} s in the safe zone), the visitor came into the warning zone "
        "{run:people.visitor.zone_entries.warning} times, and the robot moved at 10 % for the "
        "{run:robot_time_s.reduced:.0f} s they were there",
    )),
)
_FIGURE = re.compile(r"\{(\w+):([^:{}]+)(?::([^{}]*))?\}")


def filled(template: str, stats: dict[str, dict]) -> str:
    """The template with each ``{RUN:KEY:SPEC}`` the run's figure."""
    def figure(match: re.Match) -> str:
        value: object = stats[match.group(1)]
        for part in match.group(2).split("."):
            assert isinstance(value, dict), match.group(0)
            value = value[part]
        return format(value, match.group(3) or "")
    return _FIGURE.sub(figure, template)


def missing_figures(figures: Figures, stats: dict[str, dict]) -> list[str]:
    """The filled-in templates the document does not hold."""
    prose = " ".join(text(figures.doc).split())
    return [line for line in (filled(t, stats) for t in figures.templates) if " ".join(line.split()) not in prose]


_CONSOLE = re.compile(r"^```console\n(.*?)^```", re.DOTALL | re.MULTILINE)
_FILE = re.compile(r"^<!-- file: (\S+) -->\n```[^\n]*\n(.*?)^```", re.DOTALL | re.MULTILINE)
_EXIT = re.compile(r"\s#\s*exit (\d+)\s*$")


def text(doc: str) -> str:
    return (ROOT / doc).read_text()


def console_examples(doc: str) -> list[Example]:
    """Every ``$ command`` of the document's console blocks, with what the block shows."""
    examples = []
    for block in _CONSOLE.findall(text(doc)):
        for chunk in re.split(r"^\$ ", block, flags=re.MULTILINE)[1:]:
            command, _, shown = chunk.partition("\n")
            code = _EXIT.search(command)
            examples.append(Example(doc, command.strip(), shown.rstrip("\n"), int(code.group(1)) if code else 0))
    return examples


def doc_files(doc: str) -> dict[str, str]:
    """The files the document writes out for its commands (``<!-- file: NAME -->``)."""
    return dict(_FILE.findall(text(doc)))


def quote_examples(quote: Quote) -> list[Example]:
    """The commands of a quote: the ones before it (nothing shown), then its own, once for
    each quote found (it runs once: :func:`run_document`)."""
    before = [Example(quote.doc, command, "") for command in quote.commands[:-1]]
    quoted = []
    for pattern in quote.patterns:
        found = re.findall(pattern, text(quote.doc), re.DOTALL)
        assert found, f"{quote.doc}: no quote matches {pattern!r} (edit QUOTES in tests/docs_examples.py)"
        quoted += [Example(quote.doc, quote.commands[-1], shown, quote.exit_status, pattern) for shown in found]
    return before + quoted


def all_examples(slow: bool = False) -> dict[str, list[Example]]:
    """By document, in the order its commands run: its console lines, then its quotes; with
    ``slow``, only the slow quotes."""
    examples = {doc: [] if slow else console_examples(doc) for doc in DOCUMENTS}
    for quote in QUOTES:
        if quote.slow == slow:
            examples[quote.doc] = examples.get(quote.doc, []) + quote_examples(quote)
    return {doc: found for doc, found in examples.items() if found}


# --- running ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Printed:
    exit_status: int
    output: str  # stdout, then stderr, in the document's terms (its runs/ and ports, /… for the repository)


def run(example: Example, folder: Path, files: dict[str, str]) -> Printed:
    """Run the example's command with the document's folder; what it printed, in the document's terms."""
    command, groot2 = example.command, None
    for name in files:
        command = re.sub(rf"(?<![\w/.-]){re.escape(name)}(?![\w/.-])", f"{folder}/{name}", command)
    command = re.sub(r"(?<![\w/.-])runs/", f"{folder}/runs/", command)
    command = command.replace(".venv/bin/hri", HRI).replace(".venv/bin/python", sys.executable)
    given = re.search(r"--groot2(?:[ =](\d+))?(?![\w-])", command)
    if given:
        groot2 = (int(given.group(1) or DEFAULT_GROOT2_PORT), free_base_port())
        command = command[:given.start()] + f"--groot2 {groot2[1]}" + command[given.end():]
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    done = subprocess.run(["bash", "-c", command], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=TIMEOUT_S, check=False)
    output = done.stdout + done.stderr
    for shown_as in (f"{folder}/", f"{os.path.relpath(folder, ROOT)}/"):  # a path printed as given or relative
        output = output.replace(shown_as, "")
    installed = installed_package()
    if installed is not None:  # a non-editable install's trees and scenarios stand for the checkout's
        output = output.replace(f"{installed}/", f"{ROOT}/")
    output = output.replace(str(ROOT), "/…")
    if groot2 is not None:
        shown, used = groot2
        output = re.sub(r"\b(port|publisher) (\d+)\b", lambda m: f"{m.group(1)} {int(m.group(2)) - used + shown}"
                        if used <= int(m.group(2)) < used + 4 else m.group(0), output)
    return Printed(done.returncode, output.rstrip("\n"))


def run_document(doc: str, examples: list[Example], folder: Path) -> list[Printed]:
    """Every example of one document, in order, in its folder (its files written there first)."""
    files = doc_files(doc)
    folder.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        (folder / name).write_text(content)
    printed: list[Printed] = []
    quoted: dict[str, Printed] = {}  # a command that prints several quotes runs once
    for example in examples:
        if example.quote is None:
            printed.append(run(example, folder, files))
        else:
            if example.command not in quoted:
                quoted[example.command] = run(example, folder, files)
            printed.append(quoted[example.command])
    return printed


# --- comparing ---------------------------------------------------------------------------------

_IK_TIME = re.compile(r"^(IK to .*, \d+ iterations, )[0-9.]+ ms$")  # python -m hri.kinematics


def masked(output: str) -> str:
    """The output without its wall-clock figures (in a JSON object, a statistics table's line,
    an inverse kinematics' time)."""
    lines = []
    for line in output.split("\n"):
        if line.startswith("{") and line.endswith("}"):
            try:
                figures = json.loads(line)
            except ValueError:
                figures = None
            if isinstance(figures, dict):
                figures.update({key: MASKED for key in WALL_CLOCK_KEYS if key in figures})
                line = json.dumps(figures)
        line = re.sub(rf"^({'|'.join(WALL_CLOCK_KEYS)})(\s+)\S+$", rf"\1\2{MASKED}", line)
        line = _IK_TIME.sub(rf"\1{MASKED} ms", line)
        lines.append(line)
    return "\n".join(lines)


def problem(example: Example, printed: Printed) -> str | None:
    """What differs between the document and the command, or None."""
    if printed.exit_status != example.exit_status:
        return (f"{example.id}: exit status {printed.exit_status}, the document says {example.exit_status}"
                f"\n--- it printed:\n{printed.output}")
    if example.quote is not None:
        lines = set(masked(printed.output).split("\n"))
        if all(line in lines for line in masked(example.shown).split("\n") if line):
            return None
        return (f"{example.doc} quotes\n" + "\n".join(f"    {line}" for line in example.shown.split("\n"))
                + f"\nbut `{example.command}` prints\n"
                + "\n".join(f"    {line}" for line in printed.output.split("\n")) + f"\n(to take it: {UPDATE})")
    if masked(example.shown) == masked(printed.output):
        return None
    import difflib

    diff = difflib.unified_diff(example.shown.split("\n"), printed.output.split("\n"), "the document", "now",
                                lineterm="", n=1)
    return f"{example.id}: prints other than the document shows\n" + "\n".join(diff) + f"\n(to take it: {UPDATE})"


# --- updating ----------------------------------------------------------------------------------

def update(slow: bool = False) -> list[str]:
    """Write what the commands print now into the documents (with ``slow``, those of the slow
    quotes); the documents changed."""
    import tempfile

    changed = []
    with tempfile.TemporaryDirectory() as tmp:
        for doc, examples in all_examples(slow).items():
            printed = run_document(doc, examples, Path(tmp) / doc.replace("/", "_"))
            new = text(doc)
            for example, now in zip(examples, printed):
                if problem(example, now) is None:
                    continue
                if example.quote is None:
                    old = f"$ {example.command}\n" + (example.shown + "\n" if example.shown else "")
                    new = new.replace(old, f"$ {example.command}\n" + (now.output + "\n" if now.output else ""), 1)
                elif len(now.output.split("\n")) == 1:
                    new = new.replace(example.shown, now.output)
                else:
                    print(f"{doc}: a quote from several lines; edit it by hand:\n{now.output}", file=sys.stderr)
                if now.exit_status != example.exit_status:
                    print(f"{example.id}: exits {now.exit_status}; edit its '# exit N' by hand", file=sys.stderr)
            if new != text(doc):
                (ROOT / doc).write_text(new)
                changed.append(doc)
    return changed


if __name__ == "__main__":
    if sys.argv[1:] not in (["--update"], ["--update", "--slow"]):
        sys.exit(f"usage: {UPDATE} [--slow]")
    for doc in update(slow=sys.argv[2:] == ["--slow"]):
        print(f"updated {doc}")
