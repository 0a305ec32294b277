"""tau-bench's pass^k: the chance that k reruns of an item are all clean.

For each item, the unbiased estimate of ``theta_i^k`` (``theta_i`` the item's
chance of a clean rerun) from its own ``n_i`` usable reruns is the mean, over
the ``C(n_i, k)`` sets of ``k`` of them, of the product of their chances of
being clean: ``e_k(z) / C(n_i, k)``, with ``e_k`` the elementary symmetric
polynomial of the reruns' chances ``z``.  For reruns whose verdict is known
``z`` is 1 (clean) or 0, and this is tau-bench's ``C(c_i, k) / C(n_i, k)``.
pass^k is the mean of the per-item estimates over the items with at least
``k`` usable reruns, separately for each ``k``: the value for one ``k`` does
not depend on which other ``k`` are asked.

Which reruns are usable follows the scores' missing-data assumption
(:mod:`multiverse.scoring.estimate`): under ``"mar"`` every rerun with
something to rule on, an undecided one with its chance of being clean
(``1 - expected``, for rules whose values are 0 or 1; a rule with shares,
``turn_mean``, uses its decided reruns only); under ``"complete_case"`` the
reruns decided from complete judgments.  Scores without estimation terms use
their non-NaN values.  Items with fewer than ``k`` usable reruns are counted
(``n_items_excluded``) and the bias of leaving them out is bounded
(``lower_bound``, ``upper_bound``: every undecided rerun read as violated, and
as clean, over every item with ``k`` reruns to rule on).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
import xarray as xr

from multiverse.scoring.estimate import STATUS

__all__ = ["pass_hat_k", "pass_hat_k_items", "pass_hat_k_kernel", "pass_hat_k_variance", "rerun_chances"]

KEPT_COORDS = ("unit", "system_model", "judge_model", "user_sim_model")


def pass_hat_k_kernel(clean: np.ndarray, usable: np.ndarray, *, k: Sequence[int], axis: int) -> np.ndarray:
    """Per-item pass^k ``e_k(z) / C(n, k)`` along ``axis`` (reruns), ``k`` appended last.

    ``clean`` holds each rerun's chance of being clean (1 or 0 when known),
    ``usable`` which reruns count; NaN where an item has fewer than ``k``
    usable reruns.  ``e_k`` by the recurrence ``E_j <- E_j + z E_{j-1}``
    (exact for 0/1 chances: ``C(c, k)``).
    """
    from scipy.special import comb  # importing scipy.special costs more than the rest of scoring

    z = np.where(usable, np.asarray(clean, dtype=float), 0.0)
    z = np.moveaxis(z, axis, -1)
    n = np.moveaxis(usable, axis, -1).sum(axis=-1)
    top = max(k)
    e = np.zeros(z.shape[:-1] + (top + 1,))
    e[..., 0] = 1.0
    for r in range(z.shape[-1]):
        e[..., 1:] = e[..., 1:] + z[..., r, None] * e[..., :-1]
    kk = np.asarray(k)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n[..., None] >= kk, e[..., kk] / comb(n[..., None], kk), np.nan)


def pass_hat_k_variance(clean: np.ndarray, usable: np.ndarray, *, k: Sequence[int], axis: int) -> np.ndarray:
    """Per-item variance of ``C(c, k) / C(n, k)`` over the reruns' verdicts given their chances, ``k`` appended last.

    The clean count ``c`` of an item's usable reruns is Poisson-binomial in
    their chances (1 or 0 when known, so 0 when every verdict is known); its
    distribution comes from the usual recurrence over reruns.  Rubin's rules
    for imputed reruns need it (:func:`multiverse.analysis.noise_floor`).
    """
    from scipy.special import comb

    z = np.moveaxis(np.where(usable, np.asarray(clean, dtype=float), 0.0), axis, -1)
    counted = np.moveaxis(usable, axis, -1)
    n = counted.sum(axis=-1)
    size = z.shape[-1]
    dist = np.zeros(z.shape[:-1] + (size + 1,))
    dist[..., 0] = 1.0
    for r in range(size):
        moved = np.concatenate([np.zeros(dist.shape[:-1] + (1,)), dist[..., :-1]], axis=-1)
        step = dist * (1 - z[..., r, None]) + moved * z[..., r, None]
        dist = np.where(counted[..., r, None], step, dist)
    counts = np.arange(size + 1)
    out = []
    for kk in k:
        with np.errstate(invalid="ignore", divide="ignore"):
            u = comb(counts, kk) / comb(n[..., None], kk)
            mean = (dist * u).sum(axis=-1)
            out.append(np.where(n >= kk, (dist * u**2).sum(axis=-1) - mean**2, np.nan))
    return np.maximum(np.stack(out, axis=-1), 0.0)


def rerun_chances(scores: xr.DataArray) -> tuple[xr.DataArray, xr.DataArray, xr.DataArray, xr.DataArray]:
    """Each conversation's chance of being clean and whether it is usable, and the bounds' chances.

    Returns ``(clean, usable, lower, upper)``: ``lower`` reads every undecided
    conversation as violated and ``upper`` as clean.  See the module docstring.
    """
    values = scores.astype(float)
    known = values.notnull()
    if "status" not in scores.coords:
        decided_clean = known & (values == 0)
        clean = decided_clean.astype(float)
        return clean, known, clean, (decided_clean | ~known).astype(float)
    status = scores["status"].broadcast_like(scores)
    estimated = scores["weight"].broadcast_like(scores).notnull()
    decided = status <= STATUS["decided"]
    decided_clean = decided & (values == 0)
    usable = decided & estimated
    clean = decided_clean.astype(float)
    others = [d for d in values.dims if d != "rule"]
    binary = ((values == 0) | (values == 1) | ~decided).all(others)  # per rule: decided values are 0/1, not shares
    rate = scores["unit"] == "rate" if "unit" in scores.coords else True
    imputed = (status == STATUS["undecided"]) & estimated & rate & binary
    clean = xr.where(imputed, 1 - scores["expected"].broadcast_like(scores), clean)
    usable = usable | imputed
    return clean, usable, decided_clean.astype(float), (decided_clean | ~decided).astype(float)


def pass_hat_k_items(clean: xr.DataArray, usable: xr.DataArray, *, k: Sequence[int], replicate_dim: str,
                     variance: bool = False) -> xr.DataArray:
    """Per-item pass^k (``replicate_dim`` reduced, dim ``k`` added) from reruns' chances of being clean.

    With ``variance``: each item's variance over its reruns' verdicts given
    their chances (:func:`pass_hat_k_variance`) instead.
    """
    kernel = pass_hat_k_variance if variance else pass_hat_k_kernel
    return xr.apply_ufunc(
        lambda z, u: kernel(z, u, k=k, axis=-1),
        clean, usable,
        input_core_dims=[[replicate_dim], [replicate_dim]],
        output_core_dims=[["k"]],
        dask="parallelized",  # a lazily opened cube's scores go item chunk by item chunk
        output_dtypes=[float],
        dask_gufunc_kwargs={"output_sizes": {"k": len(k)}, "allow_rechunk": True},
    ).assign_coords(k=list(k))


def pass_hat_k(
    scores: xr.DataArray,
    *,
    k: int | Sequence[int],
    replicate_dim: str = "replicate",
    item_dim: str = "item",
) -> xr.DataArray:
    """tau-bench's pass^k: the chance that k reruns of an item are all clean.

    For each item, ``e_k(z) / C(n_i, k)`` over its own ``n_i`` usable reruns
    (``C(c_i, k) / C(n_i, k)`` when every verdict is known), then the mean
    over the items with at least ``k`` usable reruns, for each ``k`` on its
    own; see :mod:`multiverse.scoring.pass_k`.

    Parameters
    ----------
    scores
        Conversation-level scores (e.g. from :func:`multiverse.scoring.score`)
        with replicate and item dims; 0 means clean (passed), anything else
        non-NaN a violation.  Rules whose ``unit`` is ``"turns"`` yield NaN
        (pass^k is a rate).
    k
        One int or a list of ints, each >= 1.
    replicate_dim, item_dim
        Names of the rerun and item dims.

    Returns
    -------
    xarray.DataArray
        ``scores`` with ``replicate_dim`` and ``item_dim`` reduced and dim ``k``
        added (last); coordinates over ``k`` (and the other dims):
        ``n_items`` (items averaged over), ``n_items_excluded`` (items with
        something to rule on but fewer than ``k`` usable reruns),
        ``lower_bound`` and ``upper_bound`` (worst cases over undecided reruns).

    Warns
    -----
    UserWarning
        When ``max(k)`` exceeds the number of reruns (those values are NaN).

    See Also
    --------
    multiverse.scoring.score, multiverse.analysis.noise_floor
    """
    ks = [k] if isinstance(k, (int, np.integer)) else list(k)
    if not ks or any(not isinstance(x, (int, np.integer)) or x < 1 for x in ks):
        raise ValueError(f"pass_hat_k: k={k!r}, expected a positive int or a list of them")
    for dim in (replicate_dim, item_dim):
        if dim not in scores.dims:
            raise ValueError(f"pass_hat_k: scores have no {dim!r} dim (dims: {scores.dims})")
    if max(ks) > scores.sizes[replicate_dim]:
        warnings.warn(
            f"pass_hat_k: k={max(ks)} exceeds the {scores.sizes[replicate_dim]} reruns ({replicate_dim!r}): "
            "no item can have that many reruns, so those values are NaN",
            UserWarning,
            stacklevel=2,
        )
    clean, usable, lower, upper = rerun_chances(scores)
    ruled = (scores["status"] != STATUS["not_ruled"]).broadcast_like(scores) if "status" in scores.coords \
        else xr.ones_like(scores, dtype=bool)
    items = pass_hat_k_items(clean, usable, k=ks, replicate_dim=replicate_dim)
    out = items.mean(item_dim, skipna=True)
    used = items.notnull().sum(item_dim)
    has_any = ruled.any(replicate_dim)
    bounds = {name: pass_hat_k_items(chances, ruled, k=ks, replicate_dim=replicate_dim).mean(item_dim, skipna=True)
              for name, chances in (("lower_bound", lower), ("upper_bound", upper))}
    if "unit" in scores.coords and "rule" in out.dims:
        out = out.where(scores["unit"] != "turns")
        bounds = {name: b.where(scores["unit"] != "turns") for name, b in bounds.items()}

    def bare(array: xr.DataArray) -> xr.DataArray:
        return array.drop_vars([c for c in array.coords if c not in array.dims])

    keep = [c for c in out.coords if c in out.dims or c in KEPT_COORDS]
    out = out.drop_vars([c for c in out.coords if c not in keep])
    out = out.assign_coords(
        n_items=bare(used), n_items_excluded=bare(has_any.sum(item_dim) - used),
        **{name: bare(b) for name, b in bounds.items()},
    )
    out.name = "pass_hat_k"
    out.attrs = {
        "statistic": "pass^k",
        "estimator": "mean over items with at least k usable reruns of e_k(z)/C(n_i,k) (C(c,k)/C(n,k) when known)",
        "missing": scores.attrs.get("missing", "none"),
    }
    return out
