"""The example outputs the README and ``docs/*.md`` quote, their commands, and how a test checks
them (``tests/test_docs_examples.py``); run as a script, it writes what the commands print now
into the documents::

    .venv/bin/python tests/docs_examples.py --update     # then review with git diff

**Console blocks.** Every fenced block marked ``console`` in ``README.md`` and ``docs/*.md`` is
checked: each ``$ COMMAND`` line runs and the lines after it, up to the next ``$`` line, are
what it must print (its stdout, then its stderr, as a terminal shows them). ``# exit N`` at the
end of the command line is its exit status (else 0). The commands run with bash from the
repository's root, those of one document one after the other, in its order; ``.venv/bin/hri``
and ``.venv/bin/python`` are this environment's, ``runs/...`` is a temporary folder of the
document's, as is a file that the document writes out for its commands: a fenced block right
after a line ``<!-- file: NAME -->`` is the file ``NAME``.

**Quotes.** An output quoted in a sentence or a table cell is listed in :data:`QUOTES`, with
the command that prints it and a pattern that finds it in its document.

**What is not compared** (the only differences a seeded command shows from one run to the
next): the wall-clock figures ``wall_time_s`` and ``real_time_factor`` (in a JSON object or a
line of the statistics table); the temporary folder, shown as the document's ``runs/`` (or
file name); the repository's absolute path, shown as ``/…``; and the ports of ``--groot2``,
which the check takes free ones for and shows as the document's (1667 unless it names one).
"""

from __future__ import annotations

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
    """An output quoted in prose: the document, the commands (the last one prints it, the
    ones before make what it reads), its exit status, and the pattern that finds it."""

    doc: str
    commands: tuple[str, ...]
    pattern: str
    exit_status: int = 0


QUOTES = (
    Quote("docs/faults.md", (".venv/bin/hri run coexistence --strict --set net.safety.latency=0.6 --seed 10 > /dev/null",),
          r"`(--strict: safety violation at t = [^`]*)`", exit_status=3),
)

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
    """The commands of a quote: the ones before it (nothing shown), then its own."""
    found = re.findall(quote.pattern, text(quote.doc))
    assert found, f"{quote.doc}: no quote matches {quote.pattern!r} (edit QUOTES in tests/docs_examples.py)"
    before = [Example(quote.doc, command, "") for command in quote.commands[:-1]]
    return before + [Example(quote.doc, quote.commands[-1], shown, quote.exit_status, quote.pattern) for shown in found]


def all_examples() -> dict[str, list[Example]]:
    """By document, in the order its commands run: its console lines, then its quotes."""
    examples = {doc: console_examples(doc) for doc in DOCUMENTS}
    for quote in QUOTES:
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
    output = (done.stdout + done.stderr).replace(f"{folder}/", "").replace(str(ROOT), "/…")
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
    return [run(example, folder, files) for example in examples]


# --- comparing ---------------------------------------------------------------------------------

def masked(output: str) -> str:
    """The output without its wall-clock figures (in a JSON object, or a statistics table's line)."""
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
        lines.append(line)
    return "\n".join(lines)


def problem(example: Example, printed: Printed) -> str | None:
    """What differs between the document and the command, or None."""
    if printed.exit_status != example.exit_status:
        return (f"{example.id}: exit status {printed.exit_status}, the document says {example.exit_status}"
                f"\n--- it printed:\n{printed.output}")
    if example.quote is not None:
        if masked(example.shown) in masked(printed.output).split("\n"):
            return None
        return (f"{example.doc} quotes\n    {example.shown}\nbut `{example.command}` prints\n"
                + "\n".join(f"    {line}" for line in printed.output.split("\n")) + f"\n(to take it: {UPDATE})")
    if masked(example.shown) == masked(printed.output):
        return None
    import difflib

    diff = difflib.unified_diff(example.shown.split("\n"), printed.output.split("\n"), "the document", "now",
                                lineterm="", n=1)
    return f"{example.id}: prints other than the document shows\n" + "\n".join(diff) + f"\n(to take it: {UPDATE})"


# --- updating ----------------------------------------------------------------------------------

def update() -> list[str]:
    """Write what the commands print now into the documents; the documents changed."""
    import tempfile

    changed = []
    with tempfile.TemporaryDirectory() as tmp:
        for doc, examples in all_examples().items():
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
    if sys.argv[1:] != ["--update"]:
        sys.exit(f"usage: {UPDATE}")
    for doc in update():
        print(f"updated {doc}")
