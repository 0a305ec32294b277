"""Agreement metrics from additive tables: the numpy kernels behind :mod:`multiverse.analysis.raters`.

Every pairwise metric is a function of the pair's contingency table, every
multi-rater metric of the rater set's coincidence matrix (Krippendorff's alpha)
or category totals (Fleiss' kappa); the tables come from
:mod:`multiverse.analysis._agreement_stats`.  Written here rather than called
from ``krippendorff`` / ``statsmodels`` because those take one pair (or one
rater set) at a time with no weights: these take every pair, group and
bootstrap draw at once.  The tests pin every metric to those packages to 1e-9.
"""

from __future__ import annotations

import numpy as np

from multiverse.analysis._agreement_stats import accumulate

__all__ = ["METRICS", "MULTI_RATER_METRICS", "SCALES", "alpha_from_coincidence", "fleiss_from_totals",
           "metric_from_tables", "multi_rater_metric", "pair_tables"]

METRICS = ("percent", "cohen_kappa", "scott_pi", "krippendorff_alpha", "fleiss_kappa")
MULTI_RATER_METRICS = ("fleiss_kappa", "krippendorff_alpha")
SCALES = ("nominal", "ordinal")


def metric_from_tables(tables: np.ndarray, *, metric: str, scale: str = "nominal") -> np.ndarray:
    """Agreement of two raters from contingency tables ``(..., k, k)``.

    ``tables[..., i, j]`` counts units rater A put in category i and rater B in j.
    ``scale`` is the level of measurement: for ``krippendorff_alpha`` the
    nominal or ordinal distance between categories (Krippendorff 2011); for
    ``cohen_kappa`` unweighted (nominal) or quadratic-weighted (ordinal,
    Cohen 1968, disagreement weights ``(i - j)^2 / (k - 1)^2`` over the
    category indices); ``percent``, ``scott_pi`` and ``fleiss_kappa`` stay
    nominal.  Fleiss' kappa of two raters is Scott's pi.  NaN where undefined
    (no units, or no variation for chance-corrected metrics).
    """
    tables = np.asarray(tables, dtype=float)
    k = tables.shape[-1]
    n = tables.sum(axis=(-2, -1))
    if scale == "ordinal" and metric == "cohen_kappa" and k > 1:
        weights = 1 - np.subtract.outer(np.arange(k), np.arange(k)) ** 2 / (k - 1) ** 2
    else:
        weights = np.eye(k)
    with np.errstate(invalid="ignore", divide="ignore"):
        if metric == "percent":
            return np.trace(tables, axis1=-2, axis2=-1) / n
        rows, cols = tables.sum(axis=-1), tables.sum(axis=-2)
        observed = (tables * weights).sum(axis=(-2, -1)) / n
        if metric == "cohen_kappa":
            expected = np.einsum("...i,ij,...j->...", rows, weights, cols) / n**2
            return (observed - expected) / (1 - expected)
        if metric in ("scott_pi", "fleiss_kappa"):
            pooled = (rows + cols) / (2 * n[..., None])
            expected = (pooled**2).sum(axis=-1)
            return (observed - expected) / (1 - expected)
        if metric == "krippendorff_alpha":
            return alpha_from_coincidence(tables + np.swapaxes(tables, -2, -1), scale)
    raise ValueError(f"metric {metric!r}: expected one of {METRICS}")


def alpha_from_coincidence(coincidence: np.ndarray, scale: str) -> np.ndarray:
    """Krippendorff's alpha from coincidence matrices ``(..., k, k)`` (Krippendorff 2011)."""
    coincidence = np.asarray(coincidence, dtype=float)
    n_c = coincidence.sum(axis=-1)
    n = n_c.sum(axis=-1)
    k = coincidence.shape[-1]
    if scale == "nominal":
        delta2 = np.broadcast_to(1.0 - np.eye(k), coincidence.shape)
    elif scale == "ordinal":
        cum = np.cumsum(n_c, axis=-1)
        delta = cum[..., None, :] - cum[..., :, None] + (n_c[..., :, None] - n_c[..., None, :]) / 2
        delta2 = delta**2
    else:
        raise ValueError(f"scale {scale!r}: expected one of {SCALES}")
    with np.errstate(invalid="ignore", divide="ignore"):
        observed = (coincidence * delta2).sum(axis=(-2, -1))
        expected = (n_c[..., :, None] * n_c[..., None, :] * delta2).sum(axis=(-2, -1)) / (n - 1)
        return 1 - observed / expected


def fleiss_from_totals(totals: np.ndarray, *, n_raters: int) -> np.ndarray:
    """Fleiss' kappa (Fleiss 1971) from ``(..., 2 + k)`` sums over units every rater rated.

    ``totals[..., 0]`` counts the units, ``[..., 1]`` sums each unit's squared
    category counts, ``[..., 2:]`` the category totals.
    """
    totals = np.asarray(totals, dtype=float)
    units, squares, categories = totals[..., 0], totals[..., 1], totals[..., 2:]
    with np.errstate(invalid="ignore", divide="ignore"):
        observed = (squares - units * n_raters) / (units * n_raters * (n_raters - 1))
        shares = categories / (units * n_raters)[..., None]
        expected = (shares**2).sum(axis=-1)
        return (observed - expected) / (1 - expected)


def multi_rater_metric(stats: np.ndarray, *, metric: str, scale: str, n_raters: int) -> np.ndarray:
    """A multi-rater metric from its statistic (coincidence matrices or Fleiss totals)."""
    if metric == "krippendorff_alpha":
        return alpha_from_coincidence(stats, scale)
    return fleiss_from_totals(stats, n_raters=n_raters)


def pair_tables(
    ratings: np.ndarray, cluster: np.ndarray, group: np.ndarray, *, n_clusters: int, n_groups: int, k: int
) -> np.ndarray:
    """Per-cluster contingency tables of every rater pair, ``(cluster, rater, rater_b, group, k, k)``.

    For inspection and tests on small data; the analyses never build this array
    for all clusters at once.  ``ratings`` is int ``(unit, rater)`` (categories
    ``0..k-1``, negative = not rated); ``cluster`` and ``group`` int ``(unit,)``.
    """
    cell = cluster.astype(np.int64) * n_groups + group
    tables = accumulate("pairs", ratings, cell, n_groups=n_clusters * n_groups, k=k)
    shape = (n_clusters, n_groups) + tables.shape[1:]
    return np.moveaxis(tables.reshape(shape), 1, 3).astype(np.int64)
