"""multiverse: role-adherence evaluation as a multiverse of labelled measurement choices.

The public API is listed in ``__all__``.  Names are resolved on first use so that
``import multiverse`` stays light: it does not even import xarray, and registers
the ``Dataset.multiverse`` accessor as soon as xarray is loaded.
"""

from __future__ import annotations

import importlib

from multiverse.core import old_paths
from multiverse.core.lazy import lazy_exports
from multiverse.core.xarray_hook import register_accessor_when_xarray_loads

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    "evaluate_case": "multiverse.contract",
    "evaluate_batch": "multiverse.contract",
    "run": "multiverse._run",
    "open_cube": "multiverse.cube.io",
    "save_cube": "multiverse.cube.io",
    "score": "multiverse.scoring",
    "pass_hat_k": "multiverse.scoring",
    "register_standard": "multiverse.scoring",
    "register_rule": "multiverse.scoring",
    "register_judge": "multiverse.judge",
    "register_judge_kind": "multiverse.core.judgment",
    "agreement": "multiverse.analysis.raters",
    "to_long": "multiverse.cube.build",
    "summary": "multiverse.cube.summary",
    "load_role": "multiverse.config.specs",
    "load_experiment": "multiverse.config.experiment",
    "score_bounds": "multiverse.scoring",
    "judge_reasons": "multiverse.cube.reasons",
}

__all__ = sorted(_EXPORTS) + ["__version__"]


_exported, __dir__ = lazy_exports(__name__, _EXPORTS)


def __getattr__(name: str) -> object:
    if f"{__name__}.{name}" in old_paths.OLD_PATHS:  # a module of the previous layout: warns
        return importlib.import_module(f"{__name__}.{name}")
    return _exported(name)


old_paths.install()
register_accessor_when_xarray_loads()
