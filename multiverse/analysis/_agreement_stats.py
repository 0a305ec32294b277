"""Additive sufficient statistics of rater agreement, accumulated over units in chunks.

Every agreement metric is a function of sums over units: the contingency table
of a rater pair, the coincidence matrix of a rater set (Krippendorff's alpha),
or the category totals and squared counts of units every rater rated (Fleiss'
kappa).  Point estimates need only those sums pooled over all units (memory
O(raters^2 x k^2)); the cluster bootstrap (and its jackknife) needs them per
cluster (item), built here for a block of clusters at a time and folded into
the draws at once, so no array ever spans every cluster.

Written here rather than called from ``krippendorff`` / ``statsmodels``
because those take one pair (or one rater set) at a time with no weights; the
tests pin every metric to them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np

__all__ = [
    "KINDS",
    "UNITS_PER_CHUNK",
    "accumulate",
    "bootstrap_sums",
    "cluster_blocks",
    "stat_shape",
]

KINDS = ("pairs", "coincidence", "fleiss")
UNITS_PER_CHUNK = 1 << 19
"""Units read per pass; bounds the temporary index arrays (about 4 MB each)."""
CELLS_PER_BLOCK = 1 << 22
"""Entries of one block of per-cluster statistics in the bootstrap and the jackknife."""


def stat_shape(kind: str, *, n_raters: int, k: int) -> tuple[int, ...]:
    """Shape of one unit group's statistic of ``kind``."""
    if kind == "pairs":
        return (n_raters, n_raters, k, k)
    if kind == "coincidence":
        return (k, k)
    if kind == "fleiss":
        return (2 + k,)
    raise ValueError(f"statistic {kind!r}: expected one of {KINDS}")


def _pairs(ratings: np.ndarray, cell: np.ndarray, n_cells: int, k: int) -> np.ndarray:
    """Contingency tables ``(cell, rater, rater_b, k, k)`` over units both raters rated."""
    n_raters = ratings.shape[1]
    out = np.zeros((n_cells, n_raters, n_raters, k, k), dtype=np.int64)
    base = cell * (k * k)
    for a in range(n_raters):
        for b in range(a, n_raters):
            both = (ratings[:, a] >= 0) & (ratings[:, b] >= 0)
            index = base[both] + ratings[both, a].astype(np.int64) * k + ratings[both, b]
            table = np.bincount(index, minlength=n_cells * k * k).reshape(n_cells, k, k)
            out[:, a, b] += table
            if b != a:
                out[:, b, a] += np.swapaxes(table, -2, -1)
    return out


def _category_counts(ratings: np.ndarray, k: int) -> np.ndarray:
    """``(unit, k)`` number of raters who put each unit in each category."""
    return np.stack([(ratings == c).sum(axis=1, dtype=np.int64) for c in range(k)], axis=1)


def _coincidence(ratings: np.ndarray, cell: np.ndarray, n_cells: int, k: int) -> np.ndarray:
    """Krippendorff's coincidence matrices ``(cell, k, k)`` (units with >= 2 ratings)."""
    counts = _category_counts(ratings, k)
    m = counts.sum(axis=1)
    weight = np.where(m >= 2, 1.0 / np.maximum(m - 1, 1), 0.0)
    out = np.empty((n_cells, k, k))
    for c in range(k):
        for d in range(k):
            pairs = counts[:, c] * (counts[:, d] - (c == d))
            out[:, c, d] = np.bincount(cell, weights=weight * pairs, minlength=n_cells)
    return out


def _fleiss(ratings: np.ndarray, cell: np.ndarray, n_cells: int, k: int) -> np.ndarray:
    """``(cell, 2 + k)``: units every rater rated, their sum of squared counts, category totals."""
    counts = _category_counts(ratings, k)
    complete = (counts.sum(axis=1) == ratings.shape[1]).astype(float)
    out = np.empty((n_cells, 2 + k))
    out[:, 0] = np.bincount(cell, weights=complete, minlength=n_cells)
    out[:, 1] = np.bincount(cell, weights=complete * (counts**2).sum(axis=1), minlength=n_cells)
    for c in range(k):
        out[:, 2 + c] = np.bincount(cell, weights=complete * counts[:, c], minlength=n_cells)
    return out


_KERNELS: dict[str, Callable[[np.ndarray, np.ndarray, int, int], np.ndarray]] = {
    "pairs": _pairs,
    "coincidence": _coincidence,
    "fleiss": _fleiss,
}


def accumulate(kind: str, ratings: np.ndarray, group: np.ndarray, *, n_groups: int, k: int) -> np.ndarray:
    """Statistic ``kind`` pooled over all units, per group: ``(group, *stat_shape)``.

    Parameters
    ----------
    kind
        ``"pairs"``, ``"coincidence"`` or ``"fleiss"``.
    ratings
        int ``(unit, rater)``: categories ``0..k-1``, negative = not rated.
    group
        int ``(unit,)``: each unit's group (all zeros without one).
    n_groups, k
        Number of groups and of categories.
    """
    kernel = _KERNELS[kind]
    out = np.zeros((n_groups, *stat_shape(kind, n_raters=ratings.shape[1], k=k)))
    for start in range(0, len(ratings), UNITS_PER_CHUNK):
        stop = start + UNITS_PER_CHUNK
        out += kernel(ratings[start:stop], np.asarray(group[start:stop], dtype=np.int64), n_groups, k)
    return out


def cluster_blocks(
    kind: str, ratings: np.ndarray, group: np.ndarray, cluster: np.ndarray, *, n_clusters: int, n_groups: int, k: int,
) -> Iterator[tuple[int, np.ndarray]]:
    """Per-cluster statistics a block of clusters at a time: ``(first cluster, (size, group, *stat_shape))``.

    Units are sorted by cluster once, so memory stays at one block of
    clusters whatever their number.
    """
    kernel = _KERNELS[kind]
    shape = stat_shape(kind, n_raters=ratings.shape[1], k=k)
    block = max(1, CELLS_PER_BLOCK // (n_groups * int(np.prod(shape))))
    order = np.argsort(cluster, kind="stable")
    starts = np.searchsorted(cluster[order], np.arange(0, n_clusters + block, block))
    for index, first in enumerate(range(0, n_clusters, block)):
        units = order[starts[index]:starts[index + 1]]
        size = min(block, n_clusters - first)
        cell = (cluster[units] - first) * n_groups + group[units]
        yield first, kernel(ratings[units], cell, size * n_groups, k).reshape((size, n_groups) + shape)


def bootstrap_sums(
    kind: str,
    ratings: np.ndarray,
    group: np.ndarray,
    cluster: np.ndarray,
    weights: np.ndarray,
    *,
    n_groups: int,
    k: int,
) -> np.ndarray:
    """The statistic summed over resampled clusters: ``(draw, group, *stat_shape)``.

    ``weights`` (``(draw, cluster)`` resampling counts) weight each cluster's
    statistic, folded in a block of clusters at a time (:func:`cluster_blocks`).
    """
    n_boot, n_clusters = weights.shape
    shape = stat_shape(kind, n_raters=ratings.shape[1], k=k)
    out = np.zeros((n_boot, n_groups * int(np.prod(shape))))
    for first, stats in cluster_blocks(kind, ratings, group, cluster, n_clusters=n_clusters, n_groups=n_groups, k=k):
        out += weights[:, first:first + len(stats)] @ stats.reshape(len(stats), -1)
    return out.reshape(n_boot, n_groups, *shape)
