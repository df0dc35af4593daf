"""``hri validate``: check tree files and scenario files without running them.

A ``.xml`` file is a tree; a ``.yaml``/``.yml`` file is a tree when its top level has the key
``BTCPP_format`` (the YAML tree format, ``hri.bt.yaml_format``), else a scenario.
"""

from __future__ import annotations

from pathlib import Path

from hri.errors import HriError


def validate_files(paths: list[Path]) -> list[HriError]:
    """All problems found in the given files, each with ``FILE:LINE``; empty when all are valid."""
    from hri.bt.factory import default_registry
    from hri.bt.xml_loader import validate_file

    registry = default_registry()
    problems: list[HriError] = []
    for path in paths:
        if not path.is_file():
            problems.append(HriError("no such file", str(path)))
        elif path.suffix.lower() == ".xml":
            problems.extend(validate_file(path, registry))
        elif path.suffix.lower() in (".yaml", ".yml"):
            if _is_yaml_tree(path):
                problems.extend(validate_file(str(path), registry))
            else:
                problems.extend(_validate_scenario(path, registry))
        else:
            problems.append(HriError("unknown file type (expected .xml or .yaml trees, or a .yaml scenario)",
                                     str(path)))
    return problems


def _is_yaml_tree(path: Path) -> bool:
    """True for a YAML tree file: its top level has the key ``BTCPP_format``."""
    from hri.bt.yaml_format import looks_like_tree_file

    try:
        return looks_like_tree_file(path.read_bytes())
    except OSError:
        return False  # the scenario loader reports the unreadable file


def _validate_scenario(path: Path, registry) -> list[HriError]:
    from hri.bt.xml_loader import validate_file
    from hri.scenario import load_scenario

    try:
        scenario = load_scenario(str(path))
    except HriError as err:
        return [err]
    problems: list[HriError] = []
    for role in ("person", "robot"):
        problems.extend(validate_file(scenario.tree_path(role), registry))
    return problems
