"""Noise floors: is a difference between systems bigger than the evaluation's own noise?

Standard errors are clustered by item (Miller 2024, "Adding error bars to evals"):
an item's conversations (its replicates, and in a paired comparison both
systems' conversations) move together.  The estimate of a system under one
specification is its violation rate, the mean of its valid conversation values.
Evaluations have few items, so every Wald interval and test uses Student's t
with G - 1 degrees of freedom (G the items with data) rather than the normal,
and bootstrap intervals the expanded percentile interval.

One definition of the noise floor serves the text, the figures and ``report``:
a difference's noise floor is the smallest absolute difference the two-sided
test at ``alpha`` calls real, ``t_{1-alpha/2, G-1} * se``, and a difference is
beyond the noise (``exceeds_noise``) when it passes that test (p < alpha, the
same as ``|difference| > noise_floor``).  The minimum detectable difference
(``mdd``) is a power quantity for planning how many items a study needs; it is
never a threshold for calling a difference real.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import xarray as xr
from scipy import stats

from multiverse import __version__
from multiverse.analysis._bootstrap import (
    HESTERBERG,
    bound_coords,
    cluster_weights,
    expanded_percentile_interval,
    t_critical,
)
from multiverse.analysis._scores import unit_scores
from multiverse.analysis.curve import clustered_influence, clustered_se
from multiverse.scoring import pass_hat_k
from multiverse.scoring.pass_k import pass_hat_k_kernel

__all__ = ["clustered_se_of_rate", "flip_share_kernel", "minimum_detectable", "noise_floor", "paired_differences"]

__all__ = [
    "MILLER",
    "flip_share_kernel",
    "minimum_detectable",
    "clustered_se_of_rate",
    "noise_floor",
    "paired_differences",
]

MILLER = "Miller (2024), Adding Error Bars to Evals, arXiv:2411.00640"


# --- numpy kernels --------------------------------------------------------------------------------


def flip_share_kernel(values: np.ndarray, *, axis: int) -> np.ndarray:
    """Share of items whose verdict differs across reruns.

    ``values`` holds one value per (..., item, replicate) with the replicate
    axis ``axis`` and the item axis just before it; items with fewer than two
    valid reruns do not count.  NaN when no item has two.
    """
    values = np.moveaxis(values, axis, -1)
    valid = ~np.isnan(values)
    enough = valid.sum(axis=-1) >= 2
    with np.errstate(invalid="ignore"):
        high = np.where(valid, values, -np.inf).max(axis=-1)
        low = np.where(valid, values, np.inf).min(axis=-1)
        flipped = enough & (high != low)
        return flipped.sum(axis=-1) / enough.sum(axis=-1)


def minimum_detectable(se: np.ndarray, *, alpha: float, power: float, n_clusters: np.ndarray | int) -> np.ndarray:
    """Smallest true difference a two-sided t-test at ``alpha`` (G - 1 df) detects with ``power``.

    ``(t_{1-alpha/2, G-1} + t_{power, G-1}) * se``: a planning quantity, not a
    test threshold.
    """
    df = np.maximum(np.asarray(n_clusters, dtype=float) - 1, 1)
    with np.errstate(invalid="ignore"):
        factor = stats.t.ppf(1 - alpha / 2, df) + stats.t.ppf(power, df)
        return np.where(np.asarray(n_clusters) >= 2, factor * se, np.nan)


def pass_hat_k_interval(values: np.ndarray, *, k: list[int], ci: float, axis: int) -> np.ndarray:
    """t interval (G - 1 df) of pass^k over items: the mean of per-item unbiased estimates.

    ``values`` has items on ``axis - 1`` and reruns on ``axis`` (the last two
    axes after moving); returns ``(..., k, 2)``.  Per-item values are
    independent across items, so the standard error is their standard
    deviation over the square root of the item count.
    """
    values = np.moveaxis(values, axis, -1)
    per_item = pass_hat_k_kernel(values == 0, ~np.isnan(values), k=k, axis=-1)  # (..., item, k)
    n = (~np.isnan(per_item)).sum(axis=-2)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(n > 0, np.nansum(per_item, axis=-2) / np.maximum(n, 1), np.nan)
        square = np.nansum((per_item - np.expand_dims(mean, -2)) ** 2, axis=-2)
        sd = np.sqrt(square / (n - 1))
        half = t_critical(ci, n) * sd / np.sqrt(n)
    return np.stack([mean - half, mean + half], axis=-1)


# --- xarray wrappers ----------------------------------------------------------------------------------


def _item_totals(scores: xr.DataArray, rerun: str) -> tuple[xr.DataArray, xr.DataArray]:
    reduce = [rerun] if rerun in scores.dims else []
    return scores.fillna(0).sum(reduce), scores.notnull().sum(reduce)


def _influence(sums: xr.DataArray, counts: xr.DataArray, cluster: str) -> tuple[xr.DataArray, xr.DataArray]:
    """Rate and per-cluster influence on it (see :func:`~multiverse.analysis.curve.clustered_influence`)."""
    return xr.apply_ufunc(
        clustered_influence, sums, counts, kwargs={"axis": -1},
        input_core_dims=[[cluster], [cluster]], output_core_dims=[[], [cluster]],
    )


def _se(influence: xr.DataArray, counts: xr.DataArray, cluster: str) -> xr.DataArray:
    return xr.apply_ufunc(
        clustered_se, influence, counts, kwargs={"axis": -1}, input_core_dims=[[cluster], [cluster]]
    )


def _wald_interval(estimate: xr.DataArray, se: xr.DataArray, clusters: xr.DataArray, ci: float) -> xr.DataArray:
    """``estimate -/+ t_{G-1} se`` with dim ``ci_bound``."""
    half = se * xr.apply_ufunc(lambda g: t_critical(ci, g), clusters)
    return xr.concat([estimate - half, estimate + half], dim="ci_bound").assign_coords(bound_coords()).transpose(..., "ci_bound")


def clustered_se_of_rate(data: xr.Dataset | xr.DataArray, *, cluster: str = "item", rerun: str = "replicate") -> xr.DataArray:
    """Cluster-robust standard error of each system's rate under each specification.

    Parameters
    ----------
    data
        A cube or its scores.
    cluster, rerun
        The dim clustered on (items) and the rerun dim pooled inside a cluster.

    Returns
    -------
    xarray.DataArray
        The scores' dims without ``cluster`` and ``rerun``.

    See Also
    --------
    noise_floor, paired_differences
    """
    scores = unit_scores(data)
    sums, counts = _item_totals(scores, rerun)
    _, influence = _influence(sums, counts, cluster)
    return _se(influence, counts, cluster).rename("se")


def noise_floor(
    data: xr.Dataset | xr.DataArray,
    *,
    cluster: str = "item",
    rerun: str = "replicate",
    k: int | Sequence[int] = (1, 2, 3),
    alpha: float = 0.05,
    power: float = 0.8,
    ci: float = 0.95,
) -> xr.Dataset:
    """How noisy is each system's violation rate under each specification?

    Parameters
    ----------
    data
        A cube or its scores (rate rules are used).
    cluster, rerun
        The item dim (clusters) and the dim of identical reruns.
    k
        pass^k orders (kept only up to the number of reruns).
    alpha, power
        Level and power of the minimum detectable difference.
    ci
        Level of the intervals.

    Returns
    -------
    xarray.Dataset
        Over the scores' dims without item and replicate: ``rate``, ``se``
        (clustered by item), ``ci`` (``rate -/+ t_{G-1} se``, dim
        ``ci_bound``), ``replicate_sd`` (spread of the per-rerun rates),
        ``flip_share`` (share of items whose verdict differs across identical
        reruns), ``mdd`` (minimum detectable difference against an equally
        noisy system: ``(t_{1-alpha/2} + t_power) * sqrt(2) * se``, G - 1 df),
        ``pass_hat_k`` and ``pass_hat_k_ci`` (dim ``k``; a t interval over the
        items with at least ``max(k)`` valid reruns, counted in the
        coordinates ``n_items`` and ``n_items_excluded``), and ``n_valid``,
        ``n_clusters``.

    See Also
    --------
    paired_differences, multiverse.pass_hat_k, spec_curve
    """
    scores = unit_scores(data)
    sums, counts = _item_totals(scores, rerun)
    rate, influence = _influence(sums, counts, cluster)
    se = _se(influence, counts, cluster)
    clusters = (counts > 0).sum(cluster)
    out = xr.Dataset({"rate": rate, "se": se, "ci": _wald_interval(rate, se, clusters, ci)})
    if rerun in scores.dims:
        out["replicate_sd"] = scores.mean(cluster).std(rerun, ddof=1)
        out["flip_share"] = xr.apply_ufunc(
            flip_share_kernel, scores, input_core_dims=[[cluster, rerun]], kwargs={"axis": -1}
        )
        ks = [k] if isinstance(k, int) else [x for x in k if x <= scores.sizes[rerun]]
        if ks:
            passed = pass_hat_k(scores, k=ks, replicate_dim=rerun, item_dim=cluster)
            out["pass_hat_k"] = passed
            out["pass_hat_k_ci"] = xr.apply_ufunc(
                pass_hat_k_interval, scores.astype(float), input_core_dims=[[cluster, rerun]],
                output_core_dims=[["k", "ci_bound"]], kwargs={"k": ks, "ci": ci, "axis": -1},
            ).assign_coords(k=ks, **bound_coords())
    out["mdd"] = xr.apply_ufunc(
        lambda s, g: minimum_detectable(s, alpha=alpha, power=power, n_clusters=g), np.sqrt(2) * se, clusters)
    out["n_valid"] = counts.sum(cluster)
    out["n_clusters"] = clusters
    out = out.drop_vars([c for c in out.coords if c not in out.dims and c not in ("unit", "n_items", "n_items_excluded")])
    out.attrs.update({
        "analysis": "noise floor", "multiverse_version": __version__, "cluster": cluster, "rerun": rerun,
        "alpha": alpha, "power": power, "ci_level": ci, "ci_method": "Wald, t with G - 1 df", "reference": MILLER,
    })
    return out


def paired_differences(
    data: xr.Dataset | xr.DataArray,
    *,
    cluster: str = "item",
    rerun: str = "replicate",
    alpha: float = 0.05,
    power: float = 0.8,
    n_boot: int = 1000,
    ci: float = 0.95,
    seed: int = 0,
) -> xr.Dataset:
    """Every pairwise system difference under every specification, against its noise floor.

    Parameters
    ----------
    data
        A cube or its scores with a ``system`` dim.
    cluster, rerun
        Items are the clusters (both systems' conversations of an item resample
        together); reruns are pooled inside a cluster.
    alpha, power
        Level of the test and power of the minimum detectable difference.
    n_boot, ci, seed
        Cluster bootstrap draws, interval level and seed (the same draws for
        every pair and specification).

    Returns
    -------
    xarray.Dataset
        Dims ``system``, ``system_b`` and the specification dims:
        ``difference`` (rate(system) - rate(system_b)), ``se`` (paired,
        clustered), ``z`` (the t statistic), ``p_value`` (two-sided, Student's
        t with G - 1 df, G the items with data), ``noise_floor`` (the
        smallest absolute difference the test calls real:
        ``t_{1-alpha/2, G-1} * se``), ``exceeds_noise`` (the test:
        ``p_value < alpha``, i.e. ``|difference| > noise_floor``), ``mdd``
        (minimum detectable difference at ``power``, for planning only),
        ``ci`` (expanded percentile cluster
        bootstrap, dim ``ci_bound``) and ``n_clusters``.

    See Also
    --------
    noise_floor, win_shares
    """
    scores = unit_scores(data)
    if "system" not in scores.dims or scores.sizes["system"] < 2:
        raise ValueError("paired_differences: needs a 'system' dim with at least two systems")
    sums, counts = _item_totals(scores, rerun)
    rate, influence = _influence(sums, counts, cluster)
    other = {"system": "system_b"}
    difference = rate - rate.rename(other)
    paired_influence = influence.fillna(0) - influence.fillna(0).rename(other)
    either = counts + counts.rename(other)
    se = _se(paired_influence, either, cluster)
    clusters = (either > 0).sum(cluster)
    with np.errstate(invalid="ignore", divide="ignore"):
        z = difference / se
    weights = xr.DataArray(
        cluster_weights(scores.sizes[cluster], n_boot=n_boot, seed=seed).astype(float), dims=("draw", cluster)
    )
    with np.errstate(invalid="ignore", divide="ignore"):
        draws = xr.dot(weights, sums, dim=cluster) / xr.dot(weights, counts, dim=cluster)
    diff_draws = draws - draws.rename(other)
    n_items = int((counts > 0).any([d for d in counts.dims if d != cluster]).sum())
    bounds = xr.apply_ufunc(
        lambda d: expanded_percentile_interval(np.moveaxis(d, -1, 0), ci=ci, n_clusters=n_items),
        diff_draws, input_core_dims=[["draw"]], output_core_dims=[["ci_bound"]],
    ).assign_coords(bound_coords())
    mdd = xr.apply_ufunc(lambda s, g: minimum_detectable(s, alpha=alpha, power=power, n_clusters=g), se, clusters)
    df = np.maximum(clusters - 1, 1)
    p_value = (2 * xr.apply_ufunc(stats.t.sf, abs(z), df)).where(clusters >= 2)
    floor = se * xr.apply_ufunc(lambda g: t_critical(1 - alpha, g), clusters)
    out = xr.Dataset(
        {
            "difference": difference,
            "se": se,
            "z": z,
            "p_value": p_value,
            "noise_floor": floor,
            "exceeds_noise": p_value < alpha,
            "mdd": mdd,
            "ci": bounds,
            "n_clusters": clusters,
        }
    )
    out = out.drop_vars([c for c in out.coords if c not in out.dims]).transpose("system", "system_b", ...)
    out.attrs.update({
        "analysis": "paired differences", "multiverse_version": __version__, "cluster": cluster, "alpha": alpha,
        "power": power, "n_boot": n_boot, "ci_level": ci, "seed": seed, "reference": MILLER,
        "ci_method": f"expanded percentile cluster bootstrap ({HESTERBERG})", "test": "Wald, t with G - 1 df",
    })
    return out
