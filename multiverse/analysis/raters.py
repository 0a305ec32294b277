"""Agreement between raters (judges, humans, deterministic rewards, the planted truth).

Every pair of raters is compared on the units both rated: one unit is one judged
cell (conversation x turn x principle, and every other dim except the rater dim).
All four metrics are functions of the pair's contingency table, so the kernel
builds per-conversation tables once; point estimates sum them and the cluster
bootstrap reweights them by resampled conversations.

Written here rather than called from ``krippendorff`` / ``statsmodels`` because
those take one pair (or one rater set) at a time with no weights: this computes
every pair, every group and every bootstrap draw from one array of tables.  The
tests pin every metric to those packages to 1e-9.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from multiverse import __version__
from multiverse import _schema as S
from multiverse.analysis._bootstrap import cluster_weights, percentile_interval, with_interval
from multiverse.cube import with_truth_judge
from multiverse.score import list_standards, standard_codes

__all__ = [
    "METRICS",
    "SCALES",
    "metric_from_tables",
    "pair_tables",
    "ratings",
    "agreement",
    "agreement_ci",
]

METRICS = ("percent", "cohen_kappa", "scott_pi", "krippendorff_alpha")
SCALES = ("nominal", "ordinal")


# --- numpy kernels: metrics from contingency tables --------------------------------------------


def metric_from_tables(tables: np.ndarray, *, metric: str, scale: str = "nominal") -> np.ndarray:
    """Agreement of two raters from contingency tables ``(..., k, k)``.

    ``tables[..., i, j]`` counts units rater A put in category i and rater B in j.
    ``scale`` matters only for ``krippendorff_alpha`` (nominal or ordinal
    distance between categories, Krippendorff 2011).  NaN where undefined
    (no units, or no variation for chance-corrected metrics).
    """
    tables = np.asarray(tables, dtype=float)
    n = tables.sum(axis=(-2, -1))
    agree = np.trace(tables, axis1=-2, axis2=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        if metric == "percent":
            return agree / n
        rows, cols = tables.sum(axis=-1), tables.sum(axis=-2)
        observed = agree / n
        if metric == "cohen_kappa":
            expected = (rows * cols).sum(axis=-1) / n**2
            return (observed - expected) / (1 - expected)
        if metric == "scott_pi":
            pooled = (rows + cols) / (2 * n[..., None])
            expected = (pooled**2).sum(axis=-1)
            return (observed - expected) / (1 - expected)
        if metric == "krippendorff_alpha":
            return _alpha(tables, scale)
    raise ValueError(f"metric {metric!r}: expected one of {METRICS}")


def _alpha(tables: np.ndarray, scale: str) -> np.ndarray:
    coincidence = tables + np.swapaxes(tables, -2, -1)
    n_c = coincidence.sum(axis=-1)
    n = n_c.sum(axis=-1)
    k = tables.shape[-1]
    if scale == "nominal":
        delta2 = np.broadcast_to(1.0 - np.eye(k), tables.shape)
    elif scale == "ordinal":
        cum = np.cumsum(n_c, axis=-1)
        delta = cum[..., None, :] - cum[..., :, None] + (n_c[..., :, None] - n_c[..., None, :]) / 2
        delta2 = delta**2
    else:
        raise ValueError(f"scale {scale!r}: expected one of {SCALES}")
    observed = (coincidence * delta2).sum(axis=(-2, -1))
    expected = (n_c[..., :, None] * n_c[..., None, :] * delta2).sum(axis=(-2, -1)) / (n - 1)
    return 1 - observed / expected


def pair_tables(
    ratings: np.ndarray, cluster: np.ndarray, group: np.ndarray, *, n_clusters: int, n_groups: int, k: int
) -> np.ndarray:
    """Per-cluster contingency tables of every rater pair.

    Parameters
    ----------
    ratings
        int ``(unit, rater)``: categories ``0..k-1``, negative = not rated.
    cluster, group
        int ``(unit,)``: the conversation each unit belongs to, and its group.

    Returns
    -------
    numpy.ndarray
        ``(cluster, rater, rater_b, group, k, k)`` counts over units both raters rated.
    """
    n_raters = ratings.shape[1]
    out = np.zeros((n_clusters, n_raters, n_raters, n_groups, k, k), dtype=np.int64)
    base = (cluster.astype(np.int64) * n_groups + group) * k * k
    for a in range(n_raters):
        for b in range(a, n_raters):
            both = (ratings[:, a] >= 0) & (ratings[:, b] >= 0)
            index = base[both] + ratings[both, a].astype(np.int64) * k + ratings[both, b]
            counts = np.bincount(index, minlength=n_clusters * n_groups * k * k)
            table = counts.reshape(n_clusters, n_groups, k, k)
            out[:, a, b] = table
            out[:, b, a] = np.swapaxes(table, -2, -1)
    return out


# --- xarray layer: the cube -> ratings ---------------------------------------------------------------


def ratings(
    cube: xr.Dataset, *, standard: str | None = None, dim: str = "judge", include_truth: bool = False
) -> xr.DataArray:
    """Each rater's category for every unit: severity 0/1/2 or a standard's 1/0; -1 unrated.

    Returns a DataArray with the rater dim ``dim`` last.  With ``include_truth``
    the cube's planted ``truth`` joins the judges as the rater ``"truth"``
    (through :func:`multiverse.cube.with_truth_judge`).
    """
    if dim not in cube["severity"].dims:
        raise ValueError(f"agreement: dim {dim!r} is not a dim of the cube's severity {cube['severity'].dims}")
    if include_truth:
        if "truth" not in cube:
            raise ValueError("agreement: include_truth=True but the cube has no 'truth' variable")
        if dim != "judge":
            raise ValueError("agreement: the truth can join only the judge dim as a rater")
        cube = with_truth_judge(cube[["severity", "truth"]])
    severity = cube["severity"].reset_coords(drop=True)
    if standard is None:
        values = severity.where(severity >= 0, -1).astype(np.int8)
    else:
        if standard not in list_standards():
            raise ValueError(f"agreement: unknown standard {standard!r}; registered: {', '.join(list_standards())}")
        codes = standard_codes(severity, standard)
        values = codes.where(codes >= 0, -1).astype(np.int8)
    others = [d for d in values.dims if d != dim]
    return values.transpose(*others, dim)


def _unit_index(values: xr.DataArray, dim: str, by: str | None) -> tuple[np.ndarray, int, np.ndarray, int]:
    """Conversation and group index of every unit (units flattened in C order)."""
    unit_dims = [d for d in values.dims if d != dim]
    shape = [values.sizes[d] for d in unit_dims]
    conv_dims = [d for d in S.CONVERSATION_DIMS if d in unit_dims]
    grids = np.indices(shape, sparse=True)
    position = {d: g for d, g in zip(unit_dims, grids, strict=True)}
    cluster = np.zeros(shape, dtype=np.int64)
    n_clusters = 1
    for d in conv_dims:
        cluster = cluster * values.sizes[d] + position[d]
        n_clusters *= values.sizes[d]
    if by is None:
        group, n_groups = np.zeros(shape, dtype=np.int64), 1
    else:
        group, n_groups = np.broadcast_to(position[by], shape), values.sizes[by]
    return np.broadcast_to(cluster, shape).ravel(), n_clusters, np.ascontiguousarray(group).ravel(), n_groups


def _tables(
    cube: xr.Dataset, *, metric: str, standard: str | None, dim: str, by: str | None, scale: str, include_truth: bool
) -> tuple[xr.DataArray, np.ndarray]:
    """The checked options' ratings and their per-conversation pair tables ``(cluster, rater, rater_b, group, k, k)``."""
    if metric not in METRICS:
        raise ValueError(f"agreement: metric {metric!r}, expected one of {', '.join(METRICS)}")
    if scale not in SCALES:
        raise ValueError(f"agreement: scale {scale!r}, expected one of {', '.join(SCALES)}")
    values = ratings(cube, standard=standard, dim=dim, include_truth=include_truth)
    if by is not None and (by == dim or by not in values.dims):
        raise ValueError(f"agreement: by={by!r} must be a dim of the cube other than {dim!r}")
    cluster, n_clusters, group, n_groups = _unit_index(values, dim, by)
    flat = values.values.reshape(-1, values.sizes[dim])
    k = 3 if standard is None else 2
    return values, pair_tables(flat, cluster, group, n_clusters=n_clusters, n_groups=n_groups, k=k)


def _wrap(result: np.ndarray, values: xr.DataArray, dim: str, by: str | None) -> xr.DataArray:
    """``(rater, rater_b, group)`` array -> DataArray with named dims (``group`` dropped without ``by``)."""
    labels = values[dim].values
    dims = [dim, f"{dim}_b"] + ([by] if by else [])
    coords = {dim: labels, f"{dim}_b": labels}
    if by:
        coords[by] = values[by].values
    else:
        result = result[:, :, 0]
    return xr.DataArray(result, dims=dims, coords=coords)


def agreement(
    cube: xr.Dataset,
    *,
    metric: str = "krippendorff_alpha",
    standard: str | None = None,
    dim: str = "judge",
    by: str | None = None,
    scale: str = "nominal",
    include_truth: bool = False,
) -> xr.DataArray:
    """Pairwise agreement between the raters along ``dim``.

    Parameters
    ----------
    cube
        A judgment cube.
    metric
        ``"percent"``, ``"cohen_kappa"``, ``"scott_pi"`` or ``"krippendorff_alpha"``.
    standard
        ``None`` compares the three-level severity (0/1/2); a standard's name
        compares its binary violation codes.
    dim
        The rater dim (``"judge"``; or e.g. ``"replicate"`` for rerun agreement).
    by
        Keep this dim (e.g. ``"principle"``) instead of pooling over it.
    scale
        ``"nominal"`` or ``"ordinal"`` distances for Krippendorff's alpha.
    include_truth
        Add the cube's planted ``truth`` as a rater named ``"truth"``.

    Returns
    -------
    xarray.DataArray
        Dims (``dim``, ``<dim>_b``[, ``by``]); coordinate ``n_units`` counts the
        units both raters rated (severity >= 0), the only ones compared.

    See Also
    --------
    agreement_ci, multiverse.plots.plot_agreement
    """
    options = {"metric": metric, "standard": standard, "dim": dim, "by": by, "scale": scale}
    values, tables = _tables(cube, include_truth=include_truth, **options)
    out = _estimate(tables.sum(axis=0), values, metric=metric, scale=scale, dim=dim, by=by)
    out.attrs.update(_provenance(**options))
    return out


def agreement_ci(
    cube: xr.Dataset,
    *,
    metric: str = "krippendorff_alpha",
    standard: str | None = None,
    dim: str = "judge",
    by: str | None = None,
    scale: str = "nominal",
    include_truth: bool = False,
    n_boot: int = 1000,
    ci: float = 0.95,
    seed: int = 0,
) -> xr.Dataset:
    """:func:`agreement` with cluster-bootstrap intervals over conversations.

    Parameters
    ----------
    cube, metric, standard, dim, by, scale, include_truth
        As in :func:`agreement`.
    n_boot
        Bootstrap draws (conversations resampled with replacement).
    ci
        Interval level.
    seed
        Seed of the resampling.

    Returns
    -------
    xarray.Dataset
        ``estimate`` (as :func:`agreement`) and ``ci`` with a ``ci_bound`` dim
        (``lower``, ``upper``).

    See Also
    --------
    agreement
    """
    options = {"metric": metric, "standard": standard, "dim": dim, "by": by, "scale": scale}
    values, tables = _tables(cube, include_truth=include_truth, **options)
    weights = cluster_weights(tables.shape[0], n_boot=n_boot, seed=seed)
    flat = tables.reshape(tables.shape[0], -1)
    draws = (weights @ flat).reshape((n_boot,) + tables.shape[1:])
    with np.errstate(invalid="ignore"):
        bounds = percentile_interval(metric_from_tables(draws, metric=metric, scale=scale), ci=ci)
    estimate = _estimate(tables.sum(axis=0), values, metric=metric, scale=scale, dim=dim, by=by)
    result = with_interval(estimate, bounds if by else bounds[:, :, 0], ci=ci, n_boot=n_boot)
    result.attrs.update(_provenance(**options))
    return result


def _estimate(pooled: np.ndarray, values: xr.DataArray, *, metric: str, scale: str, dim: str, by: str | None) -> xr.DataArray:
    """The metric of pooled tables ``(rater, rater_b, group, k, k)``, with ``n_units``."""
    out = _wrap(metric_from_tables(pooled, metric=metric, scale=scale), values, dim, by)
    out = out.assign_coords(n_units=(out.dims, _wrap(pooled.sum(axis=(-2, -1)), values, dim, by).values))
    out.name = metric
    return out


def _provenance(*, metric: str, standard: str | None, scale: str, dim: str, by: str | None) -> dict:
    return {
        "analysis": "agreement",
        "multiverse_version": __version__,
        "metric": metric,
        "standard": standard or "severity (0/1/2)",
        "scale": scale,
        "rater_dim": dim,
        "by": by or "",
        "units": "cells both raters rated (severity >= 0)",
    }

