"""A sequential design: which items to draw next, and the confidence sequence after every look.

The estimand of a ``precision:`` block is the weighted contrast over a finite
item pool, ``theta = sum_c w_c mu_c`` with ``mu_c`` the mean over the pool's
``N`` items of cell ``c`` of ``d = value(a) - value(b)`` (the two systems'
conversation values on the same item, averaged over replicates).  Draws are
made one at a time (a batch is a run of draws whose allocation was fixed
before the batch): draw ``t`` picks cell ``c`` with probability ``pi_c``
(fixed before the batch, from earlier draws only) and the next item of that
cell's random permutation of the pool (without replacement).  Its observation

    Y_t = offset_t + (w_c / pi_c) (S_c + (N - n_c) d_t) / N

(``n_c`` items of ``c`` drawn before, with sum ``S_c``; ``offset_t`` the exact
part ``sum_e w_e S_e / N`` of cells whose pool is exhausted) has conditional
mean exactly ``theta`` whatever the cells' means: ``(S_c + (N - n_c) d_t) / N``
has conditional mean ``mu_c`` under sampling without replacement
(Waudby-Smith and Ramdas 2023, section 6), and the importance weight
``w_c / pi_c`` turns the random cell into the weighted sum.  Its bounds are
known before the draw, so :class:`~multiverse.analysis.confseq.BettingCS`
gives a confidence sequence for ``theta`` valid at every draw, hence at every
look and at the data-dependent stop.

Allocation (declared in the block): ``uniform`` draws cells with the
weights (``pi_c = w_c``); ``neyman`` draws them with
``pi_c ∝ w_c sqrt(E[d^2 | c] / cost_c)``, the allocation minimising the
variance of ``Y`` per call for an importance-weighted mean (Neyman's rule with
the second moment in place of the variance, since the cell is random), with
``E[d^2 | c]`` estimated from the cell's earlier draws and shrunk to the prior
``prior_sd^2`` by one pseudo-observation, mixed with the weights by ``floor``
so that every cell keeps probability ``>= floor w_c`` (which bounds ``Y``).
Verdicts that are undecided (missing judgments that could change them) enter
with their lowest and highest completions
(:class:`~multiverse.analysis.confseq.BoundedStreams`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from multiverse.analysis._batch_design import BatchDesign
from multiverse.analysis.confseq import BoundedStreams
from multiverse.analysis.sample_size import shrunk_variance
from multiverse.analysis.stratified_sequential import StratifiedDesign
from multiverse.config.precision import Precision

__all__ = ["Draw", "SequentialDesign", "fixed_interval", "looks_table", "make_design", "stopping_record"]

D_LOW, D_HIGH = -1.0, 1.0
"""Bounds of one item's contrast ``d`` for the bounded rules."""


@dataclass(frozen=True)
class Draw:
    """One drawn item: its cell, its index in the pool and the probability its cell was drawn with."""

    cell: str
    item: int
    probability: float


@dataclass
class _Cell:
    weight: float
    order: np.ndarray
    cost: float
    taken: int = 0
    sum_low: float = 0.0
    sum_high: float = 0.0
    sum_sq: float = 0.0
    values: list[float] = field(default_factory=list)


class SequentialDesign(BatchDesign):
    """Draw items in batches, absorb their contrasts and keep the confidence sequence.

    Parameters
    ----------
    precision, pool, seed, costs
        As :class:`~multiverse.analysis._batch_design.BatchDesign`; ``seed``
        also seeds the cell draws (a rerun draws the same items).
    target_n
        Tune the sequence's bets for this many draws (e.g. the count
        :func:`~multiverse.analysis.sample_size.plan_items` predicts); ``None``
        tunes for no particular time.  Coverage holds either way.
    grid
        Candidate values of the contrast in the sequence.
    """

    interval_kind = "betting confidence sequence (valid at every look)"

    def __init__(
        self, precision: Precision, *, pool: int, seed: int = 0, costs: Mapping[str, float] | None = None,
        target_n: int | None = None, grid: int = 2001,
    ):
        super().__init__(precision, pool=pool, seed=seed, costs=costs)
        self._rng = np.random.default_rng([seed, 37, 1])
        self.cs = BoundedStreams(D_LOW, D_HIGH, alpha=precision.alpha, grid=grid, target_n=target_n)

    new_cell = staticmethod(_Cell)

    @classmethod
    def for_experiment(cls, experiment: Any, plan: Any, *, target_n: int | None = None) -> SequentialDesign:
        """The design an experiment's ``precision:`` block declares: its pool, seed and cells' call costs."""
        return cls(experiment.precision, **cls.experiment_inputs(experiment, plan), target_n=target_n)

    # --- allocation -------------------------------------------------------------------

    def allocation(self) -> dict[str, float]:
        """Cell -> probability of the next draws (cells whose pool is exhausted get 0)."""
        open_cells = {c: s for c, s in self.cells.items() if s.taken + self._pending(c) < self.pool}
        if not open_cells:
            return {}
        w = np.array([s.weight for s in open_cells.values()])
        if self.precision.allocation == "uniform":
            share = w / w.sum()
        else:
            prior = self.precision.prior_sd ** 2
            second = np.array([(prior + s.sum_sq) / (1 + len(s.values)) for s in open_cells.values()])
            cost = np.array([s.cost for s in open_cells.values()])
            neyman = w * np.sqrt(second / cost)
            neyman = neyman / neyman.sum() if neyman.sum() > 0 else w / w.sum()
            floor = self.precision.floor
            share = (1 - floor) * neyman + floor * w / w.sum()
        return dict(zip(open_cells, share.tolist()))

    def _pending(self, cell: str) -> int:
        return sum(1 for d in self.pending if d.cell == cell)

    def next_batch(self) -> list[Draw]:
        """The next batch's draws (empty when the run is done); call :meth:`observe` with their values next."""
        if self.pending:
            raise RuntimeError("next_batch: the previous batch has not been observed")
        if self.stop_reason() is not None:
            return []
        size = min(self.precision.batch, int(self.precision.max_items or 0) - self.drawn)
        draws: list[Draw] = []
        self.allocation_at_batch = share = self.allocation()
        for _ in range(size):
            share = {c: p for c, p in share.items() if self.cells[c].taken + self._pending(c) < self.pool}
            if not share:
                break
            total = sum(share.values())
            names = list(share)
            cell = names[int(self._rng.choice(len(names), p=np.array([share[c] for c in names]) / total))]
            state = self.cells[cell]
            draw = Draw(cell, int(state.order[state.taken + self._pending(cell)]), share[cell] / total)
            self.pending.append(draw)
            draws.append(draw)
        return draws

    # --- observing ----------------------------------------------------------------------

    def observe(self, values: Mapping[tuple[str, int], tuple[float, float]]) -> dict[str, Any]:
        """Absorb the pending batch: ``(cell, item) -> (d_low, d_high)``; return the look's record.

        ``d_low == d_high`` for a decided contrast; an undecided one enters
        with its lowest and highest completion.
        """
        for draw in self.pending:
            d_low, d_high = values[(draw.cell, draw.item)]
            if not (D_LOW <= d_low <= d_high <= D_HIGH):
                raise ValueError(f"observe: contrast bounds {d_low}, {d_high} of {draw} outside [-1, 1]")
            y_low, low, high = self.observation(draw, d_low, stream=0)
            y_high, low_2, high_2 = self.observation(draw, d_high, stream=1)
            low, high = min(low, low_2), max(high, high_2)
            if high - low < 1e-12:  # the contrast is known exactly: nothing left to bet on
                high = low + 1e-9
            self.cs.update(y_low, y_high, low=low, high=high)
            s = self.cells[draw.cell]
            s.taken += 1
            s.sum_low += d_low
            s.sum_high += d_high
            mid = (d_low + d_high) / 2
            s.sum_sq += mid * mid
            s.values.append(mid)
            self.drawn += 1
            self.calls += s.cost
        batch = self.pending
        self.pending = []
        return self.look(batch)

    def observation(self, draw: Draw, d: float, *, stream: int = 0) -> tuple[float, float, float]:
        """``(Y, low, high)``: the draw's observation of the contrast and its bounds known before the draw.

        ``stream`` 0 (1) reads the cells' sums of lowest (highest) completions.
        """
        n = self.pool

        def total(s: _Cell) -> float:
            return s.sum_low if stream == 0 else s.sum_high

        offset = sum(s.weight * total(s) / n for s in self.cells.values() if s.taken >= n)
        ends = []
        for cell, p in self._open_share(draw).items():
            s = self.cells[cell]
            ends += [s.weight / p * (total(s) + (n - s.taken) * e) / n + offset for e in (D_LOW, D_HIGH)]
        s = self.cells[draw.cell]
        return s.weight / draw.probability * (total(s) + (n - s.taken) * d) / n + offset, min(ends), max(ends)

    def _open_share(self, draw: Draw) -> dict[str, float]:
        """The probabilities the batch drew ``draw``'s cell with, over the cells still open at that draw.

        Within a batch every draw used the batch's allocation renormalised over
        the cells still open; the draw's own probability is stored with it,
        and its bounds must cover every cell it could have drawn.
        """
        share = self.allocation_at_batch
        open_cells = {c: p for c, p in share.items() if self.cells[c].taken < self.pool}
        total = sum(open_cells.values())
        return {c: p / total for c, p in open_cells.items()}

    # --- state ------------------------------------------------------------------------

    def estimate(self) -> float:
        """The stratified point estimate ``sum_c w_c mean_c(d)`` over cells drawn so far (midpoints of undecided)."""
        drawn = [s for s in self.cells.values() if s.values]
        if not drawn:
            return float("nan")
        total = sum(s.weight for s in drawn)
        return float(sum(s.weight * np.mean(s.values) for s in drawn) / total)

    def interval(self) -> tuple[float, float]:
        return self.cs.interval()

    def stop_reason(self) -> str | None:
        """``target`` (half-width reached), ``budget`` (``max_items`` drawn), ``pool`` (every item drawn) or ``None``."""
        if self.drawn > 0:
            lower, upper = self.cs.interval()
            if (upper - lower) / 2 <= self.precision.target_half_width():
                return "target"
        if self.drawn >= int(self.precision.max_items or 0):
            return "budget"
        if all(s.taken >= self.pool for s in self.cells.values()):
            return "pool"
        return None


def make_design(experiment: Any, plan: Any, *, target_n: int | None = None) -> Any:
    """The design the ``precision:`` block's ``interval:`` declares, for a sequential run.

    ``betting``: :class:`SequentialDesign` (bets tuned for ``target_n``
    draws); ``group_sequential``:
    :class:`~multiverse.analysis.stratified_sequential.StratifiedDesign`.
    """
    if experiment.precision.interval == "group_sequential":
        return StratifiedDesign.for_experiment(experiment, plan)
    return SequentialDesign.for_experiment(experiment, plan, target_n=target_n)


def fixed_interval(values: Mapping[str, Sequence[float]], weights: Mapping[str, float], *, z: float,
                   pool: int | None = None, prior_sd: float | None = None) -> tuple[float, float]:
    """The fixed-design interval of the stratified contrast: ``sum w_c mean_c -+ z sqrt(sum w_c^2 s_c^2 / n_c)``.

    Valid only for a sample size fixed in advance; read at every look of a
    sequential run it under-covers (the benchmark shows by how much).  With
    ``pool``, the finite-population correction ``1 - n_c / N`` applies.  With
    ``prior_sd``, each cell's variance is shrunk towards ``prior_sd^2`` as
    ``plan`` and the group-sequential design shrink it
    (:func:`~multiverse.analysis.sample_size.shrunk_variance`): a
    cell of rare outcomes whose items all agreed has no zero variance.
    """

    est, var = 0.0, 0.0
    total = sum(weights[c] for c in values if len(values[c]))
    for cell, xs in values.items():
        if not len(xs):
            continue
        w = weights[cell] / total
        arr = np.asarray(xs, dtype=float)
        est += w * arr.mean()
        if prior_sd is not None:
            s2 = shrunk_variance(arr, prior_sd)
        else:
            s2 = arr.var(ddof=1) if arr.size > 1 else 0.25
        fpc = 1 - arr.size / pool if pool else 1.0
        var += w * w * s2 / arr.size * fpc
    half = z * float(np.sqrt(var))
    return est - half, est + half


def stopping_record(cube: xr.Dataset) -> dict[str, Any] | None:
    """A sequential run's stopping record from its cube's ``run`` attr (``None`` for any other cube)."""
    info = cube.attrs.get("run")
    if isinstance(info, str):
        try:
            info = json.loads(info)
        except ValueError:
            return None
    return info.get("sequential") if isinstance(info, Mapping) else None


def looks_table(record: Mapping[str, Any]) -> pd.DataFrame:
    """One row per look: draws, estimated calls, the confidence sequence's interval, and each cell's items."""
    rows = []
    for look in record["looks"]:
        row = {"look": look["look"], "item_pairs": look["draws"], "estimated_calls": look.get("estimated_calls"),
               "estimate": look["estimate"], "lower": look["interval"][0], "upper": look["interval"][1],
               "half_width": look["half_width"]}
        row.update({f"items {cell}": n for cell, n in look["items"].items()})
        rows.append(row)
    return pd.DataFrame(rows)
