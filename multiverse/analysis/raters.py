"""Agreement between raters (judges, humans, deterministic rewards, the planted truth).

Every pair of raters is compared on the units both rated: one unit is one judged
cell (conversation x turn x principle, and every other dim except the rater dim).
The pairwise metrics are functions of the pair's contingency table; the
multi-rater metrics (``raters=[...]``) of the rater set's coincidence matrix
(Krippendorff's alpha) or category totals (Fleiss' kappa).  Point estimates pool
those tables over units without per-conversation arrays; intervals resample
items (every judged cell of an item, all its conversations and reruns,
moves together), building per-item tables a block at a time
(:mod:`multiverse.analysis._agreement_stats`).

Severity (0/1/2) is ordinal, so by default it is compared as such: Krippendorff's
alpha with the ordinal metric, Cohen's kappa with quadratic weights (Cohen 1968);
so are likert ratings.  Binary standards and nominal label sets (``binary`` and
``pairwise`` scales, or a cube whose ``attrs["label_kind"]`` is ``"nominal"``)
are compared as nominal.  Percent agreement, Scott's pi and
Fleiss' kappa are nominal whatever the scale.

The metrics are computed from additive tables by the kernels of
:mod:`multiverse.analysis._agreement_metrics` (every pair, group and bootstrap
draw at once, which ``krippendorff`` / ``statsmodels`` do not offer); the tests
pin every metric to those packages to 1e-9.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import xarray as xr

from multiverse import __version__
from multiverse.analysis._agreement_metrics import (
    METRICS,
    MULTI_RATER_METRICS,
    SCALES,
    metric_from_tables,
    multi_rater_metric,
    pair_tables,
)
from multiverse.analysis._agreement_stats import UNITS_PER_CHUNK, accumulate, bootstrap_sums, cluster_blocks
from multiverse.analysis._bootstrap import cluster_weights, jackknife_se, studentized_interval, with_interval
from multiverse.core import schema as S
from multiverse.cube.build import with_truth_judge
from multiverse.cube.scales import LabelCodes, common_scale, label_codes
from multiverse.scoring import check_severity, list_standards, standard_codes

__all__ = ["METRICS", "MULTI_RATER_METRICS", "agreement", "agreement_ci", "default_level", "labels_of",
           "metric_from_tables", "multi_rater_metric", "pair_table_draws", "pair_tables", "ratings"]

# --- xarray layer: the cube -> ratings ---------------------------------------------------------------


def ratings(
    cube: xr.Dataset, *, standard: str | None = None, dim: str = "judge", include_truth: bool = False
) -> xr.DataArray:
    """Each rater's category for every unit: its label's category or a standard's 1/0; -1 unrated.

    Returns a DataArray with the rater dim ``dim`` last.  Without ``standard``
    the categories are the raters' labels on their common scale
    (:func:`multiverse.cube.scales.label_codes`: severity 0/1/2, the codes of
    ``binary`` and ``pairwise`` labels, ``likert`` ratings as indices from the
    range's low end).  With ``include_truth`` the cube's planted ``truth``
    joins the judges as the rater ``"truth"`` (through
    :func:`multiverse.cube.with_truth_judge`).  Every agreement analysis reads
    the cube through here.

    Raises
    ------
    ValueError
        When ``severity`` (or the joined ``truth``) is not int8 codes in -2..2
        (:func:`multiverse.scoring.check_severity`): a NaN left by ``where`` is
        never read as a rating; when the raters label on different scales; or
        when a standard is asked of ``pairwise`` or ``likert`` labels.
    """
    return labels_of(cube, standard=standard, dim=dim, include_truth=include_truth).values


def labels_of(
    cube: xr.Dataset, *, standard: str | None = None, dim: str = "judge", include_truth: bool = False,
    raters: Sequence[str] | None = None,
) -> LabelCodes:
    """:func:`ratings` with the category names, the scale and its level (of ``raters`` when given)."""
    if dim not in cube["severity"].dims:
        raise ValueError(f"agreement: dim {dim!r} is not a dim of the cube's severity {cube['severity'].dims}")
    check_severity(cube["severity"])
    if include_truth:
        if "truth" not in cube:
            raise ValueError("agreement: include_truth=True but the cube has no 'truth' variable")
        if dim != "judge":
            raise ValueError("agreement: the truth can join only the judge dim as a rater")
        check_severity(cube["truth"], name="truth")
        cube = with_truth_judge(cube[[v for v in ("severity", "truth", "rating") if v in cube]])
    if standard is None:
        return label_codes(cube, dim=dim)
    scale = common_scale(cube, raters if dim == "judge" else None)
    if scale in ("pairwise", "likert"):
        raise ValueError(f"agreement: standard={standard!r} reads severities, but the raters label on the {scale} "
                         "scale; compare their categories (standard=None)")
    if standard not in list_standards():
        raise ValueError(f"agreement: unknown standard {standard!r}; registered: {', '.join(list_standards())}")
    severity = cube["severity"].reset_coords(drop=True)
    codes = standard_codes(severity, standard)
    values = codes.where(codes >= 0, -1).astype(np.int8)
    others = [d for d in values.dims if d != dim]
    # a lazy cube's codes are computed chunk by chunk, then held: one int8 per unit and rater
    return LabelCodes(values.transpose(*others, dim).compute(), ("clean", "violated"), "binary", "nominal")


def _unit_index(values: xr.DataArray, dim: str, by: str | None, *, cluster: str | None
                ) -> tuple[np.ndarray, int, np.ndarray, int]:
    """Cluster (``cluster``'s index; each conversation's without that dim) and group index of every unit.

    Units are flattened in C order; without ``cluster`` there are no clusters.
    """
    unit_dims = [d for d in values.dims if d != dim]
    shape = [values.sizes[d] for d in unit_dims]
    grids = dict(zip(unit_dims, np.indices(shape, sparse=True), strict=True))
    index, n_clusters = np.zeros(0, dtype=np.int64), 1
    if cluster is not None:
        index = np.zeros(shape, dtype=np.int64)
        for d in [cluster] if cluster in unit_dims else [d for d in S.CONVERSATION_DIMS if d in unit_dims]:
            index = index * values.sizes[d] + grids[d]
            n_clusters *= values.sizes[d]
        index = np.broadcast_to(index, shape).ravel()
    if by is None:
        return index, n_clusters, np.zeros(int(np.prod(shape)), dtype=np.int64), 1
    group = np.ascontiguousarray(np.broadcast_to(grids[by], shape)).ravel().astype(np.int64)
    return index, n_clusters, group, values.sizes[by]


def default_level(cube: xr.Dataset, labels: LabelCodes, standard: str | None) -> str:
    """The level of measurement the labels default to.

    A standard's violated / clean codes and labels marked nominal
    (``attrs["label_kind"] == "nominal"``, e.g. codes of one's own read by
    :func:`multiverse.adapters.long_table`) are nominal; otherwise the labels'
    scale decides: ``severity`` (0/1/2, every cube the runner builds) and
    ``likert`` are ordinal, ``binary`` and ``pairwise`` nominal.
    """
    if standard is not None or cube.attrs.get("label_kind") == "nominal":
        return "nominal"
    return labels.level


class _Prepared:
    """The checked options, the ratings ``(unit, rater)`` and what the metric is computed from."""

    def __init__(self, cube: xr.Dataset, *, metric: str, standard: str | None, dim: str, by: str | None,
                 scale: str | None, include_truth: bool, raters: Sequence[str] | None, cluster: str | None) -> None:
        if metric not in METRICS:
            raise ValueError(f"agreement: metric {metric!r}, expected one of {', '.join(METRICS)}")
        if scale is not None and scale not in SCALES:
            raise ValueError(f"agreement: scale {scale!r}, expected one of {', '.join(SCALES)}")
        if raters is not None and metric not in MULTI_RATER_METRICS:
            _checked_raters([], raters, dim=dim, metric=metric)
        labels = labels_of(cube, standard=standard, dim=dim, include_truth=include_truth, raters=raters)
        values = labels.values
        if raters is not None:
            _checked_raters(values[dim].values.tolist(), raters, dim=dim, metric=metric)
        if by is not None and (by == dim or by not in values.dims):
            raise ValueError(f"agreement: by={by!r} must be a dim of the cube other than {dim!r}")
        if raters is not None:
            values = values.sel({dim: list(raters)})
        self.scale = scale or default_level(cube, labels, standard)
        self.values, self.dim, self.by, self.metric, self.labels = values, dim, by, metric, labels
        self.multi = raters is not None
        self.kind = "pairs" if not self.multi else ("coincidence" if metric == "krippendorff_alpha" else "fleiss")
        self.k = labels.k if standard is None else 2
        self.flat = values.values.reshape(-1, values.sizes[dim])
        self.cluster, self.n_clusters, self.group, self.n_groups = _unit_index(values, dim, by, cluster=cluster)

    def pooled(self) -> np.ndarray:
        """The statistic pooled over every unit, ``(group, ...)``."""
        return accumulate(self.kind, self.flat, self.group, n_groups=self.n_groups, k=self.k)

    def metric_of(self, stats: np.ndarray) -> np.ndarray:
        """The metric of pooled statistics ``(..., group, *stat)``; pairwise results as ``(..., rater, rater_b, group)``."""
        if self.multi:
            return multi_rater_metric(stats, metric=self.metric, scale=self.scale, n_raters=self.flat.shape[1])
        return np.moveaxis(metric_from_tables(stats, metric=self.metric, scale=self.scale), -3, -1)


def _checked_raters(known: list, raters: Sequence[str], *, dim: str, metric: str) -> list:
    if metric not in MULTI_RATER_METRICS:
        raise ValueError(f"agreement: raters= needs a multi-rater metric ({', '.join(MULTI_RATER_METRICS)}), "
                         f"got {metric!r}; without raters= every pair is compared")
    chosen = list(raters)
    unknown = [r for r in chosen if r not in known]
    if unknown:
        raise ValueError(f"agreement: raters {unknown} are not values of {dim!r} ({', '.join(map(str, known))})")
    if len(set(chosen)) < 2 or len(set(chosen)) != len(chosen):
        raise ValueError(f"agreement: raters= needs at least two distinct raters, got {chosen}")
    return chosen


def _wrap(result: np.ndarray, values: xr.DataArray, dim: str, by: str | None, *, multi: bool) -> xr.DataArray:
    """``(rater, rater_b, group)`` (or ``(group,)`` for a rater set) -> DataArray with named dims."""
    labels = values[dim].values
    dims = ([] if multi else [dim, f"{dim}_b"]) + ([by] if by else [])
    coords = {} if multi else {dim: labels, f"{dim}_b": labels}
    if by:
        coords[by] = values[by].values
    else:
        result = result[..., 0]
    return xr.DataArray(result, dims=dims, coords=coords)


def agreement(
    cube: xr.Dataset,
    *,
    metric: str = "krippendorff_alpha",
    standard: str | None = None,
    dim: str = "judge",
    by: str | None = None,
    scale: str | None = None,
    include_truth: bool = False,
    raters: Sequence[str] | None = None,
) -> xr.DataArray:
    """Agreement between the raters along ``dim``: every pair, or one rater set.

    Parameters
    ----------
    cube
        A judgment cube.
    metric
        ``"percent"``, ``"cohen_kappa"``, ``"scott_pi"``, ``"krippendorff_alpha"``
        or ``"fleiss_kappa"`` (of two raters: Scott's pi).
    standard
        ``None`` compares the labels' categories on their scale (severity
        0/1/2; pass/fail; A/B/tie; likert ratings: :mod:`multiverse.core.scales`);
        a standard's name compares its binary violation codes (severity and
        binary labels only).
    dim
        The rater dim (``"judge"``; or e.g. ``"replicate"`` for rerun agreement).
    by
        Keep this dim (e.g. ``"principle"``) instead of pooling over it.
    scale
        The level of measurement, ``"nominal"`` or ``"ordinal"``: the distance
        between categories in Krippendorff's alpha, and unweighted or
        quadratic-weighted Cohen's kappa.  Default (:func:`default_level`):
        nominal for a standard's violated / clean codes and for labels marked
        nominal (``attrs["label_kind"]``), else the labels' scale's level
        (``severity`` and ``likert`` ordinal, ``binary`` and ``pairwise``
        nominal; see the module docstring).
    include_truth
        Add the cube's planted ``truth`` as a rater named ``"truth"``.
    raters
        With a multi-rater metric (``fleiss_kappa``, ``krippendorff_alpha``):
        one value over this set of raters instead of the pairwise matrix.
        Krippendorff's alpha uses every unit at least two of them rated;
        Fleiss' kappa the units all of them rated (its formula assumes a fixed
        number of ratings per unit).

    Returns
    -------
    xarray.DataArray
        Without ``raters``: dims (``dim``, ``<dim>_b``[, ``by``]); coordinate
        ``n_units`` counts the units both raters rated (severity >= 0), the only
        ones compared, and ``n_dropped`` the units only one of the two rated
        (left out for the other's missing rating).  With ``raters``: 0-d (or over ``by``) with coordinate
        ``n_units`` (units used) and ``n_rated`` (units at least one of them
        rated), and the raters in ``attrs["raters"]``.

    See Also
    --------
    agreement_ci, multiverse.plots.plot_agreement
    """
    options = {"metric": metric, "standard": standard, "dim": dim, "by": by, "scale": scale}
    prepared = _Prepared(cube, include_truth=include_truth, raters=raters, cluster=None, **options)
    out = _estimate(prepared, prepared.pooled())
    out.attrs.update(_provenance(raters=raters, **{**options, "scale": prepared.scale}))
    if raters is not None and out.ndim == 0:
        out.attrs.update(n_units=int(out["n_units"]), n_rated=int(out["n_rated"]))
    return out


def agreement_ci(
    cube: xr.Dataset,
    *,
    metric: str = "krippendorff_alpha",
    standard: str | None = None,
    dim: str = "judge",
    by: str | None = None,
    scale: str | None = None,
    include_truth: bool = False,
    raters: Sequence[str] | None = None,
    cluster: str = "item",
    n_boot: int = 1000,
    ci: float = 0.95,
    seed: int = 0,
) -> xr.Dataset:
    """:func:`agreement` with studentized bootstrap (bootstrap-t) intervals over items.

    Judged cells of one item (its conversations, reruns and systems) share the
    item's difficulty, so items are resampled, not cells or conversations.
    With few items of strongly varying difficulty a pooled agreement is
    skewed (a sample without the hardest items agrees less): percentile and
    BCa intervals over items then sit too low (BCa at Hesterberg's expanded
    level covered 0.924 at 10 items and 0.935 at 30, nominal 0.95), while the
    studentized interval, each resample's statistic divided by its own
    jackknife standard error over the items it drew, covers (0.97 at 10
    items, 0.965 at 30; ``benchmarks/README.md``).
    A chance-corrected metric is undefined when the units show no variation
    (at a low prevalence, a sample of items without one breach); then there is
    no interval rather than one conditioned on the resamples where it happens
    to be defined: the interval is NaN where the estimate is undefined or more
    than a tail's share (``(1 - ci) / 2``) of the resamples are, and with
    fewer than two rated items.

    Parameters
    ----------
    cube, metric, standard, dim, by, scale, include_truth, raters
        As in :func:`agreement`.
    cluster
        The dim resampled (default ``item``); a cube without it resamples
        conversations.
    n_boot
        Bootstrap draws.
    ci
        Interval level.
    seed
        Seed of the resampling.

    Returns
    -------
    xarray.Dataset
        ``estimate`` (as :func:`agreement`), ``ci`` with a ``ci_bound`` dim
        (``lower``, ``upper``; the studentized bootstrap, Efron & Tibshirani
        1993, ch. 12, with jackknife standard errors over items: see
        :func:`~multiverse.analysis._bootstrap.studentized_interval`; the
        upper limit at most 1) and
        ``share_undefined`` (resamples where the metric is undefined);
        ``attrs["n_items"]``: the clusters (items) with a rated unit, the ones
        resampled.

    See Also
    --------
    agreement
    """
    options = {"metric": metric, "standard": standard, "dim": dim, "by": by, "scale": scale}
    prepared = _Prepared(cube, include_truth=include_truth, raters=raters, cluster=cluster, **options)
    weights = cluster_weights(prepared.n_clusters, n_boot=n_boot, seed=seed)
    pooled = prepared.pooled()
    draws = bootstrap_sums(prepared.kind, prepared.flat, prepared.group, prepared.cluster, weights,
                           n_groups=prepared.n_groups, k=prepared.k)
    estimate = _estimate(prepared, pooled)
    with np.errstate(invalid="ignore", divide="ignore"):
        replicates = prepared.metric_of(draws)
        per_item = np.concatenate([stats for _, stats in cluster_blocks(
            prepared.kind, prepared.flat, prepared.group, prepared.cluster, n_clusters=prepared.n_clusters,
            n_groups=prepared.n_groups, k=prepared.k)])
        point = prepared.metric_of(pooled)
        rated_ids = np.unique(prepared.cluster[(prepared.flat >= 0).any(axis=1)])
        rated = rated_ids.size
        se = jackknife_se(prepared.metric_of(pooled[None] - per_item[rated_ids]))
        replicate_se = _replicate_se(prepared, draws, per_item[rated_ids], weights[:, rated_ids])
        bounds = studentized_interval(replicates, point, se, replicate_se, ci=ci)
        bounds[..., 1] = np.minimum(bounds[..., 1], 1.0)  # a chance-corrected agreement is at most 1
    undefined = (~np.isfinite(replicates)).mean(axis=0)
    usable = np.isfinite(point) & (undefined <= (1 - ci) / 2) & (rated >= 2)  # one item: nothing to resample
    bounds = np.where(usable[..., None], bounds, np.nan)
    result = with_interval(estimate, bounds if by else bounds[..., 0, :], ci=ci, n_boot=n_boot)
    result["share_undefined"] = estimate.copy(data=undefined if by else undefined[..., 0]).rename(None)
    result.attrs.update(_provenance(raters=raters, **{**options, "scale": prepared.scale}))
    result.attrs.update(ci_method="studentized bootstrap over items (bootstrap-t), jackknife standard errors",
                        cluster=cluster, n_items=int(rated), undefined_rule=f"no interval when over {(1 - ci) / 2:g} of resamples are undefined")
    return result


def _replicate_se(prepared: _Prepared, draws: np.ndarray, per_item: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Each resample's jackknife standard error over the items it drew (a drawn item counted as often as drawn).

    ``draws`` ``(draw, group, *stat)`` are the resamples' pooled statistics,
    ``per_item`` ``(item, group, *stat)`` each item's, ``weights``
    ``(draw, item)`` how often each item was drawn.  Leaving one copy of an
    item out of a resample subtracts its statistic once; done a block of
    draws at a time, so memory stays at one block whatever the numbers of
    draws and items.
    """
    n_items = per_item.shape[0]
    block = max(1, _LOO_CELLS // max(1, per_item.size))
    out = []
    for start in range(0, len(draws), block):
        loo = prepared.metric_of(draws[start:start + block, None] - per_item[None])  # (draw, item, ...)
        w = weights[start:start + block].astype(float).reshape(loo.shape[:2] + (1,) * (loo.ndim - 2))
        mean = (w * loo).sum(axis=1, keepdims=True) / w.sum(axis=1, keepdims=True)
        out.append(np.sqrt((n_items - 1) / n_items * (w * (loo - mean) ** 2).sum(axis=1)))
    return np.concatenate(out)


_LOO_CELLS = 2_000_000
"""Values of the leave-one-item-out statistics held at once by :func:`_replicate_se`."""


def pair_table_draws(
    cube: xr.Dataset, *, standard: str | None = None, dim: str = "judge", by: str | None = None,
    cluster: str = "item", n_boot: int = 0, seed: int = 0,
) -> tuple[xr.DataArray, np.ndarray, np.ndarray | None]:
    """Pooled pair tables and their bootstrap draws over items, for analyses built on pairwise agreement.

    Returns
    -------
    tuple
        The ratings (:func:`ratings`), the pooled tables ``(group, rater,
        rater_b, k, k)`` and, when ``n_boot`` > 0, the resampled tables
        ``(draw, group, rater, rater_b, k, k)`` (else None); one group without ``by``.
    """
    prepared = _Prepared(cube, metric="percent", standard=standard, dim=dim, by=by, scale=None,
                         include_truth=False, raters=None, cluster=cluster if n_boot > 0 else None)
    draws = None
    if n_boot > 0:
        weights = cluster_weights(prepared.n_clusters, n_boot=n_boot, seed=seed)
        draws = bootstrap_sums("pairs", prepared.flat, prepared.group, prepared.cluster, weights,
                               n_groups=prepared.n_groups, k=prepared.k)
    return prepared.values, prepared.pooled(), draws


def _estimate(prepared: _Prepared, pooled: np.ndarray) -> xr.DataArray:
    """The metric of pooled statistics, with its unit counts as coordinates."""
    values, dim, by = prepared.values, prepared.dim, prepared.by
    out = _wrap(prepared.metric_of(pooled), values, dim, by, multi=prepared.multi)
    if prepared.multi:
        rated, pairable, complete = _rating_counts(prepared)
        used = complete if prepared.kind == "fleiss" else pairable
        out = out.assign_coords(
            n_units=(out.dims, _wrap(used.astype(np.int64), values, dim, by, multi=True).values),
            n_rated=(out.dims, _wrap(rated, values, dim, by, multi=True).values),
        )
    else:
        n = np.moveaxis(pooled.sum(axis=(-2, -1)), 0, -1).astype(np.int64)
        rated = _rated_by_each(prepared).T  # (rater, group)
        dropped = rated[:, None, :] + rated[None, :, :] - 2 * n
        out = out.assign_coords(n_units=(out.dims, _wrap(n, values, dim, by, multi=False).values),
                                n_dropped=(out.dims, _wrap(dropped, values, dim, by, multi=False).values))
    out.name = prepared.metric
    return out
def _rated_by_each(prepared: _Prepared) -> np.ndarray:
    """``(group, rater)``: the units each rater rated."""
    n_groups, n_raters = prepared.n_groups, prepared.flat.shape[1]
    out = np.zeros((n_groups, n_raters), dtype=np.int64)
    for start in range(0, len(prepared.flat), UNITS_PER_CHUNK):
        rated = prepared.flat[start:start + UNITS_PER_CHUNK] >= 0
        group = prepared.group[start:start + UNITS_PER_CHUNK]
        for r in range(n_raters):
            out[:, r] += np.bincount(group[rated[:, r]], minlength=n_groups)
    return out


def _rating_counts(prepared: _Prepared) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per group: units with at least one, at least two, and every rating of the rater set."""
    n_groups, n_raters = prepared.n_groups, prepared.flat.shape[1]
    out = np.zeros((3, n_groups), dtype=np.int64)
    for start in range(0, len(prepared.flat), UNITS_PER_CHUNK):
        m = (prepared.flat[start:start + UNITS_PER_CHUNK] >= 0).sum(axis=1)
        group = prepared.group[start:start + UNITS_PER_CHUNK]
        for row, least in enumerate((1, 2, n_raters)):
            out[row] += np.bincount(group[m >= least], minlength=n_groups)
    return out[0], out[1], out[2]


def _provenance(*, metric: str, standard: str | None, scale: str, dim: str, by: str | None,
                raters: Sequence[str] | None) -> dict:
    units = "cells both raters rated (severity >= 0)"
    if raters is not None:
        units = ("cells at least two of the raters rated" if metric == "krippendorff_alpha"
                 else "cells every one of the raters rated")
    out = {
        "analysis": "agreement",
        "multiverse_version": __version__,
        "metric": metric,
        "standard": standard or "severity (0/1/2)",
        "scale": scale,
        "rater_dim": dim,
        "by": by or "",
        "units": units,
    }
    if raters is not None:
        out["raters"] = [str(r) for r in raters]
    return out
