"""Decorator nodes: exactly one child, whose status they map (BehaviorTree.CPP v4 semantics).

=============================  =============================================================
``Inverter``                   SUCCESS <-> FAILURE; RUNNING passes through
``ForceSuccess``               SUCCESS once the child finished; RUNNING passes through
``ForceFailure``               FAILURE once the child finished; RUNNING passes through
``Repeat``                     ``num_cycles`` child successes in a row (-1: forever); loops
                               within one tick while the child finishes at once
``RetryUntilSuccessful``       up to ``num_attempts`` tries (-1: forever) until the child
                               succeeds; loops within one tick while it fails at once
``KeepRunningUntilFailure``    RUNNING while the child succeeds or runs; FAILURE when it fails
``Timeout``                    FAILURE (child halted) when the child still runs ``msec``
                               simulated milliseconds after it started
``Delay``                      RUNNING for ``delay_msec`` simulated milliseconds, then the child
``RunOnce``                    the child until it completes once; afterwards SUCCESS
                               (``then_skip="true"``) or the child's result (``"false"``)
=============================  =============================================================

Time is simulated time, ``ctx.now()`` (seconds); the wall clock plays no role. A timed
decorator acts at the first tick at or after its deadline (BehaviorTree.CPP's timer thread
would wake the tree up at the deadline itself). Halting a decorator (``stop(INVALID)`` from
its parent) halts its RUNNING child and resets the decorator's counters and timers.
:class:`SubTreeNode` is the pass-through node the XML loader puts where a ``<SubTree>`` is
used (not registered).
"""

from __future__ import annotations

from typing import Iterator, Mapping, Sequence

from py_trees.behaviour import Behaviour
from py_trees.common import Status

from hri.bt.blackboard import Blackboard
from hri.bt.context import TreeContext
from hri.bt.node import BTDecorator
from hri.bt.ports import Port, PortError

MAX_LOOPS_PER_TICK = 1000
"""Repeat/RetryUntilSuccessful: most child runs in one tick before yielding RUNNING.

Only a child that finishes at once, under ``-1`` (forever) or a huge count, reaches it;
BehaviorTree.CPP would spin forever inside ``tickOnce()`` there, we return RUNNING and go on
at the next tick so that the simulation keeps running.
"""

_EPSILON = 1e-9  # seconds: 0.7 - 0.4 must count as 0.3


class Inverter(BTDecorator):
    """SUCCESS <-> FAILURE; RUNNING stays RUNNING."""

    def update(self) -> Status:
        status = self.decorated.status
        if status == Status.SUCCESS:
            return Status.FAILURE
        if status == Status.FAILURE:
            return Status.SUCCESS
        return status


class ForceSuccess(BTDecorator):
    """SUCCESS once the child finished (SUCCESS or FAILURE); RUNNING while it runs."""

    def update(self) -> Status:
        return Status.RUNNING if self.decorated.status == Status.RUNNING else Status.SUCCESS


class ForceFailure(BTDecorator):
    """FAILURE once the child finished (SUCCESS or FAILURE); RUNNING while it runs."""

    def update(self) -> Status:
        return Status.RUNNING if self.decorated.status == Status.RUNNING else Status.FAILURE


class _OwnTick(BTDecorator):
    """A decorator whose ``tick()`` decides when (and whether) the child is ticked."""

    def update(self) -> Status:
        return self.status  # unused: tick() is overridden

    def _finish(self, status: Status) -> Iterator[Behaviour]:
        self.stop(status)  # py_trees' Decorator.stop halts a RUNNING child
        yield self

    def _halt_child(self) -> None:
        if self.decorated.status != Status.INVALID:
            self.decorated.stop(Status.INVALID)


class _CountedInput(_OwnTick):
    """A decorator with integer ports checked against a minimum (``_MINIMA``), literal or not."""

    _MINIMA: dict[str, int] = {}

    def __init__(self, name: str, ports: Mapping[str, str], ctx: TreeContext, blackboard: Blackboard,
                 children: Sequence[Behaviour]):
        super().__init__(name, ports, ctx, blackboard, children)
        for port, minimum in self._MINIMA.items():
            value = self.literal_input(port)
            if value is not None and value < minimum:
                raise PortError(self._range_message(port, value, minimum))

    @staticmethod
    def _range_message(port: str, value: int, minimum: int) -> str:
        what = "-1 (forever) or more" if minimum == -1 else f"{minimum} or more"
        return f"port {port!r}: must be {what}, got {value}"

    def int_input(self, port: str) -> int:
        value = self.get_input(port)
        minimum = self._MINIMA[port]
        if value < minimum:
            raise self._error(self._range_message(port, value, minimum))
        return value


class _Loop(_CountedInput):
    """Ticks the child again, within the same tick, each time it returns ``_AGAIN``, until it
    did so ``limit`` times (then the node returns ``_AGAIN`` too); the other outcome ends the
    node with that outcome; RUNNING makes it RUNNING and keeps the count. ``-1`` loops forever
    (at most :data:`MAX_LOOPS_PER_TICK` child runs per tick). The count restarts after the node
    finishes and after a halt."""

    _PORT: str
    _AGAIN: Status

    def __init__(self, name: str, ports: Mapping[str, str], ctx: TreeContext, blackboard: Blackboard,
                 children: Sequence[Behaviour]):
        super().__init__(name, ports, ctx, blackboard, children)
        self.count = 0

    def tick(self) -> Iterator[Behaviour]:
        if self.status != Status.RUNNING:
            self.count = 0
            self.initialise()
        limit = self.int_input(self._PORT)
        child = self.decorated
        loops = 0
        while limit == -1 or self.count < limit:
            if loops == MAX_LOOPS_PER_TICK:
                self.status = Status.RUNNING
                yield self
                return
            loops += 1
            yield from child.tick()
            if child.status == self._AGAIN:
                self.count += 1
                continue
            if child.status == Status.RUNNING:
                self.status = Status.RUNNING
                yield self
                return
            self.count = 0
            yield from self._finish(child.status)
            return
        self.count = 0
        yield from self._finish(self._AGAIN)

    def terminate(self, new_status: Status) -> None:
        if new_status == Status.INVALID:
            self.count = 0


class Repeat(_Loop):
    """BehaviorTree.CPP ``Repeat``: run the child until it has succeeded ``num_cycles`` times.

    After a child SUCCESS the child is ticked again at once, in the same tick, until
    ``num_cycles`` successes (then SUCCESS) — a child that finishes at once repeats within one
    tick (BehaviorTree.CPP's ``tickOnce()`` does the same through its wake-up loop). A child
    FAILURE ends the node with FAILURE; a RUNNING child makes it RUNNING (the count is kept).
    ``num_cycles="-1"`` repeats forever (see :data:`MAX_LOOPS_PER_TICK`); ``0`` succeeds
    without ticking the child. The count restarts after SUCCESS, FAILURE and halt.

    Unlike ``py_trees.decorators.Repeat`` (one child run per tick, RUNNING in between).
    """

    PORTS = (Port("num_cycles", "in", int, description="successes needed; -1 = repeat forever"),)
    _MINIMA = {"num_cycles": -1}
    _PORT, _AGAIN = "num_cycles", Status.SUCCESS


class RetryUntilSuccessful(_Loop):
    """BehaviorTree.CPP ``RetryUntilSuccessful``: tick the child again after each FAILURE.

    SUCCESS as soon as the child succeeds; FAILURE after ``num_attempts`` failed attempts
    (``-1``: retry forever, see :data:`MAX_LOOPS_PER_TICK`; ``0``: FAILURE without ticking the
    child); RUNNING while the child runs. A child that fails at once is retried within the
    same tick. The attempt count restarts after SUCCESS, FAILURE and halt.

    Unlike ``py_trees.decorators.Retry`` (one attempt per tick, RUNNING in between).
    """

    PORTS = (Port("num_attempts", "in", int, description="attempts before FAILURE; -1 = forever"),)
    _MINIMA = {"num_attempts": -1}
    _PORT, _AGAIN = "num_attempts", Status.FAILURE


class KeepRunningUntilFailure(BTDecorator):
    """BehaviorTree.CPP ``KeepRunningUntilFailure``: RUNNING while the child succeeds or runs.

    A child SUCCESS is turned into RUNNING (the child starts afresh at the next tick); a child
    FAILURE ends the node with FAILURE.
    """

    def update(self) -> Status:
        return Status.FAILURE if self.decorated.status == Status.FAILURE else Status.RUNNING


class Timeout(_CountedInput):
    """BehaviorTree.CPP ``Timeout``: halt the child and FAIL when it runs longer than ``msec``.

    The clock starts at the node's first tick (simulated time, ``ctx.now()``). At every later
    tick, if ``msec`` milliseconds or more have passed and the child is still RUNNING, the
    child is halted (not ticked) and the node returns FAILURE; otherwise the child is ticked
    and its status returned. ``msec="0"`` means no timeout. A new run (after the node
    finished or was halted) restarts the clock.
    """

    PORTS = (Port("msec", "in", int, description="time limit in simulated milliseconds; 0 = none"),)
    _MINIMA = {"msec": 0}

    def __init__(self, name: str, ports: Mapping[str, str], ctx: TreeContext, blackboard: Blackboard,
                 children: Sequence[Behaviour]):
        super().__init__(name, ports, ctx, blackboard, children)
        self.started_at = 0.0

    def tick(self) -> Iterator[Behaviour]:
        if self.status != Status.RUNNING:
            self.started_at = self.ctx.now()
            self.initialise()
        msec = self.int_input("msec")
        child = self.decorated
        if (msec > 0 and child.status == Status.RUNNING
                and self.ctx.now() - self.started_at >= msec / 1000.0 - _EPSILON):
            self._halt_child()
            yield from self._finish(Status.FAILURE)
            return
        yield from child.tick()
        if child.status == Status.RUNNING:
            self.status = Status.RUNNING
            yield self
        else:
            yield from self._finish(child.status)


class Delay(_CountedInput):
    """BehaviorTree.CPP ``Delay``: wait ``delay_msec`` before ticking the child the first time.

    The clock starts at the node's first tick (simulated time, ``ctx.now()``). Until
    ``delay_msec`` milliseconds have passed the node returns RUNNING without ticking the
    child; from the first tick at or after that moment on it ticks the child and returns the
    child's status (``delay_msec="0"``: the child is ticked at the first tick). A new run
    (after the child finished or the node was halted) waits again.
    """

    PORTS = (Port("delay_msec", "in", int, description="delay in simulated milliseconds"),)
    _MINIMA = {"delay_msec": 0}

    def __init__(self, name: str, ports: Mapping[str, str], ctx: TreeContext, blackboard: Blackboard,
                 children: Sequence[Behaviour]):
        super().__init__(name, ports, ctx, blackboard, children)
        self.started_at = 0.0
        self.waited = False

    def tick(self) -> Iterator[Behaviour]:
        if self.status != Status.RUNNING:
            self.started_at = self.ctx.now()
            self.waited = False
            self.initialise()
        if not self.waited:
            delay = self.int_input("delay_msec")
            if self.ctx.now() - self.started_at < delay / 1000.0 - _EPSILON:
                self.status = Status.RUNNING
                yield self
                return
            self.waited = True
        child = self.decorated
        yield from child.tick()
        if child.status == Status.RUNNING:
            self.status = Status.RUNNING
            yield self
        else:
            self.waited = False
            yield from self._finish(child.status)

    def terminate(self, new_status: Status) -> None:
        if new_status == Status.INVALID:
            self.waited = False


class RunOnce(_OwnTick):
    """BehaviorTree.CPP ``RunOnce``: tick the child until it completes once, then never again.

    Until the child has returned SUCCESS or FAILURE the node returns the child's status (a
    halt before that lets the child start over). Afterwards the child is not ticked any more
    and the node returns, for ever:

    * ``then_skip="false"``: the child's result, as BehaviorTree.CPP does;
    * ``then_skip="true"`` (default): SUCCESS. BehaviorTree.CPP returns SKIPPED, which
      py_trees does not have; SKIPPED lets a Sequence go on to the next child, as SUCCESS
      does, but in a Fallback BehaviorTree.CPP would also go on while our SUCCESS ends it.
    """

    PORTS = (Port("then_skip", "in", bool, True,
                  "after the first completion: true = SUCCESS (BT.CPP: SKIPPED), false = the child's result"),)

    def __init__(self, name: str, ports: Mapping[str, str], ctx: TreeContext, blackboard: Blackboard,
                 children: Sequence[Behaviour]):
        super().__init__(name, ports, ctx, blackboard, children)
        self.result: Status | None = None

    def tick(self) -> Iterator[Behaviour]:
        if self.status != Status.RUNNING:
            self.initialise()
        if self.result is not None:
            self.stop(Status.SUCCESS if self.get_input("then_skip") else self.result)
            yield self
            return
        child = self.decorated
        yield from child.tick()
        if child.status == Status.RUNNING:
            self.status = Status.RUNNING
        else:
            self.result = child.status
            self.stop(child.status)
        yield self


class SubTreeNode(BTDecorator):
    """Where a ``<SubTree ID="...">`` is used: returns the subtree root's status.

    ``blackboard`` is the subtree's own scope; ``tree_id`` names the ``<BehaviorTree>``.
    """

    tree_id: str = ""

    def update(self) -> Status:
        return self.decorated.status
