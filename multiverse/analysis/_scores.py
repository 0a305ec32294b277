"""The scores every analysis starts from: a cube is scored, scores pass through."""

from __future__ import annotations

import xarray as xr

from multiverse.scoring import score


def unit_scores(data: xr.Dataset | xr.DataArray, unit: str = "rate") -> xr.DataArray:
    """Conversation-level scores of ``data`` (a cube, or its scores) keeping the rules of one ``unit``.

    Scores without a ``rule`` dim or ``unit`` coordinate are returned as given.
    """
    scores = score(data) if isinstance(data, xr.Dataset) else data
    if "rule" in scores.dims and "unit" in scores.coords:
        scores = scores.sel(rule=scores["unit"] == unit)
    return scores.compute()  # a lazy cube's scores: computed chunk by chunk, then held (no turns or principles)
