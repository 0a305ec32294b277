"""Variance shares and decision studies."""

from __future__ import annotations

import numpy as np
import xarray as xr
from matplotlib.axes import Axes

from multiverse.plots._style import SIGNIFICANT, axes, facet, option_label, style

__all__ = ["plot_variance", "plot_decision_study"]


def plot_variance(
    decomposition: xr.Dataset,
    *,
    role: str | None = None,
    condition: str | None = None,
    ax: Axes | None = None,
    top: int = 12,
) -> Axes:
    """Horizontal bars of the variance shares, largest first, titled with the facet they are of.

    Parameters
    ----------
    decomposition
        :func:`multiverse.analysis.variance_decomposition` output.
    role, condition
        The facet to draw where the decomposition has several (default: the
        first of each); the title names the role and condition drawn.
    ax
        Axes to draw on (default: a new figure).
    top
        Show at most this many components (the rest are summed as "other").

    Returns
    -------
    Axes

    See Also
    --------
    multiverse.analysis.variance_decomposition, plot_decision_study
    """
    share = decomposition["share"]
    chosen = {k: v for k, v in {"role": role, "condition": condition}.items() if v is not None}
    share = facet(share, tuple(d for d in share.dims if d != "component"), chosen)
    where = [option_label(d, share[d].item()) for d in ("role", "condition") if d in share.coords and share[d].ndim == 0]
    ordered = share.sortby(share, ascending=False)
    names = [str(c) for c in ordered["component"].values]
    values = ordered.values
    if len(names) > top:
        names, values = names[: top - 1] + ["other"], np.append(values[: top - 1], values[top - 1 :].sum())
    with style():
        ax = axes(ax, figsize=(5.5, 0.8 + 0.28 * len(names)))
        ax.barh(range(len(names)), values, color=SIGNIFICANT)
        ax.set_yticks(range(len(names)), names)
        ax.invert_yaxis()
        ax.set_xlabel("share of the estimate's variance")
        ax.grid(axis="x")
        ax.set_axisbelow(True)
        ax.set_title("where the variance comes from" + (f" ({', '.join(where)})" if where else ""))
        for i, v in enumerate(values):
            ax.text(v, i, f" {v:.0%}", va="center", fontsize=7)
    return ax


def plot_decision_study(reliability: xr.DataArray, *, ax: Axes | None = None) -> Axes:
    """Reliability against the number of levels of the varied facet, with the target marked.

    Parameters
    ----------
    reliability
        :func:`multiverse.analysis.decision_study` output.
    ax
        Axes to draw on (default: a new figure).

    Returns
    -------
    Axes

    See Also
    --------
    multiverse.analysis.decision_study
    """
    extra = [d for d in reliability.dims if d != "n"]
    curve = reliability.isel({d: 0 for d in extra}) if extra else reliability
    with style():
        ax = axes(ax, figsize=(4.5, 3.2))
        ax.plot(curve["n"].values, curve.values, marker="o", markersize=3)
        target = reliability.attrs.get("target")
        if target is not None:
            ax.axhline(target, color="0.4", linestyle="--", linewidth=0.8)
        needed = reliability.attrs.get("n_needed", -1)
        if needed and needed > 0:
            ax.axvline(needed, color="0.4", linestyle=":", linewidth=0.8)
        ax.set_xlabel(f"number of {reliability.attrs.get('vary', 'levels')}s averaged")
        ax.set_ylabel(f"{reliability.attrs.get('kind', 'relative')} reliability")
        ax.set_ylim(0, 1)
        ax.set_title(f"decision study: {needed if needed > 0 else 'no'} {reliability.attrs.get('vary', '')}s reach {target}")
    return ax
