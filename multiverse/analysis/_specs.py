"""The specification curve's inputs: per-cluster totals of every specification, the systems compared, labels."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import xarray as xr

from multiverse.scoring import STATUS
from multiverse.scoring.estimate import terms_of

__all__ = ["cluster_totals", "spec_coords", "systems_of"]


def cluster_totals(values: xr.DataArray, used: xr.DataArray, cluster: str, spec_dims: list[str], facets: list[str],
                    unit: str) -> xr.Dataset:
    """Per cluster and specification: the estimate's numerator and weight over the ``used`` conversations,
    and counts of decided, undecided and unused conversations."""
    stacked = values.stack(spec=spec_dims) if spec_dims else values.expand_dims(spec=[0])
    reduce = [d for d in stacked.dims if d not in (cluster, "spec", *facets)]
    order = [*reduce, *facets, cluster, "spec"]
    stacked = stacked.transpose(*order)
    keep = (used.stack(spec=spec_dims) if spec_dims else used.expand_dims(spec=[0])).transpose(*order).values
    if unit == "rate":  # estimation values: a plain mean is the estimate
        numerator, weight = np.where(keep, stacked.values, 0.0), keep.astype(float)
    else:
        num, wt = terms_of(stacked)
        numerator = np.where(keep, num.transpose(*order).values, 0.0)
        weight = np.where(keep, wt.transpose(*order).values, 0.0)
    axes = tuple(range(len(reduce)))  # leading axes: sums over them are fast
    if "status" in stacked.coords:
        status = np.broadcast_to(stacked["status"].broadcast_like(stacked).transpose(*order).values, keep.shape)
        decided = status <= STATUS["decided"]
        undecided = status == STATUS["undecided"]
        ruled = status != STATUS["not_ruled"]
    else:
        decided = undecided = ruled = None
    kept = stacked.isel({d: 0 for d in reduce}, drop=True)
    dims = kept.dims

    def total(arr: np.ndarray) -> tuple[tuple[str, ...], np.ndarray]:
        return dims, arr.sum(axis=axes) if axes else arr

    totals = xr.Dataset(
        {
            "sums": total(numerator),
            "counts": total(weight),
            "used": total(keep),
            "valid": total(keep if decided is None else decided),
            "missing": total(np.zeros_like(keep) if undecided is None else undecided),
            "excluded": total(~keep if ruled is None else ruled & ~keep),
        },
        coords={d: kept[d] for d in dims if d != "spec"},
    )
    return totals.assign_coords(spec=kept["spec"]) if spec_dims else totals


def systems_of(scores: xr.DataArray, system: str | None, contrast: tuple[str, str] | None) -> list[str | None]:
    if system is not None and contrast is not None:
        raise ValueError("spec_curve: give system= or contrast=, not both")
    if "system" not in scores.dims:
        if system is not None or contrast is not None:
            raise ValueError("spec_curve: scores have no 'system' dim to select from")
        return [None]
    labels = [str(v) for v in scores["system"].values]
    chosen = list(contrast) if contrast is not None else [system] if system is not None else labels
    if len(chosen) != (2 if contrast is not None else 1):
        raise ValueError(f"spec_curve: {len(labels)} systems {labels}; pick one with system= or two with contrast=")
    unknown = [s for s in chosen if s not in labels]
    if unknown:
        raise ValueError(f"spec_curve: unknown system {unknown[0]!r}; systems: {labels}")
    return chosen


def spec_coords(index, spec_dims: list[str], n_specs: int, preferred: Mapping[str, str] | None) -> dict:
    coords: dict[str, tuple[str, np.ndarray]] = {"spec": ("spec", np.arange(n_specs))}
    labels = {}
    for d in spec_dims:
        labels[d] = np.asarray(index.get_level_values(d)).astype(str)
        coords[d] = ("spec", labels[d])
    if preferred is not None:
        unknown = [d for d in preferred if d not in spec_dims]
        if unknown:
            raise ValueError(f"spec_curve: preferred names {unknown[0]!r}, not a specification dim {spec_dims}")
    mark = np.ones(n_specs, dtype=bool)
    for d in spec_dims:
        want = (preferred or {}).get(d, labels[d][0] if n_specs else None)
        mark &= labels[d] == str(want)
    coords["preferred"] = ("spec", mark)
    return coords
