"""Configuration files read into typed values: roles, contracts, experiments, the sim block, recorded rollouts.

``located`` reads YAML with line numbers and defines the one problem shape
(``path:line: field: message``); ``fields`` is the one field reader every file
is read with; ``specs`` (with ``spec_parse`` and ``spec_types``) reads roles and
contracts; ``experiment`` (with ``experiment_fields``) reads experiment files,
``sim_block`` their ``sim:`` block, ``recorded`` recorded conversations
(``rollouts:``).  Names resolve on first use, so importing the package stays light.
"""

from __future__ import annotations

from multiverse.core.lazy import lazy_exports

__all__ = [
    "Problem",
    "SpecError",
    "load_contract",
    "load_experiment",
    "load_role",
    "load_roles",
    "validate_experiment",
    "validate_path",
]

_EXPORTS = {
    "Problem": "multiverse.config.located",
    "SpecError": "multiverse.config.located",
    "load_contract": "multiverse.config.specs",
    "load_role": "multiverse.config.specs",
    "load_roles": "multiverse.config.specs",
    "validate_path": "multiverse.config.specs",
    "load_experiment": "multiverse.config.experiment",
    "validate_experiment": "multiverse.config.experiment",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
