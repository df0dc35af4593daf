"""``hri validate``: check tree files (XML) and scenario files (YAML) without running them."""

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
            problems.extend(_validate_scenario(path, registry))
        else:
            problems.append(HriError("unknown file type (expected .xml trees or .yaml scenario)", str(path)))
    return problems


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
