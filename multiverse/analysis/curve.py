"""Specification curves with inference under the null (Simonsohn, Simmons & Nelson 2020).

A *specification* is one combination of the measurement dims present in the
scores (``user_sim``, ``judge``, ``standard``, ``rule``): the choices an
evaluator makes.  Estimand dims (``role``, ``condition``) are facets: each facet
gets its own curve, never pooled.  Rules of different units are never pooled:
one curve holds either rate rules or turn rules.

The estimate of a specification is a system's violation rate (the mean of its
conversation values, missing ones excluded) or the difference between two
systems' rates.  Inference resamples items (all conversations of one item, every
system and replicate together: the cluster) with replacement; one set of draws
serves every specification, so their dependence is kept.  Imposing the null
shifts each specification's draws by its observed estimate minus the null value.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import xarray as xr
from scipy import stats

from multiverse import __version__
from multiverse import _schema as S
from multiverse.analysis._bootstrap import bound_coords, cluster_weights, nan_quantiles, percentile_interval
from multiverse.analysis._scores import unit_scores
from multiverse.score import is_valid

__all__ = [
    "SUMMARIES",
    "NULL_QUANTILES",
    "ratio_draws",
    "clustered_influence",
    "clustered_se",
    "curve_kernel",
    "specification_dims",
    "spec_curve",
]

SUMMARIES = ("median_estimate", "share_significant", "stouffer_z")
NULL_QUANTILES = (0.025, 0.5, 0.975)


# --- numpy kernel --------------------------------------------------------------------------------


def ratio_draws(sums: np.ndarray, counts: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Resampled rates: ``(weights @ sums) / (weights @ counts)``, NaN without data.

    ``sums`` and ``counts`` are ``(cluster, spec)``; ``weights`` ``(draw, cluster)``.
    The products run in float32 (twice as fast; exact for the integer counts,
    and 1e-7 relative for shares, far below any resampling error).
    """
    w = weights.astype(np.float32)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (w @ sums.astype(np.float32)).astype(float) / (w @ counts.astype(np.float32))


def clustered_influence(sums: np.ndarray, counts: np.ndarray, *, axis: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Each cluster's influence on a ratio estimate ``sum(sums) / sum(counts)``.

    Returns the estimate (``axis`` reduced) and the influences (same shape as
    ``sums``) ``(y_g - m n_g) / N``; the cluster-robust variance is
    ``G/(G-1) sum u_g^2`` (the linearised ratio estimator with the CR1
    small-sample factor: for a plain mean, exactly statsmodels' cluster
    covariance of an intercept-only OLS).
    """
    total = counts.sum(axis=axis)
    with np.errstate(invalid="ignore", divide="ignore"):
        estimate = sums.sum(axis=axis) / total
        influence = (sums - np.expand_dims(estimate, axis) * counts) / np.expand_dims(total, axis)
    return estimate, influence


def clustered_se(influence: np.ndarray, counts: np.ndarray, *, axis: int = 0) -> np.ndarray:
    """Cluster-robust standard error from influences; clusters along ``axis``."""
    clusters = (counts > 0).sum(axis=axis)
    with np.errstate(invalid="ignore", divide="ignore"):
        factor = clusters / (clusters - 1)
        return np.sqrt(factor * np.nansum(influence**2, axis=axis))


def curve_kernel(
    groups: Sequence[tuple[np.ndarray, np.ndarray]],
    weights: np.ndarray,
    *,
    null: float,
    direction: int,
    alpha: float,
    ci: float,
) -> dict[str, np.ndarray]:
    """Estimates, intervals and null inference for every specification of one facet.

    Parameters
    ----------
    groups
        One ``(sums, counts)`` pair of ``(cluster, spec)`` arrays for a rate, two
        for a difference (first minus second).
    weights
        ``(draw, cluster)`` resampling counts, shared by every specification.
    null
        Value of the estimate under the null.
    direction
        +1 or -1: the predicted sign of ``estimate - null``.
    alpha
        Two-sided level at which one specification counts as significant.
    ci
        Level of the percentile intervals.

    Returns
    -------
    dict
        ``estimate``, ``se``, ``z``, ``significant``, ``ci`` (spec, 2),
        ``observed`` and ``p_value`` (3 summaries), ``null_summaries``
        (draw, 3), ``null_curve`` (3 quantiles, spec rank).
    """
    estimate = 0.0
    influence = 0.0
    draws = 0.0
    for sign, (sums, counts) in zip((1, -1), groups):
        est, infl = clustered_influence(sums, counts)
        estimate = estimate + sign * est
        influence = influence + sign * infl
        draws = draws + sign * ratio_draws(sums, counts, weights)
    all_counts = sum(counts for _, counts in groups)
    se = clustered_se(influence, all_counts)
    with np.errstate(invalid="ignore", divide="ignore"):
        z = (estimate - null) / se
        null_z = (draws - estimate) / se
    critical = stats.norm.ppf(1 - alpha / 2)
    significant = direction * z > critical
    null_draws = draws - estimate + null

    def summaries(est: np.ndarray, zz: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore"):
            usable = np.isfinite(zz)
            n = usable.sum(axis=-1)
            median = np.nanmedian(est, axis=-1) if est.size else np.nan
            share = (direction * np.where(usable, zz, 0) > critical).sum(axis=-1) / n
            stouffer = np.where(usable, direction * zz, 0).sum(axis=-1) / np.sqrt(n)
        return np.stack([direction * (median - null), share, stouffer], axis=-1)

    observed = summaries(estimate, z)
    null_summaries = summaries(null_draws, null_z)
    p_value = (null_summaries >= observed - 1e-12).mean(axis=0)
    observed[0] = direction * observed[0] + null  # report the median itself
    with np.errstate(invalid="ignore"):
        null_curve = nan_quantiles(np.sort(null_draws, axis=1), NULL_QUANTILES)
    return {
        "estimate": estimate,
        "se": se,
        "z": z,
        "significant": significant,
        "ci": percentile_interval(draws, ci=ci),
        "observed": observed,
        "p_value": p_value,
        "null_curve": null_curve,
    }


# --- xarray layer ----------------------------------------------------------------------------------


def specification_dims(scores: xr.DataArray) -> list[str]:
    """The measurement dims of ``scores`` that vary: the axes of the multiverse."""
    return [d for d in S.MEASUREMENT_DIMS if d in scores.dims]


def _cluster_totals(values: xr.DataArray, cluster: str, spec_dims: list[str], facets: list[str]) -> xr.Dataset:
    """Per cluster and specification: sum and count of the values, and counts of
    missing (completed, undecided) and excluded (not completed) conversations."""
    stacked = values.stack(spec=spec_dims) if spec_dims else values.expand_dims(spec=[0])
    reduce = [d for d in stacked.dims if d not in (cluster, "spec", *facets)]
    order = [*reduce, *facets, cluster, "spec"]
    stacked = stacked.transpose(*order)
    data = stacked.values
    axes = tuple(range(len(reduce)))  # leading axes: sums over them are fast
    valid = ~np.isnan(data)
    decided = is_valid(stacked).transpose(*order).values
    if "completed" in stacked.coords:
        completed = np.broadcast_to(stacked["completed"].broadcast_like(stacked).transpose(*order).values, data.shape)
    else:
        completed = np.ones(data.shape, dtype=bool)
    kept = stacked.isel({d: 0 for d in reduce}, drop=True)
    dims = kept.dims

    def total(arr: np.ndarray) -> tuple[tuple[str, ...], np.ndarray]:
        return dims, arr.sum(axis=axes) if axes else arr

    totals = xr.Dataset(
        {
            "sums": total(np.where(valid, data, 0.0)),
            "counts": total(valid.astype(np.int64)),
            "missing": total(completed & ~decided),
            "excluded": total(~completed),
        },
        coords={d: kept[d] for d in dims if d != "spec"},
    )
    return totals.assign_coords(spec=kept["spec"]) if spec_dims else totals


def spec_curve(
    data: xr.Dataset | xr.DataArray,
    *,
    system: str | None = None,
    contrast: tuple[str, str] | None = None,
    unit: str = "rate",
    null: float = 0.0,
    direction: str = "auto",
    cluster: str = "item",
    n_boot: int = 500,
    alpha: float = 0.05,
    ci: float = 0.95,
    preferred: Mapping[str, str] | None = None,
    seed: int = 0,
) -> xr.Dataset:
    """The estimate under every specification, sorted, with inference under the null.

    Parameters
    ----------
    data
        A judgment cube (scored with :func:`multiverse.score`) or scores.
        Select values beforehand (``.sel``) to restrict the multiverse.
    system
        The system whose violation rate is the estimate.
    contrast
        ``(a, b)``: the estimate is rate(a) - rate(b), paired by cluster.
        Give exactly one of ``system`` and ``contrast``; with neither, a cube
        or scores holding one system is used.
    unit
        ``"rate"`` or ``"turns"``: which rules enter (never both).
    null
        Value of the estimate under the null (0 for a difference; a
        reference rate for one system).
    direction
        ``"greater"``, ``"less"`` or ``"auto"`` (the sign of the observed median
        minus ``null``; declare it beforehand for a confirmatory test).
    cluster
        Dim resampled with replacement (every conversation of one item moves
        together, across systems, replicates and user simulators).
    n_boot
        Resampling draws, shared by every specification.
    alpha
        Two-sided level at which one specification counts as significant.
    ci
        Level of each specification's percentile interval.
    preferred
        ``{dim: label}`` of the specification to mark (unnamed dims: first label).
    seed
        Seed of the resampling.

    Returns
    -------
    xarray.Dataset
        Facet dims (``role``, ``condition``) x ``spec``: ``estimate``, ``se``
        (clustered), ``z``, ``significant``, ``ci`` (``ci_bound``), ``position``
        (position in the sorted curve), ``n_valid``, ``n_missing``,
        ``n_excluded`` (conversations behind each estimate); per facet
        ``observed`` and ``p_value`` over ``statistic`` (median estimate, share
        significant in the predicted direction, Stouffer's Z; p = share of null
        draws at least as extreme) and ``null_curve`` over (``quantile``,
        ``rank``).  The specification's labels are coordinates along ``spec``;
        ``preferred`` marks one.

    Notes
    -----
    A specification is significant when its clustered z (estimate minus null
    over the cluster-robust standard error) exceeds the two-sided critical value
    in the predicted direction.  Stouffer's Z is the sum of the specifications'
    z in the predicted direction over the square root of their number.  Each
    null draw recomputes the three summaries from the resampled, null-imposed
    estimates, scaled by the observed standard errors (the resampled errors
    differ from them only by resampling noise, and reusing them saves one matrix
    product per draw); a p-value is the share of null draws whose summary is at
    least as extreme as the observed one in the predicted direction.

    See Also
    --------
    multiverse.plots.plot_spec_curve, noise_floor, variance_decomposition
    """
    scores = unit_scores(data, unit)
    if scores.sizes.get("rule") == 0:
        raise ValueError(f"spec_curve: no rule of unit {unit!r} in the scores")
    if cluster not in scores.dims:
        raise ValueError(f"spec_curve: scores have no cluster dim {cluster!r} (dims: {scores.dims})")
    if scores.sizes[cluster] < 2:
        raise ValueError(f"spec_curve: needs at least 2 values of {cluster!r} to resample, got {scores.sizes[cluster]}")
    groups_of = _systems(scores, system, contrast)
    spec_dims = specification_dims(scores)
    facets = [d for d in S.ESTIMAND_DIMS if d in scores.dims]
    totals = [_cluster_totals(scores.sel(system=s) if s is not None else scores, cluster, spec_dims, facets) for s in groups_of]
    spec_index = totals[0].indexes["spec"] if spec_dims else None
    weights = cluster_weights(scores.sizes[cluster], n_boot=n_boot, seed=seed)
    sign = _direction(direction, totals, null, cluster)

    facet_shape = [scores.sizes[f] for f in facets]
    results: dict[str, list] = {}
    for position in np.ndindex(*facet_shape):
        at = dict(zip(facets, position))
        groups = [(t["sums"].isel(at).values.astype(float), t["counts"].isel(at).values.astype(float)) for t in totals]
        for key, value in curve_kernel(groups, weights, null=null, direction=sign, alpha=alpha, ci=ci).items():
            results.setdefault(key, []).append(value)

    def stacked(key: str) -> np.ndarray:
        arr = np.stack(results[key])
        return arr.reshape(tuple(facet_shape) + arr.shape[1:])

    n_specs = totals[0].sizes["spec"]
    facet_coords = {f: scores[f].values for f in facets}
    spec_coords = _spec_coords(spec_index, spec_dims, n_specs, preferred)

    def total(name: str) -> np.ndarray:
        return sum(t[name].sum(cluster) for t in totals).transpose(*facets, "spec").values.astype(np.int64)

    estimate = stacked("estimate")
    rank = np.argsort(np.argsort(np.where(np.isnan(estimate), np.inf, estimate), axis=-1), axis=-1)
    fs = tuple(facets)
    out = xr.Dataset(
        {
            "estimate": (fs + ("spec",), estimate),
            "se": (fs + ("spec",), stacked("se")),
            "z": (fs + ("spec",), stacked("z")),
            "significant": (fs + ("spec",), stacked("significant")),
            "ci": (fs + ("spec", "ci_bound"), stacked("ci")),
            "position": (fs + ("spec",), rank),
            "n_valid": (fs + ("spec",), total("counts")),
            "n_missing": (fs + ("spec",), total("missing")),
            "n_excluded": (fs + ("spec",), total("excluded")),
            "observed": (fs + ("statistic",), stacked("observed")),
            "p_value": (fs + ("statistic",), stacked("p_value")),
            "null_curve": (fs + ("quantile", "rank_position"), stacked("null_curve")),
        },
        coords={**facet_coords, **spec_coords, **bound_coords(), "statistic": list(SUMMARIES),
                "quantile": list(NULL_QUANTILES), "rank_position": np.arange(n_specs)},
    )
    out.attrs.update(
        {
            "analysis": "specification curve",
            "multiverse_version": __version__,
            "estimand": f"rate({groups_of[0]}) - rate({groups_of[1]})" if len(groups_of) == 2 else f"rate({groups_of[0]})",
            "unit": unit,
            "null": null,
            "direction": "greater" if sign > 0 else "less",
            "cluster": cluster,
            "n_boot": n_boot,
            "alpha": alpha,
            "ci_level": ci,
            "seed": seed,
            "specification_dims": ",".join(spec_dims),
            "reference": "Simonsohn, Simmons & Nelson (2020), Nature Human Behaviour 4, 1208-1214",
        }
    )
    return out


def _systems(scores: xr.DataArray, system: str | None, contrast: tuple[str, str] | None) -> list[str | None]:
    if system is not None and contrast is not None:
        raise ValueError("spec_curve: give system= or contrast=, not both")
    if "system" not in scores.dims:
        if system is not None or contrast is not None:
            raise ValueError("spec_curve: scores have no 'system' dim to select from")
        return [None]
    labels = [str(v) for v in scores["system"].values]
    chosen = list(contrast) if contrast is not None else [system] if system is not None else labels
    if len(chosen) != (2 if contrast is not None else 1):
        raise ValueError(f"spec_curve: {len(labels)} systems {labels}; pick one with system= or two with contrast=")
    unknown = [s for s in chosen if s not in labels]
    if unknown:
        raise ValueError(f"spec_curve: unknown system {unknown[0]!r}; systems: {labels}")
    return chosen


def _direction(direction: str, totals: list[xr.Dataset], null: float, cluster: str) -> int:
    if direction in ("greater", "less"):
        return 1 if direction == "greater" else -1
    if direction != "auto":
        raise ValueError(f"spec_curve: direction {direction!r}, expected 'greater', 'less' or 'auto'")
    estimate = 0.0
    for sign, t in zip((1, -1), totals):
        estimate = estimate + sign * (t["sums"].sum(cluster) / t["counts"].sum(cluster)).values
    finite = np.isfinite(estimate)
    return 1 if not finite.any() or np.median(estimate[finite]) >= null else -1


def _spec_coords(index, spec_dims: list[str], n_specs: int, preferred: Mapping[str, str] | None) -> dict:
    coords: dict[str, tuple[str, np.ndarray]] = {"spec": ("spec", np.arange(n_specs))}
    labels = {}
    for d in spec_dims:
        labels[d] = np.asarray(index.get_level_values(d)).astype(str)
        coords[d] = ("spec", labels[d])
    if preferred is not None:
        unknown = [d for d in preferred if d not in spec_dims]
        if unknown:
            raise ValueError(f"spec_curve: preferred names {unknown[0]!r}, not a specification dim {spec_dims}")
    mark = np.ones(n_specs, dtype=bool)
    for d in spec_dims:
        want = (preferred or {}).get(d, labels[d][0] if n_specs else None)
        mark &= labels[d] == str(want)
    coords["preferred"] = ("spec", mark)
    return coords
