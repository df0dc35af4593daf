"""Base classes of every node the loader builds: BehaviorTree.CPP's tick on py_trees behaviours.

Each node is a py_trees behaviour (``name``, ``status``, ``children``) that ticks the way
BehaviorTree.CPP's ``TreeNode::executeTick`` does: :meth:`TreeNode.execute_tick` checks the
node's pre-conditions (``_failureIf``, ``_successIf``, ``_skipIf``, ``_while``), calls
:meth:`TreeNode.on_tick` (the node's own logic, BehaviorTree.CPP's ``tick()``), runs its
post-conditions (``_onSuccess``, ``_onFailure``, ``_post``) and keeps the status it returned,
unless that was :data:`~hri.bt.node_status.SKIPPED`. A debugger may inject a callback before
and after a node's tick (:attr:`TreeNode.pre_tick`, :attr:`TreeNode.post_tick`: BehaviorTree.CPP's
``setPreTickFunction`` and ``setPostTickFunction``), which Groot2's breakpoints use.
:meth:`TreeNode.halt_node` interrupts a RUNNING node (``halt()``, then ``_onHalted``). A
node's status changes only through :meth:`TreeNode.set_status` (``setStatus``;
:meth:`TreeNode.reset_status` for IDLE), which tells the node's ``status_observer`` of each
change, as BehaviorTree.CPP tells its loggers.

* :class:`BTNode`: a leaf (action or condition): override ``update()`` (and
  ``initialise()`` when it starts, ``on_halted()`` for clean-up when a RUNNING node is halted).
* :class:`ServiceCallNode`: a leaf that asks a service on the network and waits for the
  answer: override ``request()`` and ``result(value)``.
* :class:`BTControl`: a control node with children (``MIN_CHILDREN``/``MAX_CHILDREN``).
* :class:`BTDecorator`: exactly one child.

Each is built from one :class:`NodeConfig`, what the loader knows of the node (its name,
the raw XML attribute strings of its ports, the tree's context and blackboard, its children,
its ``FILE:LINE``); ports are declared and read as :mod:`hri.bt.ports` describes. A node that
keeps state of its own overrides ``__init__(self, config: NodeConfig)``, calls
``super().__init__(config)`` and sets it.
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Iterator, Mapping, Sequence

import py_trees
from py_trees.common import Status

from hri.bt.blackboard import Blackboard
from hri.bt.context import TreeContext
from hri.bt.node_status import SKIPPED, TickResult, is_completed
from hri.bt.ports import PortError, PortsMixin
from hri.base.errors import HriError
from hri.base.numbers import brief
from hri.net.errors import failure_reason

if TYPE_CHECKING:
    from hri.bt.scripting import Script
    from hri.net import Future

_RUNNING, _SUCCESS, _FAILURE, _IDLE = Status.RUNNING, Status.SUCCESS, Status.FAILURE, Status.INVALID

PRE_CONDITIONS = ("_failureIf", "_successIf", "_skipIf", "_while")
"""Pre-condition attributes in the order BehaviorTree.CPP checks them."""
POST_CONDITIONS = ("_onHalted", "_onFailure", "_onSuccess", "_post")
"""Post-condition attributes (scripts run after the node finished or was halted)."""
_PRE_RESULT = {"_failureIf": _FAILURE, "_successIf": _SUCCESS, "_skipIf": SKIPPED}


class NodeExecutionError(HriError):
    """An exception raised inside a node's tick, as one line: the node's ``FILE:LINE``, its
    type and name, the simulated time and the exception; :attr:`traceback` keeps the rest."""

    def __init__(self, node: "TreeNode", err: Exception) -> None:
        file, line = node.location if node.location else (None, None)
        when = node.ctx.now() if node.ctx is not None else 0.0
        kind = node.type_id or type(node).__name__
        super().__init__(f"{kind} {node.name!r} raised {type(err).__name__}: {err} at t = {when:.3f} s",
                         file, line)
        self.traceback = "".join(traceback.format_exception(err))


class Conditions:
    """A node's pre- and post-condition scripts, parsed when the tree was loaded."""

    __slots__ = ("pre", "on_halted", "on_failure", "on_success", "post")

    def __init__(self, scripts: Mapping[str, "Script"]) -> None:
        self.pre = tuple((attr, scripts[attr]) for attr in PRE_CONDITIONS if attr in scripts)
        self.on_halted = scripts.get("_onHalted")
        self.on_failure = scripts.get("_onFailure")
        self.on_success = scripts.get("_onSuccess")
        self.post = scripts.get("_post")


@dataclass(frozen=True)
class NodeConfig:
    """What the loader gives a node it builds (BehaviorTree.CPP's ``NodeConfig``).

    Attributes:
        name: the node's ``name`` (its type when the XML gives none).
        ports: the element's attributes as written, less ``name``, ``ID`` and the condition
            scripts (those that name ports are parsed as the node's ports).
        ctx: the tree's context, shared by its nodes.
        blackboard: the blackboard scope the node reads and writes.
        children: a control's or decorator's children, built first; none for a leaf.
        type_id: the node's type as written in the tree file (:attr:`TreeNode.type_id`).
        location: ``(file, line)`` of the element, for run-time errors.
        conditions: the node's pre- and post-condition scripts, None when it has none.
    """

    name: str
    ports: Mapping[str, str]
    ctx: TreeContext
    blackboard: Blackboard
    children: Sequence[TreeNode] = ()
    type_id: str = ""
    location: tuple[str, int] | None = None
    conditions: Conditions | None = None


StatusObserver = Callable[["TreeNode", Status, Status], None]
"""Called with ``(node, previous status, new status)`` after a node's status changed."""
PreTick = Callable[["TreeNode"], TickResult]
"""Called with the node before its tick; a SUCCESS or FAILURE it returns replaces the tick."""
PostTick = Callable[["TreeNode", TickResult], TickResult]
"""Called with the node and its tick's status; a SUCCESS or FAILURE it returns replaces the status."""


class TreeNode(PortsMixin):
    """BehaviorTree.CPP's ``TreeNode`` on a py_trees behaviour: tick, halt, conditions."""

    conditions: Conditions | None = None
    type_id: str = ""
    """The node's type as written in the tree file (an alias such as ``AmICalled`` is not its class's name)."""

    status: Status
    status_observer: StatusObserver | None = None
    """Told of every change of :attr:`status` by :meth:`set_status` (a logger's hook); None: nobody is."""
    pre_tick: PreTick | None = None
    """Called before the tick when no pre-condition decided the status and the node is neither
    SUCCESS nor FAILURE (BehaviorTree.CPP ``setPreTickFunction``); None: no call."""
    post_tick: PostTick | None = None
    """Called after the tick and the post-conditions (``setPostTickFunction``); None: no call."""
    name: str

    def _configure(self, config: NodeConfig) -> None:
        """Take ``config``'s type, location and conditions, then parse its ports (a PortError
        when they are wrong)."""
        self.type_id = config.type_id
        self.location = config.location
        self.conditions = config.conditions
        self._init_ports(config.ports, config.ctx, config.blackboard)

    def on_tick(self) -> TickResult:
        """The node's own logic (BehaviorTree.CPP ``tick()``)."""
        raise NotImplementedError

    def halt(self) -> None:
        """Interrupt the node and its children; the node becomes IDLE."""
        self.reset_status()

    def execute_tick(self) -> TickResult:
        """Tick the node as BehaviorTree.CPP's ``executeTick`` does; returns the tick's status.

        An exception that is not an :class:`~hri.base.errors.HriError` (a bug of a plug-in node)
        becomes a :class:`NodeExecutionError` naming this node, as BehaviorTree.CPP wraps it
        in its ``NodeExecutionError``."""
        try:
            if self.pre_tick is not None or self.post_tick is not None:
                status = self._hooked_tick(self.pre_tick, self.post_tick)
            elif self.conditions is None:
                status = self.on_tick()
            else:
                status = self._tick_with_conditions(self.conditions)
        except HriError:
            raise
        except Exception as err:
            raise NodeExecutionError(self, err) from err
        if status is not SKIPPED:
            if status is _IDLE:  # BehaviorTree.CPP's setStatus(IDLE) throws
                raise self._error("the tick returned IDLE")
            self.set_status(status)
        return status

    def _tick_with_conditions(self, conditions: Conditions) -> TickResult:
        status = self._pre_condition(conditions)
        if status is None:
            status = self.on_tick()
        self._post_condition(conditions, status)
        return status

    def _post_condition(self, conditions: Conditions, status: TickResult) -> None:
        if status is _SUCCESS:
            self.run_script(conditions.on_success)
        elif status is _FAILURE:
            self.run_script(conditions.on_failure)
        if status is _SUCCESS or status is _FAILURE:
            self.run_script(conditions.post)

    def _hooked_tick(self, pre_tick: PreTick | None, post_tick: PostTick | None) -> TickResult:
        """The tick with the injected callbacks, in ``executeTick``'s order: the pre-conditions,
        ``pre_tick`` (its SUCCESS or FAILURE replaces the tick), the tick, the post-conditions,
        ``post_tick`` (its SUCCESS or FAILURE replaces the status). The callbacks are those
        set when the tick began, as BehaviorTree.CPP copies them then."""
        conditions = self.conditions
        status = None if conditions is None else self._pre_condition(conditions)
        if status is None:
            if pre_tick is not None and not is_completed(self.status):
                replaced = pre_tick(self)
                if is_completed(replaced):
                    status = replaced
            if status is None:
                status = self.on_tick()
        if conditions is not None:
            self._post_condition(conditions, status)
        if post_tick is not None:
            replaced = post_tick(self, status)
            if is_completed(replaced):
                status = replaced
        return status

    def _pre_condition(self, conditions: Conditions) -> TickResult | None:
        """The status a pre-condition imposes, or None to tick the node. ``_failureIf``,
        ``_successIf`` and ``_skipIf`` are checked when the node starts; ``_while`` also while
        it runs, and halts it when it turns false."""
        idle = self.status is _IDLE
        for attr, script in conditions.pre:
            if idle:
                if self.script_truth(script, attr):
                    if attr != "_while":
                        return _PRE_RESULT[attr]
                elif attr == "_while":
                    return SKIPPED
            elif self.status is _RUNNING and attr == "_while" and not self.script_truth(script, attr):
                self.halt_node()
                return SKIPPED
        return None

    def halt_node(self) -> None:
        """Halt the node (BehaviorTree.CPP ``haltNode``): :meth:`halt`, then ``_onHalted``."""
        self.halt()
        if self.conditions is not None:
            self.run_script(self.conditions.on_halted)

    def set_status(self, status: Status) -> None:
        """Make ``status`` the node's status (BehaviorTree.CPP ``setStatus``, and ``resetStatus``
        for IDLE); a change is told to the node's :attr:`status_observer`, as BehaviorTree.CPP
        notifies its subscribers. Every change of a node's status goes through here."""
        before = self.status
        self.status = status
        if before is not status and self.status_observer is not None:
            self.status_observer(self, before, status)

    def reset_status(self) -> None:
        """Make the node IDLE again (BehaviorTree.CPP ``resetStatus``)."""
        self.set_status(_IDLE)

    def run_script(self, script: "Script | None") -> Any:
        """Run ``script`` on the node's blackboard (nothing for None); a run-time error is a
        PortError naming this node's file and line."""
        if script is None:
            return None
        from hri.bt.scripting import ScriptError

        try:
            return script.run(self.blackboard, self.ctx.enums)
        except ScriptError as err:
            raise self._error(f"script {brief(script.code, 200)}: {err}") from None

    def script_truth(self, script: "Script", attr: str) -> bool:
        """A condition script's result as a bool, as BehaviorTree.CPP casts it."""
        from hri.bt.scripting import ScriptError

        try:
            return script.truth(self.blackboard, self.ctx.enums)
        except ScriptError as err:
            raise self._error(f"{attr} {brief(script.code, 200)}: {err}") from None

    # py_trees drives a behaviour through the generator tick(): one BehaviorTree.CPP tick.
    def tick(self) -> Iterator[py_trees.behaviour.Behaviour]:
        self.execute_tick()
        yield self  # type: ignore[misc]


class BTNode(TreeNode, py_trees.behaviour.Behaviour):
    """A leaf node (action or condition).

    A tick of an IDLE node calls ``initialise()`` then ``update()``; a RUNNING node's tick
    calls ``update()``. Halting a RUNNING node calls ``on_halted()``. A node with
    :attr:`STATEFUL` (BehaviorTree.CPP's ``StatefulActionNode``) that finished and was not
    reset by its parent returns its result again without running; any other node runs at
    every tick, as BehaviorTree.CPP's synchronous actions and conditions do.
    """

    STATEFUL: ClassVar[bool] = False

    def __init__(self, config: NodeConfig) -> None:
        py_trees.behaviour.Behaviour.__init__(self, config.name)
        self._configure(config)

    def on_tick(self) -> TickResult:
        if self.status is not _RUNNING:
            if self.STATEFUL and self.status is not _IDLE:
                return self.status
            self.initialise()
        status = self.update()
        if not isinstance(status, (Status, type(SKIPPED))):
            raise self._error(f"update() returned {status!r}, not a status")
        return status

    def halt(self) -> None:
        if self.status is _RUNNING:
            self.on_halted()
        self.reset_status()

    def on_halted(self) -> None:
        """Called when the node is interrupted while RUNNING (BehaviorTree.CPP ``onHalted()``)."""


class ServiceCallNode(BTNode):
    """A leaf that asks a service and waits for its answer, as BehaviorTree.CPP's service nodes do.

    The request goes out on the first tick (:meth:`request`), the node is RUNNING until the
    answer arrives, then :meth:`result` turns it into SUCCESS or FAILURE. A request that
    failed (lost, not answered in time, refused, a full queue) is FAILURE and a
    ``service_call_failed`` event with its ``reason`` (:func:`hri.net.errors.failure_reason`)
    and ``error``; a halted node gives up its request (a late answer is dropped).
    """

    _future: "Future | None" = None

    def request(self) -> "Future":
        raise NotImplementedError

    def result(self, value: Any) -> Status:
        raise NotImplementedError

    def initialise(self) -> None:
        self._future = None

    def update(self) -> Status:
        if self._future is None:
            self._future = self.request()
        if self._future.pending:
            return _RUNNING
        if self._future.failed:
            error = self._future.error
            self.ctx.events("service_call_failed", node=self.name, reason=failure_reason(error), error=error.message)
            return _FAILURE
        return self.result(self._future.value)

    def on_halted(self) -> None:
        if self._future is not None:
            self._future.cancel()


class ChildrenMixin:
    """How many children a control or decorator accepts."""

    MIN_CHILDREN: ClassVar[int] = 1
    MAX_CHILDREN: ClassVar[int | None] = None

    @classmethod
    def children_count_error(cls, count: int) -> str | None:
        """A message when ``count`` children are not allowed, else None."""
        low, high = cls.MIN_CHILDREN, cls.MAX_CHILDREN
        if count >= low and (high is None or count <= high):
            return None
        if high is None:
            return f"needs at least {low} child{'ren' if low != 1 else ''}, has {count}"
        if low == high:
            return f"needs exactly {low} child{'ren' if low != 1 else ''}, has {count}"
        return f"needs {low} to {high} children, has {count}"


def halt_child(child: TreeNode) -> None:
    """BehaviorTree.CPP ``haltChild``: a RUNNING node is halted, then any node is made IDLE."""
    if child.status is _RUNNING:
        child.halt_node()
    child.reset_status()


class BTControl(TreeNode, ChildrenMixin, py_trees.composites.Composite):
    """A control node: ``on_tick()`` ticks the children (``execute_tick()``) as it decides."""

    children: list[TreeNode]  # type: ignore[assignment]

    def __init__(self, config: NodeConfig) -> None:
        py_trees.composites.Composite.__init__(self, config.name, list(config.children))  # type: ignore[arg-type]
        self._configure(config)
        message = self.children_count_error(len(self.children))
        if message:
            raise PortError(message)

    def halt(self) -> None:
        self.reset_children()
        self.reset_status()

    def halt_child(self, index: int) -> None:
        halt_child(self.children[index])

    def reset_children(self) -> None:
        """Halt the RUNNING children and make every child IDLE."""
        for child in self.children:
            halt_child(child)

    def halt_children_from(self, first: int) -> None:
        for child in self.children[first:]:
            halt_child(child)


class BTDecorator(TreeNode, ChildrenMixin, py_trees.decorators.Decorator):
    """A decorator: exactly one child (``self.child``), ticked by ``on_tick()``.

    As BehaviorTree.CPP's ``DecoratorNode::executeTick``, a child that finished (SUCCESS or
    FAILURE) is made IDLE after the decorator's tick.
    """

    MAX_CHILDREN: ClassVar[int | None] = 1

    def __init__(self, config: NodeConfig) -> None:
        message = self.children_count_error(len(config.children))
        if message:
            raise PortError(message)
        py_trees.decorators.Decorator.__init__(self, config.name, config.children[0])  # type: ignore[arg-type]
        self.child: TreeNode = config.children[0]
        self._configure(config)

    def execute_tick(self) -> TickResult:
        status = TreeNode.execute_tick(self)
        child_status = self.child.status
        if child_status is _SUCCESS or child_status is _FAILURE:
            self.child.reset_status()
        return status

    def halt(self) -> None:
        self.reset_child()
        self.reset_status()

    def reset_child(self) -> None:
        """Halt the child if RUNNING, and make it IDLE."""
        halt_child(self.child)

    def update(self) -> Status:  # py_trees' abstract method; on_tick() does the work
        return self.status
