"""How many of BehaviorTree.CPP's own tree documents does ``hri validate`` accept?

    .venv/bin/python scripts/btcpp_tree_acceptance.py BTCPP_CHECKOUT \\
        [--oracle-python PY] [--hri HRI] [--out DIR]

1. Finds every tree document in the checkout's ``tests/`` and ``examples/``: the ``.xml``
   files, and in ``.cpp`` files the string literals (raw ``R"(...)"``, ``R"xml(...)xml"``, plain
   ``"..."``, adjacent literals concatenated) that hold a ``<root`` element; each keeps its
   origin ``FILE:LINE``.
2. Keeps those the real library loads with a bare factory (built-in nodes only): each is
   registered and its main tree (else every registered tree) created by behaviortreepy, run in
   ``--oracle-python`` (default: this interpreter), one process per document so that a crash
   of the library costs only that document.
3. Writes the documents under ``--out`` (``.xml`` files at their own relative path, so that
   ``<include path>`` still resolves) and runs ``hri validate`` on each loaded one.
4. Prints the figures and the refusals grouped by hri's message; writes ``results.json``.

Needs no build of the checkout: only Python and behaviortreepy.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from xml.etree import ElementTree

SEARCHED = ("tests", "examples")
TIMEOUT_S = 60

ORACLE_PROGRAM = r"""
import json, os, sys
import behaviortreepy as bt
request = json.load(sys.stdin)
factory = bt.BehaviorTreeFactory()
trees = []
try:
    factory.register_behavior_tree_from_text(request["text"])
    ids = [request["main"]] if request["main"] else list(factory.registered_behavior_trees())
    if not ids:
        raise RuntimeError("no tree registered")
    trees = [factory.create_tree(tree_id) for tree_id in ids]
    print(json.dumps({"loaded": True, "error": ""}), flush=True)
except Exception as err:
    print(json.dumps({"loaded": False, "error": str(err)}), flush=True)
os._exit(0)
"""
"""Run inside the oracle interpreter: loads one document, prints whether it loaded.

It leaves without destroying the trees: that halts every node, which runs their
``_onHalted`` scripts, and one that raises there (as ``done = true`` before ``done`` exists)
aborts the process although the document loaded."""


@dataclass(frozen=True)
class Document:
    """One tree document: where it comes from and its text."""

    origin: str
    """``RELATIVE_FILE:LINE`` of its ``<root`` element in the checkout."""
    text: str
    source: str
    """The checkout-relative file it was found in."""

    @property
    def from_xml_file(self) -> bool:
        return self.source.endswith(".xml")


@dataclass
class Result:
    """What the oracle and hri made of one document."""

    origin: str
    written_to: str
    loaded: bool
    oracle_error: str
    accepted: bool | None
    hri_message: str


# --- finding the documents -------------------------------------------------------------------

_LITERAL_START = re.compile(r'(?:u8|u|U|L)?R"([^()\\\s]{0,16})\(|(?:u8|u|U|L)?"|//|/\*|\'')
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "\\": "\\", '"': '"', "'": "'", "?": "?",
            "a": "\a", "b": "\b", "f": "\f", "v": "\v"}


def _unescape(body: str) -> str:
    """The value of an ordinary C++ string literal's body (the escapes the sources use)."""
    def replace(match: re.Match[str]) -> str:
        escape = match.group(1)
        if escape[0] == "x":
            return chr(int(escape[1:], 16))
        if escape[0] in "01234567" and len(escape) > 1:
            return chr(int(escape, 8))
        return _ESCAPES.get(escape, escape)
    return re.sub(r"\\(x[0-9a-fA-F]+|[0-7]{1,3}|.)", replace, body, flags=re.DOTALL)


def _literals(source: str) -> Iterator[tuple[int, int, str]]:
    """Every string literal of a C++ source: ``(start offset, end offset, value)``.

    Comments and character literals are skipped so that a quote inside them starts nothing.
    """
    pos = 0
    while (match := _LITERAL_START.search(source, pos)) is not None:
        token = match.group(0)
        if token == "//":
            end = source.find("\n", match.end())
            pos = len(source) if end < 0 else end
        elif token == "/*":
            end = source.find("*/", match.end())
            pos = len(source) if end < 0 else end + 2
        elif token == "'":
            end = re.compile(r"(?:\\.|[^'\\\n])*'").match(source, match.end())
            pos = end.end() if end else match.end()
        elif match.group(1) is not None:
            closing = ")" + match.group(1) + '"'
            end = source.find(closing, match.end())
            end = len(source) if end < 0 else end
            yield match.start(), end + len(closing), source[match.end():end]
            pos = end + len(closing)
        else:
            end = re.compile(r'(?:\\.|[^"\\\n])*"').match(source, match.end())
            if end is None:
                pos = match.end()
                continue
            yield match.start(), end.end(), _unescape(source[match.end():end.end() - 1])
            pos = end.end()


def _concatenated(source: str) -> Iterator[tuple[int, str]]:
    """Adjacent literals joined as the compiler joins them: ``(start offset, value)``."""
    group_start, group_end, value = -1, -1, ""
    for start, end, text in _literals(source):
        between = source[group_end:start] if group_start >= 0 else None
        if between is not None and re.fullmatch(r"(?:\s|//[^\n]*\n|/\*.*?\*/)*", between, re.DOTALL):
            value += text
        else:
            if group_start >= 0:
                yield group_start, value
            group_start, value = start, text
        group_end = end
    if group_start >= 0:
        yield group_start, value


def cpp_documents(source: str, relative: str) -> Iterator[Document]:
    """The tree documents held by string literals of one ``.cpp`` file."""
    for start, value in _concatenated(source):
        root = value.find("<root")
        if root < 0:
            continue
        # The raw string's own newlines locate <root; for a concatenation this is approximate.
        line = source.count("\n", 0, start) + 1 + value.count("\n", 0, root)
        yield Document(f"{relative}:{line}", value, relative)


def xml_document(text: str, relative: str) -> Document:
    root = text.find("<root")
    line = text.count("\n", 0, root) + 1 if root >= 0 else 1
    return Document(f"{relative}:{line}", text, relative)


def find_documents(checkout: Path) -> list[Document]:
    """Every tree document of the checkout's tests/ and examples/, in path order."""
    documents: list[Document] = []
    for folder in SEARCHED:
        for path in sorted((checkout / folder).rglob("*")):
            relative = path.relative_to(checkout).as_posix()
            if path.suffix == ".xml" and path.is_file():
                documents.append(xml_document(path.read_text(encoding="utf-8", errors="replace"), relative))
            elif path.suffix == ".cpp" and path.is_file():
                documents.extend(cpp_documents(path.read_text(encoding="utf-8", errors="replace"), relative))
    return documents


# --- the oracle ---------------------------------------------------------------------------------

def main_tree(text: str) -> str:
    """The ``main_tree_to_execute`` of a document; "" when it has none or does not parse."""
    try:
        return ElementTree.fromstring(text.strip()).attrib.get("main_tree_to_execute", "").strip()
    except ElementTree.ParseError:
        return ""


def oracle_load(document: Document, written: Path, python: str) -> tuple[bool, str]:
    """Whether the real library loads ``document``, and its error when it does not.

    The oracle runs in the folder of the written copy: the library resolves a relative
    ``<include path>`` of a text from the current folder, as it would from the file's.
    """
    request = {"text": document.text, "main": main_tree(document.text)}
    try:
        done = subprocess.run([python, "-c", ORACLE_PROGRAM], input=json.dumps(request), text=True,
                              capture_output=True, timeout=TIMEOUT_S, cwd=written.parent, check=False)
    except subprocess.TimeoutExpired:
        return False, f"oracle: no answer within {TIMEOUT_S} s"
    # the library prints to stdout too: the answer is the last line that is one
    answers = [line for line in done.stdout.splitlines() if line.startswith('{"loaded"')]
    if done.returncode != 0 or not answers:
        last = (done.stderr.strip().splitlines() or [""])[-1]
        return False, f"oracle crashed (exit {done.returncode}): {last}"
    answer = json.loads(answers[-1])
    return bool(answer["loaded"]), first_line(answer["error"])


def oracle_description(python: str) -> str:
    """Which behaviortreepy the oracle interpreter imports (to print with the figures)."""
    probe = "import behaviortreepy as b; print(b.__file__)"
    done = subprocess.run([python, "-c", probe], text=True, capture_output=True, timeout=TIMEOUT_S, check=False)
    if done.returncode != 0:
        sys.exit(f"{python}: cannot import behaviortreepy: {(done.stderr.strip().splitlines() or [''])[-1]}")
    return done.stdout.strip()


# --- hri ----------------------------------------------------------------------------------------

def first_line(text: str) -> str:
    return (text.strip().splitlines() or [""])[0]


def hri_validate(hri: str, path: Path) -> tuple[bool, str]:
    """Whether ``hri validate PATH`` accepts the file, and its first error (or warning) line."""
    try:
        done = subprocess.run([hri, "validate", str(path)], text=True, capture_output=True,
                              timeout=TIMEOUT_S, cwd=path.parent, check=False)
    except subprocess.TimeoutExpired:
        return False, f"hri: no answer within {TIMEOUT_S} s"
    lines = (done.stderr + done.stdout).strip().splitlines()
    if any(line.startswith("Traceback") for line in lines):
        return False, f"crash: {lines[-1]}"
    errors = [line for line in lines if ": warning: " not in line]
    return done.returncode == 0, (errors or lines or [""])[0]


def default_hri() -> str:
    beside = Path(sys.executable).with_name("hri")
    return str(beside) if beside.exists() else (shutil.which("hri") or "hri")


# --- the measure --------------------------------------------------------------------------------

def written_path(document: Document, out: Path) -> Path:
    """Where a document is written: an ``.xml`` file at its own relative path, a snippet as
    ``FILE.cpp-LLINE.xml`` beside it."""
    if document.from_xml_file:
        return out / document.source
    return out / f"{document.source}-L{document.origin.rsplit(':', 1)[1]}.xml"


def measure(documents: list[Document], out: Path, python: str, hri: str) -> list[Result]:
    """Loads every document in the oracle, and validates the loaded ones with hri."""
    paths = [written_path(document, out) for document in documents]
    for document, path in zip(documents, paths):  # all first: includes may point at any of them
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(document.text, encoding="utf-8")

    def one(index: int) -> Result:
        document, path = documents[index], paths[index]
        loaded, error = oracle_load(document, path, python)
        accepted, message = hri_validate(hri, path) if loaded else (None, "")
        return Result(document.origin, str(path), loaded, error, accepted, message)

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        return list(pool.map(one, range(len(documents))))


def cause(message: str) -> str:
    """hri's message without its ``FILE:LINE:`` prefix, to group refusals by what they say."""
    return re.sub(r"^\S+?\.(?:xml|yaml|yml)(?::\d+)?: ", "", message)


def percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "n/a"


def report(results: list[Result], oracle: str) -> str:
    loaded = [r for r in results if r.loaded]
    accepted = [r for r in loaded if r.accepted]
    refused = [r for r in loaded if not r.accepted]
    lines = [f"oracle: {oracle}",
             f"documents found:            {len(results)}",
             f"loaded by the real library: {len(loaded)}",
             f"accepted by hri validate:   {len(accepted)} of {len(loaded)} ({percent(len(accepted), len(loaded))})",
             f"refused by hri validate:    {len(refused)}"]
    if refused:
        lines.append("\nrefusals by cause:")
        for text, count in Counter(cause(r.hri_message) for r in refused).most_common():
            lines.append(f"  {count:4d}  {text}")
        lines.append("\nrefused documents:")
        lines.extend(f"  {r.origin}: {cause(r.hri_message)}" for r in refused)
    return "\n".join(lines)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkout", type=Path, help="a BehaviorTree.CPP source checkout")
    parser.add_argument("--oracle-python", default=sys.executable,
                        help="the Python whose behaviortreepy is the real library (default: this one)")
    parser.add_argument("--hri", default=default_hri(), help="the hri command (default: the one beside this Python)")
    parser.add_argument("--out", type=Path,
                        help="where the documents and results.json go (default: a temporary folder)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if not all((args.checkout / folder).is_dir() for folder in SEARCHED):
        sys.exit(f"{args.checkout}: not a BehaviorTree.CPP checkout (no tests/ and examples/)")
    oracle = f"{oracle_description(args.oracle_python)} (via {args.oracle_python})"
    out = args.out or Path(tempfile.mkdtemp(prefix="btcpp-trees-"))
    out.mkdir(parents=True, exist_ok=True)
    results = measure(find_documents(args.checkout.resolve()), out.resolve(), args.oracle_python, args.hri)
    (out / "results.json").write_text(json.dumps([asdict(r) for r in results], indent=1), encoding="utf-8")
    print(report(results, oracle))
    print(f"\ndocuments and results.json: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
