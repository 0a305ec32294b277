"""The scores every analysis starts from, and the counts of conversations it used and dropped."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import xarray as xr

from multiverse.scoring import STATUS, score

__all__ = ["decided_values", "imputation_variance", "unit_scores", "usage"]


def unit_scores(data: xr.Dataset | xr.DataArray, unit: str = "rate") -> xr.DataArray:
    """Conversation-level scores of ``data`` (a cube, or its scores) keeping the rules of one ``unit``.

    For rate rules the values are the *estimation values*: a decided value
    as it is, an undecided conversation's expected value under the scores'
    missing-data assumption, NaN for a conversation no estimate uses (see
    :mod:`multiverse.scoring.estimate`), so a plain mean over conversations is
    the estimate.  A decided value the caller masked (``scores.where(...)``)
    stays out.  Rules in turns keep their decided values and estimation
    terms (their means weigh conversations by their chance of violating).
    Scores without a ``rule`` dim or ``unit`` coordinate are returned as given.
    """
    scores = score(data) if isinstance(data, xr.Dataset) else data
    if "rule" in scores.dims and "unit" in scores.coords:
        scores = scores.sel(rule=scores["unit"] == unit)
    if unit == "rate" and "expected" in scores.coords:
        # a decided value masked by the caller (NaN) stays out; an undecided one enters at its expected value
        kept = scores.notnull() | (scores["status"] == STATUS["undecided"])
        estimated = scores["expected"].broadcast_like(scores).where(kept & (scores["weight"] > 0))
        scores = scores.copy(data=estimated.transpose(*scores.dims).data)
    return scores.compute()  # a lazy cube's scores: computed chunk by chunk, then held (no turns or principles)


def decided_values(scores: xr.DataArray) -> xr.DataArray:
    """The decided values of scores from :func:`unit_scores` (NaN where undecided or unused)."""
    if "status" not in scores.coords:
        return scores
    return scores.where(scores["status"] <= STATUS["decided"])


def imputation_variance(scores: xr.DataArray) -> xr.DataArray:
    """Each imputed conversation's variance given what was observed, ``e (1 - e)``; 0 where decided or unused.

    ``e`` is the estimation value of scores from :func:`unit_scores`; for a
    0/1 rule ``e (1 - e)`` is the verdict's variance under the imputation
    model, for a share (``turn_mean``) a bound on it.  Standard errors add
    twice its sum (Rubin's rules with infinitely many imputations: the
    completed data's own spread, and the spread between imputations).
    """
    if "status" not in scores.coords:
        return xr.zeros_like(scores)
    imputed = (scores["status"] == STATUS["undecided"]) & scores.notnull()
    return xr.where(imputed, scores * (1 - scores), 0.0)


def usage(scores: xr.DataArray, *, reduce: Sequence[str]) -> xr.Dataset:
    """The conversations behind each estimate, by what happened to them.

    Returns ``n_used`` (conversations in the estimate), of which ``n_imputed``
    (undecided, entering at their expected value), ``n_excluded``
    (something to rule on, but left out: undecided without an estimate, or
    incomplete under complete cases) and ``n_not_ruled`` (nothing in the
    rule's scope), each summed over ``reduce``.  (The items used are each
    analysis's ``n_clusters``.)
    """
    used = scores.notnull()
    parts = {"n_used": used}
    if "status" in scores.coords:
        status = scores["status"].broadcast_like(scores)
        parts.update(n_imputed=used & (status == STATUS["undecided"]),
                     n_excluded=~used & (status != STATUS["not_ruled"]), n_not_ruled=status == STATUS["not_ruled"])
    else:
        parts.update(n_imputed=xr.zeros_like(used), n_excluded=~used, n_not_ruled=xr.zeros_like(used))
    dims = [d for d in reduce if d in scores.dims]
    out = xr.Dataset({name: part.sum(dims).astype(np.int64) for name, part in parts.items()})
    for name in out.data_vars:
        out[name].attrs = {}  # counts, not the scores' own attributes
    return out.drop_vars([c for c in out.coords if c not in out.dims])
