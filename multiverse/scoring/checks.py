"""The one check every scoring path runs first: severities are int8 codes in -2..2."""

from __future__ import annotations

import numpy as np
import xarray as xr

from multiverse.core import schema as S

__all__ = ["check_severity"]

_CODES = (S.NOT_APPLICABLE, S.MISSING, 0, S.PARTIAL_DEVIATION, S.CLEAR_BREACH)


def check_severity(severity: xr.DataArray | np.ndarray, *, name: str = "severity") -> None:
    """Refuse severities that are not int8 codes in -2..2.

    A float array (e.g. after ``cube.where(...)``) may hold NaN, which no
    threshold reads as missing; an out-of-range code (7) has no meaning.  Both
    are refused rather than coerced, so a NaN can never become adherence.

    Raises
    ------
    ValueError
        One line naming the dtype and up to five offending values.
    """
    if isinstance(severity, xr.DataArray) and hasattr(severity.data, "dask") and severity.dtype == np.int8:
        import dask  # a lazy cube: the range is two reductions over its chunks, never the whole array

        low, high = (int(v) for v in dask.compute(severity.data.min(), severity.data.max())) if severity.size else (0, 0)
        if low >= S.NOT_APPLICABLE and high <= S.CLEAR_BREACH:
            return
    values = np.asarray(severity.values if isinstance(severity, xr.DataArray) else severity)
    if values.dtype != np.int8:
        bad = _offending(values)
        raise ValueError(
            f"{name}: expected int8 codes in -2..2, got dtype {values.dtype}"
            + (f" with values {bad}" if bad else "") + " (mask with the code -1, not NaN)"
        )
    low, high = (int(values.min()), int(values.max())) if values.size else (0, 0)
    if low < S.NOT_APPLICABLE or high > S.CLEAR_BREACH:
        raise ValueError(f"{name}: expected codes in -2..2, got values {_offending(values)}")


def _offending(values: np.ndarray) -> str:
    """Up to five distinct values that are not valid codes, as text."""
    flat = values.ravel()
    if flat.dtype.kind in "fc":
        bad = flat[~np.isin(flat, _CODES) | np.isnan(flat)]
    elif flat.dtype.kind in "iub":
        bad = flat[~np.isin(flat, _CODES)]
    else:
        return f"of kind {flat.dtype.kind!r}"
    shown = sorted({("nan" if isinstance(v, float) and np.isnan(v) else repr(v.item())) for v in bad[:10_000]})
    return ", ".join(shown[:5])
