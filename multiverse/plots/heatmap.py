"""Grid heatmaps: (mode x strategy) rows, principle columns, thin cells masked."""

from __future__ import annotations

import numpy as np
import xarray as xr
from matplotlib.axes import Axes

from multiverse.plots._style import axes, readable, style

__all__ = ["plot_cell_heatmap"]


def plot_cell_heatmap(
    cells: xr.Dataset, *, system: str | None = None, judge: str | None = None, ax: Axes | None = None
) -> Axes:
    """Violation rates over the TUNA grid (:func:`multiverse.analysis.cell_rates`).

    Masked cells (too few conversations) are hatched grey; each shown cell
    prints its rate and conversation count.

    Parameters
    ----------
    cells
        The analysis result.
    system, judge
        Which system and judge to draw (default: the first of each).
    ax
        Axes to draw on (default: a new figure).

    Returns
    -------
    Axes

    See Also
    --------
    multiverse.analysis.cell_rates
    """
    one = cells
    for dim, label in (("system", system), ("judge", judge)):
        if dim in one.dims:
            one = one.sel({dim: label}) if label is not None else one.isel({dim: 0})
    rate = one["rate"].stack(row=("mode", "strategy")).transpose("row", "principle")
    count = one["n_conversations"].stack(row=("mode", "strategy")).transpose("row", "principle")
    rows = [f"{readable(m)} / {readable(s)}" for m, s in rate["row"].values]
    values = rate.values
    with style():
        ax = axes(ax, figsize=(2.8 + 1.1 * values.shape[1], 1.2 + 0.32 * len(rows)))
        ax.set_facecolor("0.92")
        image = ax.imshow(np.ma.masked_invalid(values), cmap="Reds", vmin=0, vmax=1, aspect="auto")
        ax.figure.colorbar(image, ax=ax, shrink=0.7, label="violation rate")
        ax.set_xticks(range(values.shape[1]), [readable(p) for p in rate["principle"].values], rotation=30, ha="right")
        ax.set_yticks(range(len(rows)), rows)
        ax.grid(False)
        for i in range(values.shape[0]):
            for j in range(values.shape[1]):
                if np.isfinite(values[i, j]):
                    ax.text(j, i, f"{values[i, j]:.2f}\nn={int(count.values[i, j])}", ha="center", va="center",
                            fontsize=6, color="white" if values[i, j] > 0.6 else "black")
                else:
                    ax.add_patch(_hatch(j, i))
        label = ", ".join(f"{d}={one[d].item()}" for d in ("system", "judge") if d in one.coords and one[d].ndim == 0)
        masked = f"; hatched: fewer than {cells.attrs.get('min_conversations', 3)} conversations" if np.isnan(values).any() else ""
        ax.set_title(f"violation rate by user behaviour and principle ({label}{masked})")
    return ax


def _hatch(x: int, y: int):
    from matplotlib.patches import Rectangle

    return Rectangle((x - 0.5, y - 0.5), 1, 1, fill=False, hatch="///", edgecolor="0.75", linewidth=0)
