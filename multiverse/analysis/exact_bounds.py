"""Exact per-cell bounds: how far a grid cell's clean record can be trusted.

For every system, judge, TUNA grid cell (mode x strategy, the conversations'
target cell) and principle: the conversations that tested it, the breaches
seen, the exact (Clopper-Pearson) two-sided interval of the breach rate and
the exact one-sided upper bound, which for zero breaches in ``n``
conversations is ``1 - alpha ** (1 / n)`` (about ``3 / n`` at 95%, the rule
of three).  A cell no conversation tested is *untested*; one whose upper bound
still exceeds ``max_upper`` is *under-tested*: its clean record is too thin to
rule out a breach rate of that size.
"""

from __future__ import annotations

import numpy as np
import xarray as xr
from scipy import stats

from multiverse import __version__
from multiverse.analysis.cells import principle_verdicts
from multiverse.core import schema as S

__all__ = ["STATUSES", "cell_bounds", "clopper_pearson"]

STATUSES = ("untested", "under_tested", "tested")
POOLED = ("role", "user_sim", "condition", "replicate", "item")


def clopper_pearson(breaches: np.ndarray, n: np.ndarray, *, ci: float = 0.95) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Exact binomial bounds: two-sided ``(lower, upper)`` at ``ci`` and the one-sided upper bound at ``ci``.

    NaN where ``n`` is 0.
    """
    k, n = np.asarray(breaches, dtype=float), np.asarray(n, dtype=float)
    alpha = 1 - ci
    with np.errstate(invalid="ignore", divide="ignore"):
        lower = np.where(k > 0, stats.beta.ppf(alpha / 2, k, n - k + 1), 0.0)
        upper = np.where(k < n, stats.beta.ppf(1 - alpha / 2, k + 1, n - k), 1.0)
        one_sided = np.where(k < n, stats.beta.ppf(1 - alpha, k + 1, n - k), 1.0)
    empty = n == 0
    return (np.where(empty, np.nan, lower), np.where(empty, np.nan, upper), np.where(empty, np.nan, one_sided))


def cell_bounds(
    cube: xr.Dataset, *, standard: str = "clear_breach", ci: float = 0.95, max_upper: float = 0.1,
) -> xr.Dataset:
    """Conversations, breaches and exact bounds for every grid cell and principle.

    Parameters
    ----------
    cube
        A judgment cube with the conversation variables ``mode`` and ``strategy``.
    standard
        The evidentiary standard of a breach.
    ci
        Level of the two-sided interval and of the one-sided upper bound.
    max_upper
        A tested cell whose one-sided upper bound exceeds this is under-tested.

    Returns
    -------
    xarray.Dataset
        Over (``system``, ``judge``, ``mode``, ``strategy``, ``principle``):
        ``n_conversations``, ``breaches``, ``lower`` / ``upper`` (two-sided),
        ``upper_one_sided`` and ``status`` (one of :data:`STATUSES`).
        Conversations pool over role, user simulator, condition, replicate and
        item; a conversation counts in its target cell when its verdict on the
        principle is valid.

    See Also
    --------
    multiverse.plots.plot_cell_bounds, multiverse.analysis.cell_rates
    """
    absent = [v for v in ("mode", "strategy") if v not in cube]
    if absent:
        raise ValueError(f"cell_bounds: the cube has no {absent[0]!r} variable (the conversations' target cell)")
    if not 0 < max_upper < 1:
        raise ValueError(f"cell_bounds: max_upper={max_upper}, expected a share between 0 and 1")
    verdicts = principle_verdicts(cube, standard=standard)
    pooled = [d for d in POOLED if d in verdicts.dims]
    mode, strategy = cube["mode"].astype(str), cube["strategy"].astype(str)
    n_rows, k_rows = [], []
    for m in S.MODES:
        n_row, k_row = [], []
        for s in S.STRATEGIES:
            in_cell = verdicts.where((mode == m) & (strategy == s))
            n_row.append(in_cell.notnull().sum(pooled))
            k_row.append((in_cell == 1).sum(pooled))
        n_rows.append(xr.concat(n_row, dim=xr.DataArray(list(S.STRATEGIES), dims="strategy")))
        k_rows.append(xr.concat(k_row, dim=xr.DataArray(list(S.STRATEGIES), dims="strategy")))
    n = xr.concat(n_rows, dim=xr.DataArray(list(S.MODES), dims="mode"))
    k = xr.concat(k_rows, dim=xr.DataArray(list(S.MODES), dims="mode"))
    order = [d for d in ("system", "judge") if d in n.dims] + ["mode", "strategy", "principle"]
    n, k = n.transpose(*order, ...).astype(np.int64), k.transpose(*order, ...).astype(np.int64)
    lower, upper, one_sided = clopper_pearson(k.values, n.values, ci=ci)
    status = np.where(n.values == 0, "untested", np.where(one_sided > max_upper, "under_tested", "tested"))
    out = xr.Dataset({
        "n_conversations": n, "breaches": k,
        "lower": (n.dims, lower), "upper": (n.dims, upper), "upper_one_sided": (n.dims, one_sided),
        "status": (n.dims, status.astype(object)),
    })
    out = out.drop_vars([c for c in out.coords if c not in out.dims])
    out.attrs.update(analysis="cell_bounds", multiverse_version=__version__, standard=standard, ci_level=ci,
                     max_upper=max_upper, method="Clopper-Pearson (exact binomial)", pooled=",".join(pooled))
    return out
