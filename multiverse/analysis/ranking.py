"""Rankings of systems across the multiverse: do they flip with the judge?

A ranking orders systems by their rate under one specification (lowest
violation rate first; for leaderboards, highest score first), every system's
rate taken over the same conversation cells (common support: the cells where
every system has a value), so identical systems tie.  Rankings under two values
of a dim (two judges, two user simulators, ...) are compared with Kendall's tau
(``scipy.stats.kendalltau``, tau-b) and with the share of system pairs whose
order flips.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import xarray as xr
from scipy import stats

from multiverse import __version__
from multiverse.analysis._paired import pair_totals
from multiverse.analysis._scores import unit_scores
from multiverse.analysis.curve import clustered_influence
from multiverse.analysis.likert import is_rated, mean_rating
from multiverse.analysis.noise import paired_differences

__all__ = [
    "NUISANCE",
    "rank_kernel",
    "order_flips",
    "tau",
    "rankings",
    "rank_agreement",
    "win_shares",
    "leaderboard_table",
    "leaderboard_rankings",
]

NUISANCE = ("replicate", "item")


def _bare(array: xr.DataArray) -> xr.DataArray:
    return array.drop_vars([c for c in array.coords if c not in array.dims])


def _rates(data: xr.Dataset | xr.DataArray) -> xr.DataArray:
    """System rates per specification on common support (rate rules only; a likert cube's mean ratings).

    Rates pass through unchanged.  A conversation cell (role, user simulator,
    condition, replicate, item) counts for a specification when every system
    has a value there; the
    coordinates ``n_common`` and ``n_dropped`` count the cells used and those
    dropped for missing support.
    """
    if is_rated(data):
        return mean_rating(data).reset_coords(drop=True)
    scores = _bare(unit_scores(data))
    if "system" not in scores.dims:
        raise ValueError(f"rankings: no 'system' dim to rank (dims: {scores.dims})")
    reduce = [d for d in NUISANCE if d in scores.dims]
    if not reduce:
        return scores
    common = scores.notnull().all("system")
    dropped = scores.notnull().any("system") & ~common
    return scores.where(common).mean(reduce).assign_coords(n_common=common.sum(reduce), n_dropped=dropped.sum(reduce))


# --- numpy kernels ---------------------------------------------------------------------------------


def rank_kernel(values: np.ndarray, *, axis: int, higher_is_better: bool) -> np.ndarray:
    """Average ranks (1 = best) along ``axis``; NaN values stay unranked (NaN)."""
    oriented = -values if higher_is_better else values
    return stats.rankdata(oriented, axis=axis, method="average", nan_policy="omit")


def order_flips(x: np.ndarray, y: np.ndarray) -> tuple[float, int]:
    """Share of pairs (both values present in x and y) ordered oppositely; and the pair count."""
    keep = ~(np.isnan(x) | np.isnan(y))
    x, y = x[keep], y[keep]
    i, j = np.triu_indices(len(x), k=1)
    sx, sy = np.sign(x[i] - x[j]), np.sign(y[i] - y[j])
    n = len(i)
    return (float(np.mean(sx * sy < 0)) if n else np.nan), n


def tau(x: np.ndarray, y: np.ndarray) -> float:
    """Kendall's tau-b over the entries present in both (NaN with fewer than two)."""
    keep = ~(np.isnan(x) | np.isnan(y))
    if keep.sum() < 2:
        return np.nan
    return float(stats.kendalltau(x[keep], y[keep]).statistic)


def _taus_and_flips(sx: np.ndarray, sy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Kendall's tau-b and the flip share per row, from the signs of every system pair's difference.

    ``sx`` and ``sy`` are (combination, pair) signs, NaN where either system's
    rate is missing; a pair counts when both rankings have both systems, as in
    :func:`tau` and :func:`order_flips`, which this computes for all
    combinations at once (scipy's ``kendalltau`` one combination at a time
    dominated the report's analyses).
    """
    valid = ~(np.isnan(sx) | np.isnan(sy))
    x, y = np.where(valid, sx, 0.0), np.where(valid, sy, 0.0)
    pairs = valid.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        t = (x * y).sum(axis=-1) / np.sqrt((x != 0).sum(axis=-1) * (y != 0).sum(axis=-1))
        f = (x * y < 0).sum(axis=-1) / pairs
    return np.where(pairs > 0, t, np.nan), np.where(pairs > 0, f, np.nan)


# --- public functions ---------------------------------------------------------------------------------


def rankings(data: xr.Dataset | xr.DataArray, *, higher_is_better: bool | None = None) -> xr.DataArray:
    """The rank of every system under every specification.

    Parameters
    ----------
    data
        A cube, its scores, or a DataArray of rates with a ``system`` dim
        (e.g. from :func:`leaderboard_table`).
    higher_is_better
        False for violation rates (lowest first), True for leaderboard scores
        and ratings.  Default: True for a cube of likert ratings (ranked by
        :func:`multiverse.analysis.likert.mean_rating`), else False.

    Returns
    -------
    xarray.DataArray
        Ranks (1 = best, ties averaged, NaN where the rate is missing) over
        ``system`` and the specification dims, from rates on common support
        (every system on the same conversation cells); coordinates
        ``n_common`` and ``n_dropped`` count the cells used and dropped.

    See Also
    --------
    rank_agreement, win_shares
    """
    if higher_is_better is None:
        higher_is_better = is_rated(data)
    rates = _rates(data)
    ranks = xr.apply_ufunc(
        rank_kernel, rates, input_core_dims=[["system"]], output_core_dims=[["system"]],
        kwargs={"axis": -1, "higher_is_better": higher_is_better},
    ).transpose(*rates.dims)
    ranks.name = "rank"
    ranks.attrs.update({
        "analysis": "rankings", "multiverse_version": __version__,
        "order": "higher is better" if higher_is_better else "lower is better",
    })
    return ranks


def rank_agreement(
    data: xr.Dataset | xr.DataArray, *, dim: str = "judge", higher_is_better: bool | None = None
) -> xr.Dataset:
    """How much the ranking of systems depends on the value of ``dim``.

    For every pair of values of ``dim`` (e.g. two judges), and every
    combination of the other specification dims, the rankings of systems are
    compared; the results are averaged over those combinations.

    Parameters
    ----------
    data
        A cube, its scores, or rates with ``system`` and ``dim`` dims.
    dim
        The dim whose values are compared.
    higher_is_better
        Orientation of the rates (default as in :func:`rankings`).

    Returns
    -------
    xarray.Dataset
        Dims (``dim``, ``<dim>_b``): ``kendall_tau`` (mean tau-b),
        ``flip_share`` (mean share of system pairs in opposite order: the
        rank-flip matrix), ``n_specs`` (combinations compared) and
        ``n_specs_dropped`` (combinations without a tau: a system without a
        rate, or every system tied, under one of the two values).  Over
        ``dim``, from a cube or scores: ``n_common`` (conversation cells behind
        the rates, every system having a value there, summed over the other
        specification dims) and ``n_dropped`` (cells dropped for missing
        support: some system, not every one, has a value).

    See Also
    --------
    rankings, leaderboard_table
    """
    if higher_is_better is None:
        higher_is_better = is_rated(data)
    rates = _rates(data)
    if dim not in rates.dims:
        raise ValueError(f"rank_agreement: dim {dim!r} not in the rates' dims {rates.dims}")
    oriented = -rates if higher_is_better else rates
    others = [d for d in oriented.dims if d not in ("system", dim)]
    stacked = oriented.stack(combo=others) if others else oriented.expand_dims(combo=[0])
    values = stacked.transpose(dim, "combo", "system").values
    n = values.shape[0]
    taus = np.full((n, n), np.nan)
    flips = np.full((n, n), np.nan)
    counts = np.zeros((n, n), dtype=np.int64)
    i, j = np.triu_indices(values.shape[2], k=1)
    signs = np.sign(values[..., i] - values[..., j])  # (dim value, combo, system pair); NaN where a rate is missing
    for a in range(n):
        for b in range(n):
            t, f = _taus_and_flips(signs[a], signs[b])
            usable = np.isfinite(t)
            counts[a, b] = int(usable.sum())
            if usable.any():
                taus[a, b] = float(np.mean(t[usable]))
            if np.isfinite(f).any():
                flips[a, b] = float(np.nanmean(f))
    labels = rates[dim].values
    coords = {dim: labels, f"{dim}_b": labels}
    pair = (dim, f"{dim}_b")
    out = xr.Dataset({"kendall_tau": (pair, taus), "flip_share": (pair, flips), "n_specs": (pair, counts),
                      "n_specs_dropped": (pair, values.shape[1] - counts)}, coords=coords)
    for name in ("n_common", "n_dropped"):
        if name in rates.coords:
            total = rates[name].sum([d for d in rates[name].dims if d != dim])
            out[name] = total.drop_vars([c for c in total.coords if c != dim]).astype(np.int64)
    out.attrs.update({
        "analysis": "rank agreement", "multiverse_version": __version__, "dim": dim,
        "tau": "Kendall tau-b (scipy.stats.kendalltau)",
    })
    return out


def win_shares(
    data: xr.Dataset | xr.DataArray,
    *,
    alpha: float = 0.05,
    adjust: str = "holm",
    cluster: str = "item",
    rerun: str = "replicate",
) -> xr.Dataset:
    """How likely is system A to beat system B across the multiverse, and where beyond the noise?

    Parameters
    ----------
    data
        A cube or its scores (conversation-level, so the noise is known).
    alpha
        Level at which a specification's difference counts as beyond the noise.
    adjust
        Multiplicity adjustment of those flags over the specifications
        (see :func:`paired_differences`).
    cluster, rerun
        The item dim and the rerun dim.

    Returns
    -------
    xarray.Dataset
        Dims (``system``, ``system_b``): ``prob_better`` (the confidence
        that A's violation rate, averaged over the specifications, is lower
        than B's: Student's t on G - 1 degrees of freedom at the
        multiverse-mean difference over its clustered standard error, so it is
        uniform when the two are equal, and not a share of specifications),
        ``share_of_specs_better`` (the share of specifications whose point
        estimate has A lower: descriptive), ``share_better_beyond_noise`` and
        ``share_worse_beyond_noise`` (shares of specifications whose
        ``adjust``-ed test says A lower, higher), ``n_specs``, and summed
        over the specifications ``n_pairs`` (conversation cells compared) and
        ``n_dropped`` (cells only one of the two had: no common support).

    See Also
    --------
    paired_differences, rankings
    """
    pairs = paired_differences(data, alpha=alpha, adjust=adjust, cluster=cluster, rerun=rerun)
    spec_dims = [d for d in pairs["difference"].dims if d not in ("system", "system_b")]
    difference = pairs["difference"]
    n = difference.notnull().sum(spec_dims)
    significant = pairs["exceeds_noise"]
    with np.errstate(invalid="ignore", divide="ignore"):
        out = xr.Dataset(
            {
                "prob_better": _prob_better(unit_scores(data), spec_dims, cluster=cluster, rerun=rerun),
                "share_of_specs_better": (difference < 0).sum(spec_dims) / n,
                "share_better_beyond_noise": ((difference < 0) & significant).sum(spec_dims) / n,
                "share_worse_beyond_noise": ((difference > 0) & significant).sum(spec_dims) / n,
                "n_specs": n,
                "n_pairs": pairs["n_pairs"].sum(spec_dims),
                "n_dropped": pairs["n_dropped"].sum(spec_dims),
            }
        )
    out.attrs.update({
        "analysis": "win shares", "multiverse_version": __version__, "alpha": alpha, "adjust": adjust,
        "better": "lower violation rate", "prob_better": "t (G - 1 df) at the multiverse-mean paired difference",
    })
    return out


def _prob_better(scores: xr.DataArray, spec_dims: list[str], *, cluster: str, rerun: str) -> xr.DataArray:
    """The t confidence that rate(system) < rate(system_b), averaged over the specifications, on common support."""
    totals = pair_totals(scores, cluster=cluster, rerun=rerun)
    diff, influence = xr.apply_ufunc(
        clustered_influence, totals.sum_a - totals.sum_b, totals.count, kwargs={"axis": -1},
        input_core_dims=[[cluster], [cluster]], output_core_dims=[[], [cluster]],
    )
    mean = diff.mean(spec_dims)
    mean_influence = influence.mean(spec_dims)
    clusters = (totals.count > 0).any(spec_dims).sum(cluster)
    with np.errstate(invalid="ignore", divide="ignore"):
        se = np.sqrt(clusters / (clusters - 1) * (mean_influence**2).sum(cluster))
        prob = xr.apply_ufunc(lambda d, s, g: stats.t.cdf(-d / s, np.maximum(g - 1, 1)), mean, se, clusters)
    certain = 0.5 * (1 + np.sign(-mean))  # no spread: the sign of the difference itself (0.5 for none)
    return xr.where(se == 0, certain, prob).where(clusters >= 2)


def leaderboard_table(
    table: pd.DataFrame,
    *,
    system: str = "system",
    judge: str = "judge",
    value: str = "win_rate",
) -> xr.DataArray:
    """A plain per-judge leaderboard (long or wide) as rates over (``system``, ``judge``).

    Parameters
    ----------
    table
        Long form: one row per (system, judge) with columns ``system``,
        ``judge``, ``value``.  Wide form: systems as the index, one column per
        judge.
    system, judge, value
        Column names of the long form.

    Returns
    -------
    xarray.DataArray
        NaN where a judge did not rank a system.

    See Also
    --------
    rankings, rank_agreement
    """
    if {system, judge, value} <= set(table.columns):
        wide = table.pivot_table(index=system, columns=judge, values=value, aggfunc="mean")
    else:
        wide = table
    numeric = wide.apply(pd.to_numeric, errors="coerce")
    if numeric.isna().all().any():
        bad = numeric.columns[numeric.isna().all()][0]
        raise ValueError(f"leaderboard_table: column {bad!r} holds no numbers; expected one score column per judge")
    da = xr.DataArray(
        numeric.to_numpy(dtype=float), dims=("system", "judge"),
        coords={"system": numeric.index.astype(str).to_numpy(), "judge": numeric.columns.astype(str).to_numpy()},
        name=value,
    )
    return da


def leaderboard_rankings(table: pd.DataFrame | xr.DataArray, *, higher_is_better: bool = True, **columns: str) -> xr.Dataset:
    """Rankings and their agreement across judges for plain per-judge leaderboards.

    Parameters
    ----------
    table
        A long or wide table (see :func:`leaderboard_table`) or its DataArray.
    higher_is_better
        True for win rates.
    **columns
        ``system=``, ``judge=``, ``value=`` column names of a long table.

    Returns
    -------
    xarray.Dataset
        ``rank`` (system, judge) and the :func:`rank_agreement` variables over
        (``judge``, ``judge_b``); systems a judge did not rank are left out of
        that judge's comparisons.

    See Also
    --------
    rank_agreement
    """
    rates = table if isinstance(table, xr.DataArray) else leaderboard_table(table, **columns)
    out = rank_agreement(rates, dim="judge", higher_is_better=higher_is_better)
    out["rank"] = rankings(rates, higher_is_better=higher_is_better)
    out["n_common"] = xr.DataArray(
        [[int((rates.sel(judge=a).notnull() & rates.sel(judge=b).notnull()).sum()) for b in rates["judge"].values]
         for a in rates["judge"].values],
        dims=("judge", "judge_b"),
    )
    return out

