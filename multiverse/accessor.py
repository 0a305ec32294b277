"""The stateless ``Dataset.multiverse`` accessor: thin delegations to the functional API.

Methods import their implementation on first call, so registering the accessor
costs nothing beyond xarray itself.
"""

from __future__ import annotations

import importlib
from typing import Any

import xarray as xr


def _call(module: str, name: str, *args: Any, **kwargs: Any) -> Any:
    return getattr(importlib.import_module(module), name)(*args, **kwargs)


@xr.register_dataset_accessor("multiverse")
class MultiverseAccessor:
    """``ds.multiverse.<analysis>(...)`` calls ``multiverse.<analysis>(ds, ...)``."""

    def __init__(self, ds: xr.Dataset):
        self._ds = ds

    def score(self, **kwargs: Any) -> xr.DataArray:
        """See :func:`multiverse.score`."""
        return _call("multiverse.score", "score", self._ds, **kwargs)

    def agreement(self, **kwargs: Any) -> xr.DataArray:
        """See :func:`multiverse.agreement`."""
        return _call("multiverse.analysis", "agreement", self._ds, **kwargs)

    def to_long(self, **kwargs: Any) -> Any:
        """See :func:`multiverse.to_long`."""
        return _call("multiverse.cube", "to_long", self._ds, **kwargs)
