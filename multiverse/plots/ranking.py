"""Rankings across a dim (bump chart) and rank-flip matrices."""

from __future__ import annotations

import numpy as np
import xarray as xr
from matplotlib.axes import Axes

from multiverse.plots._style import axes, series_styles, style

__all__ = ["plot_rankings", "plot_rank_flips"]


def plot_rankings(ranks: xr.DataArray, *, dim: str = "judge", ax: Axes | None = None) -> Axes:
    """Bump chart: each system's rank (mean over the other specification dims) under each value of ``dim``.

    Parameters
    ----------
    ranks
        :func:`multiverse.analysis.rankings` output.
    dim
        The dim along the x axis.
    ax
        Axes to draw on (default: a new figure).

    Returns
    -------
    Axes

    See Also
    --------
    multiverse.analysis.rankings, plot_rank_flips
    """
    if dim not in ranks.dims:
        raise ValueError(f"plot_rankings: no dim {dim!r} in the ranks {ranks.dims}")
    mean = ranks.mean([d for d in ranks.dims if d not in ("system", dim)]).transpose("system", dim)
    labels = [str(v) for v in mean[dim].values]
    with style():
        ax = axes(ax, figsize=(1.5 + 0.9 * len(labels), 3.8))
        styles = series_styles(mean["system"].values)
        for system, row in zip(mean["system"].values, mean.values):
            ax.plot(range(len(labels)), row, label=str(system), **styles[str(system)])
        ax.set_xticks(range(len(labels)), labels, rotation=30, ha="right")
        ax.invert_yaxis()
        ax.set_ylabel("rank (1 = best), mean over other choices")
        ax.set_xlabel(dim)
        ax.set_title(f"rankings of systems by {dim}")
        ax.legend(loc="center left", bbox_to_anchor=(1.0, 0.5))
    return ax


def plot_rank_flips(agreement: xr.Dataset, *, ax: Axes | None = None) -> Axes:
    """Heatmap of the share of system pairs whose order flips, with Kendall's tau printed.

    Parameters
    ----------
    agreement
        :func:`multiverse.analysis.rank_agreement` or
        :func:`~multiverse.analysis.leaderboard_rankings` output.
    ax
        Axes to draw on (default: a new figure).

    Returns
    -------
    Axes

    See Also
    --------
    multiverse.analysis.rank_agreement
    """
    flips = agreement["flip_share"]
    rows, cols = flips.dims
    values = flips.values
    with style():
        ax = axes(ax, figsize=(1.2 + 0.9 * values.shape[1], 0.9 + 0.7 * values.shape[0]))
        image = ax.imshow(values, cmap="Reds", vmin=0, vmax=max(0.5, float(np.nanmax(values)) if np.isfinite(values).any() else 0.5))
        ax.figure.colorbar(image, ax=ax, shrink=0.8, label="share of system pairs flipped")
        ax.set_xticks(range(values.shape[1]), [str(v) for v in flips[cols].values], rotation=30, ha="right")
        ax.set_yticks(range(values.shape[0]), [str(v) for v in flips[rows].values])
        ax.grid(False)
        taus = agreement["kendall_tau"].values
        for i in range(values.shape[0]):
            for j in range(values.shape[1]):
                if np.isfinite(taus[i, j]):
                    ax.text(j, i, f"τ={taus[i, j]:.2f}", ha="center", va="center", fontsize=7)
        ax.set_title(f"rank flips between {rows}s")
    return ax
