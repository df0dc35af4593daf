"""``hri validate``: check tree and scenario files without running them.

A ``.xml`` file is a tree; a ``.yaml``/``.yml`` file is a tree when its top level has the key
``BTCPP_format`` (the YAML tree format, ``hri.bt.yaml_format``), an animation clip when it has
the key ``keyframes`` (``hri.actor.clip_check.check_clip``), a robot arm's Denavit-Hartenberg
table when it has the key ``joints`` (``hri.kinematics.dh.read_dh``), else a scenario.

Besides errors, a valid tree is checked for blackboard entries it reads but nothing writes
(:mod:`hri.bt.keys`): a :class:`~hri.bt.keys.TreeWarning` ``FILE:LINE: warning: ...``. For a
scenario, its entries (``Scenario.blackboard_entries()``, and ``human_pose`` and
``human_zone`` for the robot's tree) count as written; a tree validated on its own has no scenario, so every entry a
scenario would provide is reported. Warnings do not make the validation fail.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterable, Sequence

from hri.bt.factory import NodeRegistry
from hri.bt.keys import TreeWarning
from hri.base.untrusted import read_own
from hri.base.errors import HriError
from hri.base.files import wrong_kind
from hri.scenario.model import tree_kind

ROLE_ENTRIES = {"person": (), "robot": ("human_pose", "human_zone", "human_name", "ssm_speed_cap")}
"""Entries the simulation adds to one role's blackboard beyond the scenario's."""


def validate_files(paths: list[Path], plugins: Sequence[str] = ()) -> list[HriError]:
    """All problems found in the given files, each with ``FILE:LINE``; empty when all are valid.

    Warnings (:class:`TreeWarning`) are in the list too; :func:`is_warning` tells them apart.
    ``plugins`` are extra node modules (``--plugin``), loaded for every file.
    """
    from hri.bt.plugins import plugin_registry

    try:
        registry = plugin_registry(plugins, Path.cwd())
    except HriError as err:
        return [err]
    problems: list[HriError] = []
    for path in paths:
        if not path.is_file():
            problems.append(HriError(wrong_kind(path) or "file not found", str(path)))
        elif path.suffix.lower() == ".xml" or (path.suffix.lower() in (".yaml", ".yml") and _is_yaml_tree(path)):
            problems.extend(validate_tree(str(path), registry))
        elif path.suffix.lower() in (".yaml", ".yml") and _is_clip(path):
            problems.extend(_validate_clip(path))
        elif path.suffix.lower() in (".yaml", ".yml") and _is_dh_table(path):
            problems.extend(_validate_dh_table(path))
        elif path.suffix.lower() in (".yaml", ".yml"):
            problems.extend(_validate_scenario(path, registry, plugins))
        else:
            problems.append(HriError("unknown file type (expected .xml or .yaml trees, or a .yaml scenario)",
                                     str(path)))
    unique: dict[str, HriError] = {}
    for problem in problems:  # a subtree file included by several trees is reported once
        unique.setdefault(str(problem), problem)
    return list(unique.values())


def is_warning(problem: HriError) -> bool:
    return isinstance(problem, TreeWarning)


def validate_tree(path: str, registry: NodeRegistry, provided: Iterable[str] | None = None) -> list[HriError]:
    """Errors of the tree file ``path``; when there are none, warnings for entries read but
    never written (``provided``: the entries the scenario puts on the root blackboard) and
    those of :mod:`hri.bt.lint` (script names, misspelt conditions, ...)."""
    from hri.bt.keys import refused_literals, root_trees, unwritten_reads
    from hri.bt.lint import lint_trees
    from hri.bt.xml_loader import load_document, subtree_models, validate_file

    errors = validate_file(path, registry)
    if errors:
        return errors
    root, trees, doc_errors = load_document(path)
    if doc_errors:
        return list(doc_errors)
    roots = root_trees(root, trees, path)
    return [*unwritten_reads(trees, roots, registry, provided or ()), *refused_literals(trees, roots, registry),
            *lint_trees(trees, roots, registry, provided or (), subtree_models(path))]


def _is_yaml_tree(path: Path) -> bool:
    """True for a YAML tree file: its top level has the key ``BTCPP_format``."""
    from hri.bt.yaml_format import looks_like_tree_file
    from hri.scenario.load import MAX_SCENARIO_BYTES

    try:
        data = _head(path)
    except OSError:
        return False  # the scenario loader reports the unreadable file
    if len(data) > MAX_SCENARIO_BYTES:  # too large for a scenario or a clip: no parse just to say so
        return bool(_TREE_KEY.search(data))
    return looks_like_tree_file(data)


_TREE_KEY = re.compile(rb"^BTCPP_format[ \t]*:", re.MULTILINE)
_CLIP_KEY = re.compile(rb"^keyframes[ \t]*:", re.MULTILINE)


def _head(path: Path) -> bytes:
    """The file's first bytes, as many as the largest file of any kind may have and one more:
    enough to tell its kind, and that it is too large."""
    from hri.bt.xml_loader import MAX_FILE_BYTES

    return read_own(path, MAX_FILE_BYTES)[0]


def _is_clip(path: Path) -> bool:
    """True for an animation clip file: a top-level key ``keyframes`` (scenarios have none)."""
    try:
        return bool(_CLIP_KEY.search(_head(path)))
    except OSError:
        return False  # the scenario loader reports the unreadable file


def _is_dh_table(path: Path) -> bool:
    """True for a robot arm's Denavit-Hartenberg file: a top-level key ``joints``."""
    from hri.kinematics.dh import DH_KEY

    try:
        return bool(DH_KEY.search(_head(path)))
    except OSError:
        return False  # the scenario loader reports the unreadable file


def _validate_dh_table(path: Path) -> list[HriError]:
    from hri.kinematics.dh import read_dh

    try:
        read_dh(path)
    except HriError as err:
        return [err]
    return []


def _validate_clip(path: Path) -> list[HriError]:
    from hri.actor.clip_check import check_clip
    from hri.scenario.load import MAX_SCENARIO_BYTES

    try:
        data, problem = read_own(path, MAX_SCENARIO_BYTES)  # clips are a few KB, like scenarios
        if problem is not None:
            return [HriError(problem, str(path))]
        check_clip(data, str(path))
    except HriError as err:
        return [err]
    except OSError as err:
        return [HriError(f"cannot read: {err.strerror}", str(path))]
    return []


def _validate_scenario(path: Path, registry: NodeRegistry, plugins: Sequence[str]) -> list[HriError]:
    from hri.bt.plugins import load_plugins, plugin_registry
    from hri.scenario.load import load_scenario
    from hri.scenario.trees import check_trees_against

    try:
        scenario = load_scenario(str(path), check_trees=False)  # the trees are checked below, all errors
        entries = set(scenario.blackboard_entries())
        if scenario.plugins:  # the scenario's own node modules, relative to its folder
            registry = plugin_registry(plugins, Path.cwd())
            load_plugins(registry, scenario.plugins, scenario.path.parent, str(path), scenario.line_of("plugins"))
    except HriError as err:
        return [err]
    problems: list[HriError] = []
    for role, tree in scenario.trees.items():
        problems.extend(validate_tree(str(tree), registry, entries | set(ROLE_ENTRIES[tree_kind(role)])))
    if not any(not is_warning(p) for p in problems):
        try:  # what the trees do with the scenario: robot targets in reach, values in range
            check_trees_against(scenario, str(path), registry)
        except HriError as err:
            return [err]
    return problems
