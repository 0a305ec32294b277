"""multiverse: role-adherence evaluation as a multiverse of labelled measurement choices.

The public API is listed in ``__all__``.  Names are resolved on first use so that
``import multiverse`` stays light: it does not even import xarray, and registers
the ``Dataset.multiverse`` accessor as soon as xarray is loaded.
"""

from __future__ import annotations

from multiverse._lazy import lazy_exports


from multiverse._xarray_hook import register_accessor_when_xarray_loads

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    "evaluate_case": "multiverse.contract",
    "evaluate_batch": "multiverse.contract",
    "run": "multiverse.run",
    "open_cube": "multiverse.io",
    "save_cube": "multiverse.io",
    "score": "multiverse.score",
    "pass_hat_k": "multiverse.score",
    "register_standard": "multiverse.score",
    "register_rule": "multiverse.score",
    "register_judge": "multiverse.judges",
    "agreement": "multiverse.analysis.raters",
    "to_long": "multiverse.cube",
    "summary": "multiverse.cube_summary",
    "load_role": "multiverse.specs",
    "load_experiment": "multiverse.run.checks",
    "score_bounds": "multiverse.score",
    "judge_reasons": "multiverse.reasons",
}

__all__ = sorted(_EXPORTS) + ["__version__"]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
register_accessor_when_xarray_loads()
