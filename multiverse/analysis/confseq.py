"""Confidence sequences for a bounded conditional mean by betting (Waudby-Smith and Ramdas 2023).

A confidence sequence ``(C_t)`` covers its target at every time at once:
``P(theta in C_t for all t) >= 1 - alpha``, so it stays valid when data are
looked at after every batch and the run stops when the interval is narrow
enough.  For every candidate mean ``m`` on a grid, two gamblers bet that the
next observation lies above (``K+``) or below (``K-``) ``m``::

    K+_t(m) = prod_i (1 + lambda+_i(m) (x_i - m_i)),   K-_t(m) = prod_i (1 - lambda-_i(m) (x_i - m_i))

where ``x_i`` is the observation rescaled to [0, 1] by its *predictable*
bounds (known before it is drawn) and ``m_i`` is ``m`` rescaled the same way.
When the conditional mean of every observation is ``m``, both are nonnegative
martingales, and by Ville's inequality each exceeds ``2 / alpha`` at any time
with probability at most ``alpha / 2``.  The lower limit is the smallest ``m``
that ``K+`` has never rejected, the upper limit the largest that ``K-`` has
never rejected (a running intersection: a rejected ``m`` stays rejected).
Taking each side from its own capital (the "max" form of the hedged capital,
``max(K+, K-) / 2 >= 1 / alpha``; Waudby-Smith and Ramdas 2023, section 4.2)
lets the two limits come from two streams, which is how missing verdicts are
bounded (:class:`BoundedStreams`).

Bets are the predictable plug-in of the paper (its equations (26)-(27)),
with the prior mean 1/2 and variance 1/4 counted as one observation:
``lambda_t = sqrt(2 log(2/alpha) / (sigma2_{t-1} t log(1 + t)))``, or, tuned for
a planned sample size ``n``, ``sqrt(2 log(2/alpha) / (sigma2_{t-1} n))``, then
truncated at ``1/2 / m_t`` (``K+``) and ``1/2 / (1 - m_t)`` (``K-``).  Any
predictable bet keeps the coverage; the tuning only moves where the sequence
is tightest.

Written here rather than taken from the ``confseq`` package (Waudby-Smith's
reference code): its betting sequences take observations on one fixed [0, 1]
scale, while the sequential runs of :mod:`multiverse.analysis.sequential`
need bounds that change with every observation (importance weights of the
cell allocation, and the without-replacement centring of a finite item pool,
both known before the draw), and the package builds a C++ extension that the
project's locked dependencies do not carry.  Tests check the vectorised
capital against a direct loop and the coverage by simulation.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field

import numpy as np

__all__ = ["BettingCS", "BoundedStreams", "betting_cs", "stratified_interval"]

TRUNCATION = 0.5
"""Bets are truncated at this share of the largest bet that keeps the capital nonnegative (the paper's 1/2)."""


@dataclass
class BettingCS:
    """A betting confidence sequence for a constant conditional mean, updated one observation at a time.

    Parameters
    ----------
    low, high
        The range the mean lies in (the grid's ends).
    alpha
        Miscoverage: the sequence covers at every time at once with probability ``1 - alpha``.
    grid
        Candidate means on ``[low, high]``.
    target_n
        Tune the bets for this many observations (``None``: the paper's
        ``t log(1 + t)`` schedule, tight at no particular time).
    """

    low: float
    high: float
    alpha: float = 0.05
    grid: int = 2001
    target_n: int | None = None
    t: int = 0
    means: np.ndarray = field(init=False, repr=False)
    log_pos: np.ndarray = field(init=False, repr=False)
    log_neg: np.ndarray = field(init=False, repr=False)
    rejected_pos: np.ndarray = field(init=False, repr=False)
    rejected_neg: np.ndarray = field(init=False, repr=False)
    _sum: float = field(default=0.5, init=False, repr=False)
    _sq: float = field(default=0.25, init=False, repr=False)

    def __post_init__(self) -> None:
        if not (self.high > self.low):
            raise ValueError(f"BettingCS: expected low < high, got [{self.low}, {self.high}]")
        if not 0 < self.alpha < 1:
            raise ValueError(f"BettingCS: alpha must lie in (0, 1), got {self.alpha}")
        self.means = np.linspace(self.low, self.high, self.grid)
        self.log_pos = np.zeros(self.grid)
        self.log_neg = np.zeros(self.grid)
        self.rejected_pos = np.zeros(self.grid, dtype=bool)
        self.rejected_neg = np.zeros(self.grid, dtype=bool)

    def bet(self) -> float:
        """The untruncated bet for the next observation (predictable: from past observations only)."""
        t = self.t + 1
        sigma2 = self._sq / t
        scale = self.target_n if self.target_n is not None else t * math.log1p(t)
        return math.sqrt(2.0 * math.log(2.0 / self.alpha) / (sigma2 * scale))

    def update(self, value: float, *, low: float, high: float) -> None:
        """Absorb one observation whose conditional mean is the target and which lies in ``[low, high]``.

        ``low`` and ``high`` must be known before the observation is drawn;
        a ``value`` outside them is an error, not a reason to widen them.
        """
        if not high > low:
            raise ValueError(f"BettingCS.update: expected low < high, got [{low}, {high}]")
        if not low - 1e-12 <= value <= high + 1e-12:
            raise ValueError(f"BettingCS.update: observation {value} outside its bounds [{low}, {high}]")
        width = high - low
        x = min(max((value - low) / width, 0.0), 1.0)
        m = (self.means - low) / width
        lam = self.bet()
        with np.errstate(divide="ignore", invalid="ignore"):
            lam_pos = np.minimum(lam, TRUNCATION / m)
            lam_neg = np.minimum(lam, TRUNCATION / (1.0 - m))
            inside = (m > 0) & (m < 1)
            self.log_pos[inside] += np.log1p(lam_pos[inside] * (x - m[inside]))
            self.log_neg[inside] += np.log1p(-lam_neg[inside] * (x - m[inside]))
        # A mean outside this observation's bounds cannot be its conditional mean: rejected for sure.
        self.log_pos[m < 0] = np.inf
        self.log_neg[m > 1] = np.inf
        # At m == 0 (1) the observation's own bound: x above it rejects m, x at it is no evidence.
        self.log_pos[(m == 0) & (x > 0)] = np.inf
        self.log_neg[(m == 1) & (x < 1)] = np.inf
        threshold = math.log(2.0 / self.alpha)
        self.rejected_pos |= self.log_pos >= threshold
        self.rejected_neg |= self.log_neg >= threshold
        self.t += 1
        self._sum += x
        self._sq += (x - self._sum / (self.t + 1)) ** 2

    def lower(self) -> float:
        """The lower limit: one grid step below the smallest mean ``K+`` has not rejected."""
        kept = np.flatnonzero(~self.rejected_pos)
        if kept.size == 0:
            return float(self.high)
        return float(self.means[max(kept[0] - 1, 0)])

    def upper(self) -> float:
        """The upper limit: one grid step above the largest mean ``K-`` has not rejected."""
        kept = np.flatnonzero(~self.rejected_neg)
        if kept.size == 0:
            return float(self.low)
        return float(self.means[min(kept[-1] + 1, self.grid - 1)])

    def interval(self) -> tuple[float, float]:
        """``(lower, upper)`` now."""
        return self.lower(), self.upper()


@dataclass
class BoundedStreams:
    """A confidence sequence for a mean whose observations may be known only within bounds.

    An observation that is missing (an undecided verdict) is known only to lie
    in ``[value_low, value_high]``.  Two sequences run: one on the lowest
    completions, whose lower limit bounds the target from below, and one on the
    highest, whose upper limit bounds it from above; each side holds with
    probability ``1 - alpha / 2``, so the pair covers with ``1 - alpha`` whatever
    the missing values were.  With nothing missing both streams see the same
    data and the interval is :class:`BettingCS`'s.
    """

    low: float
    high: float
    alpha: float = 0.05
    grid: int = 2001
    target_n: int | None = None
    streams: list[BettingCS] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        # One sequence serves both sides until the first observation known only within bounds.
        one = BettingCS(self.low, self.high, alpha=self.alpha, grid=self.grid, target_n=self.target_n)
        self.streams = [one, one]

    @property
    def t(self) -> int:
        return self.streams[0].t

    def update(self, value_low: float, value_high: float, *, low: float, high: float) -> None:
        """Absorb one observation known to lie in ``[value_low, value_high]`` (equal when observed)."""
        if self.streams[0] is self.streams[1]:
            if value_low == value_high:
                self.streams[0].update(value_low, low=low, high=high)
                return
            self.streams[1] = copy.deepcopy(self.streams[0])
        self.streams[0].update(value_low, low=low, high=high)
        self.streams[1].update(value_high, low=low, high=high)

    def interval(self) -> tuple[float, float]:
        return self.streams[0].lower(), self.streams[1].upper()


def betting_cs(
    x: np.ndarray, *, alpha: float = 0.05, low: float = 0.0, high: float = 1.0, grid: int = 2001,
    target_n: int | None = None,
) -> np.ndarray:
    """The betting confidence sequence of a bounded i.i.d. sample, at every time.

    Parameters
    ----------
    x
        Observations in ``[low, high]``, in the order drawn.
    alpha
        Miscoverage over all times at once.
    low, high
        The observations' fixed bounds.
    grid
        Candidate means.
    target_n
        Tune the bets for this sample size (see :class:`BettingCS`).

    Returns
    -------
    numpy.ndarray
        Shape ``(len(x), 2)``: the lower and upper limit after each observation.

    See Also
    --------
    BettingCS : the same sequence, one observation at a time, with bounds that may change.
    """
    cs = BettingCS(low, high, alpha=alpha, grid=grid, target_n=target_n)
    out = np.empty((len(x), 2))
    for i, value in enumerate(np.asarray(x, dtype=float)):
        cs.update(float(value), low=low, high=high)
        out[i] = cs.interval()
    return out


def _min_plus(f: np.ndarray, g: np.ndarray) -> np.ndarray:
    """``h[k] = min_j f[j] + g[k - j]``: the smallest total capital of two cells for each sum of their parts."""
    total = f[:, None] + g[None, :]
    out = np.full(f.size + g.size - 1, np.inf)
    rows, cols = np.indices(total.shape)
    np.minimum.at(out, (rows + cols).ravel(), total.ravel())
    return out


def _resample(sequence: BettingCS, log_capital: np.ndarray, weight: float, step: float) -> np.ndarray:
    """A cell's log capital over ``weight * mean`` on the sum's grid: per bin, the least capital nearby (conservative)."""
    parts = weight * sequence.means
    k_low = int(np.floor(parts[0] / step + 1e-9))
    k_high = int(np.ceil(parts[-1] / step - 1e-9))
    centres = np.arange(k_low, k_high + 1) * step
    index = np.clip(np.searchsorted(parts, centres), 0, parts.size - 1)
    native = weight * (sequence.means[1] - sequence.means[0])
    reach = int(np.ceil(step / 2 / native)) + 1
    out = np.full(centres.size, np.inf)
    for shift in range(-reach, reach + 1):
        out = np.minimum(out, log_capital[np.clip(index + shift, 0, parts.size - 1)])
    return out, k_low


def stratified_interval(
    cells: list[tuple[BettingCS, BettingCS]], weights: list[float], *, alpha: float, step: float = 0.0025,
    rejected: tuple[np.ndarray, np.ndarray] | None = None,
) -> tuple[float, float, tuple[np.ndarray, np.ndarray]]:
    """The confidence sequence of a weighted sum of cell means, from every cell's betting capital.

    Each cell ``c`` has its own betting sequences for its mean ``mu_c`` (a
    lower-side one whose ``K+`` is read and an upper-side one whose ``K-`` is
    read; the same object when nothing is missing).  With draws allocated to
    cells predictably, the product ``prod_c K+_c(mu_c)`` over the true means is
    a nonnegative martingale, so ``theta = sum_c w_c mu_c`` is excluded from
    below only when *every* split of ``theta`` into cell means has product
    capital at least ``2 / alpha``:

        L = min { m : min_{sum_c w_c mu_c = m} sum_c log K+_c(mu_c) < log(2 / alpha) },

    and symmetrically ``U`` from ``K-``.  The minimum over splits is a min-plus
    convolution of the cells' log capitals on a grid of step ``step`` (each
    bin read at the least capital of the native grid points around it, so the
    discretised test never rejects more than the exact one); the rejection
    sets are kept across looks (``rejected``, a running intersection).

    Returns
    -------
    tuple
        ``(lower, upper, rejected)``: the limits and the rejection sets to pass to the next look.
    """
    total_pos = total_neg = None
    start = 0
    for (low_side, high_side), weight in zip(cells, weights):
        pos, k_pos = _resample(low_side, low_side.log_pos, weight, step)
        neg, k_neg = _resample(high_side, high_side.log_neg, weight, step)
        assert k_pos == k_neg
        total_pos = pos if total_pos is None else _min_plus(total_pos, pos)
        total_neg = neg if total_neg is None else _min_plus(total_neg, neg)
        start += k_pos
    assert total_pos is not None and total_neg is not None
    threshold = math.log(2.0 / alpha)
    now = (total_pos >= threshold, total_neg >= threshold)
    if rejected is not None and rejected[0].shape == now[0].shape:
        now = (now[0] | rejected[0], now[1] | rejected[1])
    sums = (start + np.arange(total_pos.size)) * step
    kept_low = np.flatnonzero(~now[0])
    kept_high = np.flatnonzero(~now[1])
    lower = float(sums[max(kept_low[0] - 1, 0)]) if kept_low.size else float(sums[-1])
    upper = float(sums[min(kept_high[-1] + 1, sums.size - 1)]) if kept_high.size else float(sums[0])
    return lower, upper, now
