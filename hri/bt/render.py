"""Draw a behaviour tree: as indented text, as Graphviz DOT, or as a picture (matplotlib).

Works from the parsed tree file (:func:`hri.bt.xml_loader.select_tree`, includes resolved), so
no node is built and no simulation service is needed. A ``<SubTree>`` is drawn with the
subtree's nodes under it (``expand=True``) or as a single box. Node kinds come from the
registry; a node the registry does not know is drawn as kind ``unknown``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from hri.bt.factory import NodeRegistry
from hri.bt.tree_files import Element
from hri.bt.xml_loader import EXPLICIT_KINDS, select_tree
from hri.errors import HriError

OUTPUT_SUFFIXES = (".dot", ".svg", ".png")
TREE_SUFFIXES = (".xml", ".yaml", ".yml")
MARKERS = {"control": "[C]", "decorator": "[D]", "action": "[A]", "condition": "[?]", "subtree": "[S]",
           "unknown": "[!]"}
COLOURS = {"control": "#9ecae1", "decorator": "#c6dbef", "action": "#a1d99b", "condition": "#fdd0a2",
           "subtree": "#dadaeb", "unknown": "#fc9272"}
MAX_DEPTH = 200


@dataclass
class DrawNode:
    """A node as drawn: its ID, instance name (if given), kind, port attributes, children."""

    node_id: str
    name: str
    kind: str
    ports: dict[str, str]
    children: list["DrawNode"] = field(default_factory=list)

    def label(self) -> str:
        """ID, and the name when it differs."""
        return self.node_id if not self.name or self.name == self.node_id else f"{self.node_id}\n{self.name}"


def build_draw_tree(path: str, registry: NodeRegistry, tree_id: str | None = None,
                    expand: bool = True) -> tuple[str, DrawNode]:
    """``(tree ID, root DrawNode)`` of the tree ``tree_id`` (default: the file's main tree)."""
    suffix = os.path.splitext(path)[1].lower()
    if suffix not in TREE_SUFFIXES:
        raise HriError(f"unknown file type {suffix or '(none)'!r} (expected a .xml, .yaml or .yml tree)", path)
    try:
        selected, trees = select_tree(path, tree_id)
    except HriError as err:
        if "no main_tree_to_execute" in err.message:
            err.message += " (choose one with --tree)"
        raise
    return selected, _tree(trees, selected, registry, expand, ())


def _tree(trees: dict[str, Element], tree_id: str, registry: NodeRegistry, expand: bool,
          stack: tuple[str, ...]) -> DrawNode:
    tree = trees[tree_id]
    if len(tree.children) != 1:
        raise HriError(f"tree {tree_id!r} must have exactly one root node, has {len(tree.children)}",
                       tree.file, tree.line)
    return _node(tree.children[0], trees, registry, expand, (*stack, tree_id), 0)


def _node(element: Element, trees: dict[str, Element], registry: NodeRegistry, expand: bool,
          stack: tuple[str, ...], depth: int) -> DrawNode:
    if depth > MAX_DEPTH:
        raise HriError(f"tree nested deeper than {MAX_DEPTH} levels", element.file, element.line)
    attrs = dict(element.attrib)
    if element.tag == "SubTree":
        sub_id = attrs.pop("ID", "").strip()
        name = attrs.pop("name", "")
        node = DrawNode(f"SubTree {sub_id}", name, "subtree", attrs)
        if sub_id not in trees:
            known = ", ".join(sorted(trees)) or "none"
            raise HriError(f"unknown SubTree ID {sub_id!r} (trees: {known})", element.file, element.line)
        if sub_id in stack:
            raise HriError(f"SubTree recursion: {' -> '.join([*stack[stack.index(sub_id):], sub_id])}",
                           element.file, element.line)
        if expand:
            node.children.append(_tree(trees, sub_id, registry, expand, stack))
        return node
    node_id = element.tag
    if element.tag in EXPLICIT_KINDS:
        node_id = attrs.pop("ID", "").strip() or element.tag
    name = attrs.pop("name", "")
    kind = registry.get(node_id).kind if node_id in registry else "unknown"
    node = DrawNode(node_id, name, kind, attrs)
    node.children = [_node(child, trees, registry, expand, stack, depth + 1) for child in element.children]
    return node


# --- text ------------------------------------------------------------------------------------

def _one_line(node: DrawNode) -> str:
    text = f"{MARKERS[node.kind]} {node.node_id}"
    if node.name and node.name != node.node_id:
        text += f' "{node.name}"'
    if node.ports:
        text += "  " + " ".join(f"{k}={v}" for k, v in node.ports.items())
    return text


def render_text(tree_id: str, root: DrawNode, source: str = "") -> str:
    """The tree as indented text with kind markers (legend on the first line)."""
    legend = "  ".join(f"{m} {k}" for k, m in MARKERS.items())
    lines = [f"{tree_id}" + (f"  ({source})" if source else ""), f"  {legend}", _one_line(root)]

    def walk(node: DrawNode, prefix: str) -> None:
        for i, child in enumerate(node.children):
            last = i == len(node.children) - 1
            lines.append(f"{prefix}{'└── ' if last else '├── '}{_one_line(child)}")
            walk(child, prefix + ("    " if last else "│   "))

    walk(root, "")
    return "\n".join(lines) + "\n"


# --- DOT -------------------------------------------------------------------------------------

def _dot_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def render_dot(tree_id: str, root: DrawNode) -> str:
    """The tree as a Graphviz ``digraph`` (boxes coloured by kind, ports in the label)."""
    lines = [f'digraph "{_dot_escape(tree_id)}" {{', "  rankdir=TB;",
             '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=10];',
             '  edge [arrowhead=none];']
    counter = 0

    def walk(node: DrawNode) -> str:
        nonlocal counter
        ident = f"n{counter}"
        counter += 1
        label = node.label() + "".join(f"\n{k}={v}" for k, v in node.ports.items())
        lines.append(f'  {ident} [label="{_dot_escape(label)}", fillcolor="{COLOURS[node.kind]}"];')
        for child in node.children:
            lines.append(f"  {ident} -> {walk(child)};")
        return ident

    walk(root)
    lines.append("}")
    return "\n".join(lines) + "\n"


# --- picture ---------------------------------------------------------------------------------

def layout(root: DrawNode) -> dict[int, tuple[float, float]]:
    """``{id(node): (x, depth)}``: leaves one unit apart, parents centred over their children."""
    positions: dict[int, tuple[float, float]] = {}
    next_leaf = 0.0

    def place(node: DrawNode, depth: int) -> float:
        nonlocal next_leaf
        if not node.children:
            x = next_leaf
            next_leaf += 1.0
        else:
            xs = [place(child, depth + 1) for child in node.children]
            x = (xs[0] + xs[-1]) / 2
        positions[id(node)] = (x, float(depth))
        return x

    place(root, 0)
    return positions


def _all(node: DrawNode) -> list[DrawNode]:
    result = [node]
    for child in node.children:
        result.extend(_all(child))
    return result


def render_image(tree_id: str, root: DrawNode, out: Path) -> None:
    """Draw the tree into ``out`` (.png or .svg) with matplotlib's Agg backend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    nodes = _all(root)
    positions = layout(root)
    leaves = max(1.0, max(x for x, _ in positions.values()) + 1)
    depth = max(d for _, d in positions.values()) + 1
    longest = max(len(line) for n in nodes for line in n.label().split("\n"))
    slot = max(1.0, 0.065 * longest + 0.35)  # inches per leaf, so the widest label fits
    width, height = leaves * slot + 0.6, depth * 0.95 + 1.1
    fig, ax = plt.subplots(figsize=(width, height))
    ax.set_xlim(-0.6, leaves - 0.4)
    ax.set_ylim(depth - 0.4, -0.9)
    ax.axis("off")
    for node in nodes:
        x, y = positions[id(node)]
        for child in node.children:
            cx, cy = positions[id(child)]
            ax.plot([x, cx], [y, cy], color="#555555", linewidth=1.0, zorder=1)
    for node in nodes:
        x, y = positions[id(node)]
        ax.text(x, y, node.label(), ha="center", va="center", fontsize=8, zorder=2,
                bbox={"boxstyle": "round,pad=0.4", "facecolor": COLOURS[node.kind], "edgecolor": "#333333"})
    kinds = [k for k in COLOURS if any(n.kind == k for n in nodes)]
    ax.legend(handles=[Patch(facecolor=COLOURS[k], edgecolor="#333333", label=k) for k in kinds],
              loc="upper left", fontsize=8, frameon=False, ncol=len(kinds))
    ax.set_title(tree_id, fontsize=11, loc="center")
    fig.tight_layout()
    try:
        fig.savefig(out, dpi=110)
    finally:
        plt.close(fig)


def render_file(path: str, registry: NodeRegistry, out: str | None = None, tree_id: str | None = None,
                expand: bool = True) -> str:
    """Render ``path``: text when ``out`` is None (returned), else write ``out`` by its suffix
    (.dot, .svg, .png) and return its path. HriError for every user mistake."""
    suffix = os.path.splitext(out)[1].lower() if out else ""
    if out and suffix not in OUTPUT_SUFFIXES:
        raise HriError(f"unknown output format {suffix or '(none)'!r} (expected .dot, .svg or .png)", out)
    selected, root = build_draw_tree(path, registry, tree_id, expand)
    if out is None:
        return render_text(selected, root, path)
    target = Path(out)
    if not target.parent.is_dir():
        raise HriError("output folder does not exist", out)
    try:
        if suffix == ".dot":
            target.write_text(render_dot(selected, root), encoding="utf-8")
        else:
            render_image(selected, root, target)
    except OSError as err:
        raise HriError(f"cannot write: {err.strerror or err}", out) from None
    return out
