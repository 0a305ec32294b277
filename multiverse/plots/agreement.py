"""Agreement matrices as annotated heatmaps."""

from __future__ import annotations

import numpy as np
import xarray as xr
from matplotlib.axes import Axes

from multiverse.plots._style import axes, readable, style

__all__ = ["plot_agreement"]


def plot_agreement(result: xr.DataArray | xr.Dataset, *, ax: Axes | None = None, annotate: bool = True) -> Axes:
    """Heatmap of a pairwise agreement matrix (:func:`multiverse.analysis.agreement`).

    Parameters
    ----------
    result
        The matrix over (``<dim>``, ``<dim>_b``), or the Dataset of
        :func:`~multiverse.analysis.agreement_ci` (its ``estimate``; the interval
        is printed under each value).
    ax
        Axes to draw on (default: a new figure).
    annotate
        Print each value in its cell.

    Returns
    -------
    Axes

    See Also
    --------
    multiverse.analysis.agreement, multiverse.analysis.agreement_ci
    """
    interval = result["ci"] if isinstance(result, xr.Dataset) else None
    matrix = result["estimate"] if isinstance(result, xr.Dataset) else result
    rows, cols = matrix.dims[:2]
    values = matrix.values
    metric = result.attrs.get("metric", matrix.name or "agreement")
    low = 0.0 if metric == "percent" else -1.0
    with style():
        ax = axes(ax, figsize=(1.2 + 0.9 * values.shape[1], 0.9 + 0.7 * values.shape[0]))
        image = ax.imshow(values, cmap="RdBu", vmin=low, vmax=1.0)
        ax.figure.colorbar(image, ax=ax, shrink=0.8, label=readable(metric))
        ax.set_xticks(range(values.shape[1]), [str(v) for v in matrix[cols].values], rotation=30, ha="right")
        ax.set_yticks(range(values.shape[0]), [str(v) for v in matrix[rows].values])
        ax.grid(False)
        if annotate:
            for i in range(values.shape[0]):
                for j in range(values.shape[1]):
                    text = "–" if np.isnan(values[i, j]) else f"{values[i, j]:.2f}"
                    if interval is not None and i != j and np.isfinite(values[i, j]):
                        lo, hi = interval.values[i, j]
                        text += f"\n[{lo:.2f}, {hi:.2f}]"
                    dark = np.isfinite(values[i, j]) and abs(values[i, j]) > 0.6
                    ax.text(j, i, text, ha="center", va="center", fontsize=7, color="white" if dark else "black")
        standard = result.attrs.get("standard", "")
        ax.set_title(f"{readable(metric)} between {rows}s ({readable(standard)})")
    return ax
