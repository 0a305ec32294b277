"""Violation rates over the TUNA grid: (mode x strategy) rows, principle columns.

The table behind the RoleFUZZER paper's grid heatmaps (its Figures 7-8): for
each user-behaviour cell and principle, the share of conversations in which that
principle was violated, masked where fewer than ``min_conversations``
conversations back it.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from multiverse import __version__
from multiverse.core import schema as S
from multiverse.scoring import standard_codes
from multiverse.scoring.violations import decide

__all__ = ["cell_rates", "principle_verdicts"]

__all__ = ["principle_verdicts", "cell_rates"]


def principle_verdicts(cube: xr.Dataset, *, standard: str = "clear_breach") -> xr.DataArray:
    """Per conversation, judge and principle: 1 violated in some turn, 0 clean, NaN missing.

    The scoring kernel's complete-case rule with the principle's turns as its
    scope: any missing turn makes the verdict missing, whatever the other turns
    show; principles that do not apply and conversations that did not complete
    are NaN.
    """
    codes = standard_codes(cube["severity"], standard)
    verdict = xr.apply_ufunc(
        decide, (codes == 1).any("turn"), (codes == S.MISSING).any("turn"), (codes >= 0).any("turn")
    )
    if "ended" in cube:
        verdict = verdict.where(cube["ended"] == "completed")
    return verdict


def cell_rates(
    cube: xr.Dataset,
    *,
    standard: str = "clear_breach",
    by: str = "target",
    min_conversations: int = 3,
    pool: tuple[str, ...] = ("role", "user_sim", "condition", "replicate", "item"),
) -> xr.Dataset:
    """Violation rate of every principle in every (mode, strategy) cell of the grid.

    Parameters
    ----------
    cube
        A judgment cube (int8 severities) with the conversation variables ``mode`` and
        ``strategy`` (``by="target"``) or the turn tags ``tag_mode`` and
        ``tag_strategy`` (``by="tag"``).
    standard
        The evidentiary standard of a violation.
    by
        ``"target"``: a conversation counts in its target cell.  ``"tag"``: a
        conversation counts in every cell the monitor tagged one of its user
        turns with, judged on the assistant turns answering those user turns.
    min_conversations
        Rates backed by fewer conversations are masked (NaN).
    pool
        Dims pooled into each rate.

    Returns
    -------
    xarray.Dataset
        ``rate``, ``n_conversations`` (decided ones) and ``n_missing``
        (conversations, or tagged turns with ``by="tag"``, left undecided by a
        missing judgment) over (``system``, ``judge``, ``mode``, ``strategy``,
        ``principle``); ``rate`` is NaN where masked.

    See Also
    --------
    multiverse.plots.plot_cell_heatmap
    """
    if by not in ("target", "tag"):
        raise ValueError(f"cell_rates: by={by!r}, expected 'target' or 'tag'")
    needed = ("mode", "strategy") if by == "target" else ("tag_mode", "tag_strategy")
    absent = [v for v in needed if v not in cube]
    if absent:
        raise ValueError(f"cell_rates: the cube has no {absent[0]!r} variable (needed for by={by!r})")
    pooled = [d for d in pool if d in cube["severity"].dims]
    rates = np.full((len(S.MODES), len(S.STRATEGIES)), None, dtype=object)
    counts = np.full_like(rates, None)
    missing_counts = np.full_like(rates, None)
    codes = standard_codes(cube["severity"], standard)
    completed = cube["ended"] == "completed" if "ended" in cube else True
    if by == "target":
        verdicts = principle_verdicts(cube, standard=standard)
        missing = (codes == S.MISSING).any("turn") & completed
        units = list(pooled)
    else:
        verdicts = xr.where(codes == 1, 1.0, xr.where(codes == 0, 0.0, np.nan))
        if "ended" in cube:
            verdicts = verdicts.where(cube["ended"] == "completed")
        missing = (codes == S.MISSING) & completed
        units = pooled + ["turn"]
    mode, strategy = (cube[v].astype(str) for v in needed)
    for i, m in enumerate(S.MODES):
        for j, s in enumerate(S.STRATEGIES):
            here = (mode == m) & (strategy == s)
            in_cell = verdicts.where(here)
            total = in_cell.sum(units, min_count=1)
            valid = in_cell.notnull()
            if by == "tag":
                conversations = valid.any("turn").sum(pooled)
                n_units = valid.sum(units)
            else:
                conversations = n_units = valid.sum(units)
            rates[i, j] = total / n_units.where(n_units > 0)
            counts[i, j] = conversations
            missing_counts[i, j] = (missing & here).sum(units)
    rate = _grid(rates)
    n = _grid(counts).astype(np.int64)
    out = xr.Dataset({"rate": rate.where(n >= min_conversations), "n_conversations": n,
                      "n_missing": _grid(missing_counts).astype(np.int64)})
    out = out.drop_vars([c for c in out.coords if c not in out.dims]).transpose(..., "mode", "strategy", "principle")
    out.attrs.update({"analysis": "grid cell rates", "multiverse_version": __version__,
                      "standard": standard, "by": by,
                      "min_conversations": min_conversations, "pooled": ",".join(units)})
    return out


def _grid(cells: np.ndarray) -> xr.DataArray:
    rows = [xr.concat(list(row), dim=xr.DataArray(list(S.STRATEGIES), dims="strategy")) for row in cells]
    return xr.concat(rows, dim=xr.DataArray(list(S.MODES), dims="mode"))
