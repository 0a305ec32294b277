"""Probe effects: how far a judge's verdicts move under a change that should not move them.

Each probed judge (``judge_probe`` not ``none``, see :mod:`multiverse.core.probes`)
judged the same cells as the judge it probes (``judge_base``).  Its effect is
the mean paired difference, probed minus unprobed, over the cells both judged
(severity >= 0 in both): in severity levels (``standard=None``) or in the share
of cells that meet a standard (``clear_breach``: severity 2; ``any_deviation``:
1 or 2).  On a pairwise dataset (:func:`multiverse.judge.pairwise.judge_pairs`)
the cells are the comparisons and the values the pairwise codes (``B`` 0,
``tie`` 1, ``A`` 2, read back in the comparison's own labels), so the order
effect is in code units: a judge that picks the response shown first with
probability ``q`` has an effect of ``-2 q``.

Inference treats items as the sampling units: cells of one conversation (its
turns and principles) share the conversation, so the estimate is the
cell-weighted mean difference ``sum_i D_i / sum_i n_i`` over conversations
``i`` (``D_i`` the summed differences, ``n_i`` the paired cells) with a
cluster-robust variance ``G / (G - 1) * sum_i (D_i - effect * n_i)^2 / (sum_i n_i)^2``
and a t interval on ``G - 1`` degrees of freedom (``G`` conversations with a
paired cell).  That is the intercept of an OLS fit with statsmodels'
cluster-robust covariance (``cov_type="cluster"``, its small-sample correction,
t with ``G - 1`` degrees of freedom); the tests pin the two together.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import xarray as xr
from scipy import stats

from multiverse import __version__
from multiverse.core import schema as S

__all__ = ["CELL_STANDARDS", "clustered_mean_difference", "combine_orders", "probe_effects"]

CELL_STANDARDS = {"clear_breach": 2, "any_deviation": 1}
"""Standards read cell by cell: name -> the lowest severity that meets it."""
_NO_PROBE = "none"


def clustered_mean_difference(sums: np.ndarray, counts: np.ndarray, *, level: float = 0.95) -> dict[str, float]:
    """The cell-weighted mean difference over clusters, with its cluster-robust t interval.

    Parameters
    ----------
    sums
        Per cluster, the sum of the paired differences ``D_i``.
    counts
        Per cluster, the number of paired cells ``n_i`` (clusters with none are dropped).
    level
        The interval's level.

    Returns
    -------
    dict
        ``effect``, ``se``, ``lower``, ``upper``, ``p_value`` (two-sided, against 0),
        ``n_items`` (clusters), ``n_cells``; NaN statistics with fewer than two clusters.
    """
    sums = np.asarray(sums, dtype=float)
    counts = np.asarray(counts, dtype=float)
    keep = counts > 0
    sums, counts = sums[keep], counts[keep]
    g, n = int(keep.sum()), float(counts.sum())
    out = {"effect": np.nan, "se": np.nan, "lower": np.nan, "upper": np.nan, "p_value": np.nan, "n_items": g, "n_cells": int(n)}
    if g == 0:
        return out
    effect = float(sums.sum() / n)
    out["effect"] = effect
    if g < 2:
        return out
    residuals = sums - effect * counts
    se = float(np.sqrt(g / (g - 1) * (residuals**2).sum()) / n)
    t = stats.t.ppf(0.5 + level / 2, df=g - 1)
    out.update(se=se, lower=effect - t * se, upper=effect + t * se)
    if se > 0:
        out["p_value"] = float(2 * stats.t.sf(abs(effect) / se, df=g - 1))
    elif effect == 0:
        out["p_value"] = 1.0
    else:
        out["p_value"] = 0.0
    return out


def _measure(values: np.ndarray, standard: str | None) -> np.ndarray:
    if standard is None:
        return values.astype(float)
    return (values >= CELL_STANDARDS[standard]).astype(float)


def _pairs(data: xr.Dataset) -> list[tuple[str, str, str, xr.DataArray, xr.DataArray]]:
    """``(label, base, probe, probed values, base values)`` for every probed judge of a cube or pairwise dataset."""
    out = []
    if "preference" in data:
        values = data["preference"]
        for judge in values["judge"].values.tolist():
            for probe in values["judge_probe"].values.tolist():
                if probe != _NO_PROBE:
                    row = values.sel(judge=judge)
                    out.append((f"{judge}.{probe}", judge, probe, row.sel(judge_probe=probe), row.sel(judge_probe=_NO_PROBE)))
        return out
    if "judge_probe" not in data.coords or "judge_base" not in data.coords:
        raise ValueError("probe_effects: the cube has no probed judges (coordinates judge_probe and judge_base; "
                         "see dims.judge_probe in experiments/README.md)")
    severity = data["severity"]
    for label, base, probe in zip(severity["judge"].values.tolist(), data["judge_base"].values.tolist(),
                                  data["judge_probe"].values.tolist()):
        if probe != _NO_PROBE:
            out.append((label, base, probe, severity.sel(judge=label), severity.sel(judge=base)))
    return out


def probe_effects(
    data: xr.Dataset,
    *,
    standard: str | None = None,
    judges: Sequence[str] | None = None,
    level: float = 0.95,
) -> xr.Dataset:
    """Each probe's effect on each probed judge's verdicts, with a paired interval clustered by item.

    Parameters
    ----------
    data
        A judgment cube with probed judges (``dims.judge_probe``), or a pairwise
        dataset (:func:`multiverse.judge.pairwise.judge_pairs`).
    standard
        ``None``: severity levels (pairwise: the pairwise codes); ``clear_breach``
        or ``any_deviation``: the share of cells meeting it (severity cubes).
    judges
        Probed judge labels to report (default: all).
    level
        The intervals' level.

    Returns
    -------
    xarray.Dataset
        Over ``probed`` (the probed judge labels, with coordinates
        ``judge_base`` and ``judge_probe``): ``effect`` (probed minus
        unprobed), ``se``, ``ci`` (with ``ci_bound`` lower/upper), ``p_value``,
        ``base_mean`` and ``probed_mean`` (over the paired cells),
        ``n_items`` (clusters: conversations, or comparisons) and ``n_cells``.

    See Also
    --------
    multiverse.plots.plot_probe_effects, combine_orders
    """
    if standard is not None and standard not in CELL_STANDARDS:
        raise ValueError(f"probe_effects: standard {standard!r} is not read cell by cell; expected None or one of "
                         f"{', '.join(CELL_STANDARDS)}")
    pairwise = "preference" in data
    if pairwise and standard is not None:
        raise ValueError("probe_effects: a pairwise dataset holds preferences, not severities: use standard=None")
    found = [p for p in _pairs(data) if judges is None or p[0] in judges]
    rows = []
    for label, base, probe, probed, unprobed in found:
        cluster_dims = ["item"] if pairwise else list(S.CONVERSATION_DIMS)
        cell_dims = [d for d in probed.dims if d not in cluster_dims]
        a = probed.transpose(*cluster_dims, *cell_dims).values.reshape(-1 if cluster_dims else 1, int(np.prod([probed.sizes[d] for d in cell_dims])))
        b = unprobed.transpose(*cluster_dims, *cell_dims).values.reshape(a.shape)
        valid = (a >= 0) & (b >= 0)
        ma, mb = np.where(valid, _measure(a, standard), 0.0), np.where(valid, _measure(b, standard), 0.0)
        stats_ = clustered_mean_difference((ma - mb).sum(axis=1), valid.sum(axis=1), level=level)
        cells = max(stats_["n_cells"], 1)
        rows.append((label, base, probe, stats_, ma.sum() / cells, mb.sum() / cells))
    names = [r[0] for r in rows]
    get = lambda key: np.array([r[3][key] for r in rows], dtype=float)  # noqa: E731
    out = xr.Dataset(
        {
            "effect": ("probed", get("effect")),
            "se": ("probed", get("se")),
            "ci": (("probed", "ci_bound"), np.stack([get("lower"), get("upper")], axis=-1).reshape(len(rows), 2)),
            "p_value": ("probed", get("p_value")),
            "probed_mean": ("probed", np.array([r[4] for r in rows], dtype=float)),
            "base_mean": ("probed", np.array([r[5] for r in rows], dtype=float)),
            "n_items": ("probed", np.array([r[3]["n_items"] for r in rows], dtype=np.int64)),
            "n_cells": ("probed", np.array([r[3]["n_cells"] for r in rows], dtype=np.int64)),
        },
        coords={"probed": names, "judge_base": ("probed", [r[1] for r in rows]),
                "judge_probe": ("probed", [r[2] for r in rows]), "ci_bound": ["lower", "upper"]},
    )
    out.attrs.update(
        analysis="probe_effects",
        multiverse_version=__version__,
        measure="pairwise code (B 0, tie 1, A 2)" if pairwise else (standard or "severity (0/1/2)"),
        estimand="mean paired difference, probed minus unprobed, over cells both judged",
        interval=f"{level:.0%} t interval, cluster-robust over items (G - 1 degrees of freedom)",
        level=level,
    )
    return out


def combine_orders(data: xr.Dataset, *, orders: Sequence[str] = (_NO_PROBE, "swapped")) -> xr.DataArray:
    """One verdict per comparison from both orders: the verdict if the two agree, else a tie.

    The correction for order bias (the "consistency" rule of Zheng et al.
    2023, MT-Bench): a comparison judged ``A`` in one order and ``B`` in the
    other is read as a tie, so a preference for a position cannot win a
    comparison.  Assumption: the judge's position preference does not depend
    on which system is shown where; under it, the combined verdict does not
    depend on the order of presentation, and a judge that answers by position
    with probability ``q`` has its decisive verdicts turned into ties at most
    that often (win rates shrink toward 0.5; they do not lean to a side).
    A comparison missing in either order is missing.

    Returns
    -------
    xarray.DataArray
        ``preference`` over ``(item, judge)``, pairwise codes (-1 missing).
    """
    values = data["preference"].sel(judge_probe=list(orders))
    first, second = (values.isel(judge_probe=i).drop_vars(["judge_probe", "position_a"], errors="ignore") for i in (0, 1))
    agree = first == second
    combined = xr.where(agree, first, 1)
    combined = xr.where((first < 0) | (second < 0), S.MISSING, combined).astype(np.int8)
    combined.attrs.update(scale="pairwise", categories="B=0,tie=1,A=2", combined="both orders; disagreement read as tie")
    return combined.rename("preference")
