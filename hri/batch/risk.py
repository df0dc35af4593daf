"""Risk figures of a batch: the worst case of every safety figure, a distribution-free bound
on its tail, and an upper bound on the rate of what was counted, as a risk assessment states
them (a mean of the runs' smallest separations says nothing about the run that came closest).

Which statistics are safety figures, and which way is worse, is :data:`FIGURES` (and
:data:`PERSON_FIGURES` for each person's ``people.NAME.KEY`` in a run with several people).
Per configuration and figure, over the runs that have a value:

- **worst case**: the worst value of any run, the run it came from (its folder name and seed)
  and how many runs share it;
- **tail quantile**: the empirical 5 % quantile where lower is worse (the 95 % quantile where
  higher is worse), taken as the ``⌈0.05 n⌉``-th worst run, and a one-sided 95 % confidence
  bound on the true quantile from order statistics alone: the ``k``-th worst run, ``k`` the
  largest with ``P(Binomial(n, 0.05) ≥ k) ≥ 0.95``. It needs no assumption on the
  distribution (ties and discrete counts only make it conservative). The smallest ``n`` that
  gives one is 59 (``1 - 0.95^59 ≥ 0.95``: the worst of 59 runs lies beyond the 5 % quantile
  with 95 % confidence); with fewer runs there is none (``n too small``). The quantile is of a
  *run's* value, so it belongs to the runs' duration;
- **counts**: their total over the runs' simulated hours ``T``, the rate per hour and its
  exact one-sided 95 % Poisson upper bound ``chi2(0.95, 2(x + 1)) / 2 / T`` (Garwood); for a
  count that stayed 0 that is ``-ln(0.05) / T ≈ 3.0 / T``. For 0 the bound holds for the
  rate of episodes, however many steps each would have counted; a nonzero count of physics
  steps (``safety_violations``) clusters by episode and is not Poisson, so its bound is
  indicative only.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from scipy import stats as sps

from hri.base.numbers import is_number

LEVEL = 0.95  # the one-sided confidence of every bound
TAIL_PERCENT = 5  # the tail: the 5 % worst runs
LOWER, HIGHER = "lower", "higher"  # which way a figure is worse


@dataclass(frozen=True)
class Figure:
    """A safety figure: which way is worse, whether it counts events (``unit``: what one of
    them is), and the value a ``null`` stands for (None: a missing value)."""

    worse: str
    count: bool = False
    unit: str = ""
    null_is: float | None = None


FIGURES: dict[str, Figure] = {
    "min_separation_m": Figure(LOWER),
    "ssm_margin_min_m": Figure(LOWER),  # negative: the run broke S_p
    "max_stop_intrusion_m": Figure(HIGHER),
    # null beside a head region, where no transient contact is permitted at any speed
    "pfl_worst_ratio": Figure(HIGHER, null_is=math.inf),
    # harm: the robot breaking its limits, bodies inside each other, contacts
    "safety_violations": Figure(HIGHER, True, "physics step"),
    "person_contacts": Figure(HIGHER, True, "physics step"),
    "pfl_contacts": Figure(HIGHER, True, "contact"),
    "pfl_violations": Figure(HIGHER, True, "contact"),
    # demands on the safety function: each stop is the function acting, not failing
    "protective_stops": Figure(HIGHER, True, "stop"),
    "ssm_stops": Figure(HIGHER, True, "stop"),
}
PERSON_FIGURES = ("min_separation_m", "max_stop_intrusion_m", "safety_violations")


def figure(metric: str) -> Figure | None:
    """The safety figure a flattened statistic is (``people.NAME.KEY`` included), or None."""
    parts = metric.split(".")
    if len(parts) == 3 and parts[0] == "people" and parts[2] in PERSON_FIGURES:
        return FIGURES[parts[2]]
    return FIGURES.get(metric) if len(parts) == 1 else None


class Run(Protocol):
    """What the risk figures read of a run: its folder name, seed and flattened statistics."""

    run_id: str

    @property
    def seed(self) -> Any: ...

    @property
    def flat(self) -> dict[str, Any]: ...


# --- order statistics and Poisson bounds ------------------------------------------------------

def quantile_rank(n: int, percent: int = TAIL_PERCENT) -> int:
    """The rank (1 = the worst) of the run that is the empirical ``percent`` % tail quantile."""
    return max(1, -(-n * percent // 100))


def bound_rank(n: int, p: float = TAIL_PERCENT / 100, level: float = LEVEL) -> int | None:
    """The largest ``k`` whose ``k``-th worst of ``n`` runs lies beyond the ``p`` tail quantile
    with probability ≥ ``level`` (``P(Binomial(n, p) ≥ k) ≥ level``); None when even the worst
    does not (``n`` too small)."""
    if n < 1:
        return None
    ks = np.arange(1, n + 1)
    ok = ks[sps.binom.sf(ks - 1, n, p) >= level]
    return int(ok.max()) if ok.size else None


def min_runs(p: float = TAIL_PERCENT / 100, level: float = LEVEL) -> int:
    """The fewest runs whose worst bounds the ``p`` tail quantile at ``level``: 59 for 5 %, 95 %."""
    return math.ceil(math.log(1.0 - level) / math.log(1.0 - p) - 1e-12)


def poisson_upper(count: float, level: float = LEVEL) -> float:
    """The exact one-sided ``level`` upper bound on a Poisson mean of which ``count`` was seen
    (``-ln(1 - level)`` for 0: 2.996 at 95 %)."""
    return float(sps.chi2.ppf(level, 2.0 * (count + 1.0)) / 2.0)


# --- one figure over the runs -----------------------------------------------------------------

@dataclass(frozen=True)
class Observation:
    """One run's value of a figure, and its simulated hours (None when unknown)."""

    run_id: str
    seed: Any
    value: float
    hours: float | None


def _value(flat: dict[str, Any], metric: str, fig: Figure) -> float | None:
    value = flat.get(metric)
    if value is None:
        return fig.null_is if metric in flat else None
    return float(value) if is_number(value, finite=False) else None


def observations(runs: Iterable[Run], metric: str) -> list[Observation]:
    """The runs' values of a safety figure, in the runs' order (a run without one left out)."""
    fig = figure(metric)
    assert fig is not None, metric
    out = []
    for run in runs:
        flat = run.flat
        value = _value(flat, metric, fig)
        if value is None or math.isnan(value):
            continue
        sim = flat.get("sim_time_s")
        out.append(Observation(run.run_id, run.seed, value, sim / 3600.0 if is_number(sim) else None))
    return out


def _number(value: float) -> float | str:
    """A value for JSON: ``"inf"`` for an infinite one (a head region's PFL ratio)."""
    return value if math.isfinite(value) else ("inf" if value > 0 else "-inf")


def risk_figure(metric: str, obs: Sequence[Observation]) -> dict[str, Any]:
    """The worst case, the tail quantile with its bound, and for counts the rate bound."""
    fig = figure(metric)
    assert fig is not None and obs, metric
    sign = -1.0 if fig.worse == LOWER else 1.0
    ranked = sorted(obs, key=lambda o: -sign * o.value)  # worst first; ties keep the runs' order
    n, worst = len(ranked), ranked[0]
    k = bound_rank(n)
    out: dict[str, Any] = {
        "worse": fig.worse, "count": fig.count, "n": n,
        "worst": _number(worst.value), "worst_run": worst.run_id, "worst_seed": worst.seed,
        "worst_ties": sum(1 for o in ranked if o.value == worst.value),
        "tail": TAIL_PERCENT / 100 if fig.worse == LOWER else 1 - TAIL_PERCENT / 100,
        "quantile": _number(ranked[quantile_rank(n) - 1].value),
        "bound": None if k is None else _number(ranked[k - 1].value), "bound_rank": k,
        "bound_min_n": min_runs()}
    if fig.count:
        out.update(_rate(fig, obs))
    return out


def _rate(fig: Figure, obs: Sequence[Observation]) -> dict[str, Any]:
    total = sum(o.value for o in obs)
    hours = None if any(o.hours is None for o in obs) else sum(o.hours or 0.0 for o in obs)
    known = hours is not None and hours > 0
    return {"unit": fig.unit, "total": int(total) if total.is_integer() else total, "hours": hours,
            "rate_per_h": total / hours if known else None,
            "rate_upper_per_h": poisson_upper(total) / hours if known else None}


def risk_report(runs: Sequence[Run]) -> dict[str, Any]:
    """Every safety figure the runs have, ``{metric: ...}`` (:func:`risk_figure`): the
    measures, then the counts, each in the order of the statistics; and the runs' simulated
    hours."""
    found = dict.fromkeys(m for run in runs for m in run.flat if figure(m) is not None)
    metrics = sorted(found, key=lambda m: bool(figure(m).count))  # type: ignore[union-attr]
    figures = {}
    for metric in metrics:
        obs = observations(runs, metric)
        if obs:
            figures[metric] = risk_figure(metric, obs)
    sims = [run.flat.get("sim_time_s") for run in runs]
    hours = sum(s for s in sims if is_number(s)) / 3600.0
    return {"runs": len(runs), "hours": hours, "level": LEVEL, "figures": figures}
