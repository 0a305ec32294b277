"""Paired comparisons on common support: systems compared on the same conversations, by item.

Two systems' rates are compared only where both have a value to compare: the
same role, user simulator, condition, replicate and item, under the same
specification (the conversation cells of a paired design).  A cell where one
system's conversation is unused (nothing to rule on, or undecided with no
estimate) drops the pair, and is counted; the difference is then the mean of
paired differences over the common cells, so both rates share one denominator,
and identical systems tie exactly.  Standard errors cluster by item (the
reruns of an item, and both systems' conversations of it, move together).
"""

from __future__ import annotations

from collections.abc import Sequence

import xarray as xr

__all__ = ["PairTotals", "common_support", "pair_totals"]


def common_support(scores: xr.DataArray, *, other: str = "system_b") -> tuple[xr.DataArray, xr.DataArray]:
    """Every ordered pair of systems' values where both are present: ``(a, b)`` over ``system``, ``other``."""
    a = scores.drop_vars([c for c in scores.coords if c not in scores.dims])
    b = a.rename(system=other)
    both = a.notnull() & b.notnull()
    return a.where(both), b.where(both)


class PairTotals:
    """Per-item sums of two systems' values over their common cells (``reduce`` summed inside items).

    Attributes ``sum_a``, ``sum_b``, ``count`` (common cells) and
    ``dropped`` (cells where exactly one of the two has a value), each over
    (``system``, ``system_b``, spec..., ``cluster``).
    """

    def __init__(self, scores: xr.DataArray, *, cluster: str, within: Sequence[str], other: str = "system_b") -> None:
        a, b = common_support(scores, other=other)
        raw_a = scores.drop_vars([c for c in scores.coords if c not in scores.dims])
        raw_b = raw_a.rename(system=other)
        dims = [d for d in within if d in a.dims]
        self.sum_a = a.fillna(0.0).sum(dims)
        self.sum_b = b.fillna(0.0).sum(dims)
        self.count = a.notnull().sum(dims).astype(float)
        self.dropped = (raw_a.notnull() ^ raw_b.notnull()).sum(dims)
        self.cluster = cluster


def pair_totals(scores: xr.DataArray, *, cluster: str = "item", rerun: str = "replicate") -> PairTotals:
    """:class:`PairTotals` with the reruns summed inside each item."""
    return PairTotals(scores, cluster=cluster, within=[rerun])
