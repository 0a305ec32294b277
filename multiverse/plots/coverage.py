"""The coverage heatmap of the TUNA grid.

Draws :func:`multiverse.core.grid.coverage` counts and computes nothing beyond layout.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import xarray as xr
from matplotlib.axes import Axes
from matplotlib.ticker import MaxNLocator

from multiverse.plots._style import axes, readable, style

__all__ = ["plot_coverage_heatmap"]


def plot_coverage_heatmap(counts: xr.DataArray, *, ax: Axes | None = None, cmap: str = "Blues", annotate: bool = True) -> Axes:
    """Turns per grid cell: rows mode x strategy, columns principle.

    Parameters
    ----------
    counts
        :func:`multiverse.core.grid.coverage`'s result, dims (``mode``,
        ``strategy``, ``principle``).
    ax
        Axes to draw on (a new figure when ``None``).
    cmap
        Colour map of the counts; empty cells are drawn white and hatched.
    annotate
        Write each cell's count in it.

    Returns
    -------
    matplotlib.axes.Axes

    See Also
    --------
    multiverse.core.grid.coverage, multiverse.core.grid.share_covered
    """
    missing = {"mode", "strategy", "principle"} - set(counts.dims)
    if missing or counts.ndim != 3:
        raise ValueError(f"plot_coverage_heatmap: expected dims (mode, strategy, principle); got {counts.dims}")
    stacked = counts.transpose("mode", "strategy", "principle").stack(row=("mode", "strategy"))
    values = stacked.transpose("row", "principle").to_numpy()
    rows = [f"{readable(m)} / {readable(s)}" for m, s in stacked.indexes["row"]]
    principles = [readable(p) for p in counts["principle"].to_numpy()]
    with style():
        ax = axes(ax, figsize=(2.5 + 1.2 * len(principles), 0.35 * len(rows) + 1.2))
        _draw(ax, values, rows, principles, counts.sizes["strategy"], cmap=cmap, annotate=annotate)
    return ax


def _draw(ax: Axes, values: np.ndarray, rows: list[str], principles: list[str], block: int, *, cmap: str, annotate: bool) -> None:
    shown = np.ma.masked_equal(values, 0)
    ax.grid(False)
    image = ax.imshow(shown, cmap=cmap, aspect="auto", vmin=0, vmax=max(int(values.max()), 1))
    for r, c in zip(*np.nonzero(values == 0)):
        ax.add_patch(plt.Rectangle((c - 0.5, r - 0.5), 1, 1, fill=False, hatch="///", edgecolor="0.8", linewidth=0))
    if annotate:
        threshold = 0.6 * max(int(values.max()), 1)
        for (r, c), value in np.ndenumerate(values):
            ax.text(c, r, str(int(value)), ha="center", va="center", fontsize=7, color="white" if value > threshold else "black")
    ax.set_xticks(range(len(principles)), principles, rotation=30, ha="right")
    ax.set_yticks(range(len(rows)), rows, fontsize=8)
    for boundary in range(block, len(rows), block):
        ax.axhline(boundary - 0.5, color="0.3", linewidth=0.8)
    ax.set_xlabel("principle")
    ax.set_title("Turns per TUNA grid cell")
    bar = ax.figure.colorbar(image, ax=ax, label="approved tagged turns")
    bar.locator = MaxNLocator(integer=True)
    bar.update_ticks()
