"""Noise floors: is a difference between systems bigger than the evaluation's own noise?

Standard errors are clustered by item (Miller 2024, "Adding error bars to evals"):
an item's conversations (its replicates, and in a paired comparison both
systems' conversations) move together.  The estimate of a system under one
specification is its violation rate: the mean of its conversations'
estimation values (decided verdicts, and undecided conversations at their
expected value under the scores' missing-data assumption; see
:mod:`multiverse.scoring.estimate`); their standard errors add Rubin's terms
for the imputed conversations (:func:`~multiverse.analysis._scores.imputation_variance`).  Evaluations have few items and often
rare outcomes, so intervals are score-type (:mod:`multiverse.analysis._intervals`):
a rate's is Wilson's at the clustered design's effective sample size with t
on G - 1 degrees of freedom (G the items with data), a paired difference's is
MOVER from the two rates' intervals, and the paired test inverts that
interval.  Differences compare systems on common support
(:mod:`multiverse.analysis._paired`).  The minimum detectable difference is a
power quantity for planning; whether a difference is beyond the noise is a
test (``exceeds_noise``), with the multiplicity of specifications controlled.

One definition of the noise floor serves the text, the figures and ``report``:
a difference's noise floor is the smallest absolute difference the test calls
real (the half-width towards zero of the MOVER interval at the level the
adjusted test uses for that difference), so a difference is beyond the noise
(``exceeds_noise``) exactly when ``|difference| > noise_floor``.  The minimum
detectable difference (``mdd``) is a power quantity for planning how many items
a study needs; it is never a threshold for calling a difference real.
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
)
from multiverse.analysis._intervals import adjust_p, mover_interval, rate_interval, tail_at
from multiverse.analysis._paired import pair_totals
from multiverse.analysis._scores import decided_values, imputation_variance, unit_scores, usage
from multiverse.analysis.curve import clustered_influence, clustered_se
from multiverse.core import schema as S
from multiverse.scoring import pass_hat_k
from multiverse.scoring.pass_k import pass_hat_k_items, rerun_chances

__all__ = [
    "CI_METHODS",
    "MILLER",
    "clustered_se_of_rate",
    "flip_share_kernel",
    "minimum_detectable",
    "noise_floor",
    "paired_differences",
]

MILLER = "Miller (2024), Adding Error Bars to Evals, arXiv:2411.00640"
CI_METHODS = ("mover", "bootstrap")
WILSON = "Wilson score at the clustered effective sample size (Korn & Graubard 1998), t with G - 1 df"
MOVER = "MOVER (Newcombe 1998; Zou & Donner 2008) from clustered Wilson limits and their correlation over items"


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


def _interval(lower: np.ndarray, upper: np.ndarray, like: xr.DataArray) -> xr.DataArray:
    """``(lower, upper)`` shaped like ``like`` as a DataArray with dim ``ci_bound``."""
    return xr.DataArray(np.stack([lower, upper], axis=-1), dims=like.dims + ("ci_bound",),
                        coords={**{d: like[d] for d in like.dims if d in like.coords}, **bound_coords()})


def _wilson(estimate: xr.DataArray, se: xr.DataArray, n: xr.DataArray, clusters: xr.DataArray, ci: float
            ) -> xr.DataArray:
    estimate, se, n, clusters = xr.broadcast(estimate, se, n, clusters)
    lower, upper = rate_interval(estimate.values, se.values, n.values, clusters.values, level=ci)
    return _interval(lower, upper, estimate)


def _with_imputation(se: xr.DataArray, scores: xr.DataArray, n: xr.DataArray,
                     where: xr.DataArray | None = None) -> xr.DataArray:
    """``se`` with Rubin's imputation terms added: ``se^2 + 2 sum v_i / N^2`` (see :func:`imputation_variance`).

    ``where`` restricts the imputed conversations counted (common support).
    """
    variance = imputation_variance(scores)
    if where is not None:
        variance = variance.where(where, 0.0)
    dims = [d for d in ("item", "replicate") if d in variance.dims]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.sqrt(se**2 + 2 * variance.sum(dims) / n**2)


def _clustered_rate(scores: xr.DataArray, *, cluster: str, rerun: str) -> tuple[xr.DataArray, xr.DataArray, xr.DataArray]:
    """``(rate, se, conversations used per item)``: the pooled rate and its cluster-robust SE with the imputation terms."""
    sums, counts = _item_totals(scores, rerun)
    rate, influence = _influence(sums, counts, cluster)
    return rate, _with_imputation(_se(influence, counts, cluster), scores, counts.sum(cluster)), counts


def clustered_se_of_rate(data: xr.Dataset | xr.DataArray, *, cluster: str = "item", rerun: str = "replicate") -> xr.DataArray:
    """Cluster-robust standard error of each system's rate under each specification.

    Imputed conversations (undecided, at their expected value) add Rubin's
    terms (:func:`~multiverse.analysis._scores.imputation_variance`).

    Parameters
    ----------
    data
        A cube or its scores.
    cluster, rerun
        The dim clustered on (items) and the rerun dim pooled inside a cluster.

    Returns
    -------
    xarray.DataArray
        ``se`` over the scores' dims without ``cluster`` and ``rerun``, with
        coordinates counting what it used and dropped, as :func:`noise_floor`
        does: ``n_used``, ``n_imputed``, ``n_excluded`` and ``n_not_ruled``
        (conversations, :func:`~multiverse.analysis._scores.usage`) and
        ``n_clusters`` (items with a conversation used).

    See Also
    --------
    noise_floor, paired_differences
    """
    scores = unit_scores(data)
    _, se, counts = _clustered_rate(scores, cluster=cluster, rerun=rerun)
    se = se.rename("se")
    used = usage(scores, reduce=[cluster, rerun]).assign(n_clusters=(counts > 0).sum(cluster).astype(np.int64))
    used = used.drop_vars([c for c in used.coords if c not in used.dims])
    se = se.assign_coords({name: part.broadcast_like(se) for name, part in used.data_vars.items()})
    se.attrs = {"analysis": "clustered standard error of the rate", "multiverse_version": __version__,
                "cluster": cluster, "rerun": rerun, "reference": MILLER, "missing": scores.attrs.get("missing", "none")}
    return se


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
        (clustered by item), ``ci`` (clustered Wilson interval, dim
        ``ci_bound``), ``replicate_sd`` (spread of the per-rerun rates),
        ``flip_share`` (share of items whose decided verdict differs across
        identical reruns), ``mdd`` (minimum detectable difference against an
        equally noisy system: ``(t_{1-alpha/2} + t_power) * sqrt(2) * se``,
        G - 1 df), ``pass_hat_k`` and ``pass_hat_k_ci`` (dim ``k``; per-item
        estimates from each item's own reruns, the interval Wilson's over the
        items with at least ``k``; coordinates ``n_items``,
        ``n_items_excluded``, ``lower_bound``, ``upper_bound``), the counts of
        :func:`~multiverse.analysis._scores.usage` (``n_used``, ``n_imputed``,
        ``n_excluded``, ``n_not_ruled``), ``n_valid`` (decided conversations)
        and ``n_clusters`` (items used).

    See Also
    --------
    paired_differences, multiverse.pass_hat_k, spec_curve
    """
    scores = unit_scores(data)
    rate, se, counts = _clustered_rate(scores, cluster=cluster, rerun=rerun)
    clusters = (counts > 0).sum(cluster)
    out = xr.Dataset({"rate": rate, "se": se, "ci": _wilson(rate, se, counts.sum(cluster), clusters, ci)})
    decided = decided_values(scores)
    if rerun in scores.dims:
        out["replicate_sd"] = scores.mean(cluster).std(rerun, ddof=1)
        out["flip_share"] = xr.apply_ufunc(
            flip_share_kernel, decided, input_core_dims=[[cluster, rerun]], kwargs={"axis": -1}
        )
        ks = [k] if isinstance(k, int) else [x for x in k if x <= scores.sizes[rerun]]
        if ks:
            out["pass_hat_k"] = pass_hat_k(scores, k=ks, replicate_dim=rerun, item_dim=cluster)
            out["pass_hat_k_ci"] = _pass_hat_k_interval(scores, ks, rerun=rerun, cluster=cluster, ci=ci)
    out["mdd"] = xr.apply_ufunc(
        lambda s, g: minimum_detectable(s, alpha=alpha, power=power, n_clusters=g), np.sqrt(2) * se, clusters)
    out = out.merge(usage(scores, reduce=[cluster, rerun]))
    out["n_valid"] = decided.notnull().sum([d for d in (cluster, rerun) if d in scores.dims])
    out["n_clusters"] = clusters
    kept = ("unit", "n_items", "n_items_excluded", "lower_bound", "upper_bound")
    out = out.drop_vars([c for c in out.coords if c not in out.dims and c not in kept])
    out.attrs.update({
        "analysis": "noise floor", "multiverse_version": __version__, "cluster": cluster, "rerun": rerun,
        "alpha": alpha, "power": power, "ci_level": ci, "ci_method": WILSON, "reference": MILLER,
        "missing": scores.attrs.get("missing", "none"),
    })
    return out


def _pass_hat_k_interval(scores: xr.DataArray, ks: list[int], *, rerun: str, cluster: str, ci: float) -> xr.DataArray:
    """Wilson interval of pass^k over the items with at least ``k`` usable reruns (items are independent).

    The effective sample size lies between the items and their usable reruns
    (a per-item estimate averages its reruns' sets of ``k``).
    """
    clean, usable, _, _ = rerun_chances(scores)
    items = pass_hat_k_items(clean, usable, k=ks, replicate_dim=rerun)
    imputed = pass_hat_k_items(clean, usable, k=ks, replicate_dim=rerun, variance=True).where(items.notnull())
    n = items.notnull().sum(cluster)
    reruns = usable.sum(rerun).where(items.notnull()).sum(cluster)
    estimate = items.mean(cluster)
    se = np.sqrt(items.var(cluster, ddof=1) / n + 2 * imputed.sum(cluster) / n**2)  # Rubin's terms for imputed reruns
    out = _wilson(estimate, se, reruns, n, ci)
    if "unit" in scores.coords and "rule" in out.dims:
        out = out.where(scores["unit"] != "turns")
    return out.drop_vars([c for c in out.coords if c not in out.dims])


def paired_differences(
    data: xr.Dataset | xr.DataArray,
    *,
    cluster: str = "item",
    rerun: str = "replicate",
    alpha: float = 0.05,
    power: float = 0.8,
    adjust: str = "holm",
    ci_method: str = "mover",
    n_boot: int = 1000,
    ci: float = 0.95,
    seed: int = 0,
) -> xr.Dataset:
    """Every pairwise system difference under every specification, on common support, against its noise floor.

    Parameters
    ----------
    data
        A cube or its scores with a ``system`` dim.
    cluster, rerun
        Items are the clusters (both systems' conversations of an item
        resample together); reruns are pooled inside a cluster.
    alpha, power
        Level of the test and power of the minimum detectable difference.
    adjust
        Multiplicity adjustment of the test over the specifications (every
        combination of the measurement dims) of one pair of systems in one
        facet (``role`` x ``condition``): ``"holm"`` (family-wise error,
        default), ``"fdr_bh"`` (Benjamini-Hochberg false discovery rate) or
        ``"none"``.
    ci_method
        ``"mover"`` (default; see the module docstring) or ``"bootstrap"``
        (expanded percentile cluster bootstrap with ``n_boot`` draws).
    n_boot, ci, seed
        Bootstrap draws (``ci_method="bootstrap"``), interval level, seed.

    Returns
    -------
    xarray.Dataset
        Dims ``system``, ``system_b`` and the specification dims:
        ``difference`` (rate(system) - rate(system_b) over the conversation
        cells where both have a value), ``se`` (paired, clustered), ``z``
        (``difference / se``), ``ci`` (dim ``ci_bound``), ``p_value``
        (two-sided, the MOVER interval inverted), ``p_adjusted`` (after
        ``adjust``), ``exceeds_noise`` (the test: ``p_adjusted < alpha``),
        ``noise_floor`` (the smallest absolute difference the test calls
        real: the half-width towards zero of the MOVER interval at level
        ``1 - alpha * p_value / p_adjusted``, so ``exceeds_noise`` exactly when
        ``|difference| > noise_floor``),
        ``prob_less`` (the confidence that rate(system) < rate(system_b): the
        interval's one-sided level at 0, calibrated in that it is uniform when
        the two are equal), ``mdd`` (minimum detectable difference at
        ``power``, for planning), ``n_clusters`` (items on common support),
        ``n_clusters_dropped`` (items where one of the two has a value but
        no cell has both: dropped for missing support), ``n_pairs``
        (conversation cells compared) and ``n_dropped`` (cells where only one
        of the two had a value: dropped for missing support).

    See Also
    --------
    noise_floor, win_shares
    """
    if not 0 < ci < 1:
        raise ValueError(f"paired_differences: ci={ci}, expected a level between 0 and 1")
    if ci_method not in CI_METHODS:
        raise ValueError(f"paired_differences: ci_method={ci_method!r}, expected one of {', '.join(CI_METHODS)}")
    scores = unit_scores(data)
    if "system" not in scores.dims or scores.sizes["system"] < 2:
        raise ValueError("paired_differences: needs a 'system' dim with at least two systems")
    totals = pair_totals(scores, cluster=cluster, rerun=rerun)
    rate_a, infl_a = _influence(totals.sum_a, totals.count, cluster)
    rate_b, infl_b = _influence(totals.sum_b, totals.count, cluster)
    count = totals.count
    n = count.sum(cluster)
    support = scores.notnull() & scores.rename(system="system_b").notnull()
    imputed_a = _with_imputation(0.0 * n, scores, n, where=support)
    imputed_b = _with_imputation(0.0 * n, scores.rename(system="system_b"), n, where=support)
    clustered_a, clustered_b = _se(infl_a, count, cluster), _se(infl_b, count, cluster)
    se_a, se_b = np.sqrt(clustered_a**2 + imputed_a**2), np.sqrt(clustered_b**2 + imputed_b**2)
    se = np.sqrt(_se(infl_a - infl_b, count, cluster) ** 2 + imputed_a**2 + imputed_b**2)
    clusters = (count > 0).sum(cluster)
    factor = clusters / (clusters - 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = factor * (infl_a * infl_b).sum(cluster) / (se_a * se_b)
        z = (rate_a - rate_b) / se
    arrays = [a.transpose(*rate_a.dims).values for a in xr.broadcast(rate_a, rate_b, se_a, se_b, r, n, clusters)]

    def interval(level: float | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return mover_interval(*arrays, level=level)

    difference = rate_a - rate_b
    tail = tail_at(0.0, interval)
    p_value = xr.DataArray(np.minimum(2 * tail, 1.0), dims=rate_a.dims, coords=rate_a.coords)
    sign = np.sign(difference.values)
    prob_less = xr.DataArray(np.where(sign > 0, tail, np.where(sign < 0, 1 - tail, 0.5)), dims=rate_a.dims,
                             coords=rate_a.coords).where(np.isfinite(tail))
    if ci_method == "mover":
        bounds = _interval(*interval(ci), difference)
    else:
        bounds = _bootstrap_interval(totals, cluster, n_boot=n_boot, ci=ci, seed=seed)
    p_adjusted = _adjusted(p_value, method=adjust)
    with np.errstate(invalid="ignore", divide="ignore"):
        local = np.where(p_adjusted.values > 0, alpha * p_value.values / p_adjusted.values, alpha)
    lower, upper = interval(1 - np.where(np.isfinite(local), local, alpha))
    floor = xr.DataArray(np.where(difference.values >= 0, difference.values - lower, upper - difference.values),
                         dims=rate_a.dims, coords=rate_a.coords).where(np.isfinite(p_value))
    out = xr.Dataset(
        {
            "difference": difference,
            "se": se,
            "z": z,
            "ci": bounds,
            "p_value": p_value,
            "p_adjusted": p_adjusted,
            "exceeds_noise": p_adjusted < alpha,
            "noise_floor": floor,
            "prob_less": prob_less,
            "mdd": xr.apply_ufunc(lambda s, g: minimum_detectable(s, alpha=alpha, power=power, n_clusters=g), se,
                                  clusters),
            "n_clusters": clusters,
            "n_clusters_dropped": ((count == 0) & (totals.dropped > 0)).sum(cluster),
            "n_pairs": n.astype(np.int64),
            "n_dropped": totals.dropped.sum(cluster).astype(np.int64),
        }
    )
    out = out.drop_vars([c for c in out.coords if c not in out.dims]).transpose("system", "system_b", ...)
    out.attrs.update({
        "analysis": "paired differences", "multiverse_version": __version__, "cluster": cluster, "alpha": alpha,
        "power": power, "ci_level": ci, "reference": MILLER, "support": "conversation cells where both systems have a value",
        "ci_method": MOVER if ci_method == "mover" else f"expanded percentile cluster bootstrap ({HESTERBERG})",
        "test": "MOVER interval inverted", "adjust": adjust,
        "family": "the specifications of one pair of systems in one facet (role x condition)",
        "n_boot": n_boot if ci_method == "bootstrap" else 0, "seed": seed,
        "missing": scores.attrs.get("missing", "none"),
    })
    return out


def _adjusted(p_value: xr.DataArray, *, method: str) -> xr.DataArray:
    """``p_value`` adjusted over the measurement dims (the specifications), per pair and facet."""
    family = [d for d in S.MEASUREMENT_DIMS if d in p_value.dims]
    if not family:
        return p_value.copy(data=adjust_p(p_value.values[..., None], method=method)[..., 0])
    stacked = p_value.stack(specification=family)
    adjusted = stacked.copy(data=adjust_p(stacked.transpose(..., "specification").values, method=method))
    return adjusted.unstack("specification").transpose(*p_value.dims)


def _bootstrap_interval(totals, cluster: str, *, n_boot: int, ci: float, seed: int) -> xr.DataArray:
    """Expanded percentile cluster-bootstrap interval of the paired difference on common support."""
    size = totals.count.sizes[cluster]
    weights = xr.DataArray(cluster_weights(size, n_boot=n_boot, seed=seed).astype(float), dims=("draw", cluster))
    with np.errstate(invalid="ignore", divide="ignore"):
        draws = (xr.dot(weights, totals.sum_a - totals.sum_b, dim=cluster)
                 / xr.dot(weights, totals.count, dim=cluster))
    n_items = int((totals.count > 0).any([d for d in totals.count.dims if d != cluster]).sum())
    return xr.apply_ufunc(
        lambda d: expanded_percentile_interval(np.moveaxis(d, -1, 0), ci=ci, n_clusters=n_items),
        draws, input_core_dims=[["draw"]], output_core_dims=[["ci_bound"]],
    ).assign_coords(bound_coords())
