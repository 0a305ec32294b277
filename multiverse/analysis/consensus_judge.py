"""A consensus label from several raters, added to the cube as one more judge.

``method="majority"``: each cell's category is the one most of the raters who
labelled it chose.  The tie-break is documented and deliberate: **a tie is no
consensus**, so the cell is missing (reason ``no_verdict``), never settled by a
code's order; the number of tied cells is reported.  ``method="dawid_skene"``:
the category with the highest posterior under the Dawid-Skene model fitted to
the raters (:func:`multiverse.analysis.latent_class`); an exact tie of
posteriors goes to the category listed first on the scale, and a cell no rater
labelled is missing (its posterior would be the prior alone).

The consensus judge carries the raters' scale, so it flows into agreement,
calibration tables, PPI and win rates like any judge (e.g. the humans'
majority as the reference a model judge is corrected against).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import xarray as xr

from multiverse import __version__
from multiverse.analysis.latent import latent_class
from multiverse.analysis.raters import labels_of
from multiverse.core import schema as S

__all__ = ["METHODS", "consensus"]

METHODS = ("majority", "dawid_skene")


def consensus(
    cube: xr.Dataset, *, raters: Sequence[str], method: str = "majority", name: str | None = None
) -> xr.Dataset:
    """The cube with one more judge: the raters' consensus label on every cell.

    Parameters
    ----------
    cube
        A judgment cube.
    raters
        The judges to combine (at least two, on one scale).
    method
        ``"majority"`` or ``"dawid_skene"`` (module docstring: tie-breaks).
    name
        The new judge's label (default ``"<method>(<rater>,...)"``).

    Returns
    -------
    xarray.Dataset
        ``cube`` with the judge ``name`` added; per-judge coordinates of the
        raters' scale are copied, other per-judge coordinates left empty.
        ``attrs["consensus"][name]`` records ``method``, ``raters``,
        ``tie_break``, ``n_cells`` (cells with a consensus) and ``n_ties``.

    Raises
    ------
    ValueError
        For an unknown method, fewer than two raters, raters not in the cube
        or on different scales, or a name already taken.
    """
    if method not in METHODS:
        raise ValueError(f"consensus: method={method!r}, expected one of {', '.join(METHODS)}")
    raters = [str(r) for r in raters]
    known = [str(j) for j in cube["judge"].values]
    unknown = [r for r in raters if r not in known]
    if unknown or len(set(raters)) < 2:
        raise ValueError(f"consensus: needs at least two distinct judges of the cube as raters, got {raters}")
    name = name or f"{method}({','.join(raters)})"
    if name in known:
        raise ValueError(f"consensus: the cube already has a judge {name!r}")
    labels = labels_of(cube, raters=raters)
    values = labels.values.sel(judge=raters).values  # (..., rater) category indices, -1 unrated
    if method == "majority":
        chosen, ties = _majority(values, labels.k)
    else:
        chosen, ties = _dawid_skene(cube, raters, values)
    severity = cube["severity"].sel(judge=raters)
    not_applicable = (severity == S.NOT_APPLICABLE).all("judge").transpose(*labels.values.dims[:-1]).values
    if "rating" in cube:
        not_applicable &= cube["rating"].sel(judge=raters).isnull().all("judge").transpose(*labels.values.dims[:-1]).values
    extra = _judge_like(cube, raters[0], name)
    if labels.scale == "likert":
        low = int(labels.names[0])
        extra["rating"].values[..., 0] = np.where(chosen >= 0, chosen + low, np.nan)
        codes = np.where(chosen >= 0, S.NOT_APPLICABLE, S.MISSING)
    else:
        codes = chosen
    codes = np.where(not_applicable, S.NOT_APPLICABLE, codes).astype(np.int8)
    extra["severity"].values[..., 0] = codes.reshape(extra["severity"].shape[:-1])
    no_verdict = int(((chosen < 0) & ~not_applicable & (values >= 0).any(axis=-1)).sum())
    missing = extra["missing_count"]
    missing.loc[{"missing_reason": "no_verdict"}] = no_verdict
    missing.loc[{"missing_reason": "not_recorded"}] = int((codes == S.MISSING).sum()) - no_verdict
    out = xr.concat([cube, extra], dim="judge", data_vars="minimal", coords="minimal", compat="override",
                    join="override")
    record = {"method": method, "raters": raters, "n_cells": int((chosen >= 0).sum()), "n_ties": int(ties),
              "tie_break": "a tie is missing (no_verdict)" if method == "majority"
              else "highest posterior; an exact tie goes to the first category; unlabelled cells missing",
              "multiverse_version": __version__}
    out.attrs = {**cube.attrs, "consensus": {**dict(cube.attrs.get("consensus") or {}), name: record}}
    return out


def _majority(values: np.ndarray, k: int) -> tuple[np.ndarray, int]:
    """Modal category per cell (-1 when unlabelled or tied) and the number of tied cells."""
    counts = np.stack([(values == c).sum(axis=-1) for c in range(k)], axis=-1)
    top = counts.max(axis=-1)
    n_top = (counts == top[..., None]).sum(axis=-1)
    tied = (top > 0) & (n_top > 1)
    chosen = np.where((top > 0) & ~tied, counts.argmax(axis=-1), -1)
    return chosen, int(tied.sum())


def _dawid_skene(cube: xr.Dataset, raters: list[str], values: np.ndarray) -> tuple[np.ndarray, int]:
    model = latent_class(cube, raters=raters)
    posterior = model["posterior"].transpose(..., "true").values.reshape(values.shape[:-1] + (model.sizes["true"],))
    best = posterior.max(axis=-1, keepdims=True)
    ties = int(((posterior == best).sum(axis=-1) > 1).sum())
    chosen = model["true"].values[posterior.argmax(axis=-1)]
    rated = (values >= 0).any(axis=-1)
    return np.where(rated, chosen, -1), ties


def _judge_like(cube: xr.Dataset, template: str, name: str) -> xr.Dataset:
    """A one-judge copy of ``cube``'s judge variables, blank: severity -2, no rating, no missing count."""
    judge_vars = [v for v in cube.data_vars if "judge" in cube[v].dims]
    extra = cube[judge_vars].sel(judge=[template]).copy(deep=True).assign_coords(judge=[name])
    for coord in [c for c in extra.coords if c != "judge" and extra[c].dims == ("judge",)]:
        if coord not in ("scale", "categories"):
            blank = "" if extra[coord].dtype.kind in "OUS" else 0
            extra = extra.assign_coords({coord: ("judge", np.asarray([blank], dtype=extra[coord].dtype))})
    extra["severity"] = extra["severity"].transpose(..., "judge").copy(data=np.full(
        extra["severity"].transpose(..., "judge").shape, S.NOT_APPLICABLE, dtype=np.int8))
    for var in judge_vars:
        if var in ("severity", "missing_count"):
            continue
        extra[var] = extra[var].transpose(..., "judge")
        extra[var].values[...] = np.nan if extra[var].dtype.kind == "f" else 0
    extra["missing_count"].values[...] = 0
    return extra
