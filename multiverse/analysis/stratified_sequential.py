"""A stratified sequential design: items allocated to cells per batch, repeated confidence intervals at every look.

The estimand is the weighted contrast over the item pool of a ``precision:``
block, ``theta = sum_c w_c mu_c`` (:mod:`multiverse.analysis.sequential`).
Here the cells are strata: before each batch the design fixes how many of
the batch's items every cell gets, and each cell's items are the next ones
of its random permutation of the pool (without replacement).  At every look
the estimate and its variance are the stratified ones (Cochran 1977, 5.3),

    theta_hat = sum_c w_c mean_c,   V = sum_c w_c^2 s_c^2 (1 / n_c - 1 / N),

with ``s_c^2`` each cell's item variance shrunk towards the declared
``prior_sd^2`` by two pseudo-observations, ``(SS_c + 2 prior_sd^2) / (n_c + 1)``
(``SS_c`` the sum of squared deviations of its ``n_c`` items), so that a cell
whose first items happened to agree (a rare breach not yet seen) is not taken
to have no variance (with one pseudo-observation the benchmark's uniform runs
covered 0.91).  Nested samples give the estimates at successive looks
the canonical joint distribution with information ``I = 1 / V``, so the
intervals are the repeated confidence intervals ``theta_hat -+ c_k sqrt(V)``
of :class:`~multiverse.analysis.group_sequential.SpendingBoundary`, valid at
every look of the run at once (a normal approximation: the benchmark checks
the coverage by simulation), with the information levels of earlier looks
re-read from the current variance estimates.  The run stops when the
half-width is reached, or when the information declared at the outset,
``information_margin (z_{1-alpha/2} / h)^2``, is reached (the whole miscoverage
is spent there; with the default margin 1.25 the last critical value, about
2.05-2.2, lies below ``z sqrt(1.25) = 2.19`` in nearly every run, so the target
is met by then): no look is made after that.  Looks before half the
maximum information do not consult the boundary (their interval stays
[-1, 1]): the target is out of reach there, and every consulted look raises
the last critical values a little.

Allocation (declared): ``uniform`` gives every cell the items its weight
says; ``neyman`` gives cell ``c`` the share ``a_c ∝ w_c s_c / sqrt(cost_c)``
(Neyman's allocation with costs; Cochran 1977, 5.5), with ``s_c`` from the
items drawn so far (shrunk as above; the declared ``prior_sd`` before any),
each batch's items going to the cells furthest below their shares.  Because
the allocation is decided before a batch from earlier batches only and
changes no weight, it changes what is spent, never what is estimated.

Verdicts that are undecided (missing judgments that could change them)
enter with their lowest and highest completions: the lower limit is the
lowest completions' lower limit, the upper the highest completions' upper
limit, each with its own boundary (each side holds with ``1 - alpha / 2``).
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Any, NamedTuple

import numpy as np
from scipy.stats import norm
from scipy.stats import t as student_t

from multiverse.analysis._batch_design import BatchDesign
from multiverse.analysis.group_sequential import SpendingBoundary
from multiverse.analysis.sample_size import shrunk_variance
from multiverse.config.precision import Precision

__all__ = ["StratifiedDesign"]

FIRST_LOOK = 0.5
"""Information fraction before which the boundary is not consulted (the interval stays [-1, 1])."""
D_LOW, D_HIGH = -1.0, 1.0
"""Bounds of one item's contrast ``d`` for the bounded rules."""


@dataclass(frozen=True)
class Pick:
    """One item of a batch: its cell and its index in the pool."""

    cell: str
    item: int


class _Moments(NamedTuple):
    """One stream's estimate of the contrast, its variance, each cell's shrunk item variance, and the variance's degrees of freedom."""

    estimate: float
    variance: float
    cell_variances: dict[str, float]
    degrees_of_freedom: float


@dataclass
class _Cell:
    weight: float
    order: np.ndarray
    cost: float
    low: list[float] = field(default_factory=list)
    high: list[float] = field(default_factory=list)

    @property
    def taken(self) -> int:
        return len(self.low)


class StratifiedDesign(BatchDesign):
    """Allocate each batch's items to the cells, absorb their contrasts, keep the repeated confidence intervals.

    Parameters as :class:`~multiverse.analysis._batch_design.BatchDesign`.
    """

    interval_kind = ("group-sequential repeated confidence interval "
                     "(O'Brien-Fleming-type spending; valid at every look of this run)")

    def __init__(self, precision: Precision, *, pool: int, seed: int = 0, costs: Mapping[str, float] | None = None):
        super().__init__(precision, pool=pool, seed=seed, costs=costs)
        z = NormalDist().inv_cdf(1 - precision.alpha / 2)
        self.max_information = precision.information_margin * (z / precision.target_half_width()) ** 2
        self.boundaries = [SpendingBoundary(precision.alpha, self.max_information)]
        """The lower limit's boundary, and the upper limit's once the two streams differ (a copy, until then shared)."""
        self.history: list[dict[str, int]] = []
        self.bounds = (D_LOW, D_HIGH)
        self.low_moments: _Moments | None = None

    new_cell = staticmethod(_Cell)

    @classmethod
    def for_experiment(cls, experiment: Any, plan: Any) -> StratifiedDesign:
        """The design an experiment's ``precision:`` block declares: its pool, seed and cells' call costs."""
        return cls(experiment.precision, **cls.experiment_inputs(experiment, plan))

    # --- allocation -------------------------------------------------------------------

    def allocation(self) -> dict[str, float]:
        """Cell -> share of the items the next batch aims at (over the cells whose pool is not exhausted)."""
        open_cells = {c: s for c, s in self.cells.items() if s.taken < self.pool}
        w = np.array([s.weight for s in open_cells.values()])
        if self.precision.allocation == "uniform":
            share = w
        else:
            prior = self.precision.prior_sd
            sd = np.array([math.sqrt(shrunk_variance(_mid(s), prior)) for s in open_cells.values()])
            share = w * sd / np.sqrt([s.cost for s in open_cells.values()])
        total = share.sum()
        return {c: float(p / total) for c, p in zip(open_cells, share)} if total > 0 else {}

    def next_batch(self) -> list[Pick]:
        """The next batch's items (empty when the run is done); call :meth:`observe` with their values next."""
        if self.pending:
            raise RuntimeError("next_batch: the previous batch has not been observed")
        if self.stop_reason() is not None:
            return []
        size = min(self.precision.batch, int(self.precision.max_items or 0) - self.drawn)
        self.allocation_at_batch = share = self.allocation()
        counts = self._counts(share, size)
        picks = []
        for cell, k in counts.items():
            s = self.cells[cell]
            picks += [Pick(cell, int(i)) for i in s.order[s.taken: s.taken + k]]
        self.pending = picks
        return picks

    def _counts(self, share: Mapping[str, float], size: int) -> dict[str, int]:
        """Items per cell for a batch of ``size``: towards ``share`` of the run's items after it, within the pool.

        Every cell gets at least one item in the first batch (its mean must
        exist); otherwise each item goes to the cell furthest below its
        share of the total (largest deficit first, ties in cell order).
        """
        counts = dict.fromkeys(share, 0)
        room = {c: self.pool - self.cells[c].taken for c in share}
        total = self.drawn
        if not self.drawn:
            for c in share:
                if size > sum(counts.values()) and room[c] > 0:
                    counts[c] += 1
        while sum(counts.values()) < size:
            after = total + sum(counts.values()) + 1
            deficit = {c: share[c] * after - (self.cells[c].taken + counts[c]) for c in share if counts[c] < room[c]}
            if not deficit:
                break
            cell = max(deficit, key=lambda c: deficit[c])
            counts[cell] += 1
        return {c: k for c, k in counts.items() if k}

    # --- observing ----------------------------------------------------------------------

    def observe(self, values: Mapping[tuple[str, int], tuple[float, float]]) -> dict[str, Any]:
        """Absorb the pending batch: ``(cell, item) -> (d_low, d_high)``; return the look's record."""
        for pick in self.pending:
            d_low, d_high = values[(pick.cell, pick.item)]
            if not (D_LOW <= d_low <= d_high <= D_HIGH):
                raise ValueError(f"observe: contrast bounds {d_low}, {d_high} of {pick} outside [-1, 1]")
            s = self.cells[pick.cell]
            s.low.append(float(d_low))
            s.high.append(float(d_high))
            self.drawn += 1
            self.calls += s.cost
        batch = self.pending
        self.pending = []
        self._update_bounds()
        return self._look(batch)

    def _moments(self, stream: str) -> _Moments:
        """The estimate, its variance and Welch-Satterthwaite degrees of freedom from one stream (``low`` or ``high`` completions).

        The degrees of freedom are those of the stratified variance (Cochran 1977, 5.4).
        """
        prior = self.precision.prior_sd
        est, variance, denominator, cell_variances = 0.0, 0.0, 0.0, {}
        for cell, s in self.cells.items():
            xs = getattr(s, stream)
            est += s.weight * float(np.mean(xs))
            cell_variances[cell] = shrunk_variance(xs, prior)
            a = s.weight**2 * cell_variances[cell] * max(1 / len(xs) - 1 / self.pool, 0.0)
            variance += a
            denominator += a * a / max(len(xs) - 1, 1)
        df = variance * variance / denominator if denominator > 0 else math.inf
        return _Moments(est, variance, cell_variances, df)

    def _information(self, moments: _Moments) -> list[float]:
        """The information at every look so far: each look's counts with the current cell variances.

        Re-read at every look, so it grows with the counts (the shrinkage
        keeps every cell's variance positive).
        """
        def variance(counts: Mapping[str, int]) -> float:
            return sum(s.weight**2 * moments.cell_variances[c] * max(1 / counts[c] - 1 / self.pool, 0.0)
                       for c, s in self.cells.items())

        return [1 / v if v > 0 else math.inf for v in (variance(h) for h in self.history)]

    def _update_bounds(self) -> None:
        """This look's limits: each side's estimate -+ its critical value times its standard error, intersected.

        Keeps the lower completions' moments (``None`` until every cell has
        an item) for the look's record.
        """
        if any(s.taken == 0 for s in self.cells.values()):
            return  # a cell with no item yet: no estimate of theta, no look for the boundary
        self.low_moments = low = self._moments("low")
        if self._fraction() < FIRST_LOOK:
            return  # too little information for the target to be in reach: the boundary is not consulted
        self.history.append({c: s.taken for c, s in self.cells.items()})
        split = any(lo != hi for s in self.cells.values() for lo, hi in zip(s.low, s.high))
        if split and len(self.boundaries) == 1:
            self.boundaries.append(copy.deepcopy(self.boundaries[0]))
        limits = []
        for side, moments in enumerate((low, self._moments("high"))):
            if moments.variance <= 0:  # every cell's pool drawn (prior_sd > 0 keeps each cell's variance positive)
                limits.append(moments.estimate)
                continue
            boundary = self.boundaries[min(side, len(self.boundaries) - 1)]
            if side < len(self.boundaries):
                boundary.next_value(self._information(moments))
            c = t_critical(boundary.values[-1], moments.degrees_of_freedom)
            half = c * math.sqrt(moments.variance)
            limits.append(moments.estimate - half if side == 0 else moments.estimate + half)
        low_limit, high_limit = max(self.bounds[0], limits[0]), min(self.bounds[1], limits[1])
        self.bounds = (min(low_limit, high_limit), max(low_limit, high_limit))

    def _look(self, batch: Sequence[Pick]) -> dict[str, Any]:
        """Record the look :meth:`_update_bounds` just made.

        ``critical_value`` is the lower limit's normal boundary value ``c_k``
        at the last look that consulted it (``None`` before any), before
        :func:`t_critical` carries it to Student's t with
        ``degrees_of_freedom`` (the lower completions' now, ``None`` before
        the first consulted look) to give the interval's multiplier.
        """
        boundary, low = self.boundaries[0], self.low_moments
        return self.look(
            batch,
            critical_value=round(boundary.values[-1], 6) if boundary.values else None,
            degrees_of_freedom=round(low.degrees_of_freedom, 3) if self.history and low is not None else None,
            information_fraction=round(self._fraction(), 6),
        )

    def _fraction(self) -> float:
        """The lower completions' information now over the declared maximum (0 while a cell has no item)."""
        if self.low_moments is None:
            return 0.0
        var = self.low_moments.variance
        return math.inf if var <= 0 else 1 / var / self.max_information

    # --- state ------------------------------------------------------------------------

    def estimate(self) -> float:
        """The stratified estimate ``sum_c w_c mean_c(d)`` over cells drawn so far (midpoints of undecided)."""
        drawn = [s for s in self.cells.values() if s.taken]
        if not drawn:
            return float("nan")
        total = sum(s.weight for s in drawn)
        return float(sum(s.weight * np.mean(_mid(s)) for s in drawn) / total)

    def interval(self) -> tuple[float, float]:
        return self.bounds

    def stop_reason(self) -> str | None:
        """``target``, ``information`` (the declared maximum reached), ``budget``, ``pool`` or ``None``."""
        lower, upper = self.bounds
        if self.drawn > 0 and (upper - lower) / 2 <= self.precision.target_half_width():
            return "target"
        if any(b.done for b in self.boundaries):
            return "information"
        if self.drawn >= int(self.precision.max_items or 0):
            return "budget"
        if all(s.taken >= self.pool for s in self.cells.values()):
            return "pool"
        return None

    def record_extra(self) -> dict[str, Any]:
        return {"max_information": round(self.max_information, 6)}


def t_critical(c: float, df: float) -> float:
    """The normal critical value ``c`` carried to Student's t with ``df`` degrees of freedom at the same tail area.

    Keeps each look's nominal level when the variance is estimated
    (Jennison and Turnbull 2000, section 3.8): the OBF-type boundary's early
    critical values lie far in the tails, where a t with few degrees of
    freedom is much heavier than the normal.
    """
    if not math.isfinite(c) or not math.isfinite(df):
        return c
    return float(student_t.isf(norm.sf(c), df))


def _mid(s: _Cell) -> list[float]:
    return [(lo + hi) / 2 for lo, hi in zip(s.low, s.high)]
