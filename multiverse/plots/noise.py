"""Every pairwise system difference against its noise floor."""

from __future__ import annotations

import numpy as np
import xarray as xr
from matplotlib.axes import Axes

from multiverse.plots._style import NOT_SIGNIFICANT, SIGNIFICANT, axes, style

__all__ = ["plot_noise_floor"]


def plot_noise_floor(pairs: xr.Dataset, *, ax: Axes | None = None) -> Axes:
    """Scatter of |difference| against the minimum detectable difference, one point per pair and specification.

    Points above the diagonal are differences larger than the evaluation's
    noise floor at the chosen power (:func:`multiverse.analysis.paired_differences`).

    Parameters
    ----------
    pairs
        The analysis result.
    ax
        Axes to draw on (default: a new figure).

    Returns
    -------
    Axes

    See Also
    --------
    multiverse.analysis.paired_differences, multiverse.analysis.noise_floor
    """
    systems = [str(s) for s in pairs["system"].values]
    upper = xr.DataArray(
        np.triu(np.ones((len(systems), len(systems)), dtype=bool), k=1),
        dims=("system", "system_b"), coords={"system": pairs["system"], "system_b": pairs["system_b"]},
    )
    kept = pairs.where(upper)
    floor = kept["mdd"].values.ravel()
    size = np.abs(kept["difference"].values.ravel())
    usable = np.isfinite(floor) & np.isfinite(size)
    floor, size = floor[usable], size[usable]
    beyond = size > floor
    with style():
        ax = axes(ax, figsize=(5.0, 4.5))
        ax.scatter(floor[~beyond], size[~beyond], s=12, color=NOT_SIGNIFICANT, label="within the noise", linewidths=0)
        ax.scatter(floor[beyond], size[beyond], s=12, color=SIGNIFICANT, label="beyond the noise", linewidths=0)
        top = float(max(floor.max(initial=0), size.max(initial=0))) * 1.05 or 1.0
        ax.plot([0, top], [0, top], color="0.3", linewidth=0.8, linestyle="--")
        ax.set_xlim(0, top)
        ax.set_ylim(0, top)
        ax.set_xlabel(f"minimum detectable difference (power {pairs.attrs.get('power', 0.8):.0%})")
        ax.set_ylabel("|difference between systems|")
        ax.set_title(f"{int(beyond.sum())} of {beyond.size} pairwise differences exceed their noise floor")
        ax.legend(loc="upper left")
    return ax
