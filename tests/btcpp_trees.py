"""Random BehaviorTree.CPP trees for the differential tests: the hypothesis strategy ``trees()``.

A drawn case has the corpus format of ``tests/differential_corpus`` (run by
``btcpp_oracle.run_case``)::

    {"ticks": 6, "blackboard": {"x": 0, "y": 1.5}, "leaves": {"a1": ["RUNNING", "SUCCESS"]},
     "xml": "<root BTCPP_format=\"4\" ...>...</root>"}

The tree is at most 5 levels deep and uses every control node and decorator of
BehaviorTree.CPP 4.10's factory except Sleep, Delay and Timeout (they wait on the wall clock);
a SubTree, when drawn, calls a second tree ``Sub`` once, with its entries remapped. Leaves are
``TestAction``/``TestCondition`` (scripted statuses, see ``btcpp_oracle``), the built-in
actions, and Script/ScriptCondition with small scripts over the entries ``x``, ``n`` (int)
and ``y`` (float), created by the case's blackboard or by a first Script; ``k`` is what Switch
nodes look at. Any node may carry pre- and post-condition attributes.

Every tree loads in the real library, and none can hang or crash it:

- Repeat and RetryUntilSuccessful loop inside one tick over a child that finishes at once,
  so they get -1 only over an action that ends up RUNNING;
- destroying a tree halts every node, which runs every ``_onHalted`` and, with
  ``catch_on_halt``, ticks TryCatch's last child: an exception there aborts the process, so
  ``_onHalted`` only writes a literal into ``h`` and that child is a plain test action.

Statuses and scripts that raise at run time are drawn on purpose: an error is an outcome too.
``trees(v4_8_compatible=True)`` leaves out what BehaviorTree.CPP 4.8.2 (the bindings CI has)
does differently from 4.10: the features of ``V4_10_ONLY``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from xml.etree import ElementTree

from hypothesis import strategies as st

MAX_DEPTH = 5
NODE_BUDGET = 12
"""Nodes drawn at most before every further node is a leaf (Switch6 needs 7 children)."""

INT_ENTRIES = ("x", "n")
FLOAT_ENTRIES = ("y",)
SWITCH_ENTRY = "k"
HALT_ENTRY = "h"
SWITCH_WORDS = ("A", "B", "C")

PRECONDITIONS = ("_skipIf", "_successIf", "_failureIf", "_while")
POSTCONDITIONS = ("_onSuccess", "_onFailure", "_post", "_onHalted")

# Weighted by repetition: the first item is what hypothesis shrinks toward.
ACTION_STATUSES = ("SUCCESS",) * 6 + ("RUNNING",) * 6 + ("FAILURE",) * 5 + ("SKIPPED",) * 2 + ("IDLE",)
CONDITION_STATUSES = ("SUCCESS", "FAILURE")
HALT_SAFE_STATUSES = ("SUCCESS", "RUNNING", "FAILURE")
"""What a leaf ticked while the tree is destroyed may return: an exception there aborts."""

SEQUENTIAL = ("Sequence", "Fallback", "AsyncSequence", "AsyncFallback", "SequenceWithMemory",
              "ReactiveSequence", "ReactiveFallback")
PLAIN_DECORATORS = ("Inverter", "ForceSuccess", "ForceFailure", "KeepRunningUntilFailure")
LOOPS = {"LoopInt": ("1", "2", "3"), "LoopDouble": ("0.5", "1.5", "2"), "LoopString": ("a", "b"),
         "LoopBool": ("true", "false")}
LOOP_OUTPUTS = {"LoopInt": ("x", "n", "li"), "LoopDouble": ("y", "ld"), "LoopString": ("ls",),
                "LoopBool": ("lb",)}
END_STATUSES = ("SUCCESS", "FAILURE", "SKIPPED")

V4_10_ONLY = {
    "try_catch": "the TryCatch node (new in 4.9)",
    "subtree_literals": "a literal remapped into a SubTree (4.8.2 passes its text, 4.10 the number it spells)",
    "operator_chains": "operators without parentheses (4.8.2 groups a - b - c and a / b * c right to left, gives "
                       "&& no precedence over ||, cannot parse 1 + 2 & 3 nor a ? b : c ? d : e)",
    "bare_negation": "a negated operand of a bitwise operator (4.8.2 cannot parse 3 | -a nor -a & 3)",
    "empty_statements": "an empty script statement, as after a last ';' (4.8.2 refuses to load it)",
    "loose_switch_values": "Switch values that are not integers or words (4.8.2 matches 1.5 and '2abc' "
                           "with cases 1 and 2)",
    "entry_updated_decorators": "SkipUnlessUpdated/WaitValueUpdate (4.8.2 does not halt their running child)",
}
"""What only 4.10 does (or does differently), drawn unless ``v4_8_compatible``."""


@dataclass
class _Draft:
    """What one case accumulates while its tree is drawn."""

    features: frozenset[str]
    """The keys of ``V4_10_ONLY`` that may be drawn."""
    switch_words: bool
    """``k`` holds words (an initial string entry) rather than numbers written by scripts."""
    leaves: dict[str, list[str]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    budget: int = NODE_BUDGET
    subtree: ElementTree.Element | None = None
    subtree_called: bool = False

    @property
    def scripts(self) -> _Scripts:
        return _scripts(self.features & SCRIPT_FEATURES, self.switch_words)

    def name(self, prefix: str) -> str:
        self.counts[prefix] = self.counts.get(prefix, 0) + 1
        return f"{prefix}{self.counts[prefix]}"


# --- scripts ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Scripts:
    """The script strategies of one kind of case (built once: building them is slow)."""

    condition: st.SearchStrategy[str]
    """A script that should give a boolean (preconditions, ScriptCondition, Precondition)."""
    script: st.SearchStrategy[str]
    """Assignments (Script, post-conditions but ``_onHalted``)."""


SCRIPT_FEATURES = frozenset({"operator_chains", "bare_negation", "empty_statements", "loose_switch_values"})
BITWISE = ("&", "|", "^")


def _binary(chains: bool, operand: st.SearchStrategy[str], operators: tuple[str, ...],
            bare_negation: bool = True) -> st.SearchStrategy[str]:
    """``left OP right``, in parentheses unless ``chains`` and drawn otherwise; unless
    ``bare_negation``, a negated operand of a bitwise operator is in parentheses too."""
    @st.composite
    def build(draw: Callable) -> str:
        left, operator, right = draw(operand), draw(st.sampled_from(operators)), draw(operand)
        if not bare_negation and operator in BITWISE:
            left, right = (f"({side})" if side.startswith("-") else side for side in (left, right))
        text = f"{left} {operator} {right}"
        return text if chains and draw(st.booleans()) else f"({text})"
    return build()


def _ternary(chains: bool, value: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """``COND ? a : b``, its condition one comparison of entries and numbers."""
    atoms = st.sampled_from(("x", "1", "y", "n", "2"))
    condition = st.tuples(atoms, st.sampled_from(("<", "==", ">=")), atoms).map(" ".join)

    @st.composite
    def build(draw: Callable) -> str:
        text = f"{draw(condition)} ? {draw(value)} : {draw(value)}"
        return text if chains and draw(st.booleans()) else f"({text})"
    return build()


def _negated(text: str) -> str:
    return f"-{text}" if text.replace(".", "").isalnum() else f"-({text})"


def _int_expr(features: frozenset[str]) -> st.SearchStrategy[str]:
    chains = "operator_chains" in features
    atoms = st.sampled_from(("1", "x", "0", "2", "n", "3"))
    return st.recursive(atoms, lambda inner: st.one_of(
        _binary(chains, inner, ("+", "-", "*", "+", "-", "*", "/") + BITWISE, "bare_negation" in features),
        inner.map(_negated),
        _ternary(chains, inner)), max_leaves=4)


def _num_expr(features: frozenset[str]) -> st.SearchStrategy[str]:
    atoms = st.sampled_from(("y", "1.5", "x", "0.5", "n", "2", "2.25"))
    return st.recursive(atoms, lambda inner: st.one_of(
        _binary("operator_chains" in features, inner, ("+", "-", "*", "/")),
        inner.map(_negated)), max_leaves=4)


def _condition(chains: bool, ints: st.SearchStrategy[str], numbers: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    comparison = _binary(chains, st.one_of(ints, numbers), ("<", "==", "!=", ">", "<=", ">="))
    atoms = st.one_of(comparison, st.sampled_from(("true", "false")))
    return st.recursive(atoms, lambda inner: st.one_of(
        _binary(chains, inner, ("&&", "||")),
        inner.map(lambda text: f"!({text})")), max_leaves=3)


def _switch_value(loose: bool, words: bool, ints: st.SearchStrategy[str],
                  numbers: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """What a script writes into ``k``: a quoted word, or a number."""
    if words:
        return st.sampled_from(SWITCH_WORDS + (("2abc",) if loose else ())).map(lambda word: f"'{word}'")
    return st.one_of(ints, numbers) if loose else ints


def _script(features: frozenset[str], words: bool, ints: st.SearchStrategy[str],
            numbers: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    int_assignment = st.tuples(st.sampled_from(INT_ENTRIES), st.sampled_from((":=", "=", "+=", "-=", "*=")), ints)
    float_assignment = st.tuples(st.sampled_from(FLOAT_ENTRIES),
                                 st.sampled_from((":=", "=", "+=", "-=", "*=", "/=")), st.one_of(numbers, ints))
    # a float into an int entry: raises when it loses precision
    mixed = st.tuples(st.sampled_from(INT_ENTRIES), st.just(":="), numbers)
    switch_value = _switch_value("loose_switch_values" in features, words, ints, numbers)
    switch = st.tuples(st.just(SWITCH_ENTRY), st.just(":="), switch_value)
    assignment = st.one_of(int_assignment, int_assignment, int_assignment, float_assignment, float_assignment,
                           switch, mixed).map(" ".join)

    @st.composite
    def build(draw: Callable) -> str:
        text = "; ".join(draw(st.lists(assignment, min_size=1, max_size=3)))
        return text + ";" if "empty_statements" in features and draw(st.booleans()) else text
    return build()


@functools.cache
def _scripts(features: frozenset[str], words: bool) -> _Scripts:
    ints, numbers = _int_expr(features), _num_expr(features)
    condition = _condition("operator_chains" in features, ints, numbers)
    return _Scripts(condition, _script(features, words, ints, numbers))


def _halt_script() -> st.SearchStrategy[str]:
    """``h := N``: destroying a tree runs every node's ``_onHalted``, where an exception
    aborts the process, so these scripts write a literal into an entry nothing else writes."""
    return st.integers(0, 9).map(lambda number: f"{HALT_ENTRY} := {number}")


HALT_SCRIPT = _halt_script()


# --- nodes -----------------------------------------------------------------------------------

def _element(tag: str, **attributes: str) -> ElementTree.Element:
    return ElementTree.Element(tag, attributes)


@st.composite
def _conditions(draw: Callable, draft: _Draft, element: ElementTree.Element) -> ElementTree.Element:
    """Adds pre-/post-condition attributes to ``element`` (most nodes get none)."""
    if draw(st.integers(0, 4)) != 0:
        return element
    for attribute in draw(st.lists(st.sampled_from(PRECONDITIONS + POSTCONDITIONS), min_size=1, max_size=2,
                                   unique=True)):
        if attribute in PRECONDITIONS:
            element.set(attribute, draw(draft.scripts.condition))
        else:
            element.set(attribute, draw(HALT_SCRIPT if attribute == "_onHalted" else draft.scripts.script))
    return element


@st.composite
def _test_action(draw: Callable, draft: _Draft, ends_running: bool = False,
                 statuses: tuple[str, ...] = ACTION_STATUSES) -> ElementTree.Element:
    name = draft.name("a")
    statuses = draw(st.lists(st.sampled_from(statuses), min_size=0 if not ends_running else 1, max_size=4))
    if ends_running:
        statuses[-1] = "RUNNING"
    if statuses:
        draft.leaves[name] = statuses
    return _element("TestAction", name=name)


@st.composite
def _test_condition(draw: Callable, draft: _Draft) -> ElementTree.Element:
    name = draft.name("c")
    statuses = draw(st.lists(st.sampled_from(CONDITION_STATUSES), max_size=4))
    if statuses:
        draft.leaves[name] = statuses
    return _element("TestCondition", name=name)


@st.composite
def _builtin_leaf(draw: Callable, draft: _Draft) -> ElementTree.Element:
    kind = draw(st.sampled_from(("Script", "ScriptCondition", "AlwaysSuccess", "AlwaysFailure", "SetBlackboard",
                                 "WasEntryUpdated", "Script", "ScriptCondition", "UnsetBlackboard")))
    if kind == "Script":
        return _element(kind, code=draw(draft.scripts.script))
    if kind == "ScriptCondition":
        return _element(kind, code=draw(draft.scripts.condition))
    if kind == "SetBlackboard":
        key = draw(st.sampled_from(INT_ENTRIES + FLOAT_ENTRIES + (SWITCH_ENTRY,)))
        values = ("1", "{x}", "A", "{n}")
        if key != SWITCH_ENTRY or "loose_switch_values" in draft.features:
            values += ("2.5", "{y}")
        return _element(kind, output_key=key, value=draw(st.sampled_from(values)))
    if kind == "WasEntryUpdated":
        return _element(kind, entry=draw(st.sampled_from(("x", "{y}", "n", SWITCH_ENTRY))))
    if kind == "UnsetBlackboard":
        return _element(kind, key=draw(st.sampled_from(INT_ENTRIES + FLOAT_ENTRIES)))
    return _element(kind)


LITERALS = {"y": "0.5"}
"""The literal remapped into the subtree, by entry (for the others: "2")."""


@st.composite
def _subtree_call(draw: Callable, draft: _Draft, depth: int) -> ElementTree.Element:
    """The one call of the second tree ``Sub`` (drawn now), with its entries remapped."""
    draft.subtree_called = True
    draft.subtree = draw(_node(draft, MAX_DEPTH - depth, 1))
    call = _element("SubTree", ID="Sub")
    modes = ("explicit", "autoremap") + (("literal",) if "subtree_literals" in draft.features else ())
    mode = draw(st.sampled_from(modes))
    if mode == "autoremap":
        call.set("_autoremap", "true")
        return call
    for entry in INT_ENTRIES + FLOAT_ENTRIES + (SWITCH_ENTRY,):
        if draw(st.integers(0, 4)) != 0:  # an entry left out is the subtree's own
            # 4.10 types a literal by its spelling, which must agree with the ports using
            # the entry: no literal for k (a string to Switch), ints for x and n
            literal = mode == "literal" and entry != SWITCH_ENTRY and draw(st.booleans())
            call.set(entry, LITERALS.get(entry, "2") if literal else f"{{{entry}}}")
    return call


@st.composite
def _leaf(draw: Callable, draft: _Draft, depth: int) -> ElementTree.Element:
    kind = draw(st.sampled_from(("action", "action", "condition", "builtin", "subtree")))
    if kind == "subtree" and not draft.subtree_called and depth < MAX_DEPTH:
        leaf = draw(_subtree_call(draft, depth))
    elif kind == "condition":
        leaf = draw(_test_condition(draft))
    elif kind == "builtin":
        leaf = draw(_builtin_leaf(draft))
    else:
        leaf = draw(_test_action(draft))
    return draw(_conditions(draft, leaf))


def _children(draft: _Draft, max_depth: int, depth: int, low: int, high: int) -> st.SearchStrategy[list]:
    return st.lists(_node(draft, max_depth, depth + 1), min_size=low, max_size=high)


@st.composite
def _control(draw: Callable, draft: _Draft, max_depth: int, depth: int) -> ElementTree.Element:
    kinds = SEQUENTIAL + ("Parallel", "ParallelAll", "IfThenElse", "WhileDoElse", "Switch")
    kind = draw(st.sampled_from(kinds + (("TryCatch",) if "try_catch" in draft.features else ())))
    element = _element(kind)
    if kind == "Switch":
        cases = draw(st.integers(2, 6))
        element = _element(f"Switch{cases}", variable=f"{{{SWITCH_ENTRY}}}")
        for index in range(1, cases + 1):
            element.set(f"case_{index}", draw(_switch_case(draft)))
        element.extend(draw(_children(draft, max_depth, depth, cases + 1, cases + 1)))
        return element
    if kind == "TryCatch":
        return draw(_try_catch(draft, max_depth, depth))
    low, high = {"IfThenElse": (2, 3), "WhileDoElse": (2, 3)}.get(kind, (1, 4))
    children = draw(_children(draft, max_depth, depth, low, high))
    if kind == "ReactiveSequence":  # 4.10 refuses to load one with two async children
        children = _at_most_one_async(children)
    element.extend(children)
    count = len(children)
    if kind == "Parallel":
        element.set("success_count", str(draw(st.integers(-count, count))))
        element.set("failure_count", str(draw(st.integers(-count, count))))
    elif kind == "ParallelAll":
        element.set("max_failures", str(draw(st.integers(-1, count))))
    return element


@st.composite
def _try_catch(draw: Callable, draft: _Draft, max_depth: int, depth: int) -> ElementTree.Element:
    catch_on_halt = draw(st.sampled_from((None, "false", "true")))
    element = _element("TryCatch") if catch_on_halt is None else _element("TryCatch", catch_on_halt=catch_on_halt)
    if catch_on_halt != "true":
        element.extend(draw(_children(draft, max_depth, depth, 2, 3)))
        return element
    # halting it ticks the catch child, and destroying the tree halts it
    element.extend(draw(_children(draft, max_depth, depth, 1, 2)))
    element.append(draw(_test_action(draft, statuses=HALT_SAFE_STATUSES)))
    return element


def _at_most_one_async(children: list[ElementTree.Element]) -> list[ElementTree.Element]:
    seen = False
    for child in children:
        if child.tag == "AsyncSequence":
            if seen:
                child.tag = "Sequence"
            seen = True
    return children


def _switch_case(draft: _Draft) -> st.SearchStrategy[str]:
    if draft.switch_words:  # "2" for the word "2abc"
        return st.sampled_from(SWITCH_WORDS + ("1",) + (("2",) if "loose_switch_values" in draft.features else ()))
    numbers = ("1", "0", "2", "3") + (("1.5", "-1") if "loose_switch_values" in draft.features else ())
    return st.sampled_from(numbers)


@st.composite
def _decorator(draw: Callable, draft: _Draft, max_depth: int, depth: int) -> ElementTree.Element:
    kinds = PLAIN_DECORATORS + ("RetryUntilSuccessful", "Repeat", "RunOnce", "Precondition") + tuple(LOOPS)
    updated = ("SkipUnlessUpdated", "WaitValueUpdate") if "entry_updated_decorators" in draft.features else ()
    kind = draw(st.sampled_from(kinds + updated))
    if kind in ("RetryUntilSuccessful", "Repeat"):
        return draw(_counted(draft, kind, max_depth, depth))
    element = _element(kind)
    if kind == "RunOnce" and draw(st.booleans()):
        element.set("then_skip", draw(st.sampled_from(("true", "false"))))
    elif kind == "Precondition":
        element.set("if", draw(draft.scripts.condition))
        if draw(st.booleans()):
            element.set("else", draw(st.sampled_from(END_STATUSES + ("RUNNING",))))
    elif kind in ("SkipUnlessUpdated", "WaitValueUpdate"):
        element.set("entry", draw(st.sampled_from(("x", "{y}", "n", "{k}"))))
    elif kind in LOOPS:
        items = draw(st.lists(st.sampled_from(LOOPS[kind]), min_size=1, max_size=3))
        element.set("queue", ";".join(items))
        element.set("value", f"{{{draw(st.sampled_from(LOOP_OUTPUTS[kind]))}}}")
        if draw(st.booleans()):
            element.set("if_empty", draw(st.sampled_from(END_STATUSES)))
    element.append(draw(_node(draft, max_depth, depth + 1)))
    return element


@st.composite
def _counted(draw: Callable, draft: _Draft, kind: str, max_depth: int, depth: int) -> ElementTree.Element:
    """Repeat/RetryUntilSuccessful: 0..3 turns, or -1 over an action that ends up RUNNING
    (with no attribute that could make it finish at once)."""
    port = "num_cycles" if kind == "Repeat" else "num_attempts"
    if draw(st.integers(0, 5)) == 0:
        element = _element(kind, **{port: "-1"})
        element.append(draw(_test_action(draft, ends_running=True)))
        return element
    element = _element(kind, **{port: str(draw(st.integers(0, 3)))})
    element.append(draw(_node(draft, max_depth, depth + 1)))
    return element


@st.composite
def _node(draw: Callable, draft: _Draft, max_depth: int, depth: int) -> ElementTree.Element:
    """A random subtree whose root is at ``depth`` (1 = the tree's root)."""
    if depth >= max_depth or draft.budget <= 0:
        return draw(_leaf(draft, depth))
    draft.budget -= 1
    kind = draw(st.sampled_from(("leaf", "control", "decorator", "control") if depth > 1 else ("control", "decorator")))
    if kind == "leaf":
        return draw(_leaf(draft, depth))
    node = draw(_control(draft, max_depth, depth) if kind == "control" else _decorator(draft, max_depth, depth))
    return draw(_conditions(draft, node))


# --- cases -----------------------------------------------------------------------------------

@st.composite
def _initial_entries(draw: Callable, draft: _Draft) -> dict[str, int | float | str]:
    entries: dict[str, int | float | str] = {name: draw(st.integers(0, 3)) for name in INT_ENTRIES}
    entries.update({name: draw(st.sampled_from((1.5, 0.0, 0.5, 2.25))) for name in FLOAT_ENTRIES})
    if draft.switch_words:
        entries[SWITCH_ENTRY] = draw(st.sampled_from(SWITCH_WORDS))
    return entries


def _document(main: ElementTree.Element, subtree: ElementTree.Element | None) -> str:
    root = _element("root", BTCPP_format="4", main_tree_to_execute="MainTree")
    ElementTree.SubElement(root, "BehaviorTree", ID="MainTree").append(main)
    if subtree is not None:
        ElementTree.SubElement(root, "BehaviorTree", ID="Sub").append(subtree)
    ElementTree.indent(root, space="  ")
    return ElementTree.tostring(root, encoding="unicode")


def trees(v4_8_compatible: bool = False) -> st.SearchStrategy[dict]:
    """Differential-test cases: a random tree, its leaves' statuses, its initial blackboard
    and how many times to tick it. ``v4_8_compatible``: only what 4.8.2 and 4.10 agree on."""
    return _cases(frozenset() if v4_8_compatible else frozenset(V4_10_ONLY))


@st.composite
def _cases(draw: Callable, features: frozenset[str]) -> dict:
    """Cases that may use the ``features`` of ``V4_10_ONLY``."""
    draft = _Draft(features=features, switch_words=draw(st.booleans()))
    entries = draw(_initial_entries(draft))
    # Either the case's blackboard holds the entries, or a first Script creates them
    # (a word for k stays in the blackboard: a script would make a number of it).
    by_script = draw(st.booleans())
    tree = draw(_node(draft, MAX_DEPTH - 1 if by_script else MAX_DEPTH, 1))
    if by_script:
        numbers = {name: value for name, value in entries.items() if name != SWITCH_ENTRY}
        code = "; ".join(f"{name} := {value}" for name, value in numbers.items())
        sequence = _element("Sequence")
        sequence.extend([_element("Script", code=code), tree])
        tree = sequence
        entries = {name: value for name, value in entries.items() if name == SWITCH_ENTRY}
    return {"ticks": draw(st.integers(1, 8)), "blackboard": entries, "leaves": draft.leaves,
            "xml": _document(tree, draft.subtree)}
