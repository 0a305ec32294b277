"""Figures of a campaign: the violation heatmap and coverage curves.

Both draw results of :mod:`multiverse.analysis.campaign` and compute nothing
beyond layout.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
import xarray as xr
from matplotlib.axes import Axes

from multiverse.core.lazy import lazy_exports
from multiverse.plots._style import axes, readable, series_styles, style

__all__ = ["plot_coverage_curves", "plot_violation_heatmap"]


def plot_violation_heatmap(heatmap: xr.Dataset, *, ax: Axes | None = None, cmap: str = "Reds") -> Axes:
    """Shares of turns in violation over (mode x strategy) rows and principle columns.

    Each cell prints its share and ``n``, the conversations behind it; rows and
    columns are labelled in words (``procedural guidance / sociability``).
    Masked cells (turns of fewer than ``min_conversations`` conversations) are
    drawn grey, and the title mentions grey only when there is some.

    Parameters
    ----------
    heatmap
        :func:`multiverse.analysis.campaign.violation_heatmap`'s result.
    ax
        Axes to draw on (a new figure when ``None``).
    cmap
        Colour map of the shares (0 to 1).

    Returns
    -------
    matplotlib.axes.Axes
    """
    share = heatmap["share"].transpose("behaviour", "principle").to_numpy()
    counts = heatmap["conversations"].transpose("behaviour", "principle").to_numpy()
    standard = heatmap.attrs.get("standard")
    statistic = "share of turns in violation" + (f" ({readable(standard)})" if standard else "")
    with style():
        ax = axes(ax, figsize=(2.8 + 1.1 * share.shape[1], 1.2 + 0.32 * share.shape[0]))
        ax.set_facecolor("0.85")
        image = ax.imshow(np.ma.masked_invalid(share), cmap=cmap, vmin=0, vmax=1, aspect="auto")
        ax.grid(False)
        for (i, j), value in np.ndenumerate(share):
            label = f"{value:.2f}\nn={counts[i, j]}" if np.isfinite(value) else f"n={counts[i, j]}"
            colour = "white" if np.isfinite(value) and value > 0.6 else "black"
            ax.text(j, i, label, ha="center", va="center", fontsize=6, color=colour)
        ax.set_xticks(range(share.shape[1]), [readable(p) for p in heatmap["principle"].values], rotation=30, ha="right")
        ax.set_yticks(range(share.shape[0]), [readable(b).replace("/", " / ") for b in heatmap["behaviour"].values])
        ax.set_xlabel("principle")
        ax.set_ylabel("tagged user behaviour (mode / strategy)")
        notes = ["n: conversations"]
        if np.isnan(share).any():
            notes.append(f"grey: fewer than {heatmap.attrs.get('min_conversations', 3)} conversations")
        ax.set_title(f"{statistic} per grid cell\n({'; '.join(notes)})", fontsize=9)
        ax.figure.colorbar(image, ax=ax, shrink=0.7, label=statistic)
    return ax


def plot_coverage_curves(
    curves: Mapping[str, pd.Series],
    *,
    ax: Axes | None = None,
    threshold: float | None = 0.89,
    title: str | None = None,
) -> Axes:
    """Cumulative grid coverage per round, one line per campaign or search strategy.

    Parameters
    ----------
    curves
        Label -> :func:`multiverse.analysis.campaign.coverage_by_round` result.
    ax
        Axes to draw on (a new figure when ``None``).
    threshold
        A reference coverage drawn as a dashed line (``None`` for none).
    title
        The axes title (e.g. which roles the curves are of).

    Returns
    -------
    matplotlib.axes.Axes
    """
    with style():
        ax = axes(ax, figsize=(5, 3.5))
        styles = series_styles(curves)
        for label, curve in curves.items():
            ax.plot(curve.index, curve.to_numpy(), markersize=3, label=str(label), **styles[str(label)])
        if threshold is not None:
            ax.axhline(threshold, color="0.5", linestyle="--", linewidth=0.8)
        ax.set_ylim(0, 1.02)
        ax.set_xlabel("round")
        ax.set_ylabel("grid coverage")
        ax.legend(frameon=False, fontsize=8, loc="center left", bbox_to_anchor=(1.0, 0.5))
        if title:
            ax.set_title(title)
    return ax


__getattr__, _ = lazy_exports(
    __name__, {}, deprecated={"violation_heatmap": "plot_violation_heatmap", "coverage_curves": "plot_coverage_curves"}
)
