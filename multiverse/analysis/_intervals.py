"""Small-sample intervals and tests for rates clustered by item, and multiplicity adjustments.

Evaluations have few items and often rare outcomes, where the Wald interval
``p -/+ t se`` fails twice: its standard error is 0 when no item shows the
outcome, and it is symmetric where the sampling distribution is skewed (at 8
items and a rate of 0.066 it covered 76%).  The intervals here are score-type:

* a rate: the Wilson interval (Wilson 1927) at the *effective* sample size of
  the clustered design, ``n_eff = p (1 - p) / se^2`` capped at the
  conversations used (the Korn & Graubard 1998 design-effect correction, with
  Student's t on G - 1 degrees of freedom in place of the normal quantile);
  with a rate of 0 or 1 (no design effect to estimate) ``n_eff`` is the number
  of items, as if an item's reruns always agreed: the cautious reading;
* a difference of two rates on the same items: MOVER (Newcombe 1998, method
  10; Zou & Donner 2008), which combines the two Wilson intervals with the
  correlation of the two rates over items;
* a test of a difference, and the probability of its sign: the MOVER interval
  inverted (:func:`tail_at`), so test and interval agree.

Holm's step-down and Benjamini-Hochberg's step-up adjustments are written here
for arrays with a family axis and NaN (``statsmodels.stats.multitest`` takes
one flat family at a time); the tests pin them to it.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from multiverse.core.proportions import wilson_interval

__all__ = ["ADJUSTMENTS", "adjust_p", "effective_n", "mover_interval", "tail_at", "wilson_interval"]

ADJUSTMENTS = ("holm", "fdr_bh", "none")


def _quantile(level: float, clusters: np.ndarray) -> np.ndarray:
    """Two-sided t quantile at ``level`` with G - 1 df (NaN below two clusters)."""
    df = np.asarray(clusters, dtype=float) - 1
    with np.errstate(invalid="ignore"):
        return np.where(df >= 1, stats.t.ppf(0.5 + level / 2, np.maximum(df, 1)), np.nan)


def effective_n(p: np.ndarray, se: np.ndarray, n: np.ndarray, clusters: np.ndarray) -> np.ndarray:
    """The design-effect-corrected sample size ``p (1 - p) / se^2``, between the items and the conversations."""
    with np.errstate(invalid="ignore", divide="ignore"):
        raw = p * (1 - p) / se**2
    degenerate = ~np.isfinite(raw) | (raw <= 0)
    return np.clip(np.where(degenerate, clusters, raw), np.minimum(clusters, n), n)


def rate_interval(p: np.ndarray, se: np.ndarray, n: np.ndarray, clusters: np.ndarray, *, level: float
                  ) -> tuple[np.ndarray, np.ndarray]:
    """The clustered Wilson interval of a rate (see the module docstring)."""
    return wilson_interval(p, effective_n(p, se, n, clusters), _quantile(level, clusters))


def mover_interval(
    p_a: np.ndarray, p_b: np.ndarray, se_a: np.ndarray, se_b: np.ndarray, r: np.ndarray, n: np.ndarray,
    clusters: np.ndarray, *, level: float,
) -> tuple[np.ndarray, np.ndarray]:
    """MOVER interval of ``p_a - p_b`` from the two rates' Wilson limits and their correlation ``r``."""
    q = _quantile(level, clusters)
    low_a, up_a = wilson_interval(p_a, effective_n(p_a, se_a, n, clusters), q)
    low_b, up_b = wilson_interval(p_b, effective_n(p_b, se_b, n, clusters), q)
    r = np.clip(np.nan_to_num(r, nan=0.0), -1.0, 1.0)
    d = p_a - p_b
    below = np.sqrt(np.maximum((p_a - low_a) ** 2 + (up_b - p_b) ** 2 - 2 * r * (p_a - low_a) * (up_b - p_b), 0.0))
    above = np.sqrt(np.maximum((up_a - p_a) ** 2 + (p_b - low_b) ** 2 - 2 * r * (up_a - p_a) * (p_b - low_b), 0.0))
    return np.clip(d - below, -1.0, 1.0), np.clip(d + above, -1.0, 1.0)


def tail_at(value: float, interval, *, iterations: int = 40) -> np.ndarray:
    """The one-sided tail ``a`` at which an interval's nearer limit reaches ``value``.

    ``interval(level)`` returns ``(lower, upper)`` arrays at a two-sided
    ``level``, whose limits are one-sided ones with tail ``a = (1 - level) / 2``;
    a larger tail gives a narrower interval.  Bisection on ``a`` in (0, 1/2],
    vectorised.  For an estimate above ``value``, ``a`` is the one-sided
    p-value of "the estimand is at most ``value``" (the confidence
    distribution at ``value``), and ``2 a`` the two-sided p-value of "the
    estimand is ``value``"; 1/2 when the estimate is ``value``.  NaN where the
    interval is.
    """
    lower0, upper0 = interval(1e-9)  # the limits at level 0: the estimate
    above = lower0 > value
    low, high = np.zeros(np.shape(lower0)), np.full(np.shape(lower0), 0.5)
    for _ in range(iterations):
        mid = (low + high) / 2
        lower, upper = interval(1 - 2 * mid)
        reached = np.where(above, lower <= value, upper >= value)
        low, high = np.where(reached, mid, low), np.where(reached, high, mid)
    out = np.where(np.asarray(lower0) == value, 0.5, (low + high) / 2)
    return np.where(np.isfinite(lower0) & np.isfinite(upper0), out, np.nan)


def adjust_p(p: np.ndarray, *, method: str, axis: int = -1) -> np.ndarray:
    """Multiplicity-adjusted p-values over the family ``axis`` (NaN entries are not in the family).

    ``"holm"``: Holm's step-down (family-wise error); ``"fdr_bh"``:
    Benjamini-Hochberg's step-up (false discovery rate); ``"none"``: unchanged.
    """
    if method not in ADJUSTMENTS:
        raise ValueError(f"adjust={method!r}, expected one of {', '.join(ADJUSTMENTS)}")
    p = np.moveaxis(np.asarray(p, dtype=float), axis, -1)
    if method == "none":
        return np.moveaxis(p, -1, axis)
    present = ~np.isnan(p)
    m = present.sum(axis=-1, keepdims=True)
    order = np.argsort(np.where(present, p, np.inf), axis=-1)
    ranked = np.take_along_axis(p, order, axis=-1)
    i = np.arange(p.shape[-1])
    if method == "holm":
        scaled = np.where(i < m, (m - i) * ranked, np.nan)
        adjusted = np.fmax.accumulate(np.nan_to_num(scaled, nan=-np.inf), axis=-1)
    else:
        scaled = np.where(i < m, m * ranked / (i + 1), np.inf)
        adjusted = np.flip(np.minimum.accumulate(np.flip(scaled, axis=-1), axis=-1), axis=-1)
    adjusted = np.minimum(adjusted, 1.0)
    out = np.empty_like(p)
    np.put_along_axis(out, order, adjusted, axis=-1)
    return np.moveaxis(np.where(present, out, np.nan), -1, axis)
