"""Probe effects: how far a judge's verdicts move under a change that should not move them.

Each probed judge (``judge_probe`` not ``none``, see :mod:`multiverse.core.probes`)
judged the same cells as the judge it probes (``judge_base``).  Its effect is
the mean paired difference, probed minus unprobed, over the cells both judged
(severity >= 0 in both): in severity levels (``standard=None``) or in the share
of cells that meet a standard (``clear_breach``: severity 2; ``any_deviation``:
1 or 2).  A pairwise judge's cells (:mod:`multiverse.judge.pairwise`, the cube's
``scale`` coordinate ``pairwise``) hold pairwise codes (``B`` 0, ``tie`` 1,
``A`` 2, read back in the comparison's own labels), so the order probe's
effect is in code units: a judge that picks the reply shown first with
probability ``q`` has an effect of ``-2 q``; standards do not apply to them.

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
from multiverse.cube.scales import judge_scales

__all__ = ["CELL_STANDARDS", "MEASURES", "clustered_mean_difference", "combine_orders", "probe_effects"]

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


MEASURES = {"severity": "severity (0/1/2)", "pairwise": "pairwise code (B 0, tie 1, A 2)"}
"""What an effect is measured in without a standard, by the probed judge's scale."""


def _measure_name(scales: set[str]) -> str:
    if len(scales) == 1:
        return MEASURES[scales.pop()]
    return "; ".join(f"{scale} judges: {MEASURES[scale]}" for scale in sorted(scales or {"severity"}))


def _measure(values: np.ndarray, standard: str | None) -> np.ndarray:
    if standard is None:
        return values.astype(float)
    return (values >= CELL_STANDARDS[standard]).astype(float)


def _pairs(cube: xr.Dataset, *, caller: str) -> list[tuple[str, str, str, xr.DataArray, xr.DataArray]]:
    """``(label, base, probe, probed values, base values)`` for every probed judge of a cube (``caller`` names the error)."""
    if "judge_probe" not in cube.coords or "judge_base" not in cube.coords:
        raise ValueError(f"{caller}: the cube has no probed judges (coordinates judge_probe and judge_base; "
                         "see dims.judge_probe in experiments/README.md)")
    severity = cube["severity"]
    out = []
    for label, base, probe in zip(severity["judge"].values.tolist(), cube["judge_base"].values.tolist(),
                                  cube["judge_probe"].values.tolist()):
        if probe != _NO_PROBE:
            out.append((label, base, probe, severity.sel(judge=label), severity.sel(judge=base)))
    return out


def probe_effects(
    cube: xr.Dataset,
    *,
    standard: str | None = None,
    judges: Sequence[str] | None = None,
    level: float = 0.95,
) -> xr.Dataset:
    """Each probe's effect on each probed judge's verdicts, with a paired interval clustered by item.

    Parameters
    ----------
    cube
        A judgment cube with probed judges (``dims.judge_probe``).
    standard
        ``None``: severity levels (pairwise judges: the pairwise codes);
        ``clear_breach`` or ``any_deviation``: the share of cells meeting it
        (pairwise judges, to which no standard applies, are left out).
    judges
        Probed judge labels to report (default: all).
    level
        The intervals' level.

    Returns
    -------
    xarray.Dataset
        Over ``probed`` (the probed judge labels, with coordinates
        ``judge_base``, ``judge_probe`` and ``scale``): ``effect`` (probed minus
        unprobed), ``se``, ``ci`` (with ``ci_bound`` lower/upper), ``p_value``,
        ``base_mean`` and ``probed_mean`` (over the paired cells),
        ``n_items`` (clusters: conversations) and ``n_cells``.

    See Also
    --------
    multiverse.plots.plot_probe_effects, combine_orders
    """
    if standard is not None and standard not in CELL_STANDARDS:
        raise ValueError(f"probe_effects: standard {standard!r} is not read cell by cell; expected None or one of "
                         f"{', '.join(CELL_STANDARDS)}")
    scales = judge_scales(cube)
    found = [p for p in _pairs(cube, caller="probe_effects") if (judges is None or p[0] in judges)
             and (standard is None or scales[p[0]] == "severity")]
    rows = []
    for label, base, probe, probed, unprobed in found:
        cluster_dims = list(S.CONVERSATION_DIMS)
        cell_dims = [d for d in probed.dims if d not in cluster_dims]
        a = probed.transpose(*cluster_dims, *cell_dims).values.reshape(-1, int(np.prod([probed.sizes[d] for d in cell_dims])))
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
                "judge_probe": ("probed", [r[2] for r in rows]), "scale": ("probed", [scales[r[0]] for r in rows]),
                "ci_bound": ["lower", "upper"]},
    )
    out.attrs.update(
        analysis="probe_effects",
        multiverse_version=__version__,
        measure=standard or _measure_name({scales[r[0]] for r in rows}),
        estimand="mean paired difference, probed minus unprobed, over cells both judged",
        interval=f"{level:.0%} t interval, cluster-robust over items (G - 1 degrees of freedom)",
        level=level,
    )
    return out


def combine_orders(cube: xr.Dataset, *, probe: str = "swapped") -> xr.DataArray:
    """One verdict per cell of each pairwise judge from both orders: the verdict if the two agree, else a tie.

    The correction for order bias (the "consistency" rule of Zheng et al.
    2023, MT-Bench): a cell judged ``A`` in one order and ``B`` in the other
    is read as a tie, so a preference for a position cannot win a comparison.
    Assumption: the judge's position preference does not depend on which reply
    is shown where; under it, the combined verdict does not depend on the order
    of presentation, and a judge that answers by position with probability
    ``q`` has its decisive verdicts turned into ties at most that often (win
    rates shrink toward 0.5; they do not lean to a side).  A cell missing in
    either order is missing; one not applicable in either is not applicable.

    Parameters
    ----------
    cube
        A judgment cube with pairwise judges probed by the order probe.
    probe
        The order probe's label in ``dims.judge_probe`` (``<judge>.<probe>``
        holds each judge's verdicts with the two replies swapped).

    Returns
    -------
    xarray.DataArray
        ``severity``-shaped pairwise codes over the cube's dims, ``judge``
        being the pairwise judges that have both orders.

    Raises
    ------
    ValueError
        If no pairwise judge of the cube was probed by ``probe``.
    """
    scales = judge_scales(cube)
    pairs = [(base, label) for label, base, found, _, _ in _pairs(cube, caller="combine_orders")
             if found == probe and scales.get(base) == "pairwise"]
    if not pairs:
        raise ValueError(f"combine_orders: no pairwise judge of the cube is probed by {probe!r} "
                         "(dims.judge_probe: {<probe>: {order: swap}} beside a pairwise judge)")
    bases = [base for base, _ in pairs]
    severity = cube["severity"]
    first = severity.sel(judge=bases).reset_coords(drop=True)
    second = severity.sel(judge=[label for _, label in pairs]).reset_coords(drop=True).assign_coords(judge=bases)
    combined = xr.where(first == second, first, 1)
    combined = xr.where((first == S.NOT_APPLICABLE) | (second == S.NOT_APPLICABLE), S.NOT_APPLICABLE, combined)
    combined = xr.where((first == S.MISSING) | (second == S.MISSING), S.MISSING, combined).astype(np.int8)
    combined.attrs.update(scale="pairwise", categories="B=0,tie=1,A=2", combined="both orders; disagreement read as tie")
    return combined.rename("severity")
