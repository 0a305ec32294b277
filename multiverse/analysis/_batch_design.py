"""What the two sequential designs share: the cells' seeded draw orders, what they read from an
experiment, the items drawn and the stopping record's common fields.

:class:`~multiverse.analysis.sequential.SequentialDesign` (the betting
sequence) and :class:`~multiverse.analysis.stratified_sequential.StratifiedDesign`
(the group-sequential interval) differ in how they allocate, observe and bound;
they read an experiment, order each cell's pool and record a run alike.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from multiverse.analysis.sample_size import cell_costs
from multiverse.config.precision import Precision


class BatchDesign:
    """Each cell's state (made by :meth:`new_cell`) with a seeded order of its pool's items, and the run's tallies.

    Parameters
    ----------
    precision
        The declared target (:class:`~multiverse.config.precision.Precision`).
    pool
        Item slots per cell (``N``).
    seed
        Seeds the item permutations (a rerun draws the same items).
    costs
        Calls one item pair costs in each cell (default 1 each).
    """

    interval_kind = ""
    """How the stopping record names the run's interval."""

    def __init__(self, precision: Precision, *, pool: int, seed: int = 0, costs: Mapping[str, float] | None = None):
        self.precision = precision
        self.pool = pool
        rng = np.random.default_rng([seed, 37])
        self.cells = {
            cell: self.new_cell(weight=w, order=rng.permutation(pool), cost=float((costs or {}).get(cell, 1.0)))
            for cell, w in precision.weights.items()
        }
        self.looks: list[dict[str, Any]] = []
        self.pending: list[Any] = []
        self.allocation_at_batch: dict[str, float] = {}
        self.drawn = 0
        self.calls = 0.0

    @staticmethod
    def new_cell(*, weight: float, order: np.ndarray, cost: float) -> Any:
        """A cell's state: its weight in the estimand, its draw order and the calls one item pair costs."""
        raise NotImplementedError

    @staticmethod
    def experiment_inputs(experiment: Any, plan: Any) -> dict[str, Any]:
        """What an experiment's ``precision:`` block gives a design: its pool, seed and the cells' call costs."""
        assert experiment.precision is not None
        return {"pool": experiment.items_per_cell, "seed": experiment.seed,
                "costs": cell_costs(plan, experiment.precision)}

    def interval(self) -> tuple[float, float]:
        """The run's interval for the contrast after the last look."""
        raise NotImplementedError

    def stop_reason(self) -> str | None:
        """Why the run stops, or ``None`` while it goes on."""
        raise NotImplementedError

    def estimate(self) -> float:
        """The point estimate of the contrast after the last look."""
        raise NotImplementedError

    def look(self, batch: Sequence[Any], **extra: Any) -> dict[str, Any]:
        """Record a look after ``batch`` (items with a ``cell``): the interval, the estimate, ``extra``, the allocation."""
        lower, upper = self.interval()
        record = {
            "look": len(self.looks) + 1,
            "draws": self.drawn,
            "estimated_calls": round(self.calls, 3),
            "interval": [round(lower, 6), round(upper, 6)],
            "half_width": round((upper - lower) / 2, 6),
            "estimate": round(self.estimate(), 6),
            **extra,
            "allocation": {c: round(p, 6) for c, p in self.allocation_at_batch.items()},
            "batch": {c: sum(1 for item in batch if item.cell == c) for c in self.cells},
            "items": {c: s.taken for c, s in self.cells.items()},
        }
        self.looks.append(record)
        return record

    def drawn_items(self) -> dict[str, list[int]]:
        """Cell -> the items drawn so far, in draw order."""
        return {c: [int(i) for i in s.order[: s.taken]] for c, s in self.cells.items()}

    def record_extra(self) -> dict[str, Any]:
        """Fields of the stopping record particular to the design (before the looks)."""
        return {}

    def record(self) -> dict[str, Any]:
        """The stopping record: the target, every look and why the run stopped (for ``run.json``)."""
        lower, upper = self.interval()
        return {
            "precision": self.precision.to_dict(),
            "target_half_width": round(self.precision.target_half_width(), 6),
            "pool": self.pool,
            "stopped": self.stop_reason() or "interrupted",
            "draws": self.drawn,
            "interval": [round(lower, 6), round(upper, 6)],
            "interval_kind": self.interval_kind,
            **self.record_extra(),
            "looks": list(self.looks),
        }
