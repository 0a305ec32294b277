"""Specification curves with inference under the null (Simonsohn, Simmons & Nelson 2020).

A *specification* is one combination of the measurement dims present in the
scores (``user_sim``, ``judge``, ``standard``, ``rule``): the choices an
evaluator makes.  Estimand dims (``role``, ``condition``) are facets: each facet
gets its own curve, never pooled.  Rules of different units are never pooled:
one curve holds either rate rules or turn rules.

The estimate of a specification is a system's violation rate (the mean of its
conversations' estimation values: decided verdicts, and undecided conversations
at their expected value under the scores' missing-data assumption, see
:mod:`multiverse.scoring.estimate`; for rules in turns, the mean over
violating conversations) or the difference between two systems' rates over
the conversation cells where both have a value (common support: the same
items, replicates, user simulators and conditions).  Inference resamples items (all conversations of one item, every
system and replicate together: the cluster) with replacement; one set of draws
serves every specification, so their dependence is kept.  Imposing the null
shifts each specification's draws by its observed estimate minus the null value,
and each draw's z re-estimates the specification's standard error on the
resample (a bootstrap-t null).  The test's direction is declared beforehand
(default ``"two-sided"``): choosing it from the data inflates the 5% false-positive rate to 6-9%.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import xarray as xr

from multiverse import __version__
from multiverse.analysis._bootstrap import (
    HESTERBERG,
    bound_coords,
    cluster_weights,
    expanded_percentile_interval,
    nan_quantiles,
    resampling_p_value,
    t_critical,
)
from multiverse.analysis._scores import unit_scores
from multiverse.analysis._specs import cluster_totals, spec_coords, systems_of
from multiverse.core import schema as S

__all__ = ["clustered_influence", "clustered_se", "curve_kernel", "ratio_draws", "spec_curve", "specification_dims"]

SUMMARIES = ("median_estimate", "share_significant", "stouffer_z")
NULL_QUANTILES = (0.025, 0.5, 0.975)
DIRECTIONS = {"greater": 1, "less": -1, "two-sided": 0}


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


def resampled_se(groups: Sequence[tuple[np.ndarray, np.ndarray]], weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each draw's estimate and cluster-robust SE, recomputed on the resample.

    The estimate is ``sum_i s_i Y_i / N_i`` (signs +1, -1 for a difference) with
    ``Y_i = w @ sums_i`` and ``N_i = w @ counts_i``; its CR1 variance on the
    resample is ``G*/(G*-1) sum_g w_g u_g^2`` with ``u_g = sum_i s_i (y_ig -
    m_i n_ig) / N_i`` and ``G*`` the resampled clusters with data, expanded into
    products of the weights with per-cluster cross products (no per-draw loop).

    Returns
    -------
    draws, se
        ``(draw, spec)`` each.
    """
    w = weights.astype(np.float32)

    def dot(a: np.ndarray) -> np.ndarray:
        return (w @ a.astype(np.float32)).astype(float)

    signs = (1.0, -1.0)[: len(groups)]
    totals = [(dot(sums), dot(counts)) for sums, counts in groups]
    with np.errstate(invalid="ignore", divide="ignore"):
        means = [y / n for y, n in totals]
        draws = sum(sign * m for sign, m in zip(signs, means))
        square = 0.0
        for i, (yi, ni) in enumerate(groups):
            for j, (yj, nj) in enumerate(groups):
                cross = dot(yi * yj) - means[j] * dot(yi * nj) - means[i] * dot(ni * yj) + means[i] * means[j] * dot(ni * nj)
                square = square + signs[i] * signs[j] * cross / (totals[i][1] * totals[j][1])
        clusters = dot((sum(counts for _, counts in groups) > 0).astype(float))
        se = np.sqrt(clusters / (clusters - 1) * np.maximum(square, 0.0))
    return draws, se


def _summaries(
    estimate: np.ndarray, z: np.ndarray, median_se: np.ndarray, *, null: float, direction: int,
    upper: float | np.ndarray, lower: float | np.ndarray,
) -> np.ndarray:
    """Median estimate, share significant and Stouffer's Z in the declared direction (last axis: specs).

    The median enters studentized: its distance from ``null`` over
    ``median_se`` (the standard error of the specification(s) at the median),
    so its null draws form a bootstrap-t distribution like the z of the other
    two (unstudentized where that standard error is zero: no sampling
    variation at the median).  A specification is significant above when its
    z exceeds ``upper`` and below when it falls under ``lower`` (scalars, or
    one value per specification).  One-sided (``direction`` +1 / -1): the
    signed studentized median, the share of specifications significant in that
    direction and the signed Stouffer Z.  Two-sided (0): the absolute
    studentized median, the share significant in the dominant direction
    (Simonsohn et al. 2020) and ``|Z|``.
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        usable = np.isfinite(z)
        n = usable.sum(axis=-1)
        zz = np.where(usable, z, 0.0)
        median = (np.nanmedian(estimate, axis=-1) - null) / median_se if estimate.size else np.nan
        stouffer = zz.sum(axis=-1) / np.sqrt(n)
        above, below = (usable & (zz > upper)).sum(axis=-1), (usable & (zz < lower)).sum(axis=-1)
        if direction:
            return np.stack([direction * median, (above if direction > 0 else below) / n, direction * stouffer], axis=-1)
        return np.stack([np.abs(median), np.maximum(above, below) / n, np.abs(stouffer)], axis=-1)


def _null_critical_values(null_z: np.ndarray, *, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Each specification's ``alpha / 2`` and ``1 - alpha / 2`` quantiles of its null z draws.

    In the null draws a specification counts as significant beyond these, so
    that it is significant in ``alpha`` of them, as its t test is under the
    null.  Against the t critical value the bootstrap-t draws of a few clusters
    have heavier tails than the observed z (a resample repeating a few
    clusters gets a small standard error): at 12 items a specification's null
    draws passed it 6.1% of the time against 4.9% for the observed z, which
    made the share's null too wide and its test conservative.
    """
    finite = np.where(np.isfinite(null_z), null_z, np.nan)
    lower, upper = nan_quantiles(finite, [alpha / 2, 1 - alpha / 2])
    return upper, lower


def _median_specs(estimate: np.ndarray) -> np.ndarray:
    """Indices of the one or two specifications whose estimates make the median."""
    finite = np.flatnonzero(np.isfinite(estimate))
    if not finite.size:
        return finite
    ordered = finite[np.argsort(estimate[finite], kind="stable")]
    middle = (len(ordered) - 1) / 2
    return ordered[int(np.floor(middle)): int(np.ceil(middle)) + 1]


def curve_kernel(
    groups: Sequence[tuple[np.ndarray, np.ndarray]],
    weights: np.ndarray,
    *,
    null: float,
    direction: int,
    alpha: float,
    ci: float,
    rng: np.random.Generator,
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
        +1 or -1: the predicted sign of ``estimate - null``; 0: two-sided.
    alpha
        Two-sided level at which one specification counts as significant.
    ci
        Level of the intervals.
    rng
        Generator of the uniform weights given to null draws tied with an
        observed summary (the share of specifications is discrete).

    Returns
    -------
    dict
        ``estimate``, ``se``, ``z``, ``significant``, ``ci`` (spec, 2),
        ``observed`` and ``p_value`` (3 summaries), ``null_curve`` (3
        quantiles, spec rank).
    """
    estimate = 0.0
    influence = 0.0
    for sign, (sums, counts) in zip((1, -1), groups):
        est, infl = clustered_influence(sums, counts)
        estimate = estimate + sign * est
        influence = influence + sign * infl
    all_counts = sum(counts for _, counts in groups)
    se = clustered_se(influence, all_counts)
    n_clusters = int((all_counts.sum(axis=1) > 0).sum())
    draws, draw_se = resampled_se(groups, weights)
    with np.errstate(invalid="ignore", divide="ignore"):
        z = (estimate - null) / se
        null_z = (draws - estimate) / draw_se
    critical = float(t_critical(1 - alpha, n_clusters))
    significant = np.abs(z) > critical if direction == 0 else direction * z > critical
    null_draws = draws - estimate + null

    at_median = _median_specs(estimate)
    median_se = se[at_median].mean() if at_median.size else np.nan
    draw_median_se = draw_se[:, at_median].mean(axis=-1) if at_median.size else np.nan
    if not (np.isfinite(median_se) and median_se > 0):  # no variation at the median (e.g. both rates 0)
        median_se, draw_median_se = 1.0, np.ones(null_draws.shape[0])
    observed = _summaries(estimate, z, median_se, null=null, direction=direction, upper=critical, lower=-critical)
    null_upper, null_lower = _null_critical_values(null_z, alpha=alpha)
    null_summaries = _summaries(null_draws, null_z, draw_median_se,
                                null=null, direction=direction, upper=null_upper, lower=null_lower)
    p_value = resampling_p_value(null_summaries, observed, rng=rng)
    with np.errstate(invalid="ignore"):
        observed[0] = np.nanmedian(estimate) if estimate.size else np.nan  # report the median itself
        null_curve = nan_quantiles(np.sort(null_draws, axis=1), NULL_QUANTILES)
    return {
        "estimate": estimate,
        "se": se,
        "z": z,
        "significant": significant,
        "ci": expanded_percentile_interval(draws, ci=ci, n_clusters=n_clusters),
        "observed": observed,
        "p_value": p_value,
        "null_curve": null_curve,
    }


# --- xarray layer ----------------------------------------------------------------------------------


def specification_dims(scores: xr.DataArray) -> list[str]:
    """The measurement dims of ``scores`` that vary: the axes of the multiverse."""
    return [d for d in S.MEASUREMENT_DIMS if d in scores.dims]


def spec_curve(
    data: xr.Dataset | xr.DataArray,
    *,
    system: str | None = None,
    contrast: tuple[str, str] | None = None,
    unit: str = "rate",
    null: float = 0.0,
    direction: str = "two-sided",
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
        The alternative, declared before looking at the data: ``"two-sided"``
        (default), ``"greater"`` (estimate above ``null``) or ``"less"``.
    cluster
        Dim resampled with replacement (every conversation of one item moves
        together, across systems, replicates and user simulators).
    n_boot
        Resampling draws, shared by every specification.
    alpha
        Two-sided level at which one specification counts as significant
        (clustered z against Student's t with G - 1 degrees of freedom, G the
        clusters with data).
    ci
        Level of each specification's interval (the expanded percentile
        bootstrap interval, for few clusters).
    preferred
        ``{dim: label}`` of the specification to mark (unnamed dims: first label).
    seed
        Seed of the resampling.

    Returns
    -------
    xarray.Dataset
        Facet dims (``role``, ``condition``) x ``spec``: ``estimate``, ``se``
        (clustered), ``z``, ``significant``, ``ci`` (``ci_bound``), ``position``
        (position in the sorted curve), ``n_used`` (conversations in the
        estimate), ``n_valid`` (decided), ``n_missing`` (undecided: in the
        estimate at their expected value, or excluded) and ``n_excluded``
        (something to rule on but not in the estimate: no estimate under the
        scores' assumption, or, in a contrast, no value for the other
        system on that conversation cell); per facet
        ``observed`` and ``p_value`` over ``statistic`` (median estimate, share
        significant in the declared direction, Stouffer's Z; p = (1 + null draws
        more extreme + U x null draws tied) / (1 + draws), see Notes) and ``null_curve`` over
        (``quantile``, ``rank``).  The specification's labels are coordinates along ``spec``;
        ``preferred`` marks one.

    Notes
    -----
    A specification is significant when its clustered z (estimate minus null
    over the cluster-robust standard error) exceeds the two-sided critical value
    of t with G - 1 degrees of freedom, in the declared direction (either, for
    two-sided).  Stouffer's Z is the sum of the specifications' z over the square
    root of their number, signed by a one-sided direction (its absolute value
    when two-sided); the two-sided share counts the dominant sign.  The median
    is tested studentized by the standard error of the specification(s) at the
    median (two-sided: its distance from the null).  Each null draw recomputes
    the three summaries from the resampled, null-imposed estimates, each scaled
    by its standard error re-estimated on that resample; in a null draw a
    specification is significant beyond its own ``alpha / 2`` quantiles of
    those z, so each is significant in ``alpha`` of the draws, as under the
    null with the t test.  A p-value is ``(1 + k + U t) / (1 + B)``, ``k`` of
    ``B`` null draws more extreme than the observed summary, ``t`` tied with
    it, ``U`` uniform (from ``seed``): this randomised tie-break gives the
    discrete share its nominal size.  The p-value is never 0.

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
    groups_of = systems_of(scores, system, contrast)
    spec_dims = specification_dims(scores)
    facets = [d for d in S.ESTIMAND_DIMS if d in scores.dims]
    parts = [scores.sel(system=s) if s is not None else scores for s in groups_of]
    used = [(p.notnull() if unit == "rate" else p["weight"].broadcast_like(p).notnull()) if "weight" in p.coords
            else p.notnull() for p in parts]
    if len(parts) == 2:  # a contrast compares the two systems on the conversation cells where both have a value
        common = used[0].drop_vars("system", errors="ignore") & used[1].drop_vars("system", errors="ignore")
        used = [common, common]
    totals = [cluster_totals(p, u, cluster, spec_dims, facets, unit) for p, u in zip(parts, used)]
    spec_index = totals[0].indexes["spec"] if spec_dims else None
    weights = cluster_weights(scores.sizes[cluster], n_boot=n_boot, seed=seed)
    ties = np.random.default_rng(np.random.SeedSequence(seed).spawn(1)[0])  # a stream apart from the weights'
    if direction not in DIRECTIONS:
        raise ValueError(f"spec_curve: direction {direction!r}, expected one of {', '.join(DIRECTIONS)}")
    sign = DIRECTIONS[direction]

    facet_shape = [scores.sizes[f] for f in facets]
    results: dict[str, list] = {}
    for position in np.ndindex(*facet_shape):
        at = dict(zip(facets, position))
        groups = [(t["sums"].isel(at).values.astype(float), t["counts"].isel(at).values.astype(float)) for t in totals]
        kernel = curve_kernel(groups, weights, null=null, direction=sign, alpha=alpha, ci=ci, rng=ties)
        for key, value in kernel.items():
            results.setdefault(key, []).append(value)

    def stacked(key: str) -> np.ndarray:
        arr = np.stack(results[key])
        return arr.reshape(tuple(facet_shape) + arr.shape[1:])

    n_specs = totals[0].sizes["spec"]
    facet_coords = {f: scores[f].values for f in facets}
    labels = spec_coords(spec_index, spec_dims, n_specs, preferred)

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
            "n_used": (fs + ("spec",), total("used")),
            "n_valid": (fs + ("spec",), total("valid")),
            "n_missing": (fs + ("spec",), total("missing")),
            "n_excluded": (fs + ("spec",), total("excluded")),
            "observed": (fs + ("statistic",), stacked("observed")),
            "p_value": (fs + ("statistic",), stacked("p_value")),
            "null_curve": (fs + ("quantile", "rank_position"), stacked("null_curve")),
        },
        coords={**facet_coords, **labels, **bound_coords(), "statistic": list(SUMMARIES),
                "quantile": list(NULL_QUANTILES), "rank_position": np.arange(n_specs)},
    )
    out.attrs.update(
        {
            "analysis": "specification curve",
            "multiverse_version": __version__,
            "estimand": f"rate({groups_of[0]}) - rate({groups_of[1]})" if len(groups_of) == 2 else f"rate({groups_of[0]})",
            "unit": unit,
            "null": null,
            "direction": direction,
            "p_value_method": "bootstrap-t null (SE re-estimated per draw), (1 + k + U ties) / (1 + B)",
            "ci_method": f"expanded percentile bootstrap ({HESTERBERG})",
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
