"""Control nodes with BehaviorTree.CPP v4 semantics (where they differ from py_trees).

=========================  =================================================================
``Sequence``               ticks children in order; resumes at a RUNNING child (earlier
                           children are not ticked again); a FAILURE ends the sequence
                           (FAILURE) and it restarts at the first child
``SequenceWithMemory``     like Sequence, but a FAILURE keeps its place: the next tick
                           retries the failed child; a halt keeps its place too
``ReactiveSequence``       re-ticks all earlier children on every tick; when one of them does
                           not succeed, the RUNNING later child is halted
``Fallback``               tries children in order until one succeeds; resumes at a RUNNING child
``ReactiveFallback``       re-ticks earlier children every tick; a higher-priority child that
                           succeeds or runs halts the lower-priority RUNNING one
``IfThenElse``             2 or 3 children: condition, then-branch, optional else-branch; the
                           condition is not re-checked while a branch runs
``WhileDoElse``            2 or 3 children: like IfThenElse, but the condition is re-checked
                           at every tick and a change halts the running branch
``InterruptableSequence``  the thesis's name for SequenceWithMemory (see class)
``WeightedRandom``         runs one child picked at random by ``weights`` (see class)
=========================  =================================================================

``Parallel`` is in :mod:`hri.bt.parallel`, ``Switch2`` .. ``Switch6`` in :mod:`hri.bt.switch`.

Halting a control (``stop(INVALID)`` from a parent) halts its RUNNING children: a leaf's
``terminate(INVALID)`` is called (``BTNode.on_halted`` when it was RUNNING).
"""

from __future__ import annotations

from typing import Iterator, Mapping, Sequence as Seq

import numpy as np
import py_trees
from py_trees.behaviour import Behaviour
from py_trees.common import Status

from hri.bt.blackboard import Blackboard
from hri.bt.context import TreeContext
from hri.bt.node import BTControl
from hri.bt.ports import Port, PortError, Weights


class _Control(BTControl):
    """A control built on one of py_trees' composites (``_BASE``), with fixed ``_MEMORY``."""

    _BASE: type[py_trees.composites.Composite]
    _MEMORY: bool

    def __init__(
        self,
        name: str,
        ports: Mapping[str, str],
        ctx: TreeContext,
        blackboard: Blackboard,
        children: Seq[Behaviour],
    ):
        super().__init__(name, ports, ctx, blackboard, children)
        self.memory = self._MEMORY

    def tick(self) -> Iterator[Behaviour]:
        return self._BASE.tick(self)  # type: ignore[arg-type]

    def stop(self, new_status: Status = Status.INVALID) -> None:
        py_trees.composites.Composite.stop(self, new_status)


class Sequence(_Control):
    """BehaviorTree.CPP ``Sequence``: py_trees' Sequence with memory.

    Children are ticked in order while they succeed; a RUNNING child makes the node RUNNING
    and is resumed at the next tick without ticking the earlier children again. A child's
    FAILURE makes the node FAIL, and the next tick starts again at the first child; so does a
    halt. SUCCESS when the last child succeeds.
    """

    _BASE = py_trees.composites.Sequence
    _MEMORY = True


class ReactiveSequence(_Control):
    """BehaviorTree.CPP ``ReactiveSequence``: py_trees' Sequence without memory.

    Every tick starts at the first child; when an earlier child fails (or runs) while a
    later one is RUNNING, the later one is halted.
    """

    _BASE = py_trees.composites.Sequence
    _MEMORY = False


class Fallback(_Control):
    """BehaviorTree.CPP ``Fallback``: py_trees' Selector with memory."""

    _BASE = py_trees.composites.Selector
    _MEMORY = True


class ReactiveFallback(_Control):
    """BehaviorTree.CPP ``ReactiveFallback``: py_trees' Selector without memory."""

    _BASE = py_trees.composites.Selector
    _MEMORY = False


class IfThenElse(BTControl):
    """``IfThenElse``: if child 0 succeeds, run child 1, else child 2 (or FAILURE without one).

    As in BehaviorTree.CPP v4, the condition is ticked once when the node starts (again
    while the condition itself is RUNNING); while the chosen branch is RUNNING only the
    branch is ticked. The node returns the branch's status.
    """

    MIN_CHILDREN = 2
    MAX_CHILDREN = 3

    def __init__(self, name: str, ports: Mapping[str, str], ctx: TreeContext, blackboard: Blackboard,
                 children: Seq[Behaviour]):
        super().__init__(name, ports, ctx, blackboard, children)
        self._branch = 0

    def tick(self) -> Iterator[Behaviour]:
        if self.status != Status.RUNNING:
            self._branch = 0
            self.initialise()
        if self._branch == 0:
            condition = self.children[0]
            self.current_child = condition
            yield from condition.tick()
            if condition.status == Status.RUNNING:
                self.status = Status.RUNNING
                yield self
                return
            if condition.status == Status.SUCCESS:
                self._branch = 1
            elif len(self.children) == 3:
                self._branch = 2
            else:
                self._finish(Status.FAILURE)
                yield self
                return
        branch = self.children[self._branch]
        self.current_child = branch
        yield from branch.tick()
        if branch.status == Status.RUNNING:
            self.status = Status.RUNNING
        else:
            self._finish(branch.status)
        yield self

    def _finish(self, status: Status) -> None:
        self._branch = 0
        self.stop(status)

    def stop(self, new_status: Status = Status.INVALID) -> None:
        if new_status == Status.INVALID:
            self._branch = 0
        py_trees.composites.Composite.stop(self, new_status)


class InterruptableSequence(BTControl):
    """The thesis's sequence that resumes where it was interrupted (BT.CPP ``SequenceWithMemory``).

    Like ``Sequence``, children run in order and the node returns RUNNING while the current
    child runs. The index advances only when the current child returns SUCCESS, and it is
    *not* reset when the sequence is halted by its parent, so an interrupted behaviour
    resumes at the same child (which starts afresh). After the last child succeeds the node
    returns SUCCESS and starts over at the first child next time.

    On a child's FAILURE the node returns FAILURE and *keeps the index*: the next tick
    retries the failed child rather than repeating the children that already succeeded.
    """

    def __init__(self, name: str, ports: Mapping[str, str], ctx: TreeContext, blackboard: Blackboard,
                 children: Seq[Behaviour]):
        super().__init__(name, ports, ctx, blackboard, children)
        self.index = 0

    def tick(self) -> Iterator[Behaviour]:
        if self.status != Status.RUNNING:
            self.initialise()
        while self.index < len(self.children):
            child = self.children[self.index]
            self.current_child = child
            yield from child.tick()
            if child.status == Status.RUNNING:
                self.status = Status.RUNNING
                yield self
                return
            if child.status != Status.SUCCESS:
                self.stop(Status.FAILURE)
                yield self
                return
            self.index += 1
        self.index = 0
        self.stop(Status.SUCCESS)
        yield self

    def stop(self, new_status: Status = Status.INVALID) -> None:
        py_trees.composites.Composite.stop(self, new_status)


class SequenceWithMemory(InterruptableSequence):
    """BehaviorTree.CPP ``SequenceWithMemory``: a Sequence that keeps its place on FAILURE.

    Children run in order; a RUNNING child is resumed at the next tick. When a child fails
    the node returns FAILURE *without* resetting: the next tick ticks the failed child again
    (afresh), not the children that already succeeded. Only the completion of the last child
    starts it over at the first child. As in BehaviorTree.CPP v4 (``halt()`` leaves
    ``current_child_idx_`` alone), a halt keeps the place too: the interrupted child is
    halted and starts afresh at the next tick. Same behaviour as ``InterruptableSequence``.
    """


class WhileDoElse(BTControl):
    """BehaviorTree.CPP ``WhileDoElse``: a reactive IfThenElse (2 or 3 children).

    Every tick ticks the condition (child 0) first. RUNNING condition: the node is RUNNING
    (the branches are not ticked). SUCCESS: the else-branch (child 2) is halted if it was
    running and the then-branch (child 1) is ticked. FAILURE: the then-branch is halted and
    the else-branch is ticked; without an else-branch the node returns FAILURE (halting a
    running then-branch). The node returns the ticked branch's status; when it finishes,
    all children are reset.
    """

    MIN_CHILDREN = 2
    MAX_CHILDREN = 3

    def tick(self) -> Iterator[Behaviour]:
        if self.status != Status.RUNNING:
            self.initialise()
        condition = self.children[0]
        self.current_child = condition
        yield from condition.tick()
        if condition.status == Status.RUNNING:
            self.status = Status.RUNNING
            yield self
            return
        has_else = len(self.children) == 3
        branch: Behaviour | None = None
        if condition.status == Status.SUCCESS:
            if has_else:
                _halt(self.children[2])
            branch = self.children[1]
        else:
            _halt(self.children[1])
            if has_else:
                branch = self.children[2]
        status = Status.FAILURE
        if branch is not None:
            self.current_child = branch
            yield from branch.tick()
            status = branch.status
        if status == Status.RUNNING:
            self.status = Status.RUNNING
        else:
            for child in self.children:
                _halt(child)
            self.stop(status)
        yield self

    def stop(self, new_status: Status = Status.INVALID) -> None:
        py_trees.composites.Composite.stop(self, new_status)


def _halt(node: Behaviour) -> None:
    """BehaviorTree.CPP ``haltChild``: a RUNNING node is halted, any other is reset."""
    if node.status != Status.INVALID:
        node.stop(Status.INVALID)


class WeightedRandom(BTControl):
    """Runs one child picked at random by ``weights`` (one non-negative weight per child).

    The pick uses ``ctx.rng``. It is kept across halts and across FAILURE; only after the
    picked child returns SUCCESS is a new child picked on the next run. The node returns the
    picked child's status.
    """

    PORTS = (Port("weights", "in", Weights, description="one weight per child, e.g. 0.95;0.05"),)

    def __init__(self, name: str, ports: Mapping[str, str], ctx: TreeContext, blackboard: Blackboard,
                 children: Seq[Behaviour]):
        super().__init__(name, ports, ctx, blackboard, children)
        self.picked: int | None = None
        weights = self.literal_input("weights")
        if weights is not None:
            self._check_weights(weights)

    def _check_weights(self, weights: Seq[float]) -> np.ndarray:
        if len(weights) != len(self.children):
            raise PortError(f"port 'weights': {len(weights)} weights for {len(self.children)} children")
        array = np.asarray(weights, dtype=float)
        if np.any(array < 0) or not np.all(np.isfinite(array)) or array.sum() <= 0:
            raise PortError("port 'weights': weights must be non-negative with a positive sum")
        return array

    def _pick(self) -> int:
        try:
            weights = self._check_weights(self.get_input("weights"))
        except PortError as err:
            if err.file:
                raise
            raise self._error(err.message) from None
        cumulative = np.cumsum(weights / weights.sum())
        index = int(np.searchsorted(cumulative, self.ctx.rng.random(), side="right"))
        index = min(index, len(self.children) - 1)
        while weights[index] == 0:  # guard against rounding at the upper end
            index -= 1
        return index

    def tick(self) -> Iterator[Behaviour]:
        if self.status != Status.RUNNING:
            self.initialise()
        if self.picked is None:
            self.picked = self._pick()
        child = self.children[self.picked]
        self.current_child = child
        yield from child.tick()
        if child.status == Status.RUNNING:
            self.status = Status.RUNNING
        else:
            if child.status == Status.SUCCESS:
                self.picked = None
            self.stop(child.status)
        yield self

    def stop(self, new_status: Status = Status.INVALID) -> None:
        py_trees.composites.Composite.stop(self, new_status)
