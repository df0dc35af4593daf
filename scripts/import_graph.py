"""The project's import graph: which module imports which, its cycles, and its layer picture.

Every import counts, also one inside a function: a cycle hidden in a function is still a
cycle a newcomer has to untangle. Modules are named as they import (`hri.run.sim`,
`hri.actor.plugin`), read from the folders `pyproject.toml` maps into the `hri` package.

    python scripts/import_graph.py              # cycles, if any (exit 1), and the layers
    python scripts/import_graph.py --svg FILE   # draw the layer picture (docs/architecture.md)

`tests/test_import_graph.py` fails on any cycle.
"""

from __future__ import annotations

import argparse
import ast
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def package_folders(root: Path = ROOT) -> dict[str, Path]:
    """The top-level packages `pyproject.toml` maps to folders: {'hri.actor': root/'actor', ...}."""
    config = tomllib.loads((root / "pyproject.toml").read_text())
    mapping = config["tool"]["setuptools"]["package-dir"]
    return {name: root / folder for name, folder in mapping.items() if name.count(".") <= 1}


def project_modules(root: Path = ROOT) -> dict[str, Path]:
    """Every project module by its import name, packages by their `__init__`."""
    modules: dict[str, Path] = {}
    for package, folder in package_folders(root).items():
        for path in sorted(folder.rglob("*.py")):
            parts = list(path.relative_to(folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            name = ".".join([package, *parts])
            modules.setdefault(name, path)
    return modules


def _imported_names(tree: ast.AST, module: str, is_package: bool) -> Iterator[str]:
    """The dotted names a module's import statements name, relative ones resolved."""
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            yield base
            yield from (f"{base}.{alias.name}" for alias in node.names)


def _owner(name: str, modules: dict[str, Path]) -> str | None:
    """The project module a dotted name lies in (the longest known prefix), or None."""
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """{module: the project modules it imports}, at module level or inside functions.

    Importing `hri.bt.node` runs `hri/bt/__init__.py` first, but a package's `__init__` that
    re-exports is a door, not a dependency of what lies behind it: an edge goes to the module
    named, not to every package on its path.
    """
    modules = project_modules(root)
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(), str(path))
        targets = {_owner(n, modules) for n in _imported_names(tree, name, path.name == "__init__.py")}
        graph[name] = {t for t in targets if t and t != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10 * len(graph)))
    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def group_of(module: str) -> str:
    """The folder of `hri` a module lives in, as a package name: 'hri.run.sim' -> 'hri.run'.

    A package's own `__init__` belongs to its folder ('hri.run' -> 'hri.run'); the folders
    below the first level are part of theirs ('hri.bt.controls.sequence' -> 'hri.bt').
    """
    return ".".join(module.split(".")[:2])


def group_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The import graph between the folders of `hri`, self-edges dropped."""
    groups: dict[str, set[str]] = {}
    for module, targets in graph.items():
        source = group_of(module)
        groups.setdefault(source, set()).update(group_of(t) for t in targets if group_of(t) != source)
    return groups


def layers(groups: dict[str, set[str]]) -> list[list[str]]:
    """Folders by level: level 0 imports nothing of the project, level n imports only below n."""
    level: dict[str, int] = {}

    def depth(group: str, seen: tuple[str, ...] = ()) -> int:
        if group not in level:
            below = [depth(t, seen + (group,)) for t in groups.get(group, ()) if t not in seen]
            level[group] = 1 + max(below, default=-1)
        return level[group]

    for group in groups:
        depth(group)
    rows: list[list[str]] = [[] for _ in range(max(level.values(), default=-1) + 1)]
    for group, n in sorted(level.items()):
        rows[n].append(group)
    return rows


def reduced(groups: dict[str, set[str]]) -> dict[str, set[str]]:
    """The edges of an acyclic graph that no longer chain of edges implies (its transitive reduction);
    folders that import nothing and are imported by nothing (data only) are left out."""
    def reach(start: str) -> set[str]:
        seen: set[str] = set()
        todo = list(groups.get(start, ()))
        while todo:
            node = todo.pop()
            if node not in seen:
                seen.add(node)
                todo.extend(groups.get(node, ()))
        return seen

    kept = {g: set(ts) for g, ts in groups.items() if ts or any(g in other for other in groups.values())}
    for source, targets in kept.items():
        implied = set().union(*(reach(t) for t in targets))
        targets -= implied
    return kept


def draw(groups: dict[str, set[str]], path: Path) -> None:
    """The layer picture: one row per level, lowest at the bottom; an arrow per import that no
    longer chain of imports implies (:func:`reduced`)."""
    import matplotlib

    matplotlib.use("Agg")
    matplotlib.rcParams.update({"svg.fonttype": "none", "svg.hashsalt": "hri"})  # text stays text; same file each time
    import matplotlib.pyplot as plt

    groups = reduced(groups)
    rows = layers(groups)
    width = max(len(row) for row in rows)
    where = {g: ((i + 0.5) * width / len(row), n) for n, row in enumerate(rows) for i, g in enumerate(row)}
    fig, ax = plt.subplots(figsize=(2.1 * width, 1.15 * len(rows) + 0.4))
    for source, targets in sorted(groups.items()):
        for target in sorted(targets):
            (x0, y0), (x1, y1) = where[source], where[target]
            ax.annotate("", xy=(x1, y1 + 0.18), xytext=(x0, y0 - 0.18),
                        arrowprops={"arrowstyle": "->", "color": "0.6", "lw": 0.7})
    for group, (x, y) in where.items():
        ax.text(x, y, group.removeprefix("hri."), ha="center", va="center", fontsize=10,
                bbox={"boxstyle": "round,pad=0.35", "fc": "#e8f0fa", "ec": "#4a6fa5"})
    ax.set_xlim(0, width)
    ax.set_ylim(-0.6, len(rows) - 0.4)
    ax.axis("off")
    fig.tight_layout()
    fig.savefig(path, metadata={"Date": None} if path.suffix == ".svg" else None)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--svg", type=Path, help="draw the layer picture into this file")
    args = parser.parse_args(argv)
    graph = import_graph()
    found = cycles(graph)
    for component in found:
        print("cycle:", " ".join(component))
    groups = group_graph(graph)
    for n, row in reversed(list(enumerate(layers(groups)))):
        print(f"level {n}: {' '.join(row)}")
    if args.svg:
        draw(groups, args.svg)
        print(f"wrote {args.svg}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
