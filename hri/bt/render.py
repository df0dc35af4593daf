"""Draw a behaviour tree: as indented text, as Graphviz DOT, or as a picture (matplotlib).

Works from the parsed tree file (:func:`hri.bt.xml_loader.select_tree`, includes resolved), so
no node is built and no simulation service is needed. A ``<SubTree>`` is drawn with the
subtree's nodes under it (``expand=True``) or as a single box. Node kinds come from the
registry; a node the registry does not know is drawn as kind ``unknown``.

With a run (``hri render FILE --run RUN_DIR --at T``) every node shows the status it had at
simulated time T of that run, replayed from the run's ``events.jsonl`` (:mod:`hri.bt.status`):
a status column in text, Groot2's status colours in DOT and pictures. A node made IDLE again
in that tick after another status shows it faded, as Groot2 does (``IDLE_FROM_SUCCESS``, ...:
:func:`hri.bt.status.with_tick`), from the tick's transitions in the run's ``.btlog``. The
run's ``tree_nodes`` legend for the same file (or its XML/YAML twin) must list the very nodes drawn here, so a
tree file edited since the run is refused instead of coloured wrongly. A time after the
run's end is refused too (the run has no statuses there). With ``--collapse-subtrees`` a
SubTree box shows the status of the SubTree node itself.
"""

from __future__ import annotations

import io
import math
import os
from dataclasses import dataclass, field
from pathlib import Path

from hri.bt.factory import NodeRegistry
from hri.bt.loggers.btlog_reader import BtLogError, split_btlog
from hri.bt.status import (IDLE, IDLE_FROM, STATUS_COLOURS, read_run_events, run_end, statuses_at, tick_records,
                           with_tick)
from hri.bt.tree_builder import EXPLICIT_KINDS, MAX_DEPTH
from hri.bt.tree_files import Element
from hri.bt.xml_loader import select_tree
from hri.base.errors import HriError, shown_path
from hri.base.files import check_new_file, write_atomic
from hri.base.untrusted import OUTPUT_MAX_BYTES, Missing, Unreadable, read_inside

OUTPUT_SUFFIXES = (".dot", ".svg", ".png")
TREE_SUFFIXES = (".xml", ".yaml", ".yml")
MARKERS = {"control": "[C]", "decorator": "[D]", "action": "[A]", "condition": "[?]", "subtree": "[S]",
           "unknown": "[!]"}
COLOURS = {"control": "#9ecae1", "decorator": "#c6dbef", "action": "#a1d99b", "condition": "#fdd0a2",
           "subtree": "#dadaeb", "unknown": "#fc9272"}


@dataclass
class DrawNode:
    """A node as drawn: its ID, instance name (if given), kind, port attributes, children, and
    its status when drawn from a run (None otherwise)."""

    node_id: str
    name: str
    kind: str
    ports: dict[str, str]
    children: list["DrawNode"] = field(default_factory=list)
    status: str | None = None

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


def _all(node: DrawNode) -> list[DrawNode]:
    """The nodes in pre-order, the order :class:`hri.bt.status.TreeStatusLog` numbers them."""
    result = [node]
    for child in node.children:
        result.extend(_all(child))
    return result


# --- statuses of a run -----------------------------------------------------------------------

def apply_run(path: str, root: DrawNode, run_dir: Path, at: float, tick_s: float | None = None) -> str:
    """Set every node's ``status`` to the one it had at ``at`` simulated seconds in the run and
    return a caption naming the run's tree and the time. ``root`` must have subtrees expanded.
    With ``tick_s``, the run's tree period, a node made IDLE in the last tick at or before
    ``at`` shows the status it had in it, faded (:data:`hri.bt.status.IDLE_FROM`)."""
    if not at >= 0:  # also NaN
        raise HriError(f"--at: must be a time in seconds >= 0, got {at:g}")
    events = read_run_events(run_dir)
    end = run_end(events)
    if at > end + 1e-9:
        raise HriError(f"--at {at:g}: the run ended at {end:g} s", str(run_dir))
    legend = _legend_for(path, events, run_dir)
    try:
        _, statuses = statuses_at(events, legend["tree"], at)
    except (KeyError, IndexError, TypeError, ValueError, AttributeError):
        raise HriError("malformed tree_status events", str(Path(run_dir) / "events.jsonl")) from None
    nodes = _all(root)
    _check_same_nodes(path, nodes, legend)
    if tick_s is not None:
        statuses = _with_last_tick(run_dir, legend["tree"], statuses, at, end, tick_s)
    for node, status in zip(nodes, statuses):
        node.status = status
    return f"{legend['tree']} tree at t = {at:g} s of run {run_dir}"


def _with_last_tick(run_dir: Path, tree: str, statuses: list[str], at: float, end: float,
                    tick_s: float) -> list[str]:
    """``statuses`` with what the last tick at or before ``at`` made IDLE, from the tree's
    transitions in ``TREE.btlog``; unchanged for a run folder without one. The run ended at
    ``end``, its trees ticked every ``tick_s``."""
    name = f"{tree}.btlog"
    try:
        data = read_inside(Path(run_dir), name, OUTPUT_MAX_BYTES)
    except Missing:
        return statuses
    except Unreadable as err:  # a symlink or a name out of the run folder, a FIFO, too large
        raise HriError(str(err), str(Path(run_dir) / name)) from None
    try:
        records = split_btlog(data)[3]
        # at's microsecond, as the records stamp a tick (rounded): within statuses_at's 1e-9 s
        tick = tick_records(records, math.floor(at * 1e6 + 1e-3), max(1, round(tick_s * 1e6)), round(end * 1e6))
        return with_tick(statuses, tick)
    except (BtLogError, UnicodeDecodeError, ValueError) as err:
        raise HriError(f"not the FileLogger2 file of the run's {tree} tree: {err}",
                       str(Path(run_dir) / name)) from None


def _legend_for(path: str, events: list[dict], run_dir: Path) -> dict:
    """The run's ``tree_nodes`` event of the tree file ``path``, else of its XML/YAML twin."""
    legends = [e for e in events if e["event"] == "tree_nodes" and isinstance(e.get("tree"), str)
               and isinstance(e.get("file"), str) and isinstance(e.get("nodes"), list)]
    if not legends:
        raise HriError("the run recorded no tree statuses (made by an older hri?)", str(run_dir))
    wanted = Path(path).resolve()
    # The same file; its twin; else the same name elsewhere, e.g. a preset's tree that the run
    # took from the installed package while the user points at the checkout's copy (the node
    # check that follows catches a different tree of the same name).
    for same in (lambda f: f == wanted, lambda f: f.with_suffix("") == wanted.with_suffix(""),
                 lambda f: f.stem == wanted.stem):
        for legend in legends:
            if same(Path(legend["file"]).resolve()):
                return legend
    trees = ", ".join(f"{e['tree']} {shown_path(e['file'])}" for e in legends)
    raise HriError(f"the run has no tree from this file (its trees: {trees})", path)


def _check_same_nodes(path: str, nodes: list[DrawNode], legend: dict) -> None:
    recorded = legend["nodes"]
    run_tree = f"the run's {legend['tree']} tree: the tree file changed since the run"
    for number, (node, other) in enumerate(zip(nodes, recorded), 1):
        if node.node_id != other:
            raise HriError(f"node {number} is {node.node_id} here, {other} in {run_tree}", path)
    if len(nodes) != len(recorded):
        raise HriError(f"{len(nodes)} nodes here, {len(recorded)} in {run_tree}", path)


def _check_main_tree(path: str, tree_id: str) -> None:
    """A run loads a file's main tree: only that one has statuses to show."""
    try:
        main = select_tree(path)[0]
    except HriError:
        main = None  # no main tree: build_draw_tree or the legend check reports the problem
    if main is not None and tree_id != main:
        raise HriError(f"--tree {tree_id}: a run has statuses of the file's main tree only ({main})")


def collapse_subtrees(node: DrawNode) -> None:
    """Drop the nodes under every SubTree, as if drawn with ``expand=False``."""
    if node.kind == "subtree":
        node.children = []
    for child in node.children:
        collapse_subtrees(child)


# --- text ------------------------------------------------------------------------------------

def _one_line(node: DrawNode) -> str:
    text = f"{MARKERS[node.kind]} {node.node_id}"
    if node.name and node.name != node.node_id:
        text += f' "{node.name}"'
    if node.ports:
        text += "  " + " ".join(f"{k}={v}" for k, v in node.ports.items())
    return text


STATUS_WIDTH = 9  # RUNNING and two spaces; wider where a node is IDLE_FROM_...


def render_text(tree_id: str, root: DrawNode, source: str = "", caption: str = "") -> str:
    """The tree as indented text with kind markers (legend on the first line), each line led
    by the node's status when drawn from a run (``caption`` says which run and time)."""
    legend = "  ".join(f"{m} {k}" for k, m in MARKERS.items())
    width = max([STATUS_WIDTH] + [len(n.status) + 2 for n in _all(root) if n.status])

    def column(node: DrawNode) -> str:
        return f"{node.status:<{width}}" if node.status else ""

    lines = [f"{tree_id}" + (f"  ({source})" if source else "")] + ([f"  {caption}"] if caption else [])
    lines += [f"  {legend}", column(root) + _one_line(root)]

    def walk(node: DrawNode, prefix: str) -> None:
        for i, child in enumerate(node.children):
            last = i == len(node.children) - 1
            lines.append(f"{column(child)}{prefix}{'└── ' if last else '├── '}{_one_line(child)}")
            walk(child, prefix + ("    " if last else "│   "))

    walk(root, "")
    return "\n".join(lines) + "\n"


# --- DOT -------------------------------------------------------------------------------------

def _dot_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


FADED = frozenset(IDLE_FROM.values())


def _faded(node: DrawNode) -> bool:
    """IDLE after another status in the tick drawn: Groot2 draws it faded."""
    return node.status in FADED


def _fill(node: DrawNode) -> str:
    return STATUS_COLOURS[node.status] if node.status else COLOURS[node.kind]


def render_dot(tree_id: str, root: DrawNode, caption: str = "") -> str:
    """The tree as a Graphviz ``digraph``: boxes coloured by kind, or by status when drawn from
    a run (``caption`` becomes the graph's label), ports in the label."""
    lines = [f'digraph "{_dot_escape(tree_id)}" {{', "  rankdir=TB;",
             '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=10];',
             '  edge [arrowhead=none];']
    if caption:
        lines.append(f'  labelloc=t; label="{_dot_escape(f"{tree_id}: {caption}")}";')
    counter = 0

    def walk(node: DrawNode) -> str:
        nonlocal counter
        ident = f"n{counter}"
        counter += 1
        label = node.label() + "".join(f"\n{k}={v}" for k, v in node.ports.items())
        lines.append(f'  {ident} [label="{_dot_escape(label)}", fillcolor="{_fill(node)}"];')
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


def render_image(tree_id: str, root: DrawNode, out: Path, caption: str = "") -> None:
    """Draw the tree into ``out`` (.png or .svg) with matplotlib's Agg backend: boxes coloured
    by kind, or by status when drawn from a run (``caption`` goes under the title)."""
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
                color="#555555" if _faded(node) else "black",
                bbox={"boxstyle": "round,pad=0.4", "facecolor": _fill(node), "edgecolor": "#333333",
                      "linestyle": "--" if _faded(node) else "-"})
    if root.status:
        # matplotlib fills a legend's columns first: each status over its faded form, IDLE last
        order = [key for status, faded in IDLE_FROM.items() for key in (status, faded)] + [IDLE]
        keys = {status: status.lower().replace("_", " ") for status in order}
        colours = STATUS_COLOURS
    else:
        keys = {k: k for k in COLOURS if any(n.kind == k for n in nodes)}
        colours = COLOURS
    ax.legend(handles=[Patch(facecolor=colours[k], edgecolor="#333333", label=label,
                             linestyle="--" if k in FADED else "-") for k, label in keys.items()],
              loc="upper left", fontsize=8, frameon=False, ncol=min(len(keys), len(FADED) + 1))
    ax.set_title(tree_id + (f"\n{caption}" if caption else ""), fontsize=11, loc="center")
    fig.tight_layout()
    image = io.BytesIO()
    try:
        fig.savefig(image, dpi=110, format=out.suffix.lower().lstrip("."))
    finally:
        plt.close(fig)
    write_atomic(out, image.getvalue())  # all or nothing: a failed write leaves the old file


def render_file(path: str, registry: NodeRegistry, out: str | None = None, tree_id: str | None = None,
                expand: bool = True, run: Path | str | None = None, at: float | None = None,
                force: bool = False, tick_s: float | None = None) -> str:
    """Render ``path``: text when ``out`` is None (returned), else write ``out`` by its suffix
    (.dot, .svg, .png) and return its path; an existing ``out`` only with ``force``. With
    ``run`` and ``at``: coloured by the statuses at ``at`` simulated seconds of that run, and
    with ``tick_s`` (the run's tree period) what that tick made IDLE faded (:func:`apply_run`).
    HriError for every user mistake."""
    suffix = os.path.splitext(out)[1].lower() if out else ""
    if out and suffix not in OUTPUT_SUFFIXES:
        raise HriError(f"unknown output format {suffix or '(none)'!r} (expected .dot, .svg or .png)", out)
    if (run is None) != (at is None):
        raise HriError("--run and --at: give both (the run directory and the simulated time) or neither")
    if out:  # before the drawing: an existing file is written over only when asked
        check_new_file(Path(out), force, "-o")
    if run is not None and tree_id is not None:
        _check_main_tree(path, tree_id)
    # The run's statuses are numbered over the expanded tree: draw it expanded, collapse after.
    selected, root = build_draw_tree(path, registry, tree_id, expand or run is not None)
    caption = ""
    if run is not None and at is not None:
        caption = apply_run(path, root, Path(run), at, tick_s)
        if not expand:
            collapse_subtrees(root)
    if out is None:
        return render_text(selected, root, path, caption)
    target = Path(out)
    if not target.parent.is_dir():
        raise HriError("output folder does not exist", out)
    try:
        if suffix == ".dot":
            write_atomic(target, render_dot(selected, root, caption))
        else:
            render_image(selected, root, target, caption)
    except OSError as err:
        raise HriError(f"cannot write: {err.strerror or err}", out) from None
    return out
