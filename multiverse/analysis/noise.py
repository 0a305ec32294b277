"""Noise floors: is a difference between systems bigger than the evaluation's own noise?

Standard errors are clustered by item (Miller 2024, "Adding error bars to evals"):
an item's conversations (its replicates, and in a paired comparison both
systems' conversations) move together.  The estimate of a system under one
specification is its violation rate, the mean of its valid conversation values.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import xarray as xr
from scipy import stats

from multiverse import __version__
from multiverse.analysis._bootstrap import bound_coords, cluster_weights, percentile_interval
from multiverse.analysis._scores import unit_scores
from multiverse.analysis.curve import clustered_influence, clustered_se
from multiverse.score import pass_hat_k

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


def minimum_detectable(se: np.ndarray, *, alpha: float, power: float) -> np.ndarray:
    """Smallest true difference a two-sided z-test at ``alpha`` detects with ``power``."""
    return (stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power)) * se


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

    Returns
    -------
    xarray.Dataset
        Over the scores' dims without item and replicate: ``rate``, ``se``
        (clustered by item), ``replicate_sd`` (spread of the per-rerun rates),
        ``flip_share`` (share of items whose verdict differs across identical
        reruns), ``mdd`` (minimum detectable difference against an equally
        noisy system: ``(z_{1-alpha/2} + z_power) * sqrt(2) * se``),
        ``pass_hat_k`` (dim ``k``), and per specification ``snr`` (spread of
        the rates between systems over the mean spread across reruns) and
        ``n_valid``.

    See Also
    --------
    paired_differences, multiverse.pass_hat_k, spec_curve
    """
    scores = unit_scores(data)
    sums, counts = _item_totals(scores, rerun)
    rate, influence = _influence(sums, counts, cluster)
    se = _se(influence, counts, cluster)
    out = xr.Dataset({"rate": rate, "se": se})
    if rerun in scores.dims:
        out["replicate_sd"] = scores.mean(cluster).std(rerun, ddof=1)
        out["flip_share"] = xr.apply_ufunc(
            flip_share_kernel, scores, input_core_dims=[[cluster, rerun]], kwargs={"axis": -1}
        )
        ks = [k] if isinstance(k, int) else [x for x in k if x <= scores.sizes[rerun]]
        if ks:
            out["pass_hat_k"] = pass_hat_k(scores, k=ks, replicate_dim=rerun, item_dim=cluster)
        if "system" in scores.dims and scores.sizes["system"] > 1:
            with np.errstate(invalid="ignore", divide="ignore"):
                out["snr"] = rate.std("system", ddof=1) / out["replicate_sd"].mean("system")
    out["mdd"] = minimum_detectable(np.sqrt(2) * se, alpha=alpha, power=power)
    out["n_valid"] = counts.sum(cluster)
    out = out.drop_vars([c for c in out.coords if c not in out.dims and c not in ("unit",)])
    out.attrs.update({
        "analysis": "noise floor", "multiverse_version": __version__, "cluster": cluster, "rerun": rerun,
        "alpha": alpha, "power": power, "reference": MILLER,
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
        clustered), ``z``, ``p_value`` (two-sided, normal), ``mdd`` (minimum
        detectable difference), ``exceeds_noise`` (``|difference| > mdd``) and
        ``ci`` (bootstrap, dim ``ci_bound``).

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
    with np.errstate(invalid="ignore", divide="ignore"):
        z = difference / se
    weights = xr.DataArray(
        cluster_weights(scores.sizes[cluster], n_boot=n_boot, seed=seed).astype(float), dims=("draw", cluster)
    )
    with np.errstate(invalid="ignore", divide="ignore"):
        draws = xr.dot(weights, sums, dim=cluster) / xr.dot(weights, counts, dim=cluster)
    diff_draws = draws - draws.rename(other)
    bounds = xr.apply_ufunc(
        lambda d: percentile_interval(np.moveaxis(d, -1, 0), ci=ci),
        diff_draws, input_core_dims=[["draw"]], output_core_dims=[["ci_bound"]],
    ).assign_coords(bound_coords())
    mdd = minimum_detectable(se, alpha=alpha, power=power)
    out = xr.Dataset(
        {
            "difference": difference,
            "se": se,
            "z": z,
            "p_value": 2 * xr.apply_ufunc(stats.norm.sf, abs(z)),
            "mdd": mdd,
            "exceeds_noise": abs(difference) > mdd,
            "ci": bounds,
        }
    )
    out = out.drop_vars([c for c in out.coords if c not in out.dims]).transpose("system", "system_b", ...)
    out.attrs.update({
        "analysis": "paired differences", "multiverse_version": __version__, "cluster": cluster, "alpha": alpha,
        "power": power, "n_boot": n_boot, "ci_level": ci, "seed": seed, "reference": MILLER,
    })
    return out
