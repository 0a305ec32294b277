"""Human ratings of the simulated user's turns (the paper's Study 1).

Annotators rate each user turn on naturalness, role fidelity and grounding on a
1-5 scale (the cube's ``rating`` variable, written by ``annotate import``).
The summary per axis is the mean rating normalised to [0, 1] as
``(rating - 1) / 4`` and the acceptable share (the top two levels, 4 or 5),
pooled over raters and turns, with the counts of valid and missing ratings.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import xarray as xr

from multiverse import __version__

__all__ = ["ACCEPTABLE", "simulator_ratings"]

ACCEPTABLE = 4
"""The lowest rating counted as acceptable."""


def simulator_ratings(cube: xr.Dataset, *, raters: Sequence[str] | None = None, by: str | None = None) -> xr.Dataset:
    """Mean normalised rating and acceptable share per axis (Study 1).

    Parameters
    ----------
    cube
        A cube with a ``rating`` variable (1-5; -1 missing; -2 not asked).
    raters
        The judges whose ratings count (default: every judge that gave one).
    by
        Keep this dim (e.g. ``system`` or ``role``) instead of pooling over it.

    Returns
    -------
    xarray.Dataset
        Over ``axis`` (and ``by``): ``mean`` (normalised to [0, 1]),
        ``acceptable`` (share rated 4 or 5), ``n_ratings`` (valid) and
        ``n_missing`` (asked but blank or off the scale).
    """
    if "rating" not in cube:
        raise ValueError("simulator_ratings: the cube has no 'rating' variable (import Study 1 labels first)")
    rating = cube["rating"]
    if raters is not None:
        unknown = [r for r in raters if r not in cube["judge"].values.tolist()]
        if unknown:
            raise ValueError(f"simulator_ratings: raters {unknown} are not judges of the cube")
        rating = rating.sel(judge=list(raters))
    if by is not None and (by not in rating.dims or by == "axis"):
        raise ValueError(f"simulator_ratings: by={by!r} must be a dim of the rating other than 'axis'")
    keep = ["axis"] + ([by] if by else [])
    pooled = [d for d in rating.dims if d not in keep]
    valid = rating >= 1
    n = valid.sum(pooled)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = ((rating - 1) / 4).where(valid).sum(pooled) / n
        acceptable = (rating >= ACCEPTABLE).sum(pooled) / n
    out = xr.Dataset({
        "mean": mean.where(n > 0),
        "acceptable": acceptable.where(n > 0),
        "n_ratings": n.astype(np.int64),
        "n_missing": (rating == -1).sum(pooled).astype(np.int64),
    })
    out.attrs.update(analysis="simulator_ratings", multiverse_version=__version__,
                     normalisation="(rating - 1) / 4", acceptable=f"rating >= {ACCEPTABLE}")
    return out
