"""Inverse kinematics: the joint values nearest the current ones that reach a target pose.

:func:`solve` runs a Levenberg-Marquardt iteration (damped least squares with an adaptive
damping) from ``q_current``, so the solution it finds is the one the arm reaches by the
smallest joint motion. Joint limits are kept by projection: each step is clipped to the
limits, and joints pinned at a limit are taken out of the next step's least squares so the
others can still move. Only when this first attempt fails does it try again from
configurations drawn near ``q_current`` (deterministically, with a spread that grows),
and it skips that when the target is farther than the chain can reach at all.

The answer is an :class:`IkResult` whose ``valid`` says whether the target was reached
within the tolerances; an unreachable target (too far, or reachable only outside the
joint limits) gives ``valid=False`` with the smallest residual error found.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from hri.kinematics.transforms import PoseLike, log_rotation_and_angle, pose_matrix

if TYPE_CHECKING:
    from hri.kinematics.chain import Chain

_LAMBDA_START = 1e-3
_LAMBDA_MAX = 1e8      # damping past which no step lowers the error: a (local) minimum
_CONVERGED = 1e-3      # iterate until the errors are this fraction of the tolerances
_STALLED = 1e-6        # a step that lowers the cost by less than this fraction: at a minimum


@dataclass(frozen=True)
class IkSettings:
    """Tolerances and effort of :func:`solve` (metres, radians)."""

    position_tolerance: float = 1e-4     # m; larger residual -> invalid
    orientation_tolerance: float = 1e-3  # rad; larger residual -> invalid
    orientation: bool = True             # False: reach the target position only
    orientation_weight: float = 0.5      # m per rad when weighing the two errors
    max_iterations: int = 100            # per attempt
    restarts: int = 12                   # further attempts when the first one fails
    restart_spread: float = 0.3          # std of the first restart's offset (rad); grows
    max_step: float = 0.5                # largest joint step per iteration (rad)
    seed: int = 0                        # restarts are deterministic


@dataclass(frozen=True)
class IkResult:
    """The answer of :func:`solve`, as plain data (``q`` in the chain's joint order)."""

    q: tuple[float, ...]
    valid: bool
    position_error_m: float
    orientation_error_rad: float
    iterations: int

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class _Evaluation(NamedTuple):
    """The chain at one configuration against the target."""

    error: np.ndarray     # weighted pose error
    jac: np.ndarray       # weighted Jacobian
    cost: float           # error @ error
    position: float       # m, unweighted
    orientation: float    # rad, unweighted


@dataclass
class _Attempt:
    q: np.ndarray
    cost: float
    position_error: float
    orientation_error: float
    iterations: int


class _Problem:
    """The weighted pose error of one target and its Levenberg-Marquardt iteration."""

    def __init__(self, chain: "Chain", target: np.ndarray, settings: IkSettings) -> None:
        self.chain = chain
        self.target = target
        self.settings = settings
        w = settings.orientation_weight if settings.orientation else 0.0
        self.weights = np.array([1.0, 1.0, 1.0, w, w, w])
        self.stop_position = settings.position_tolerance * _CONVERGED
        self.stop_orientation = settings.orientation_tolerance * _CONVERGED
        self.identity = np.eye(chain.nv)

    def evaluate(self, q: np.ndarray) -> _Evaluation:
        """The errors and the Jacobian at ``q`` (the distances as :func:`pose_error` gives them)."""
        tip, jac = self.chain.forward_and_jacobian(q)
        error = np.empty(6)
        error[:3] = self.target[:3, 3] - tip[:3, 3]
        position = math.sqrt(float(error[:3] @ error[:3]))
        error[3:], orientation = log_rotation_and_angle(self.target[:3, :3] @ tip[:3, :3].T)
        error *= self.weights
        return _Evaluation(error, jac * self.weights[:, None], float(error @ error), position, orientation)

    def converged(self, e: _Evaluation) -> bool:
        return e.position <= self.stop_position and (
            not self.settings.orientation or e.orientation <= self.stop_orientation)

    def step(self, q: np.ndarray, error: np.ndarray, jac: np.ndarray, damping: float,
             bounded: bool) -> np.ndarray:
        """The damped least-squares step; if ``bounded``, joints pinned at a limit held still."""
        if not bounded:  # the column order jac[:, mask] has, so the sums are the bounded step's
            j = np.asfortranarray(jac)
            dv = np.linalg.solve(j.T @ j + damping * self.identity, j.T @ error)
        else:
            dv = self._bounded_step(q, error, jac, damping)
        norm = float(np.linalg.norm(dv))
        if norm > self.settings.max_step:
            dv *= self.settings.max_step / norm
        return dv

    def _bounded_step(self, q: np.ndarray, error: np.ndarray, jac: np.ndarray, damping: float) -> np.ndarray:
        free = np.ones(self.chain.nv, dtype=bool)
        for _ in range(2):
            j = jac[:, free]
            dv = np.zeros(self.chain.nv)
            dv[free] = np.linalg.solve(j.T @ j + damping * np.eye(j.shape[1]), j.T @ error)
            pinned = self._pinned(q, dv)
            if not pinned.any():
                break
            free &= ~pinned
        return dv

    def _pinned(self, q: np.ndarray, dv: np.ndarray) -> np.ndarray:
        """Velocity entries of one-dof joints at a limit that ``dv`` pushes further out."""
        chain = self.chain
        pinned = np.zeros(chain.nv, dtype=bool)
        iq = iv = 0
        for joint in chain.movable:
            if joint.nq == 1:
                at_lower = q[iq] <= joint.lower and dv[iv] < 0.0
                at_upper = q[iq] >= joint.upper and dv[iv] > 0.0
                pinned[iv] = at_lower or at_upper
            iq, iv = iq + joint.nq, iv + joint.nv
        return pinned

    def attempt(self, q_start: np.ndarray) -> _Attempt:
        """Solve ignoring the limits, then turn revolute joints by whole turns into them.

        If the target was reached but outside the limits, solve again within them
        (projected steps); if it was not reached, the clipped configuration is the answer
        (solving within the limits then rarely does better, and costs as much again).
        """
        free = self.run(q_start, bounded=False)
        q = self.chain.wrap(free.q, q_start)
        if self.valid(free) and not self.chain.within_limits(q):
            bounded = self.run(q_start, bounded=True)
            bounded.iterations += free.iterations
            return bounded
        q = self.chain.clip(q)
        if np.array_equal(q, free.q):  # neither turned nor clipped: as measured at the end of the run
            return free
        return self.measure(q, free.iterations)

    def measure(self, q: np.ndarray, iterations: int) -> _Attempt:
        e = self.evaluate(q)
        return _Attempt(q, e.cost, e.position, e.orientation, iterations)

    def run(self, q_start: np.ndarray, bounded: bool) -> _Attempt:
        """Levenberg-Marquardt from ``q_start``; ``bounded``: steps projected into the limits."""
        chain = self.chain
        q = chain.clip(q_start) if bounded else np.array(q_start, dtype=float)
        e = self.evaluate(q)
        damping = _LAMBDA_START
        iterations = 0
        while iterations < self.settings.max_iterations and not self.converged(e):
            iterations += 1
            q_new = chain.integrate(q, self.step(q, e.error, e.jac, damping, bounded))
            if bounded:
                q_new = chain.clip(q_new)
            e_new = self.evaluate(q_new)
            if e_new.cost < e.cost:
                progress = e.cost - e_new.cost
                q, e = q_new, e_new
                damping = max(damping * 0.3, 1e-12)
                if progress <= _STALLED * e.cost:
                    break  # crawling towards a minimum that is not the target
            else:
                damping *= 10.0
                if damping > _LAMBDA_MAX:
                    break
        return _Attempt(q, e.cost, e.position, e.orientation, iterations)

    def valid(self, attempt: _Attempt) -> bool:
        s = self.settings
        return attempt.position_error <= s.position_tolerance and (
            not s.orientation or attempt.orientation_error <= s.orientation_tolerance)


def _restart_seeds(chain: "Chain", q_current: np.ndarray, settings: IkSettings):
    """Start configurations around ``q_current``, ever farther, then anywhere."""
    rng = np.random.default_rng(settings.seed)
    for k in range(settings.restarts):
        spread = settings.restart_spread * 2.0 ** k
        if spread > math.pi:
            yield chain.random(rng)
        else:
            yield chain.clip(chain.integrate(q_current, rng.normal(0.0, spread, chain.nv)))


def _out_of_reach(chain: "Chain", target: np.ndarray, settings: IkSettings) -> bool:
    distance = float(np.linalg.norm(target[:3, 3] - chain.base_pose[:3, 3]))
    return distance > chain.reach() + settings.position_tolerance


def solve(chain: "Chain", target: PoseLike, q_current: Sequence[float],
          settings: IkSettings | None = None, **overrides: Any) -> IkResult:
    """Joint values that put ``chain``'s tip at ``target``, nearest ``q_current``.

    ``target`` is a world pose (:class:`hri.base.geometry.Pose`, pose tuple or 4x4);
    ``q_current`` is clipped into the joint limits first; ``overrides`` replace fields of ``settings`` (e.g. ``orientation=False``).
    """
    settings = replace(settings or IkSettings(), **overrides)
    problem = _Problem(chain, pose_matrix(target), settings)
    q_now = chain.clip(chain.as_configuration(q_current))
    best = problem.attempt(q_now)
    total = best.iterations
    if not problem.valid(best) and not _out_of_reach(chain, problem.target, settings):
        for seed in _restart_seeds(chain, q_now, settings):
            attempt = problem.attempt(seed)
            total += attempt.iterations
            if problem.valid(attempt):
                best = attempt
                break
            if attempt.cost < best.cost:
                best = attempt
    return IkResult(tuple(float(v) for v in best.q), problem.valid(best),
                    best.position_error, best.orientation_error, total)


def solve_path(chain: "Chain", targets: Sequence[PoseLike], q_start: Sequence[float],
               settings: IkSettings | None = None, **overrides: Any) -> list[IkResult]:
    """IK for each pose of a sampled path, each seeded with the previous solution.

    This is how a Cartesian line (:func:`hri.kinematics.interpolate.cartesian_line`)
    becomes joint set-points; check every result's ``valid``.
    """
    results: list[IkResult] = []
    q = np.asarray(q_start, dtype=float)
    for target in targets:
        result = solve(chain, target, q, settings, **overrides)
        results.append(result)
        q = np.asarray(result.q)
    return results
