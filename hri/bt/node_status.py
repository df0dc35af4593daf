"""The five statuses of a BehaviorTree.CPP node, on py_trees' four.

A node's own status is one of py_trees' :class:`~py_trees.common.Status`: ``INVALID`` is
BehaviorTree.CPP's IDLE (never ticked, or reset), then ``RUNNING``, ``SUCCESS``, ``FAILURE``.
A tick may also *return* :data:`SKIPPED`, BehaviorTree.CPP's fifth status: a pre-condition
(``_skipIf``, ``_while``) or the node itself decided not to run. A skipped node keeps the
status it had; only its parent learns that it was skipped.
"""

from __future__ import annotations

from typing import Final

from py_trees.common import Status


class Skipped:
    """The type of :data:`SKIPPED` (one instance)."""

    name: Final = "SKIPPED"
    value: Final = "SKIPPED"

    def __repr__(self) -> str:
        return "SKIPPED"


SKIPPED: Final = Skipped()

TickResult = Status | Skipped
"""What a tick returns: RUNNING, SUCCESS, FAILURE or SKIPPED."""

IDLE_NAME = "IDLE"


def status_name(status: TickResult) -> str:
    """BehaviorTree.CPP's name of a status: IDLE, RUNNING, SUCCESS, FAILURE, SKIPPED."""
    return IDLE_NAME if status is Status.INVALID else status.name


def is_completed(status: TickResult) -> bool:
    """SUCCESS or FAILURE (BehaviorTree.CPP ``isStatusCompleted``)."""
    return status is Status.SUCCESS or status is Status.FAILURE


def is_active(status: TickResult) -> bool:
    """Neither IDLE nor SKIPPED (BehaviorTree.CPP ``isStatusActive``)."""
    return status is not Status.INVALID and status is not SKIPPED


def parse_status(text: str) -> TickResult:
    """A status by BehaviorTree.CPP's name (SUCCESS, FAILURE, RUNNING, SKIPPED, IDLE);
    ValueError otherwise."""
    name = text.strip()
    if name == "SKIPPED":
        return SKIPPED
    if name == IDLE_NAME:
        return Status.INVALID
    if name in ("SUCCESS", "FAILURE", "RUNNING"):
        return Status[name]
    raise ValueError(f"expected SUCCESS, FAILURE, RUNNING, SKIPPED or IDLE, got {text!r}")
