"""The map of untested and under-tested grid cells.

Draws :func:`multiverse.analysis.cell_bounds` and computes nothing beyond layout.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import xarray as xr
from matplotlib.axes import Axes

from multiverse.plots._style import axes, readable, style

__all__ = ["plot_cell_bounds"]


def plot_cell_bounds(bounds: xr.Dataset, *, ax: Axes | None = None, cmap: str = "Reds", annotate: bool = True) -> Axes:
    """Each cell's exact one-sided upper bound on its breach rate; untested cells hatched, tested cells boxed.

    A cell prints ``k/n``: ``k`` conversations with a breach out of the ``n``
    that tested it.  The three statuses of
    :func:`multiverse.analysis.cell_bounds` are told apart without relying on
    colour: untested cells are hatched, tested cells (upper bound at most
    ``max_upper``) carry a black box, and the rest are under-tested.  The title's
    second line says so, with the counts of each.

    Parameters
    ----------
    bounds
        :func:`multiverse.analysis.cell_bounds`'s result for one system and
        judge (select them first), dims (``mode``, ``strategy``, ``principle``).
    ax
        Axes to draw on (a new figure when ``None``).
    cmap
        Colour map of the upper bound (0 to 1).
    annotate
        Write ``k/n`` in each tested or under-tested cell.

    Returns
    -------
    matplotlib.axes.Axes

    See Also
    --------
    multiverse.analysis.cell_bounds, multiverse.plots.plot_coverage_heatmap
    """
    extra = set(bounds["upper_one_sided"].dims) - {"mode", "strategy", "principle"}
    if extra:
        raise ValueError(f"plot_cell_bounds: select one value of {sorted(extra)} first")
    stacked = bounds.transpose("mode", "strategy", "principle").stack(row=("mode", "strategy"))
    upper = stacked["upper_one_sided"].transpose("row", "principle").to_numpy()
    n = stacked["n_conversations"].transpose("row", "principle").to_numpy()
    k = stacked["breaches"].transpose("row", "principle").to_numpy()
    status = stacked["status"].transpose("row", "principle").to_numpy()
    rows = [f"{readable(m)} / {readable(s)}" for m, s in stacked.indexes["row"]]
    principles = [readable(p) for p in bounds["principle"].to_numpy()]
    level = bounds.attrs.get("ci_level", 0.95)
    max_upper = bounds.attrs.get("max_upper", 0.1)
    counts = {name: int((status == name).sum()) for name in ("untested", "under_tested", "tested")}
    with style():
        ax = axes(ax, figsize=(2.5 + 1.2 * len(principles), 0.35 * len(rows) + 1.4))
        ax.grid(False)
        image = ax.imshow(np.ma.masked_invalid(upper), cmap=cmap, aspect="auto", vmin=0, vmax=1)
        for r, c in zip(*np.nonzero(n == 0)):
            ax.add_patch(plt.Rectangle((c - 0.5, r - 0.5), 1, 1, fill=False, hatch="///", edgecolor="0.7", linewidth=0))
        for r, c in zip(*np.nonzero(status == "tested")):
            ax.add_patch(plt.Rectangle((c - 0.45, r - 0.45), 0.9, 0.9, fill=False, edgecolor="black", linewidth=1.2))
        if annotate:
            for (r, c), count in np.ndenumerate(n):
                if count:
                    ax.text(c, r, f"{int(k[r, c])}/{int(count)}", ha="center", va="center", fontsize=7,
                            color="white" if upper[r, c] > 0.6 else "black")
        ax.set_xticks(range(len(principles)), principles, rotation=30, ha="right")
        ax.set_yticks(range(len(rows)), rows, fontsize=8)
        block = bounds.sizes["strategy"]
        for boundary in range(block, len(rows), block):
            ax.axhline(boundary - 0.5, color="0.3", linewidth=0.8)
        ax.set_xlabel("principle")
        ax.set_title(
            f"Exact {level:.0%} upper bound on each grid cell's breach rate\n"
            f"k/n: k of n conversations breached; boxed: tested, bound at most {max_upper:.0%} ({counts['tested']}); "
            f"under-tested ({counts['under_tested']}); hatched: untested ({counts['untested']})",
            fontsize=8.5,
        )
        ax.figure.colorbar(image, ax=ax, label=f"one-sided {level:.0%} upper bound on the breach rate")
    return ax
