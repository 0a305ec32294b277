"""Every pairwise system difference against its noise floor."""

from __future__ import annotations

import numpy as np
import xarray as xr
from matplotlib.axes import Axes

from multiverse.plots._style import NOT_SIGNIFICANT, SIGNIFICANT, axes, style

__all__ = ["plot_noise_floor"]


def plot_noise_floor(pairs: xr.Dataset, *, ax: Axes | None = None) -> Axes:
    """Scatter of |difference| against its noise floor, one point per system pair and specification.

    The noise floor is the smallest absolute difference the two-sided test at
    the analysis's ``alpha`` calls real (``noise_floor`` of
    :func:`multiverse.analysis.paired_differences`); points above the diagonal
    are the differences beyond the noise (``exceeds_noise``), and the title
    counts them.  The minimum detectable difference (``mdd``) is a planning
    quantity and is not drawn.

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
    floor = kept["noise_floor"].values.ravel()
    size = np.abs(kept["difference"].values.ravel())
    beyond = kept["exceeds_noise"].values.ravel().astype(bool)
    usable = np.isfinite(floor) & np.isfinite(size)
    floor, size, beyond = floor[usable], size[usable], beyond[usable]
    alpha = pairs.attrs.get("alpha", 0.05)
    with style():
        ax = axes(ax, figsize=(5.0, 4.5))
        ax.scatter(floor[~beyond], size[~beyond], s=12, color=NOT_SIGNIFICANT, label="within the noise", linewidths=0)
        ax.scatter(floor[beyond], size[beyond], s=12, color=SIGNIFICANT, label="beyond the noise", linewidths=0)
        top = float(max(floor.max(initial=0), size.max(initial=0))) * 1.05 or 1.0
        ax.plot([0, top], [0, top], color="0.3", linewidth=0.8, linestyle="--")
        ax.set_xlim(0, top)
        ax.set_ylim(0, top)
        ax.set_xlabel(f"noise floor: smallest difference a test at alpha = {alpha:g} calls real")
        ax.set_ylabel("|difference between systems|")
        ax.set_title(f"{int(beyond.sum())} of {beyond.size} pairwise differences exceed their noise floor")
        ax.legend(loc="upper left")
    return ax
