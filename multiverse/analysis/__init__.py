"""Analyses of judgment cubes: how far do conclusions move with the evaluator's choices?

Every statistic comes in three layers: a numpy kernel taking ``axis=``, an
``xarray.apply_ufunc`` wrapper taking dim names, and the public function listed
here.  Names are imported on first use (PEP 562), so importing this package is free.
"""

from __future__ import annotations

from multiverse.core.lazy import lazy_exports

N_BOOT = 500
"""Resampling draws of the overview ``multiverse report`` and ``multiverse view`` show (their default)."""

_EXPORTS: dict[str, str] = {
    "agreement": "multiverse.analysis.raters",
    "agreement_ci": "multiverse.analysis.raters",
    "spec_curve": "multiverse.analysis.curve",
    "noise_floor": "multiverse.analysis.noise",
    "paired_differences": "multiverse.analysis.noise",
    "clustered_se_of_rate": "multiverse.analysis.noise",
    "rankings": "multiverse.analysis.ranking",
    "rank_agreement": "multiverse.analysis.ranking",
    "win_shares": "multiverse.analysis.ranking",
    "leaderboard_rankings": "multiverse.analysis.ranking",
    "leaderboard_table": "multiverse.analysis.ranking",
    "variance_decomposition": "multiverse.analysis.variance",
    "decision_study": "multiverse.analysis.variance",
    "cell_rates": "multiverse.analysis.cells",
    "latent_class": "multiverse.analysis.latent",
    "calibration_table": "multiverse.analysis.calibration",
    "false_positive_diagnosis": "multiverse.analysis.calibration",
    "simulator_ratings": "multiverse.analysis.user_ratings",
    "cell_bounds": "multiverse.analysis.exact_bounds",
    "corrected_rate": "multiverse.analysis.ppi",
    "corrected_difference": "multiverse.analysis.ppi",
    "human_labels_needed": "multiverse.analysis.ppi",
    "win_rate": "multiverse.analysis.pairwise",
    "consensus": "multiverse.analysis.consensus_judge",
    "mean_rating": "multiverse.analysis.likert",
    "probe_effects": "multiverse.analysis.probes",
    "combine_orders": "multiverse.analysis.probes",
    "canary_table": "multiverse.analysis.canaries",
    "canary_corrected_rate": "multiverse.analysis.canaries",
    "canary_anchors": "multiverse.analysis.canaries",
}

__all__ = sorted([*_EXPORTS, "N_BOOT"])


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
