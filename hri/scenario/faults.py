"""The faults a scenario asks for: which kind, at which simulated time, in which tree.

A scenario's optional ``faults`` list (or ``hri run --fault KIND@SECONDS``) names them; what
each kind does to a run is :mod:`hri.run.faults`. :func:`random_fault` draws one from a seed
(``tests/test_soak.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from hri.base.errors import HriError
from hri.base.numbers import brief

KINDS = ("actor_hang", "actor_queue_full", "corrupt_feedback", "truncated_action", "pybullet_lost",
         "tree_killed", "tree_hung")
SPLIT_ONLY = ("tree_killed", "tree_hung")


@dataclass(frozen=True)
class Fault:
    kind: str
    at_s: float
    tree: str = "robot"  # tree_killed, tree_hung: whose process (a tree's name)
    person: str | None = None  # the actor faults: whose actor (None: the first person's)

    @classmethod
    def parse(cls, spec: Any, where: str) -> "Fault":
        """A fault from ``{kind, at_s, tree?, person?}`` or ``"KIND[:NAME]@SECONDS"`` (NAME: the
        tree of a tree kind, the person of an actor kind); HriError naming ``where``. Whether
        the names exist in the scenario is :func:`check_names`'s."""
        if isinstance(spec, str):
            kind, _, at = spec.partition("@")
            kind, _, name = kind.partition(":")
            spec = {"kind": kind, "at_s": at or "0"}
            if name:
                spec["tree" if kind in SPLIT_ONLY else "person"] = name
        if not isinstance(spec, dict):
            raise HriError(f"{where}: a fault is {{kind: ..., at_s: ...}} or KIND@SECONDS, got {brief(spec)}")
        unknown = sorted(set(spec) - {"kind", "at_s", "tree", "person"})
        if unknown:
            raise HriError(f"{where}: unknown key {brief(unknown[0])} (keys: kind, at_s, tree, person)")
        kind = spec.get("kind")
        if kind not in KINDS:
            raise HriError(f"{where}: unknown fault kind {brief(kind)} (kinds: {', '.join(KINDS)})")
        try:
            at_s = float(spec.get("at_s", 0.0))
        except (TypeError, ValueError):
            raise HriError(f"{where}: at_s must be a number of simulated seconds, got {brief(spec.get('at_s'))}") from None
        if not np.isfinite(at_s):
            raise HriError(f"{where}: at_s must be a finite number of simulated seconds, got {at_s}")
        if at_s < 0:
            raise HriError(f"{where}: at_s must not be negative, got {at_s}")
        tree, person = spec.get("tree", "robot"), spec.get("person")
        if not isinstance(tree, str):
            raise HriError(f"{where}: tree must be a tree's name (robot, or a person's), got {brief(tree)}")
        if person is not None and (not isinstance(person, str) or kind in SPLIT_ONLY):
            raise HriError(f"{where}: person names whose actor breaks (not of {kind}: its tree is 'tree'), "
                           f"got {brief(person)}")
        return cls(str(kind), at_s, tree, person)

    def check_names(self, trees: Sequence[str], people: Sequence[str], where: str) -> None:
        """HriError naming ``where`` when the fault's tree or person is none of the scenario's."""
        if self.kind in SPLIT_ONLY and self.tree not in trees:
            raise HriError(f"{where}: no tree '{self.tree}' to break (trees: {', '.join(trees)})")
        if self.person is not None and self.person not in people:
            raise HriError(f"{where}: no person '{self.person}' (people: {', '.join(people)})")


def parse_faults(specs: Any, where: str = "faults") -> list[Fault]:
    if specs is None:
        return []
    if not isinstance(specs, list):
        raise HriError(f"{where}: expected a list of faults, got {brief(specs)}")
    return [Fault.parse(spec, f"{where}[{i}]") for i, spec in enumerate(specs)]


def random_fault(seed: int, duration_s: float, split: bool = False) -> Fault:
    """A fault drawn from ``seed``: any kind (the tree kinds only with ``split``), in the run's
    first 90 % (a soak runs many short runs, each with one of these)."""
    rng = np.random.default_rng([seed, 0xFA17])
    kinds = KINDS if split else tuple(k for k in KINDS if k not in SPLIT_ONLY)
    kind = kinds[int(rng.integers(len(kinds)))]
    return Fault(kind, round(float(rng.uniform(0.0, 0.9 * duration_s)), 3), ("person", "robot")[int(rng.integers(2))])


def check_split(faults: Sequence[Fault], split: bool) -> None:
    """HriError when a fault needs the trees in processes of their own and the run has not."""
    for fault in faults:
        if fault.kind in SPLIT_ONLY and not split:
            raise HriError(f"fault {fault.kind}: needs the trees in processes of their own (--split)")
