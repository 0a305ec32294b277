"""Figures of analysis results: one function per analysis, ``ax=None`` in, ``Axes`` out.

Figure functions take the output of an analysis (never a cube) and compute
nothing beyond layout.  Names are imported on first use (PEP 562), so
``import multiverse.plots`` does not import matplotlib.  :func:`style` is the
context manager every figure draws in.
"""

from __future__ import annotations

from multiverse.core.lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "style": "multiverse.plots._style",
    "plot_spec_curve": "multiverse.plots.curve",
    "plot_agreement": "multiverse.plots.agreement",
    "plot_noise_floor": "multiverse.plots.noise",
    "plot_rankings": "multiverse.plots.ranking",
    "plot_rank_flips": "multiverse.plots.ranking",
    "plot_variance": "multiverse.plots.variance",
    "plot_decision_study": "multiverse.plots.variance",
    "plot_cell_heatmap": "multiverse.plots.heatmap",
    "plot_coverage_heatmap": "multiverse.plots.coverage",
    "plot_violation_heatmap": "multiverse.plots.campaign",
    "plot_coverage_curves": "multiverse.plots.campaign",
    "plot_cell_bounds": "multiverse.plots.cell_bounds",
    "plot_probe_effects": "multiverse.plots.probes",
    "plot_canaries": "multiverse.plots.probes",
}

_RENAMED = {"coverage_heatmap": "plot_coverage_heatmap"}
"""Names of the previous release, kept for one release with a DeprecationWarning."""

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, deprecated=_RENAMED)
