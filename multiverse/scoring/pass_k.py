"""tau-bench's pass^k: the chance that k reruns of an item are all clean, over one fixed item set."""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
import xarray as xr

__all__ = ["pass_hat_k", "pass_hat_k_kernel"]

KEPT_COORDS = ("unit", "system_model", "judge_model", "user_sim_model")


def pass_hat_k_kernel(clean: np.ndarray, valid: np.ndarray, *, k: Sequence[int], axis: int) -> np.ndarray:
    """Per-item pass^k: C(c, k) / C(n, k) along ``axis`` (replicates), k appended last.

    ``clean`` and ``valid`` are bool arrays; ``c`` counts clean valid replicates and
    ``n`` valid ones.  Items with fewer than ``max(k)`` valid replicates are NaN
    for every k, so every k is estimated on the same items; C(c, k) / C(n, k)
    falls with k for each item, so the mean over that fixed set does too.
    ``scipy.special.comb`` gives the binomials (exact in float64 for the small
    counts of replicates), imported here: importing :mod:`scipy.special` costs
    more than the rest of :mod:`multiverse.scoring`.
    """
    from scipy.special import comb

    c = (clean & valid).sum(axis=axis)[..., None].astype(float)
    n = valid.sum(axis=axis)[..., None].astype(float)
    kk = np.asarray(k, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n >= kk.max(), comb(c, kk) / comb(n, kk), np.nan)


def pass_hat_k(
    scores: xr.DataArray,
    *,
    k: int | Sequence[int],
    replicate_dim: str = "replicate",
    item_dim: str = "item",
) -> xr.DataArray:
    """tau-bench's pass^k: the chance that k reruns of an item are all clean.

    For each item, ``C(c, k) / C(n, k)`` with ``c`` clean (value 0) replicates out
    of ``n`` valid (non-NaN) ones, then the mean over the items that have at
    least ``max(k)`` valid replicates: one item set for every k, so the values
    never rise with k.

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
        added (last); coordinates ``n_items`` (items averaged over) and
        ``n_items_excluded`` (items with fewer than ``max(k)`` valid reruns).

    Warns
    -----
    UserWarning
        When ``max(k)`` exceeds the number of reruns (every value is then NaN).

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
            "no item can have that many valid reruns, so every value is NaN",
            UserWarning,
            stacklevel=2,
        )
    per_item = xr.apply_ufunc(
        lambda values: pass_hat_k_kernel(values == 0, ~np.isnan(values), k=ks, axis=-1),
        scores.astype(float),
        input_core_dims=[[replicate_dim]],
        output_core_dims=[["k"]],
        dask="parallelized",  # a lazily opened cube's scores go item chunk by item chunk
        output_dtypes=[float],
        dask_gufunc_kwargs={"output_sizes": {"k": len(ks)}, "allow_rechunk": True},
    ).assign_coords(k=ks)
    out = per_item.mean(item_dim, skipna=True)
    used = per_item.isel(k=0, drop=True).notnull().sum(item_dim)
    if "unit" in scores.coords and "rule" in out.dims:
        out = out.where(scores["unit"] != "turns")
    keep = [c for c in out.coords if c in out.dims or c in KEPT_COORDS]
    out = out.drop_vars([c for c in out.coords if c not in keep])
    used = used.drop_vars([c for c in used.coords if c not in used.dims])
    out = out.assign_coords(n_items=used, n_items_excluded=scores.sizes[item_dim] - used)
    out.name = "pass_hat_k"
    out.attrs = {
        "statistic": "pass^k",
        "estimator": f"mean over items with at least {max(ks)} valid reruns of C(c,k)/C(n,k)",
    }
    return out
