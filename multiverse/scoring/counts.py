"""Counts of valid, missing and excluded conversations behind scores."""

from __future__ import annotations

from collections.abc import Sequence

import xarray as xr

__all__ = ["is_valid", "score_counts"]


def is_valid(scores: xr.DataArray) -> xr.DataArray:
    """True where a conversation's value is decided: non-NaN, or a clean ``first_turn``-style value.

    See Also
    --------
    multiverse.scoring.score, score_counts
    """
    valid = scores.notnull()
    if "clean" in scores.coords and "unit" in scores.coords:
        turns = scores["unit"] == "turns"
        valid = valid | (turns & scores["clean"])
    return valid


def score_counts(scores: xr.DataArray, *, keep: Sequence[str] = ("standard", "rule")) -> xr.Dataset:
    """Counts of valid, missing and excluded conversations behind each score.

    Parameters
    ----------
    scores
        The output of :func:`multiverse.scoring.score` (or a selection of it).
    keep
        Dims to keep; every other dim is summed over.

    Returns
    -------
    xarray.Dataset
        ``n_valid`` (a value, or a decided-clean ``first_turn``), ``n_missing``
        (completed but undecidable) and ``n_excluded`` (not completed).

    See Also
    --------
    multiverse.scoring.score
    """
    completed = scores["completed"] if "completed" in scores.coords else xr.ones_like(scores, dtype=bool)
    completed = completed.broadcast_like(scores)
    valid = is_valid(scores).broadcast_like(scores) & completed
    reduce = [d for d in scores.dims if d not in keep]
    counts = xr.Dataset(
        {
            "n_valid": valid.sum(reduce),
            "n_missing": (completed & ~valid).sum(reduce),
            "n_excluded": (~completed).sum(reduce),
        }
    )
    return counts.drop_vars([c for c in counts.coords if c not in counts.dims and c != "unit"])
