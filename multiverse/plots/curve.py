"""The specification curve: sorted estimates over a dashboard of the choices behind them."""

from __future__ import annotations

import numpy as np
import xarray as xr
from matplotlib import colors
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from multiverse.plots._style import (
    NOT_SIGNIFICANT,
    NULL_BAND,
    OPPOSITE,
    PREFERRED,
    SIGNIFICANT,
    facet,
    option_label,
    style,
)

__all__ = ["plot_spec_curve"]

_CLASSES = ("white", NOT_SIGNIFICANT, SIGNIFICANT, OPPOSITE)


def plot_spec_curve(
    curve: xr.Dataset,
    *,
    role: str | None = None,
    condition: str | None = None,
    fig: Figure | None = None,
    title: str | None = None,
) -> tuple[Axes, Axes]:
    """Draw a specification curve (:func:`multiverse.analysis.spec_curve`) with its dashboard.

    Top: each specification's estimate in sorted order with its interval,
    coloured by significance (predicted direction / opposite / neither), over
    the null's 2.5-97.5 percentile band and median.  Bottom: one row per option,
    grouped by dim with labels on the left; a cell is filled where the
    specification uses that option.  The preferred specification is marked by a
    vertical line through both panels.  Readable with thousands of
    specifications (the dashboard is an image, intervals a band beyond 150).
    Specifications without any valid conversation (e.g. a judge that does not
    rule on this role) are left out.

    Parameters
    ----------
    curve
        The analysis result.
    role, condition
        The facet to draw (default: the first of each).
    fig
        A figure to draw into (default: a new one).
    title
        Figure title (default: the estimand).

    Returns
    -------
    tuple of Axes
        The curve and the dashboard axes.

    See Also
    --------
    multiverse.analysis.spec_curve
    """
    one = facet(curve, ("role", "condition"), {k: v for k, v in {"role": role, "condition": condition}.items() if v is not None})
    drawn = int(np.isfinite(one["estimate"].values).sum())  # specifications without data sort last
    order = np.argsort(one["position"].values)[:drawn]
    estimate = one["estimate"].values[order]
    lower = one["ci"].sel(ci_bound="lower").values[order]
    upper = one["ci"].sel(ci_bound="upper").values[order]
    significant = one["significant"].values[order]
    sign = 1 if curve.attrs.get("direction", "greater") == "greater" else -1
    null = float(curve.attrs.get("null", 0.0))
    opposite = (sign * (estimate - null) < 0) & (np.abs(one["z"].values[order]) > _critical(curve))
    status = np.where(significant, 2, np.where(opposite, 3, 1))
    x = np.arange(len(estimate))
    spec_dims = [d for d in curve.attrs.get("specification_dims", "").split(",") if d]
    n_options = sum(len(np.unique(one[d].values)) for d in spec_dims)  # dashboard rows

    with style():
        if fig is None:
            import matplotlib.pyplot as plt

            fig = plt.figure(figsize=(7.5, 3.2 + 0.16 * n_options))
        grid = fig.add_gridspec(2, 1, height_ratios=[3, max(1.0, 0.25 * n_options)], hspace=0.05)
        top = fig.add_subplot(grid[0])
        dash = fig.add_subplot(grid[1], sharex=top)
        null_curve = one["null_curve"].isel(rank_position=slice(0, drawn))
        top.fill_between(x, null_curve.sel(quantile=0.025).values, null_curve.sel(quantile=0.975).values,
                         color=NULL_BAND, step="mid", label="null 2.5-97.5%", linewidth=0)
        top.plot(x, null_curve.sel(quantile=0.5).values, color="0.55", linewidth=0.8, linestyle="--", label="null median")
        top.axhline(null, color="0.3", linewidth=0.6)
        point_colours = np.asarray(_CLASSES, dtype=object)[status]
        if len(x) <= 150:
            top.vlines(x, lower, upper, colors=list(point_colours), linewidth=0.8, alpha=0.7)
        else:
            top.fill_between(x, lower, upper, color=SIGNIFICANT, alpha=0.15, linewidth=0, label="interval")
        top.scatter(x, estimate, c=list(point_colours), s=max(2.0, 24.0 - 0.02 * len(x)), zorder=3, linewidths=0)
        preferred = np.flatnonzero(one["preferred"].values[order]) if "preferred" in one else []
        for p in preferred:
            top.axvline(p, color=PREFERRED, linewidth=0.8, linestyle=":")
            dash.axvline(p, color=PREFERRED, linewidth=0.8, linestyle=":")
            top.scatter([p], [estimate[p]], marker="*", s=90, color=PREFERRED, zorder=4, label="preferred")
        top.set_ylabel(f"estimate ({curve.attrs.get('unit', 'rate')})")
        top.set_title(title or _title(curve, one))
        handles, _ = top.get_legend_handles_labels()
        handles += _significance_patches(curve)
        top.legend(handles=handles, loc="upper left", ncols=3)
        top.tick_params(labelbottom=False)
        _dashboard(dash, one, spec_dims, order, status)
        dash.set_xlabel("specification, sorted by estimate")
    return top, dash


def _significance_patches(curve: xr.Dataset) -> list[Patch]:
    """Legend entries for the point colours (the dashboard's cells use the same colours)."""
    direction = curve.attrs.get("direction", "two-sided")
    if direction in ("greater", "less"):
        classes = ((SIGNIFICANT, f"significant, predicted ({direction})"), (OPPOSITE, "beyond the interval, opposite"))
    else:
        classes = ((SIGNIFICANT, "significant (two-sided)"),)
    return [Patch(color=c, label=label) for c, label in (*classes, (NOT_SIGNIFICANT, "not significant"))]


def _critical(curve: xr.Dataset) -> float:
    from scipy import stats

    return float(stats.norm.ppf(1 - float(curve.attrs.get("alpha", 0.05)) / 2))


def _dashboard(ax: Axes, one: xr.Dataset, spec_dims: list[str], order: np.ndarray, status: np.ndarray) -> None:
    rows, labels, group_edges = [], [], []
    for d in spec_dims:
        values = one[d].values[order]
        for option in sorted(np.unique(values)):
            rows.append(np.where(values == option, status, 0))
            labels.append(option_label(d, option))
        group_edges.append(len(rows))
    matrix = np.vstack(rows) if rows else np.zeros((1, len(order)))
    ax.imshow(matrix, aspect="auto", interpolation="nearest", cmap=colors.ListedColormap(list(_CLASSES)),
              vmin=-0.5, vmax=3.5, extent=(-0.5, len(order) - 0.5, max(len(rows), 1) - 0.5, -0.5))
    ax.set_yticks(range(len(labels)), labels)
    for edge in group_edges[:-1]:
        ax.axhline(edge - 0.5, color="0.4", linewidth=0.6)
    ax.grid(False)


def _title(curve: xr.Dataset, one: xr.Dataset) -> str:
    where = ", ".join(f"{d}={one[d].item()}" for d in ("role", "condition") if d in one.coords and one[d].ndim == 0)
    obs = one["observed"].values
    p = one["p_value"].values
    return (f"{curve.attrs.get('estimand', '')}  [{where}]\nmedian {obs[0]:.3f} (p={p[0]:.3f}) · "
            f"{obs[1]:.0%} significant (p={p[1]:.3f}) · Stouffer Z {obs[2]:.1f} (p={p[2]:.3f})")
