"""``hri run --show-trees``: both trees' node statuses, live in the terminal, on stderr.

:class:`TreesView` is the pure part (statuses in, a ``rich`` renderable out: the simulated
time, then the person's and the robot's tree side by side, or one above the other on a
narrow terminal); :class:`TreeView` is the :class:`hri.run.sim.Observer` that shows it with
``rich.live.Live`` about four times per wall-clock second.

A tree of 20-100 nodes does not fit a terminal, and most of its nodes are IDLE at any time.
So only the active part is shown: every node that is not IDLE, with its ancestors; a footer
counts the idle nodes left out. A node that the last tick made IDLE again after another
status (a ReactiveSequence's checks, a finished branch) is shown with that status, faded, as
Groot2 shows ``IDLE_FROM_SUCCESS`` (:func:`hri.bt.status.with_tick`): the idle mark before
the status's, dim. When that is still taller than the terminal, finished (SUCCESS, FAILURE,
faded) branches are folded into their top node, innermost first, marked ``+N`` with the
number of nodes folded away; RUNNING nodes are never folded.

Statuses are told by colour (:data:`hri.bt.status.STATUS_TERMINAL_STYLES`) and by a mark, so the
view also reads without colour. stdout stays untouched (``--json``). When stderr is not a
terminal nothing is drawn during the run and the final view is printed once at the end,
unfolded (rich's ``Live`` does so for files and pipes).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Mapping, Sequence

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.live import Live
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from hri.bt.status import IDLE, IDLE_FROM, STATUS_TERMINAL_STYLES as STYLES, NodeState

if TYPE_CHECKING:
    from hri.run.sim import RunView

REFRESH_S = 0.25  # wall-clock seconds between redraws: readable, and cheap
CHECK_EVERY_STEPS = 24  # physics steps between looks at the wall clock (0.1 simulated s at 240 Hz)
SIDE_BY_SIDE_MIN_WIDTH = 72  # narrower terminals get the trees one above the other
MARKS = {"RUNNING": "▶", "SUCCESS": "✔", "FAILURE": "✘", IDLE: "·"}
ASCII_MARKS = {"RUNNING": ">", "SUCCESS": "+", "FAILURE": "x", IDLE: "."}
for _marks in (MARKS, ASCII_MARKS):  # made IDLE in the tick after a status: idle, from that status
    _marks.update({faded: _marks[IDLE] + _marks[status] for status, faded in IDLE_FROM.items()})


@dataclass(frozen=True)
class Line:
    """One shown node: its index in pre-order and how many active nodes are folded under it."""

    index: int
    folded: int = 0


def visible_lines(states: Sequence[NodeState], max_lines: int | None = None) -> list[Line]:
    """The nodes to show (see the module docstring), at most ``max_lines`` if folding allows."""
    parents = _parents(states)
    shown = [state.status != IDLE for state in states]
    for i in reversed(range(len(states))):  # children come after their parents in pre-order
        if shown[i] and parents[i] >= 0:
            shown[parents[i]] = True
    folded: dict[int, int] = {}
    hidden = [False] * len(states)
    if max_lines is not None and sum(shown) > max_lines:
        finished = [i for i, state in enumerate(states) if state.status not in ("RUNNING", IDLE)]
        for i in sorted(finished, key=lambda i: -states[i].depth):
            if sum(s and not h for s, h in zip(shown, hidden)) <= max_lines:
                break
            below = [j for j in range(i + 1, _end(states, i)) if shown[j]]
            if below and not hidden[i]:
                folded[i] = len(below)
                for j in below:
                    hidden[j] = True
    return [Line(i, folded.get(i, 0)) for i in range(len(states)) if shown[i] and not hidden[i]]


def _parents(states: Sequence[NodeState]) -> list[int]:
    parents: list[int] = []
    stack: list[int] = []  # indices of the open ancestors
    for i, state in enumerate(states):
        del stack[state.depth:]
        parents.append(stack[-1] if stack else -1)
        stack.append(i)
    return parents


def _end(states: Sequence[NodeState], i: int) -> int:
    """One past the last descendant of node ``i``."""
    j = i + 1
    while j < len(states) and states[j].depth > states[i].depth:
        j += 1
    return j


def node_label(state: NodeState) -> tuple[str, str]:
    """``(name, type)``: the instance name, and its type ID only when the name differs."""
    node_id = state.node_id
    if node_id.startswith("SubTree ") and state.name == node_id.removeprefix("SubTree "):
        return state.name, "SubTree"
    if not state.name or state.name == node_id:
        return node_id, ""
    return state.name, node_id


def tree_text(states: Sequence[NodeState], max_lines: int | None = None, ascii_only: bool = False) -> Text:
    """The active part of one tree, indented, one coloured line per node."""
    marks = ASCII_MARKS if ascii_only else MARKS
    text = Text(no_wrap=True, overflow="crop" if ascii_only else "ellipsis")  # "…" is not ASCII
    lines = visible_lines(states, max_lines)
    for line in lines:
        state = states[line.index]
        name, kind = node_label(state)
        text.append("  " * state.depth)
        text.append(f"{marks[state.status]} {name}", style=STYLES[state.status])
        if line.folded:  # before the type: a long line loses its end
            text.append(f" +{line.folded}", style="italic")
        if kind:
            text.append(f" {kind}", style="dim")
        text.append("\n")
    idle = sum(state.status == IDLE for state in states) - sum(states[line.index].status == IDLE for line in lines)
    footer = f"{idle} idle hidden"
    if any(line.folded for line in lines):
        footer += ", +N folded"
    text.append(footer, style="dim italic")
    return text


@dataclass
class TreesView:
    """Both trees' statuses at simulated time ``t`` as a rich renderable.

    ``height`` is the number of terminal rows to fit (None: show every active node).
    """

    t: float
    trees: Mapping[str, Sequence[NodeState]]
    height: int | None = None
    title: str = ""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        marks = ASCII_MARKS if options.ascii_only else MARKS
        legend = "  ".join(f"[{STYLES[s]}]{marks[s]} {s.lower()}[/]" for s in ("RUNNING", "SUCCESS", "FAILURE"))
        legend += f"  [{STYLES[IDLE_FROM['SUCCESS']]}]{marks[IDLE_FROM['SUCCESS']]} reset[/]"
        header = Text.from_markup(f"[bold]{self.title}t = {self.t:.2f} s[/] simulated   {legend}",
                                  overflow="crop" if options.ascii_only else "ellipsis")
        header.no_wrap = True
        side_by_side = options.max_width >= SIDE_BY_SIDE_MIN_WIDTH or len(self.trees) < 2
        panels = self._panels(side_by_side, options.ascii_only)
        if side_by_side:
            grid = Table.grid(expand=True)
            for _ in panels:
                grid.add_column(ratio=1)
            grid.add_row(*panels)
            yield Group(header, grid)
        else:
            yield Group(header, *panels)

    def _panels(self, side_by_side: bool, ascii_only: bool) -> list[RenderableType]:
        rows = None
        if self.height is not None:  # minus the header, the footers, each panel's frame, a spare row
            frames = 2 + 3 * (1 if side_by_side else len(self.trees))
            rows = max(1, (self.height - frames) // (1 if side_by_side else max(1, len(self.trees))))
        return [Panel(tree_text(states, rows, ascii_only), title=f"[bold]{name}[/]", title_align="left",
                      padding=(0, 1))
                for name, states in self.trees.items()]


class TreeView:
    """The observer behind ``--show-trees``: a :class:`TreesView` kept up to date on stderr."""

    shows_ticks = True  # the simulation records the trees' transitions: what each tick made IDLE

    def __init__(self, console: Console | None = None, refresh_s: float = REFRESH_S) -> None:
        self.console = console or Console(stderr=True)
        self.refresh_s = refresh_s
        self._live: Live | None = None
        self._next = 0.0

    def view(self, run: RunView) -> TreesView:
        height = self.console.height if self.console.is_terminal else None
        return TreesView(run.now(), {name: log.current() for name, log in run.status_logs.items()}, height,
                         f"{run.scenario.name}   ")

    def start(self, run: RunView) -> None:
        # Nothing of the simulation writes to stdout, and --json's output must stay there.
        self._live = Live(self.view(run), console=self.console, auto_refresh=False, redirect_stdout=False)
        self._live.start(refresh=True)
        self._next = time.monotonic() + self.refresh_s

    def after_step(self, run: RunView) -> None:
        if self._live is None or run.step_count % CHECK_EVERY_STEPS:
            return
        now = time.monotonic()
        if now >= self._next:
            self._next = now + self.refresh_s
            self._live.update(self.view(run), refresh=True)

    def finish(self, run: RunView) -> None:
        live, self._live = self._live, None
        if live is None:
            return
        try:
            live.update(self.view(run))
        finally:
            live.stop()  # restores the cursor and stderr, also after a failed or interrupted run
            if not self.console.is_terminal:
                self.console.line()  # Live ends its one print to a file without a newline
