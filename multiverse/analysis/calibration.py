"""Judge calibration against human annotators: the paper's Table 1.

For every judge, the mean over humans of its pairwise agreement with each
human; for the humans, the mean over their pairs (the ceiling a judge can be
measured against).  Both on the three-level severity and on a binary standard
(``clear_breach`` by default), as percent agreement and Cohen's kappa, per
group (each role by default) and overall, with cluster-bootstrap intervals over
conversations (the same resampled conversations for every entry) and the
counts of units compared.

Beside it, the diagnosis of judge false positives: clear breaches a judge
reports where the humans' majority sees none, and how many of them follow an
earlier clear breach of the same principle in the same conversation (by the
humans' majority), i.e. a judge carrying an earlier breach forward.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from itertools import combinations

import numpy as np
import xarray as xr

from multiverse import __version__
from multiverse.analysis._bootstrap import bound_coords, percentile_interval
from multiverse.analysis.raters import default_level, labels_of, metric_from_tables, pair_table_draws
from multiverse.core import schema as S

__all__ = ["HUMANS", "calibration_table", "false_positive_diagnosis"]

HUMANS = "humans"
"""The ``rater`` label of the human-human row."""
METRICS = ("percent", "cohen_kappa")


def _mean_over_pairs(matrix: np.ndarray, pairs: list[tuple[int, int]]) -> np.ndarray:
    """Mean of ``matrix[..., a, b]`` over ``pairs`` ignoring NaN (undefined pairs)."""
    stacked = np.stack([matrix[..., a, b] for a, b in pairs], axis=-1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a row whose pairs are all undefined is NaN
        return np.nanmean(stacked, axis=-1)


def _rows(tables: np.ndarray, metric: str, judges: list[int], humans: list[int], level: str = "nominal") -> np.ndarray:
    """``(..., group, rater)``: each judge's mean agreement with the humans, then the humans' own."""
    matrix = metric_from_tables(tables, metric=metric, scale=level)
    rows = [_mean_over_pairs(matrix, [(j, h) for h in humans]) for j in judges]
    rows.append(_mean_over_pairs(matrix, list(combinations(humans, 2))))
    return np.stack(rows, axis=-1)


def _counts(tables: np.ndarray, judges: list[int], humans: list[int]) -> np.ndarray:
    """``(group, rater)``: units compared, summed over the pairs each row averages."""
    n = tables.sum(axis=(-2, -1))
    rows = [sum(n[..., j, h] for h in humans) for j in judges]
    rows.append(sum(n[..., a, b] for a, b in combinations(humans, 2)))
    return np.stack(rows, axis=-1).astype(np.int64)


def calibration_table(
    cube: xr.Dataset,
    *,
    humans: Sequence[str],
    judges: Sequence[str] | None = None,
    standard: str | None = None,
    by: str | None = None,
    n_boot: int = 1000,
    ci: float = 0.95,
    seed: int = 0,
) -> xr.Dataset:
    """Judge-human and human-human agreement, per group and overall (Table 1).

    Parameters
    ----------
    cube
        A judgment cube whose ``judge`` dim holds the humans (e.g. imported as
        ``human:<annotator>``) beside the model judges.
    humans
        The human raters (at least two, for the human-human row).
    judges
        The judges to calibrate (default: every other judge).
    standard
        The binary scale beside the three-level severity (default ``clear_breach``).
    by
        The grouping dim (default ``role``); an ``overall`` group pools them.
    n_boot, ci, seed
        Cluster bootstrap over conversations.

    Returns
    -------
    xarray.Dataset
        ``estimate`` and ``ci`` (``ci_bound``) over (``rater``, ``scale``,
        ``metric``, ``group``); ``rater`` is each judge and ``humans``;
        ``scale`` is ``three_level`` and the standard (for labels on another
        scale than ``severity``, e.g. ``pairwise`` A/B/tie, or codes of one's
        own marked ``attrs["label_kind"] == "nominal"``, the one scale
        ``categories``, and no false-positive diagnosis); ``metric`` is
        ``percent`` (a share) and ``cohen_kappa`` (quadratic-weighted on an
        ordinal scale, the three-level severity among them, as
        :func:`multiverse.analysis.agreement`).  ``n_units`` (rater, scale,
        group) counts the units compared, summed over the pairs averaged;
        ``n_conversations`` (group) the conversations with a human label.  Plus
        :func:`false_positive_diagnosis` under ``fp_*`` names (dim ``judge``).

    See Also
    --------
    multiverse.analysis.agreement, multiverse.analysis.latent_class
    """
    standard = standard or "clear_breach"
    by = by or "role"
    humans = list(humans)
    present = cube["judge"].values.tolist()
    missing = [h for h in humans if h not in present]
    if missing:
        raise ValueError(f"calibration_table: humans {missing} are not judges of the cube")
    if len(set(humans)) < 2:
        raise ValueError("calibration_table: needs at least two humans (the human-human row)")
    judges = [j for j in present if j not in humans] if judges is None else list(judges)
    unknown = [j for j in judges if j not in present or j in humans]
    if unknown or not judges:
        raise ValueError(f"calibration_table: judges {unknown or judges} must be judges of the cube other than the humans")
    if by not in cube["severity"].dims or by == "judge":
        raise ValueError(f"calibration_table: by={by!r} must be a dim of the cube other than 'judge'")
    sub = cube.sel(judge=judges + humans)
    j_index, h_index = list(range(len(judges))), list(range(len(judges), len(judges) + len(humans)))
    labels = labels_of(sub)
    nominal = cube.attrs.get("label_kind") == "nominal" or labels.scale != "severity"
    scales = {"categories": None} if nominal else {"three_level": None, standard: standard}
    estimates, intervals, counts = [], [], []
    for scale in scales.values():
        level = default_level(sub, labels, scale)
        _, pooled, draws = pair_table_draws(sub, standard=scale, by=by, n_boot=n_boot, seed=seed)
        pooled = np.concatenate([pooled, pooled.sum(axis=0, keepdims=True)])
        draws = np.concatenate([draws, draws.sum(axis=1, keepdims=True)], axis=1)
        estimates.append([_rows(pooled, m, j_index, h_index, level) for m in METRICS])
        intervals.append([percentile_interval(_rows(draws, m, j_index, h_index, level), ci=ci) for m in METRICS])
        counts.append(_counts(pooled, j_index, h_index))
    groups = [str(v) for v in cube[by].values] + ["overall"]
    coords = {"rater": judges + [HUMANS], "scale": list(scales), "metric": list(METRICS), "group": groups}
    estimate = np.asarray(estimates).transpose(3, 0, 1, 2)  # (scale, metric, group, rater) -> (rater, scale, metric, group)
    interval = np.asarray(intervals).transpose(3, 0, 1, 2, 4)
    out = xr.Dataset(
        {
            "estimate": (("rater", "scale", "metric", "group"), estimate),
            "ci": (("rater", "scale", "metric", "group", "ci_bound"), interval),
            "n_units": (("rater", "scale", "group"), np.asarray(counts).transpose(2, 0, 1)),
            "n_conversations": ("group", _human_conversations(sub, humans, by)),
        },
        coords={**coords, **bound_coords()},
    )
    if not nominal:
        diagnosis = false_positive_diagnosis(cube, humans=humans, judges=judges)
        out = out.assign({f"fp_{name}": diagnosis[name] for name in diagnosis.data_vars})
    out.attrs.update(
        analysis="calibration_table", multiverse_version=__version__, standard=standard, by=by,
        humans=list(humans), ci_level=ci, n_boot=n_boot, ci_method="cluster bootstrap over conversations, percentile",
        row_definition="judge: mean over humans of pairwise agreement; humans: mean over human pairs",
    )
    return out


def _human_conversations(cube: xr.Dataset, humans: list[str], by: str) -> np.ndarray:
    labelled = (labels_of(cube.sel(judge=humans)).values >= 0).any(["turn", "principle", "judge"])
    per_group = labelled.sum([d for d in labelled.dims if d != by]).transpose(by).values
    return np.append(per_group, per_group.sum()).astype(np.int64)


def false_positive_diagnosis(cube: xr.Dataset, *, humans: Sequence[str], judges: Sequence[str]) -> xr.Dataset:
    """Judge clear breaches the humans' majority rejects, and how many follow an earlier breach.

    The reference of a cell is the humans' majority on clear breach (severity
    2) among those who rated it; a tie or no human rating leaves the cell out.
    A false positive is a judge's clear breach on a cell whose reference is no
    breach; it *follows an earlier breach* when the reference has a clear
    breach of the same principle at an earlier turn of the same conversation.

    Returns
    -------
    xarray.Dataset
        Over ``judge``: ``false_positives``, ``after_earlier_breach`` and
        ``share_after`` (their ratio; NaN without false positives), and the
        cells behind them: ``n_judged`` (cells whose reference is no breach
        and the judge rated: the cells a false positive is counted among) and
        ``n_unjudged`` (reference no breach, the judge's judgment missing:
        dropped).  Cells left out of every judge's count, by reason:
        ``n_tied`` (the humans split evenly) and ``n_unrated`` (no human rated
        an applicable cell).
    """
    values = labels_of(cube.sel(judge=list(humans) + list(judges)), standard="clear_breach").values
    human = values.sel(judge=list(humans))
    votes = (human == 1).sum("judge")
    rated = (human >= 0).sum("judge")
    breach = 2 * votes > rated
    clean = (2 * votes < rated) & (rated > 0)
    earlier = breach.astype(np.int8).cumsum("turn") - breach.astype(np.int8) > 0
    applicable = (cube["severity"].sel(judge=list(humans)) != S.NOT_APPLICABLE).any("judge").reset_coords(drop=True)
    out: dict[str, list[int]] = {"false_positives": [], "after_earlier_breach": [], "n_judged": [], "n_unjudged": []}
    for judge in judges:
        fp = (values.sel(judge=judge) == 1) & clean
        judged = (values.sel(judge=judge) >= 0) & clean
        out["false_positives"].append(int(fp.sum()))
        out["after_earlier_breach"].append(int((fp & earlier).sum()))
        out["n_judged"].append(int(judged.sum()))
        out["n_unjudged"].append(int((clean & ~judged).sum()))
    total = np.asarray(out["false_positives"], dtype=float)
    after = np.asarray(out["after_earlier_breach"], dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(total > 0, after / total, np.nan)
    coords = {"judge": list(judges)}
    return xr.Dataset({
        "false_positives": ("judge", total.astype(np.int64)),
        "after_earlier_breach": ("judge", after.astype(np.int64)),
        "share_after": ("judge", share),
        "n_judged": ("judge", np.asarray(out["n_judged"], dtype=np.int64)),
        "n_unjudged": ("judge", np.asarray(out["n_unjudged"], dtype=np.int64)),
        "n_tied": int(((2 * votes == rated) & (rated > 0)).sum()),
        "n_unrated": int(((rated == 0) & applicable).sum()),
    }, coords=coords)
