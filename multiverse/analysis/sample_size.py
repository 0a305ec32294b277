"""How many items a precision target needs: a pilot's variance components, or declared priors, in; items, calls out.

The estimand is the weighted contrast ``theta = sum_c w_c mu_c`` of a
``precision:`` block (:mod:`multiverse.config.precision`).  A fixed design
draws ``n_c`` items of cell ``c`` without replacement from its pool of ``N``
and estimates ``theta`` by ``sum_c w_c mean_c(d)``, whose variance is

    Var = sum_c w_c^2 sigma_c^2 (1 - n_c / N) / n_c,

``sigma_c^2`` the variance of one item's contrast (averaged over ``R``
replicates: ``sigma_c^2 = s2_item + s2_rep / R``).  With ``n_c = n a_c``
(shares ``a_c``) the half-width ``h = z_{1-alpha/2} sqrt(Var)`` is reached at

    n = V / ((h / z)^2 + sum_c w_c^2 sigma_c^2 / N),   V = sum_c w_c^2 sigma_c^2 / a_c,

and a difference ``delta`` is detected with power ``P`` at the same ``n`` with
``h = delta z_{1-alpha/2} / (z_{1-alpha/2} + z_P)`` (Cochran 1977, 5.5 and 5.9).
Neyman's allocation with costs, ``a_c ∝ w_c sigma_c / sqrt(cost_c)``,
minimises the calls for a given variance; ``uniform`` uses ``a_c = w_c``.
Calls are ``sum_c n_c cost_c``, ``cost_c`` the estimated calls of one item pair
(:func:`multiverse.plan.estimate_unit_calls`).

The pilot's components come from a one-way random-effects model per cell
(items, replicates within items): with a balanced pilot the REML estimates
are the ANOVA ones truncated at zero, ``s2_rep = MS_within`` and
``s2_item = max(0, (MS_between - MS_within) / R)``, computed here directly.
A pilot's sd of a cell is not taken at face value: a cell of rare breaches
often shows none in a small pilot (sd 0), which would give it no items and
make the fixed design too small.  Each cell's variance of item means is shrunk
towards the declared ``prior_sd^2`` by two pseudo-observations,
``(SS + 2 prior_sd^2) / (n + 1)`` (``SS`` the sum of squared deviations of its ``n``
item means), the rule every design's variance estimate follows (:func:`shrunk_variance`,
which a stratified sequential run and the fixed-design interval use too); the
unshrunk sd is reported beside it.

With no pilot cost per item besides its replicates' calls, one replicate per
item minimises the calls for a given ``Var`` (``s2_rep / R`` costs ``R`` calls
per item, a new item buys ``s2_item + s2_rep``), so the answer is in items at
the experiment's ``replicates``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from statistics import NormalDist
from typing import Any

import numpy as np
import xarray as xr

from multiverse.config.precision import Precision
from multiverse.plan import Plan, Unit, estimate_unit_calls
from multiverse.scoring import score

__all__ = ["cell_costs", "pilot_components", "plan_items", "shrunk_variance"]

PSEUDO = 2
"""Pseudo-observations of squared deviation ``prior_sd^2`` every cell's variance estimate carries."""


def shrunk_variance(values: Sequence[float], prior_sd: float) -> float:
    """A cell's item variance shrunk towards ``prior_sd^2`` by two pseudo-observations: ``(SS + 2 prior_sd^2) / (n + 1)``.

    With ``n`` values this is the usual ``SS / (n - 1)`` with two more
    observations of squared deviation ``prior_sd^2`` each; with none it is ``prior_sd^2``.
    """
    arr = np.asarray(values, dtype=float)
    if arr.size == 0:
        return prior_sd**2
    return float((np.sum((arr - arr.mean()) ** 2) + PSEUDO * prior_sd**2) / (arr.size - 1 + PSEUDO))


def cell_costs(plan: Plan, precision: Precision) -> dict[str, float]:
    """Estimated calls one item pair (both systems, every replicate, every judge) costs in each cell."""
    e = plan.experiment
    costs = {}
    for cell in precision.weights:
        role, user_sim, condition = cell.split("/")
        total = 0
        for system in precision.contrast:
            for replicate in range(e.replicates):
                unit = Unit(system, role, user_sim, condition, replicate, items=(0,))
                total += sum(sum(layer.values()) for layer in estimate_unit_calls(plan, unit).values())
        costs[cell] = float(total)
    return costs


def pilot_components(cube: xr.Dataset, precision: Precision) -> dict[str, dict[str, float]]:
    """Each cell's contrast mean and variance components from a pilot cube.

    Parameters
    ----------
    cube
        A cube holding both systems of the contrast on the same items.
    precision
        The target (contrast, judge, standard, rule, cells).

    Returns
    -------
    dict
        cell -> ``mean``, ``sd`` (of one item's contrast averaged over the
        pilot's replicates, shrunk towards the block's ``prior_sd``),
        ``raw_sd`` (unshrunk), ``item_var``, ``replicate_var``, ``items``,
        ``replicates``.  Items whose contrast is missing are left out.
    """
    values = score(cube, standards=[precision.standard], rules=[precision.rule])
    values = values.sel(judge=precision.judge, standard=precision.standard, rule=precision.rule)
    a, b = precision.contrast
    diff = values.sel(system=a) - values.sel(system=b)
    out = {}
    for cell in precision.weights:
        role, user_sim, condition = cell.split("/")
        table = diff.sel(role=role, user_sim=user_sim, condition=condition).transpose("item", "replicate").values
        table = table[~np.isnan(table).any(axis=1)]
        items, reps = table.shape
        if items < 2:
            raise ValueError(f"pilot: cell {cell} has {items} item(s) with a contrast; expected at least 2")
        means = table.mean(axis=1)
        ms_between = reps * means.var(ddof=1)
        ms_within = float(table.var(axis=1, ddof=1).mean()) if reps > 1 else 0.0
        out[cell] = {
            "mean": float(means.mean()),
            "sd": math.sqrt(shrunk_variance(means, precision.prior_sd)),
            "raw_sd": float(means.std(ddof=1)),
            "item_var": max(0.0, (ms_between - ms_within) / reps) if reps > 1 else float(means.var(ddof=1)),
            "replicate_var": ms_within,
            "items": items,
            "replicates": reps,
        }
    return out


def plan_items(
    precision: Precision,
    *,
    sds: Mapping[str, float],
    costs: Mapping[str, float],
    pool: int,
) -> dict[str, Any]:
    """Items per cell, in total, and the calls they cost, for the fixed design meeting ``precision``.

    Parameters
    ----------
    precision
        The target: its half-width (or difference and power), level, weights and allocation.
    sds
        cell -> sd of one item's contrast (a pilot's ``sd``, or the prior).
    costs
        cell -> calls one item pair costs.
    pool
        Items per cell in the pool (the finite-population correction; a cell
        never gets more than its pool).

    Returns
    -------
    dict
        ``items`` (cell -> n_c), ``total_items``, ``calls``, ``shares``,
        ``half_width`` (the target), ``predicted_half_width`` (at the rounded
        ``n_c``), ``z``.
    """
    weights = precision.weights
    z = NormalDist().inv_cdf(1 - precision.alpha / 2)
    h = precision.target_half_width()
    cells = list(weights)
    w = np.array([weights[c] for c in cells])
    sigma = np.array([max(float(sds[c]), 1e-9) for c in cells])
    cost = np.array([float(costs[c]) for c in cells])
    if precision.allocation == "neyman":
        share = w * sigma / np.sqrt(cost)
    else:
        share = w.copy()
    share = share / share.sum()
    v = float(np.sum(w**2 * sigma**2 / share))
    n = v / ((h / z) ** 2 + float(np.sum(w**2 * sigma**2)) / pool)
    counts = np.minimum(np.ceil(n * share), pool).astype(int)
    var = float(np.sum(w**2 * sigma**2 * (1 - counts / pool) / np.maximum(counts, 1)))
    return {
        "items": {c: int(k) for c, k in zip(cells, counts)},
        "total_items": int(counts.sum()),
        "calls": int(round(float(np.sum(counts * cost)))),
        "shares": {c: round(float(s), 6) for c, s in zip(cells, share)},
        "half_width": h,
        "predicted_half_width": z * math.sqrt(var),
        "z": z,
    }
