"""What exists to be used: ``hri list scenarios``, ``hri list clips``, ``hri list nodes``,
``hri list queues``.

One short table each: the preset scenarios with the first line of their description, the
person's animation clips with their durations, the node types with their kind (``hri nodes``
gives the ports), the user's message-queue budget and what a run takes of it.
"""

from __future__ import annotations

from typing import Callable

LISTS = ("scenarios", "clips", "nodes", "queues")


def _table(rows: list[tuple[str, str]]) -> str:
    width = max((len(name) for name, _ in rows), default=0)
    return "\n".join(f"{name:<{width}}  {text}".rstrip() for name, text in rows) + "\n"


def list_scenarios() -> str:
    """The preset scenarios, each with the first line of its file's opening comment."""
    from hri.scenario.load import PRESETS, preset_path

    rows = []
    for name in PRESETS:
        first = preset_path(name).read_text(encoding="utf-8").splitlines()[0]
        rows.append((name, first.lstrip("# ").strip()))
    return _table(rows)


def list_clips() -> str:
    """The animation clips (``ActorAnimation``'s ``animation_name``), with their durations."""
    from hri.actor.animation import ClipLibrary

    library = ClipLibrary.default()
    rows = []
    for name in library.names():
        clip = library.get(name)
        what = "walk cycle (ActorMovement)" if name == ClipLibrary.WALK else "clip"
        rows.append((name, f"{clip.duration:.2f} s  {what}"))
    return _table(rows)


def list_nodes() -> str:
    """The node types with their kind, BehaviorTree.CPP's built-ins marked."""
    from hri.bt.catalogue import catalogue
    from hri.bt.plugins import default_registry

    rows = [(entry.node_id, entry.kind + ("  (BehaviorTree.CPP)" if entry.builtin else ""))
            for entry in catalogue(default_registry())]
    return _table(rows)


def list_queues() -> str:
    """The user's message-queue budget (``ulimit -q``), and what a run and a --split run take."""
    from hri.base.mqueue import queue_budget, queue_charge
    from hri.base.quiet import import_pybullet_quietly

    import_pybullet_quietly()
    from hri.run.sim import run_queue_plan

    budget = queue_budget()
    rows = [("budget", f"{'unlimited' if budget is None else f'{budget} bytes'} (`ulimit -q`, "
                       "shared by all this user's processes)")]
    for what, split in (("run", False), ("--split run", True)):
        plan = run_queue_plan(split)
        charge = sum(queue_charge(*dimensions) for dimensions in plan.values())
        fit = "" if budget is None else f", {budget // charge} fit at once"
        rows.append((what, f"{charge} bytes in {len(plan)} queues{fit}"))
    return _table(rows)


LISTERS: dict[str, Callable[[], str]] = {"scenarios": list_scenarios, "clips": list_clips, "nodes": list_nodes,
                                         "queues": list_queues}
