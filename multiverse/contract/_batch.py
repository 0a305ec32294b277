"""Vectorised evaluation of many cases: :func:`evaluate_batch` hands each input to its reader.

Case dicts go through :mod:`._batch_dicts`, events tables through
:mod:`._batch_table`, paths through :mod:`._batch_files`; both judge the same flat arrays with :mod:`._kernel`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd
import xarray as xr

from multiverse.contract._batch_dicts import _from_dicts
from multiverse.contract._batch_table import _from_table, to_events_table

__all__ = ["evaluate_batch", "to_events_table"]


def evaluate_batch(cases: Any, *, contract: Any = None) -> xr.Dataset:
    """See :func:`multiverse.contract.evaluate_batch`."""
    if isinstance(cases, (str, os.PathLike)):
        from multiverse.contract._batch_files import read_case_files

        return read_case_files(cases, contract=contract)
    if isinstance(cases, pd.DataFrame):
        return _from_table(cases, contract)
    if isinstance(cases, (str, bytes, Mapping)) or not isinstance(cases, Sequence):
        raise TypeError(
            f"evaluate_batch: expected a list of case dicts or an events DataFrame, got {type(cases).__name__}"
        )
    return _from_dicts(cases, contract)
