"""Judges that must earn trust: probe effects (a forest plot) and canary results (sensitivity against specificity)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import xarray as xr
from matplotlib.axes import Axes

from multiverse.plots._style import NOT_SIGNIFICANT, NULL_BAND, OPPOSITE, SIGNIFICANT, axes, style

__all__ = ["plot_canaries", "plot_probe_effects"]


def plot_probe_effects(effects: xr.Dataset, *, ax: Axes | None = None) -> Axes:
    """Each probed judge's effect with its interval, one row per probe, a line at no effect.

    Parameters
    ----------
    effects
        :func:`multiverse.analysis.probe_effects` output.
    ax
        Axes to draw on (default: a new figure).

    Returns
    -------
    Axes
        Rows labelled ``<judge>: <probe>``; an interval that excludes 0 is
        coloured (blue above 0, orange below), one that covers it grey.

    See Also
    --------
    multiverse.analysis.probe_effects
    """
    labels = [f"{b}: {p}" for b, p in zip(effects["judge_base"].values, effects["judge_probe"].values)]
    effect = effects["effect"].values
    low, high = effects["ci"].sel(ci_bound="lower").values, effects["ci"].sel(ci_bound="upper").values
    with style():
        ax = axes(ax, figsize=(6.4, 1.2 + 0.42 * max(len(labels), 1)))
        ax.axvline(0.0, color=NULL_BAND, lw=2, zorder=0)
        for i, (e, lo, hi) in enumerate(zip(effect, low, high)):
            colour = NOT_SIGNIFICANT if not (lo > 0 or hi < 0) else (SIGNIFICANT if lo > 0 else OPPOSITE)
            ax.plot([lo, hi], [i, i], color=colour, lw=2)
            ax.plot([e], [i], "o", color=colour)
        ax.set_yticks(range(len(labels)), labels)
        ax.invert_yaxis()
        ax.set_xlabel(f"effect on {effects.attrs.get('measure', 'severity')} (probed - unprobed)")
        ax.set_title(f"judge probes: {effects.attrs.get('interval', 'intervals clustered by item')}", fontsize="medium")
    return ax


def plot_canaries(table: pd.DataFrame, *, ax: Axes | None = None) -> Axes:
    """Each judge's pooled canary sensitivity against its specificity, with intervals and the chance line.

    Parameters
    ----------
    table
        :func:`multiverse.analysis.canary_table` output (its ``pooled`` rows are drawn).
    ax
        Axes to draw on (default: a new figure).

    Returns
    -------
    Axes
        A judge on the diagonal ``sensitivity + specificity = 1`` has no signal;
        judges flagged ``no_signal`` are drawn in orange.
    """
    pooled = table[table["scope"] == "pooled"]
    with style():
        ax = axes(ax, figsize=(4.8, 4.4))
        ax.plot([0, 1], [1, 0], color=NULL_BAND, lw=2, zorder=0, label="chance (J = 0)")
        for _, row in pooled.iterrows():
            colour = OPPOSITE if row["no_signal"] else SIGNIFICANT
            x, y = row["specificity"], row["sensitivity"]
            if x is None or y is None or np.isnan(x) or np.isnan(y):
                continue
            ax.errorbar(x, y, xerr=[[x - row["specificity_lower"]], [row["specificity_upper"] - x]],
                        yerr=[[y - row["sensitivity_lower"]], [row["sensitivity_upper"] - y]], fmt="o", color=colour)
            ax.annotate(str(row["judge"]) + (" (no signal)" if row["no_signal"] else ""), (x, y),
                        textcoords="offset points", xytext=(5, 5), fontsize="small")
        ax.set_xlim(-0.02, 1.02)
        ax.set_ylim(-0.02, 1.02)
        ax.set_xlabel("specificity on keeping canaries")
        ax.set_ylabel("sensitivity on breaking canaries")
        ax.set_title("canaries: pooled results per judge", fontsize="medium")
        ax.legend(loc="lower left", fontsize="small")
    return ax
