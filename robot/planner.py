"""Collision-free joint paths for the arm: straight segment, else RRT-Connect + shortcuts.

:func:`plan_joint_path` returns a list of joint configurations from ``start`` to ``goal``
whose straight segments were all checked against the :class:`~hri.robot.scene.PlanningScene`
(static obstacles, self-collision, joint limits) at a fine resolution. The straight
segment is tried first; when it collides a bounded, deterministic RRT-Connect (its own
``numpy.random.Generator``) searches a path, which random shortcutting then shortens.
The search gives up after ``max_iterations`` extensions, so planning fails instead of
hanging.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hri.robot.scene import PlanningScene


@dataclass(frozen=True)
class PlannerSettings:
    """Planning parameters (radians in joint space)."""

    resolution: float = 0.02        # collision-check spacing along a segment
    step: float = 0.25              # RRT extension length (max-norm)
    max_iterations: int = 2000      # RRT-Connect iterations before giving up
    shortcut_iterations: int = 60   # random shortcut attempts


class _Tree:
    """A growing RRT: nodes in a preallocated array, parents as indices."""

    def __init__(self, root: np.ndarray, capacity: int) -> None:
        self.nodes = np.empty((capacity, root.size))
        self.parents = np.empty(capacity, dtype=int)
        self.nodes[0] = root
        self.parents[0] = -1
        self.size = 1

    def nearest(self, q: np.ndarray) -> int:
        distances = np.max(np.abs(self.nodes[: self.size] - q), axis=1)
        return int(np.argmin(distances))

    def add(self, q: np.ndarray, parent: int) -> int:
        self.nodes[self.size] = q
        self.parents[self.size] = parent
        self.size += 1
        return self.size - 1

    def branch(self, index: int) -> list[np.ndarray]:
        """Configurations from ``index`` back to the root."""
        result = []
        while index >= 0:
            result.append(self.nodes[index].copy())
            index = int(self.parents[index])
        return result


def _steer(q_from: np.ndarray, q_to: np.ndarray, step: float) -> np.ndarray:
    delta = q_to - q_from
    length = float(np.max(np.abs(delta)))
    if length <= step:
        return q_to.copy()
    return q_from + delta * (step / length)


def _extend(scene: PlanningScene, tree: _Tree, q: np.ndarray,
            settings: PlannerSettings) -> tuple[str, int]:
    """One step of ``tree`` toward ``q``: ('reached' | 'advanced' | 'trapped', node)."""
    near = tree.nearest(q)
    q_near = tree.nodes[near]
    q_new = _steer(q_near, q, settings.step)
    if not scene.segment_valid(q_near, q_new, settings.resolution):
        return "trapped", near
    index = tree.add(q_new, near)
    return ("reached" if np.array_equal(q_new, q) else "advanced"), index


def _connect(scene: PlanningScene, tree: _Tree, q: np.ndarray,
             settings: PlannerSettings) -> tuple[str, int]:
    """Extend ``tree`` toward ``q`` until reached or trapped (bounded by capacity)."""
    while tree.size < tree.nodes.shape[0]:
        state, index = _extend(scene, tree, q, settings)
        if state != "advanced":
            return state, index
    return "trapped", -1


def rrt_connect(scene: PlanningScene, start: np.ndarray, goal: np.ndarray,
                rng: np.random.Generator, settings: PlannerSettings) -> list[np.ndarray] | None:
    """A bidirectional RRT path ``start`` .. ``goal``, or None after the iteration bound."""
    capacity = 2 * settings.max_iterations * int(np.ceil(4.0 / settings.step) + 2)
    tree_a, tree_b = _Tree(start, capacity), _Tree(goal, capacity)
    a_is_start = True
    lower, upper = scene.model.lower, scene.model.upper
    for _ in range(settings.max_iterations):
        sample = rng.uniform(lower, upper)
        if scene.configuration_valid(sample):
            state, index = _extend(scene, tree_a, sample, settings)
            if state != "trapped":
                q_new = tree_a.nodes[index].copy()
                state_b, index_b = _connect(scene, tree_b, q_new, settings)
                if state_b == "reached":
                    branch_a = tree_a.branch(index)[::-1]
                    branch_b = tree_b.branch(index_b)[1:]
                    path = branch_a + branch_b
                    return path if a_is_start else path[::-1]
        tree_a, tree_b = tree_b, tree_a
        a_is_start = not a_is_start
    return None


def shortcut(scene: PlanningScene, path: list[np.ndarray], rng: np.random.Generator,
             settings: PlannerSettings) -> list[np.ndarray]:
    """Remove waypoints whose neighbours see each other along a valid straight segment."""
    path = [q.copy() for q in path]
    for _ in range(settings.shortcut_iterations):
        if len(path) <= 2:
            break
        i, j = sorted(int(v) for v in rng.choice(len(path), size=2, replace=False))
        if j - i < 2:
            continue
        if scene.segment_valid(path[i], path[j], settings.resolution):
            path = path[: i + 1] + path[j:]
    # a final greedy pass: from each kept waypoint jump to the farthest visible one
    result = [path[0]]
    i = 0
    while i < len(path) - 1:
        j = len(path) - 1
        while j > i + 1 and not scene.segment_valid(path[i], path[j], settings.resolution):
            j -= 1
        result.append(path[j])
        i = j
    return result


def plan_joint_path(scene: PlanningScene, start: np.ndarray, goal: np.ndarray,
                    rng: np.random.Generator,
                    settings: PlannerSettings) -> list[np.ndarray] | None:
    """Waypoints ``[start, ..., goal]`` joined by collision-free straight segments, or None.

    ``start`` itself is not checked (the arm is where it is); ``goal`` must be valid.
    """
    start = np.asarray(start, dtype=float)
    goal = np.asarray(goal, dtype=float)
    if not scene.configuration_valid(goal):
        return None
    if scene.segment_valid(start, goal, settings.resolution):
        return [start.copy(), goal.copy()]
    path = rrt_connect(scene, start, goal, rng, settings)
    if path is None:
        return None
    return shortcut(scene, path, rng, settings)
