"""Counts of decided, undecided and unused conversations behind scores."""

from __future__ import annotations

from collections.abc import Sequence

import xarray as xr

from multiverse.scoring.estimate import STATUS

__all__ = ["is_valid", "score_counts"]


def is_valid(scores: xr.DataArray) -> xr.DataArray:
    """True where a conversation's value is decided: non-NaN, or a clean ``first_turn``-style value.

    See Also
    --------
    multiverse.scoring.score, score_counts
    """
    if "status" in scores.coords:
        return scores["status"] <= STATUS["decided"]
    valid = scores.notnull()
    if "clean" in scores.coords and "unit" in scores.coords:
        turns = scores["unit"] == "turns"
        valid = valid | (turns & scores["clean"])
    return valid


def score_counts(scores: xr.DataArray, *, keep: Sequence[str] = ("standard", "rule")) -> xr.Dataset:
    """Counts of decided, undecided and unused conversations behind each score.

    Parameters
    ----------
    scores
        The output of :func:`multiverse.scoring.score` (or a selection of it).
    keep
        Dims to keep; every other dim is summed over.

    Returns
    -------
    xarray.Dataset
        ``n_valid`` (decided: a value, or a decided-clean ``first_turn``),
        ``n_missing`` (undecided), ``n_excluded`` (conversations with
        something to rule on that the estimates leave out under the scores'
        assumption: an undecided one the model cannot impute, every
        incomplete one under ``"complete_case"``), ``n_incomplete`` (decided
        despite missing judgments: part of ``n_valid``) and ``n_not_ruled``
        (nothing in the rule's scope, e.g. ``targeted_principle`` without a
        target).  ``n_valid + n_missing + n_not_ruled`` counts every
        conversation.  Scores without the estimation terms count every NaN as
        undecided and unused.

    See Also
    --------
    multiverse.scoring.score, multiverse.scoring.estimate
    """
    reduce = [d for d in scores.dims if d not in keep]
    if "status" in scores.coords:
        status = scores["status"].broadcast_like(scores)
        unused = scores["weight"].isnull() if "weight" in scores.coords else status >= STATUS["undecided"]
        parts = {
            "n_valid": status <= STATUS["decided"],
            "n_missing": status == STATUS["undecided"],
            "n_excluded": unused.broadcast_like(scores) & (status != STATUS["not_ruled"]),
            "n_incomplete": status == STATUS["decided"],
            "n_not_ruled": status == STATUS["not_ruled"],
        }
    else:
        valid = is_valid(scores).broadcast_like(scores)
        parts = {"n_valid": valid, "n_missing": ~valid, "n_excluded": ~valid, "n_incomplete": valid & False,
                 "n_not_ruled": valid & False}
    counts = xr.Dataset({name: part.sum(reduce) for name, part in parts.items()})
    return counts.drop_vars([c for c in counts.coords if c not in counts.dims and c != "unit"])
