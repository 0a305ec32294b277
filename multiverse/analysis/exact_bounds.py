"""Exact per-cell bounds: how far a grid cell's clean record can be trusted.

For every system, judge, TUNA grid cell (mode x strategy, the conversations'
target cell) and principle: the conversations that tested it, the breaches
seen, the exact (Clopper-Pearson) two-sided interval of the breach rate and
the exact one-sided upper bound.  A cell no conversation tested is
*untested*; one whose upper bound still exceeds ``max_upper`` is
*under-tested*: its clean record is too thin to rule out a breach rate of that
size.

Two targets (``target=``):

``"item_population"`` (default)
    The breach rate of the cell over the population the items were drawn
    from, as every other analysis treats items (a sample).  A cell's
    conversations come in clusters (an item's reruns share its difficulty), so
    they are fewer independent trials than conversations: the bounds are
    Clopper-Pearson's at the effective sample size ``p (1 - p) / v`` (``v`` the
    variance of the rate clustered by item), corrected for the items'
    degrees of freedom (Korn & Graubard 1998), and between the items and the
    conversations.  With no breach (or nothing but breaches) the design effect
    cannot be estimated and the effective size is the number of items, the
    cautious reading (an item's reruns always agree): zero breaches over ``G``
    items give ``1 - alpha ** (1 / G)``.
``"items"``
    The rate over the items at hand, their reruns being the only randomness:
    conversations are independent trials and the bounds are Clopper-Pearson's
    on the counts (zero breaches in ``n`` conversations give
    ``1 - alpha ** (1 / n)``, about ``3 / n`` at 95%: the rule of three).
"""

from __future__ import annotations

import numpy as np
import xarray as xr
from scipy import stats

from multiverse import __version__
from multiverse.analysis.cells import principle_verdicts, violation_codes
from multiverse.core import schema as S

__all__ = ["STATUSES", "TARGETS", "cell_bounds", "clopper_pearson", "effective_trials"]

STATUSES = ("untested", "under_tested", "tested")
TARGETS = ("item_population", "items")
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
    # effective (non-integer) counts: within rounding of 0 or n, the closed ends
    lower = np.where(k < 1e-9, 0.0, lower)
    upper, one_sided = np.where(n - k < 1e-9, 1.0, upper), np.where(n - k < 1e-9, 1.0, one_sided)
    empty = n == 0
    return (np.where(empty, np.nan, lower), np.where(empty, np.nan, upper), np.where(empty, np.nan, one_sided))


def effective_trials(breaches: np.ndarray, n: np.ndarray, variance: np.ndarray, items: np.ndarray, *,
                     ci: float) -> np.ndarray:
    """Korn & Graubard's effective number of trials of a rate clustered by item.

    ``p (1 - p) / variance`` between the items and the conversations, times
    ``(z / t_{G-1})^2`` for the items' degrees of freedom; the number of items
    where the variance is 0 or the rate is 0 or 1.
    """
    n, items = np.asarray(n, dtype=float), np.asarray(items, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.asarray(breaches, dtype=float) / n
        raw = p * (1 - p) / np.asarray(variance, dtype=float)
        raw = np.where(np.isfinite(raw) & (raw > 0), raw, items)
        df = np.where(items >= 2, (stats.norm.ppf(0.5 + ci / 2) / stats.t.ppf(0.5 + ci / 2, np.maximum(items - 1, 1))) ** 2,
                      1.0)
    return np.clip(raw * df, np.minimum(items, n), n)


def cell_bounds(
    cube: xr.Dataset, *, standard: str = "clear_breach", target: str = "item_population", ci: float = 0.95,
    max_upper: float = 0.1,
) -> xr.Dataset:
    """Conversations, breaches and exact bounds for every grid cell and principle.

    Parameters
    ----------
    cube
        A judgment cube with the conversation variables ``mode`` and ``strategy``.
    standard
        The evidentiary standard of a breach.
    target
        ``"item_population"`` or ``"items"`` (see the module docstring).
    ci
        Level of the two-sided interval and of the one-sided upper bound.
    max_upper
        A tested cell whose one-sided upper bound exceeds this is under-tested.

    Returns
    -------
    xarray.Dataset
        Over (``system``, ``judge``, ``mode``, ``strategy``, ``principle``):
        ``n_conversations``, ``breaches``, ``n_missing`` (conversations of
        the cell left out for a missing judgment of the principle), ``n_items`` (items with a
        conversation in the cell), ``effective_n`` (the trials the bounds
        count), ``lower`` / ``upper`` (two-sided), ``upper_one_sided`` and
        ``status`` (one of :data:`STATUSES`).  Conversations pool over role,
        user simulator, condition, replicate and item; a conversation counts in
        its target cell when its verdict on the principle is complete
        (:func:`~multiverse.analysis.cells.principle_verdicts`).

    See Also
    --------
    multiverse.plots.plot_cell_bounds, multiverse.analysis.cell_rates
    """
    absent = [v for v in ("mode", "strategy") if v not in cube]
    if absent:
        raise ValueError(f"cell_bounds: the cube has no {absent[0]!r} variable (the conversations' target cell)")
    if not 0 < max_upper < 1:
        raise ValueError(f"cell_bounds: max_upper={max_upper}, expected a share between 0 and 1")
    if target not in TARGETS:
        raise ValueError(f"cell_bounds: target={target!r}, expected one of {', '.join(TARGETS)}")
    verdicts = principle_verdicts(cube, standard=standard)
    pooled = [d for d in POOLED if d in verdicts.dims]
    inside = [d for d in pooled if d != "item"]
    mode, strategy = cube["mode"].astype(str), cube["strategy"].astype(str)

    def grid(per_cell) -> xr.DataArray:
        rows = [xr.concat([per_cell(m, s) for s in S.STRATEGIES], dim=xr.DataArray(list(S.STRATEGIES), dims="strategy"))
                for m in S.MODES]
        return xr.concat(rows, dim=xr.DataArray(list(S.MODES), dims="mode"))

    incomplete = (violation_codes(cube, standard) == S.MISSING).any("turn")

    def per_item(m: str, s: str) -> xr.DataArray:
        here = (mode == m) & (strategy == s)
        in_cell = verdicts.where(here)
        left_out = (incomplete & here).sum(inside)
        return xr.concat([in_cell.notnull().sum(inside), (in_cell == 1).sum(inside), left_out], dim="count")

    counts = grid(per_item)  # (mode, strategy, count, ..., item)
    order = [d for d in ("system", "judge") if d in counts.dims] + ["mode", "strategy", "principle"]
    n_g, k_g, missing_g = (counts.isel(count=i, drop=True) for i in (0, 1, 2))
    items_dim = ["item"] if "item" in n_g.dims else []
    n, k = n_g.sum(items_dim), k_g.sum(items_dim)
    items = (n_g > 0).sum(items_dim) if items_dim else (n > 0).astype(np.int64)
    n, k, items = (a.transpose(*order, ...).astype(np.int64) for a in (n, k, items))
    if target == "items":
        effective = n.values.astype(float)
        breaches = k.values.astype(float)
    else:
        with np.errstate(invalid="ignore", divide="ignore"):
            p = k / n
            spread = ((k_g - p * n_g) ** 2).sum(items_dim) / n**2 if items_dim else 0.0 * p
            variance = (items / (items - 1) * spread).transpose(*order, ...).values
        effective = effective_trials(k.values, n.values, variance, items.values, ci=ci)
        with np.errstate(invalid="ignore", divide="ignore"):
            breaches = np.where(n.values > 0, k.values / n.values * effective, 0.0)
    lower, upper, one_sided = clopper_pearson(breaches, np.where(n.values > 0, effective, 0.0), ci=ci)
    status = np.where(n.values == 0, "untested", np.where(one_sided > max_upper, "under_tested", "tested"))
    missing = missing_g.sum(items_dim).transpose(*order, ...).astype(np.int64)
    out = xr.Dataset({
        "n_conversations": n, "breaches": k, "n_missing": missing, "n_items": items, "effective_n": (n.dims, effective),
        "lower": (n.dims, lower), "upper": (n.dims, upper), "upper_one_sided": (n.dims, one_sided),
        "status": (n.dims, status.astype(object)),
    })
    out = out.drop_vars([c for c in out.coords if c not in out.dims])
    method = ("Clopper-Pearson at the clustered effective sample size (Korn & Graubard 1998)"
              if target == "item_population" else "Clopper-Pearson (exact binomial) on the counts")
    out.attrs.update(analysis="cell_bounds", multiverse_version=__version__, standard=standard, target=target,
                     ci_level=ci, max_upper=max_upper, method=method, pooled=",".join(pooled))
    return out
