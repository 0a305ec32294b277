"""The stateless ``.multiverse`` accessors of ``Dataset`` and ``DataArray``: delegations to the functional API.

Every method is named exactly like the function it calls, and has that
function's signature without its first argument (the accessor's object), as in
arviz-stats: ``cube.multiverse.score(standards=...)`` is
``multiverse.score(cube, standards=...)``.  A method's function is imported on
first use, so registering the accessors costs nothing beyond xarray itself, and
``help()`` / ``inspect.signature`` show the function's own parameters and
docstring.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import warnings
from collections.abc import Callable
from typing import Any

import xarray as xr

__all__ = ["DATAARRAY_METHODS", "DATASET_METHODS", "MultiverseArrayAccessor", "MultiverseAccessor"]

DATASET_METHODS: dict[str, str] = {
    "score": "multiverse.scoring",
    "score_bounds": "multiverse.scoring",
    "summary": "multiverse.cube.summary",
    "to_long": "multiverse.cube.build",
    "agreement": "multiverse.analysis.raters",
    "spec_curve": "multiverse.analysis.curve",
    "noise_floor": "multiverse.analysis.noise",
    "paired_differences": "multiverse.analysis.noise",
    "rankings": "multiverse.analysis.ranking",
    "rank_agreement": "multiverse.analysis.ranking",
    "variance_decomposition": "multiverse.analysis.variance",
    "calibration_table": "multiverse.analysis.calibration",
    "latent_class": "multiverse.analysis.latent",
    "write_report": "multiverse.report",
}
"""Method name -> module of the function of the same name, on ``Dataset.multiverse`` (cubes)."""

DATAARRAY_METHODS: dict[str, str] = {
    "pass_hat_k": "multiverse.scoring",
    "score_counts": "multiverse.scoring",
    "spec_curve": "multiverse.analysis.curve",
    "noise_floor": "multiverse.analysis.noise",
    "paired_differences": "multiverse.analysis.noise",
    "rankings": "multiverse.analysis.ranking",
    "rank_agreement": "multiverse.analysis.ranking",
    "variance_decomposition": "multiverse.analysis.variance",
}
"""Method name -> module of the function of the same name, on ``DataArray.multiverse`` (scores)."""

_RENAMED = {"curve": "spec_curve", "report": "write_report"}
"""Dataset methods of the previous release, kept for one release with a DeprecationWarning."""


@functools.cache
def _function(module: str, name: str) -> Callable[..., Any]:
    return getattr(importlib.import_module(module), name)


def _bound(module: str, name: str, obj: Any) -> Callable[..., Any]:
    """``function(obj, ...)`` with the function's name, docstring and signature minus its first argument."""
    function = _function(module, name)

    @functools.wraps(function)
    def method(*args: Any, **kwargs: Any) -> Any:
        return function(obj, *args, **kwargs)

    signature = inspect.signature(function)
    method.__signature__ = signature.replace(parameters=list(signature.parameters.values())[1:])  # type: ignore[attr-defined]
    del method.__wrapped__  # the signature above is the method's own
    return method


class _Accessor:
    _methods: dict[str, str] = {}
    _renamed: dict[str, str] = {}

    def __init__(self, obj: Any):
        self._obj = obj

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name in self._renamed:
            new = self._renamed[name]
            warnings.warn(f".multiverse.{name} was renamed .multiverse.{new}; the old name goes in the next release", DeprecationWarning, stacklevel=2)
            name = new
        module = self._methods.get(name)
        if module is None:
            raise AttributeError(f"{type(self).__name__} has no method {name!r}; methods: {', '.join(sorted(self._methods))}")
        return _bound(module, name, self._obj)

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(self._methods))


@xr.register_dataset_accessor("multiverse")
class MultiverseAccessor(_Accessor):
    """``cube.multiverse.<name>(...)`` calls ``<name>(cube, ...)``; the names are :data:`DATASET_METHODS`."""

    _methods = DATASET_METHODS
    _renamed = _RENAMED


@xr.register_dataarray_accessor("multiverse")
class MultiverseArrayAccessor(_Accessor):
    """``scores.multiverse.<name>(...)`` calls ``<name>(scores, ...)``; the names are :data:`DATAARRAY_METHODS`."""

    _methods = DATAARRAY_METHODS
