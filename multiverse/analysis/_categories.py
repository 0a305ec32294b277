"""Conversation-level verdicts "the label is category X", named, never coded.

For labels that are not severities (``pairwise`` A / B / tie, ``likert``
ratings) an analysis that needs a 0/1 verdict per conversation (PPI, a
proportion) names the category it counts: "B wins" is ``category="B"``
whatever raw labels or codes the data used.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import xarray as xr

from multiverse.analysis.raters import labels_of
from multiverse.core import schema as S

__all__ = ["DEFAULT_STANDARD", "category_verdicts", "resolve_standard"]

DEFAULT_STANDARD = "clear_breach"
"""The standard a severity verdict uses when none is named (``standard=None``)."""


def resolve_standard(cube: xr.Dataset, judges: Sequence[str], standard: str | None, category: str | None) -> str | None:
    """The standard to score with, or ``None`` when a category is counted; raises when neither fits the labels."""
    scale = labels_of(cube.sel(judge=list(judges))).scale
    if category is not None:
        if standard is not None:
            raise ValueError("name either standard= (severity labels) or category= (any labels), not both")
        return None
    if scale in ("pairwise", "likert"):
        raise ValueError(f"the judges label on the {scale} scale: name the category to count, e.g. category='B'")
    return standard or DEFAULT_STANDARD


def category_verdicts(cube: xr.Dataset, judges: Sequence[str], category: str) -> xr.DataArray:
    """Per conversation and judge: 1 when some cell's label is ``category``, 0 when every applicable cell
    has another label, NaN when no cell is labelled ``category`` and some cell is missing (undecided)."""
    labels = labels_of(cube.sel(judge=list(judges)))
    if category not in labels.names or not category:
        named = ", ".join(n for n in labels.names if n)
        raise ValueError(f"category {category!r}: the {labels.scale} scale has categories {named}")
    index = labels.names.index(category)
    values = labels.values
    severity = cube["severity"].sel(judge=list(judges)).reset_coords(drop=True).transpose(*values.dims)
    applicable = severity != S.NOT_APPLICABLE
    if "rating" in cube:
        applicable |= cube["rating"].sel(judge=list(judges)).reset_coords(drop=True).transpose(*values.dims).notnull()
    hit = (values == index).any(["turn", "principle"])
    missing = (applicable & (values < 0)).any(["turn", "principle"])
    anything = applicable.any(["turn", "principle"])
    out = xr.where(hit, 1.0, xr.where(missing | ~anything, np.nan, 0.0))
    out.name = "score"
    return out
