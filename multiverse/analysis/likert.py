"""Likert ratings: each system's mean rating, the rate a ranking of rated systems reads.

A ``likert`` judge's labels are integer ratings kept in the cube's ``rating``
variable (:mod:`multiverse.core.scales`).  A system's mean rating under one
judge pools every rated cell (item, replicate, turn, principle) with equal
weight; :func:`multiverse.analysis.rankings` ranks rated cubes by it, higher first.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from multiverse import __version__
from multiverse.cube.scales import judge_scales

__all__ = ["is_rated", "mean_rating"]

POOLED = ("replicate", "item", "turn", "principle")


def is_rated(data: object) -> bool:
    """Whether ``data`` is a cube whose every judge labels on the likert scale."""
    return isinstance(data, xr.Dataset) and "rating" in data and set(judge_scales(data).values()) == {"likert"}


def mean_rating(cube: xr.Dataset) -> xr.DataArray:
    """Mean rating per system and judge (and the other conversation dims), over every rated cell.

    Returns
    -------
    xarray.DataArray
        ``mean_rating`` over (``system``, ``role``, ``user_sim``, ``condition``,
        ``judge``); coordinate ``n_rated`` counts the cells averaged and
        ``n_missing`` the cells left out because their judgment is missing
        (cells not applicable are not counted); NaN where none is rated.

    Raises
    ------
    ValueError
        If some judge does not label on the likert scale.
    """
    if not is_rated(cube):
        raise ValueError("mean_rating: every judge must label on the likert scale (select them first)")
    rating = cube["rating"].reset_coords(drop=True)
    n = rating.notnull().sum(POOLED)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = rating.sum(POOLED, skipna=True) / n.where(n > 0)
    missing = (cube["severity"].reset_coords(drop=True) == -1).sum(POOLED)
    out = out.assign_coords(n_rated=n, n_missing=missing).rename("mean_rating")
    out.attrs.update(analysis="mean_rating", multiverse_version=__version__, order="higher is better",
                     pooled=",".join(POOLED))
    return out
