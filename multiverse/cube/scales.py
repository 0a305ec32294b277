"""Reading a cube's labels on their scales (see :mod:`multiverse.core.scales`).

Every analysis that compares labels across raters reads them through
:func:`label_codes`: one integer category per unit and rater, named by the
scale's categories, whatever variable holds them (``severity`` or, for
``likert`` judges, ``rating``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import xarray as xr

from multiverse.core.scales import SCALES, category_codes, format_categories, level, parse_categories

__all__ = ["LabelCodes", "judge_scales", "judge_categories", "common_scale", "label_codes", "scale_coords"]


def judge_scales(cube: xr.Dataset, dim: str = "judge") -> dict[str, str]:
    """``{judge: scale}``; a cube without a ``scale`` coordinate is all ``severity``."""
    labels = [str(j) for j in cube[dim].values]
    if "scale" not in cube.coords or cube["scale"].dims != (dim,):
        return dict.fromkeys(labels, "severity")
    return {j: str(s) or "severity" for j, s in zip(labels, cube["scale"].values, strict=True)}


def judge_categories(cube: xr.Dataset, judge: str) -> dict[str, int]:
    """Category name -> code of one judge (its ``categories`` coordinate, else its scale's fixed ones)."""
    scale = judge_scales(cube)[judge]
    if "categories" in cube.coords and cube["categories"].dims == ("judge",):
        text = str(cube["categories"].sel(judge=judge).values)
        if text:
            return parse_categories(text)
    return category_codes(scale)


def common_scale(cube: xr.Dataset, raters: Sequence[str] | None = None, *, dim: str = "judge") -> str:
    """The one scale the raters share; raises ``ValueError`` naming them when they differ."""
    scales = judge_scales(cube, dim)
    chosen = list(scales) if raters is None else [str(r) for r in raters]
    found = sorted({scales[r] for r in chosen if r in scales})
    if len(found) > 1:
        by_scale = "; ".join(f"{s}: {', '.join(r for r in chosen if scales.get(r) == s)}" for s in found)
        raise ValueError(f"raters label on different scales ({by_scale}); select raters of one scale")
    return found[0] if found else "severity"


@dataclass(frozen=True)
class LabelCodes:
    """Labels as categories ``0..k-1`` (``-1`` unrated), their names, and the scale.

    Attributes
    ----------
    values
        int8/int16 DataArray with the rater dim last.
    names
        Category names by index (``names[i]`` is category ``i``); an index no
        category of the scale uses is named ``""`` (e.g. 1 on ``binary``).
    scale, level
        The raters' common scale and its level (``nominal`` / ``ordinal``).
    """

    values: xr.DataArray
    names: tuple[str, ...]
    scale: str
    level: str

    @property
    def k(self) -> int:
        """Number of category indices."""
        return len(self.names)


def label_codes(cube: xr.Dataset, raters: Sequence[str] | None = None, *, dim: str = "judge") -> LabelCodes:
    """The raters' labels on their common scale, as category indices (rater dim last, computed).

    ``severity``, ``binary`` and ``pairwise`` labels are their codes in
    ``severity`` (0..2); ``likert`` labels are ``rating - low`` for the judges'
    common range ``low..high`` (the union of their declared ranges).
    """
    sub = cube if raters is None else cube.sel({dim: list(raters)})
    # the scale is the judges' (of the chosen raters when they are judges; else of every judge)
    scale = common_scale(cube, raters) if dim == "judge" else common_scale(cube)
    judges = [str(j) for j in sub["judge"].values]
    others = [d for d in sub["severity"].dims if d != dim]
    if scale != "likert":
        severity = sub["severity"].reset_coords(drop=True)
        values = severity.where(severity >= 0, -1).astype(np.int8).transpose(*others, dim).compute()
        names = [""] * 3
        for name, code in judge_categories(sub, judges[0]).items():
            names[code] = name
        return LabelCodes(values, tuple(names), scale, level(scale))
    if "rating" not in sub:
        raise ValueError("cube: judges on the likert scale but no 'rating' variable")
    ranges = [judge_categories(sub, j).values() for j in judges]
    low, high = min(min(r) for r in ranges), max(max(r) for r in ranges)
    rating = sub["rating"].reset_coords(drop=True)
    index = (rating - low).fillna(-1).astype(np.int16)
    values = index.transpose(*others, dim).compute()
    return LabelCodes(values, tuple(str(v) for v in range(low, high + 1)), scale, "ordinal")


def scale_coords(scales: Sequence[str], categories: Sequence[dict[str, int]]) -> dict[str, tuple[str, list[str]]]:
    """The per-judge ``scale`` and ``categories`` coordinates, for :func:`multiverse.cube.new_cube`'s ``coords``."""
    for scale in scales:
        if scale not in SCALES:
            raise ValueError(f"scale {scale!r}: expected one of {', '.join(SCALES)}")
    return {"scale": ("judge", list(scales)), "categories": ("judge", [format_categories(c) for c in categories])}

