"""Imports point downward: no cycle between the project's modules, nor between the folders of `hri`.

Every import counts, also one inside a function or under ``if TYPE_CHECKING``
(``scripts/import_graph.py`` reads them all).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import import_graph  # noqa: E402

#: What hri.bt, the behaviour-tree library, may import of the project: it knows no domain.
BT_MAY_IMPORT = {"hri.base", "hri.net"}


def test_no_import_cycle_between_modules():
    assert import_graph.cycles(import_graph.import_graph()) == []


def test_the_folders_of_hri_import_downward_only():
    groups = import_graph.group_graph(import_graph.import_graph())
    assert import_graph.cycles(groups) == []
    assert groups["hri.bt"] <= BT_MAY_IMPORT


def test_a_cycle_hidden_in_a_function_is_found(tmp_path):
    """The check can fail: a function-level import closing a circle is a cycle."""
    (tmp_path / "pyproject.toml").write_text('[tool.setuptools]\npackage-dir = { "hri" = "hri" }\n')
    package = tmp_path / "hri"
    (package / "low").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "low" / "__init__.py").write_text("")
    (package / "low" / "a.py").write_text("from hri.low import b\n")
    (package / "low" / "b.py").write_text("def late():\n    from . import a\n")
    (package / "top.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from hri.low.a import x\n")
    graph = import_graph.import_graph(tmp_path)
    assert import_graph.cycles(graph) == [["hri.low.a", "hri.low.b"]]
    assert graph["hri.top"] == {"hri.low.a"}
    assert import_graph.layers(import_graph.group_graph(graph)) == [["hri", "hri.low"], ["hri.top"]]


def test_the_layer_picture_in_the_docs_shows_the_folders_of_the_code():
    """docs/images/layers.svg is drawn by `python scripts/import_graph.py --svg ...`; a folder
    added or removed without drawing it again shows here."""
    import re

    drawn = set(re.findall(r">([a-z_]+)</text>", (ROOT / "docs" / "images" / "layers.svg").read_text()))
    folders = import_graph.reduced(import_graph.group_graph(import_graph.import_graph()))
    assert drawn == {name.removeprefix("hri.") for name in folders}
