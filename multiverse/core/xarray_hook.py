"""Register the ``Dataset.multiverse`` accessor as soon as xarray is imported.

``import multiverse`` must not pay for xarray (and pandas) when only the command
line's contract inspector runs, yet ``ds.multiverse`` must work however the user
got ``ds``.  So the accessor module is imported right away when xarray is already
loaded, and otherwise right after xarray finishes loading, through a one-shot
finder on :data:`sys.meta_path` (the standard library has no post-import hook).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
from types import ModuleType


def _register() -> None:
    importlib.import_module("multiverse.accessor")


class _AfterXarray(importlib.abc.MetaPathFinder):
    """Finds nothing itself; wraps xarray's loader so the accessor registers after it."""

    def find_spec(self, fullname: str, path: object = None, target: object = None):  # noqa: ANN201
        if fullname != "xarray":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None:
            return spec
        exec_module = spec.loader.exec_module

        def exec_then_register(module: ModuleType) -> None:
            exec_module(module)
            _register()

        spec.loader.exec_module = exec_then_register  # type: ignore[method-assign]
        return spec


def register_accessor_when_xarray_loads() -> None:
    """Register the accessor now if xarray is loaded, else right after it loads."""
    if "xarray" in sys.modules:
        _register()
    elif not any(isinstance(finder, _AfterXarray) for finder in sys.meta_path):
        sys.meta_path.insert(0, _AfterXarray())
