"""Cluster bootstrap weights and percentile intervals shared by the analyses.

Resampling whole conversations (or items) with replacement is the same as
weighting each cluster by a multinomial count; drawing the counts once and
reusing them keeps every statistic's draws on the same resamples, so their
dependence is kept (the same draws for every specification of a curve).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import xarray as xr
from scipy import stats

__all__ = [
    "CI_BOUNDS",
    "bound_coords",
    "cluster_weights",
    "expanded_level",
    "expanded_percentile_interval",
    "jackknife_se",
    "nan_quantiles",
    "percentile_interval",
    "resampling_p_value",
    "studentized_interval",
    "t_critical",
    "with_interval",
]

CI_BOUNDS = ("lower", "upper")
HESTERBERG = "Hesterberg (2015), What Teachers Should Know About the Bootstrap, The American Statistician 69(4)"


def cluster_weights(n_clusters: int, *, n_boot: int, seed: int | np.random.Generator = 0) -> np.ndarray:
    """``(n_boot, n_clusters)`` resampling counts: each row sums to ``n_clusters``."""
    if n_clusters < 1:
        raise ValueError("bootstrap: no clusters to resample")
    if n_boot < 1:
        raise ValueError(f"bootstrap: n_boot={n_boot}, expected at least 1")
    rng = np.random.default_rng(seed)
    return rng.multinomial(n_clusters, np.full(n_clusters, 1.0 / n_clusters), size=n_boot)


def nan_quantiles(draws: np.ndarray, q: Sequence[float]) -> np.ndarray:
    """Quantiles along axis 0 ignoring NaN (numpy's linear method); q axis first.

    ``numpy.nanquantile`` loops over columns in Python when NaN are present;
    sorting once (NaN sort last) and interpolating per column is vectorised.
    """
    ordered = np.sort(draws, axis=0)
    n = (~np.isnan(ordered)).sum(axis=0)
    out = []
    for level in q:
        position = level * np.maximum(n - 1, 0)
        low = np.floor(position).astype(np.intp)
        high = np.minimum(low + 1, np.maximum(n - 1, 0))
        frac = position - low
        lo = np.take_along_axis(ordered, low[None], axis=0)[0]
        hi = np.take_along_axis(ordered, high[None], axis=0)[0]
        out.append(np.where(n > 0, lo + frac * (hi - lo), np.nan))
    return np.stack(out)


def percentile_interval(draws: np.ndarray, *, ci: float) -> np.ndarray:
    """Equal-tailed percentile interval of ``draws`` along axis 0; bound axis appended last."""
    if not 0 < ci < 1:
        raise ValueError(f"ci={ci}, expected a level between 0 and 1")
    tail = (1 - ci) / 2
    return np.moveaxis(nan_quantiles(draws, [tail, 1 - tail]), 0, -1)


def t_critical(level: float, n_clusters: np.ndarray | int) -> np.ndarray:
    """Two-sided critical value of Student's t with ``G - 1`` degrees of freedom at ``level``.

    The small-cluster correction of a cluster-robust Wald interval or test
    (Cameron & Miller 2015, "A Practitioner's Guide to Cluster-Robust
    Inference", section VI.B): NaN with fewer than two clusters.
    """
    df = np.asarray(n_clusters, dtype=float) - 1
    with np.errstate(invalid="ignore"):
        return np.where(df >= 1, stats.t.ppf(1 - (1 - level) / 2, np.maximum(df, 1)), np.nan)


def expanded_level(ci: float, n_clusters: int) -> float:
    """The level whose normal quantile is ``sqrt(G / (G - 1)) t_{G-1}`` at ``ci``: Hesterberg's expansion for few clusters.

    A bootstrap interval of a mean is too narrow by about ``sqrt((G-1)/G)``
    and uses normal rather than t tails; asking for this level instead of
    ``ci`` corrects both.  NaN below two clusters.
    """
    if n_clusters < 2:
        return np.nan
    tail = stats.norm.cdf(np.sqrt(n_clusters / (n_clusters - 1)) * stats.t.ppf((1 - ci) / 2, n_clusters - 1))
    return float(1 - 2 * max(tail, 1e-12))  # two or three clusters: the whole range of the draws


def expanded_percentile_interval(draws: np.ndarray, *, ci: float, n_clusters: int) -> np.ndarray:
    """Percentile interval widened for few clusters (Hesterberg's expanded percentile interval).

    The percentile interval of a mean is too narrow by about ``sqrt((G-1)/G)``
    and uses normal rather than t tails; the expanded interval takes the
    percentiles at ``Phi(sqrt(G/(G-1)) t_{(1-ci)/2, G-1})`` and their mirror,
    which gives near-nominal coverage from a dozen clusters on.  Bound axis
    appended last.
    """
    if not 0 < ci < 1:
        raise ValueError(f"ci={ci}, expected a level between 0 and 1")
    if n_clusters < 2:
        return np.moveaxis(nan_quantiles(draws, [0.0, 1.0]) * np.nan, 0, -1)
    tail = (1 - expanded_level(ci, n_clusters)) / 2
    return np.moveaxis(nan_quantiles(draws, [tail, 1 - tail]), 0, -1)


def jackknife_se(leave_one_out: np.ndarray) -> np.ndarray:
    """Jackknife standard error from ``(cluster, ...)`` leave-one-cluster-out values: ``sqrt((G-1)/G sum d^2)``."""
    n = leave_one_out.shape[0]
    deviation = leave_one_out - leave_one_out.mean(axis=0)
    return np.sqrt((n - 1) / n * (deviation**2).sum(axis=0)) if n >= 2 else np.full(leave_one_out.shape[1:], np.nan)


def studentized_interval(draws: np.ndarray, estimate: np.ndarray, se: np.ndarray, draw_se: np.ndarray, *,
                         ci: float) -> np.ndarray:
    """Studentized bootstrap (bootstrap-t) interval along axis 0; bound axis last.

    ``t_b = (draw_b - estimate) / draw_se_b`` over the draws, and the limits
    ``estimate - t_{1 - tail} se`` and ``estimate - t_{tail} se`` (Efron &
    Tibshirani 1993, An Introduction to the Bootstrap, ch. 12; Davison &
    Hinkley 1997, section 5.2.1): second-order accurate like BCa, and unlike
    it calibrated on the statistic's own spread, so a skewed statistic whose
    spread moves with its value (an agreement pooled over few, unequal items)
    is not read from too-narrow percentiles.  Draws whose statistic or standard
    error is undefined (NaN, or a standard error of 0) are left out; the
    caller decides how many may be.  A statistic without spread (``se`` 0)
    has its estimate for both limits.  Written here because
    ``scipy.stats.bootstrap`` offers percentile, basic and BCa intervals only.
    """
    if not 0 < ci < 1:
        raise ValueError(f"ci={ci}, expected a level between 0 and 1")
    with np.errstate(invalid="ignore", divide="ignore"):
        t = (draws - estimate) / draw_se
    t = np.where(np.isfinite(t), t, np.nan)
    tail = (1 - ci) / 2
    low, high = nan_quantiles(t, [tail, 1 - tail])
    bounds = np.stack([estimate - high * se, estimate - low * se], axis=-1)
    constant = (se == 0) & np.isfinite(estimate)  # no spread over the clusters (a rater with itself): the estimate
    return np.where(constant[..., None], np.asarray(estimate)[..., None], bounds)


def resampling_p_value(null: np.ndarray, observed: np.ndarray, *, rng: np.random.Generator) -> np.ndarray:
    """``(1 + #{null > observed} + U #{null == observed}) / (1 + B)`` along axis 0, never 0.

    The +1 counts the observed statistic among the draws (Davison & Hinkley
    1997, eq. 4.11).  Null draws tied with the observed value count with a
    uniform weight ``U`` (one draw of ``rng`` per statistic): the randomised
    test of a discrete statistic (Lehmann & Romano 2005, Testing Statistical Hypotheses, ch. 3), whose
    size is the nominal level instead of the largest attainable level below it
    (a share of 12 specifications takes 13 values, and counting every tie as
    extreme made its 5% test reject 2.8%).  A continuous statistic has no ties
    and gets the plain ``(1 + k) / (1 + B)``.  ``B`` counts the finite null
    draws only (a draw whose statistic is undefined is no evidence either
    way), and an undefined observed statistic, or one with no finite draw, has
    an undefined p-value (NaN), never a small one.
    """
    finite = np.isfinite(null)
    greater = (finite & (null > observed + 1e-12)).sum(axis=0)
    tied = (finite & (np.abs(null - observed) <= 1e-12)).sum(axis=0)
    draws = finite.sum(axis=0)
    weight = rng.uniform(size=np.shape(observed))
    with np.errstate(invalid="ignore", divide="ignore"):
        p = (1 + greater + weight * tied) / (1 + draws)
    return np.where(np.isfinite(observed) & (draws > 0), p, np.nan)


def bound_coords() -> dict[str, list[str]]:
    """Coordinates of the ``ci_bound`` dim."""
    return {"ci_bound": list(CI_BOUNDS)}


def with_interval(estimate: xr.DataArray, bounds: np.ndarray, *, ci: float, n_boot: int) -> xr.Dataset:
    """A Dataset of ``estimate`` and its interval (dim ``ci_bound``)."""
    interval = xr.DataArray(bounds, dims=estimate.dims + ("ci_bound",), coords={**estimate.coords, **bound_coords()})
    out = xr.Dataset({"estimate": estimate, "ci": interval})
    out.attrs.update({"ci_level": ci, "n_boot": n_boot, "ci_method": "cluster bootstrap, percentile"})
    return out
