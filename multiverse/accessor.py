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

    def curve(self, **kwargs: Any) -> xr.Dataset:
        """See :func:`multiverse.analysis.spec_curve`."""
        return _call("multiverse.analysis", "spec_curve", self._ds, **kwargs)

    def noise_floor(self, **kwargs: Any) -> xr.Dataset:
        """See :func:`multiverse.analysis.noise_floor`."""
        return _call("multiverse.analysis", "noise_floor", self._ds, **kwargs)

    def rankings(self, **kwargs: Any) -> xr.Dataset:
        """See :func:`multiverse.analysis.rank_agreement`: rankings compared across a dim."""
        return _call("multiverse.analysis", "rank_agreement", self._ds, **kwargs)

    def variance_decomposition(self, **kwargs: Any) -> xr.Dataset:
        """See :func:`multiverse.analysis.variance_decomposition`."""
        return _call("multiverse.analysis", "variance_decomposition", self._ds, **kwargs)

    def calibration_table(self, **kwargs: Any) -> xr.Dataset:
        """See :func:`multiverse.analysis.calibration_table`."""
        return _call("multiverse.analysis", "calibration_table", self._ds, **kwargs)

    def latent_class(self, **kwargs: Any) -> xr.Dataset:
        """See :func:`multiverse.analysis.latent_class`."""
        return _call("multiverse.analysis", "latent_class", self._ds, **kwargs)

    def report(self, out: Any, **kwargs: Any) -> Any:
        """See :func:`multiverse.report.write_report`."""
        return _call("multiverse.report", "write_report", self._ds, out, **kwargs)

    def to_long(self, **kwargs: Any) -> Any:
        """See :func:`multiverse.to_long`."""
        return _call("multiverse.cube", "to_long", self._ds, **kwargs)
