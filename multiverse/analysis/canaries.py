"""What a judge's canary results say, and the corrections they support.

The canary probe (:mod:`multiverse.judge.canaries`) measures each judge's
sensitivity and specificity on planted replies of known verdict; a cube
carries the results in its ``canaries`` attr (:mod:`multiverse.cube.canaries`).

* :func:`canary_table`: the results as a tidy table, per principle and pooled.
* :func:`canary_corrected_rate`: a judge's share of cells meeting the
  canaries' standard, raw and corrected for its canary error rates (the
  Rogan-Gladen estimator), with a delta-method interval.
* :func:`canary_anchors`: the canary confusion counts in the shape
  :func:`multiverse.analysis.latent_class` takes as ``anchors``, so the
  Dawid-Skene error rates are estimated from the raters' agreement *and* the
  canaries.

Both corrections rest on one assumption, stated in their attrs: the judge errs
on the cube's replies as it errs on the canaries (its sensitivity and
specificity transfer).  Canaries are short, clear-cut replies, so a judge is
likely to err more on real, borderline ones; a corrected rate is then still
biased, toward the raw one.  Prediction-powered inference
(:func:`multiverse.analysis.corrected_rate`) needs labels drawn from the same
replies the judge rates; canaries are not, so they do not feed it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import xarray as xr
from scipy import stats

from multiverse import __version__
from multiverse.core import schema as S
from multiverse.cube.canaries import CANARY_STANDARDS, canary_results

__all__ = ["canary_anchors", "canary_corrected_rate", "canary_table"]

_COLUMNS = ("breaks", "caught", "keeps", "passed", "missing")


def canary_table(cube: xr.Dataset) -> pd.DataFrame:
    """One row per judge and scope (``pooled``, or ``role/principle``): counts, rates, intervals, flag.

    Columns: ``judge``, ``scope``, the counts (``breaks``, ``caught``,
    ``keeps``, ``passed``, ``missing``), ``sensitivity``, ``specificity`` and
    ``youden`` with ``*_lower`` / ``*_upper`` interval ends, and ``no_signal``
    (on the pooled row; per-principle rows are reported, not flagged).
    Empty when the cube holds no canary results.
    """
    rows = []
    for judge, result in canary_results(cube).items():
        scopes = [("pooled", result["pooled"])] + list(result["principles"].items())
        for scope, found in scopes:
            row = {"judge": judge, "scope": scope, **{k: found[k] for k in _COLUMNS}}
            for name in ("sensitivity", "specificity", "youden"):
                low, high = found[f"{name}_ci"]
                row.update({name: found[name], f"{name}_lower": low, f"{name}_upper": high})
            row["no_signal"] = bool(result["no_signal"]) if scope == "pooled" else None
            rows.append(row)
    return pd.DataFrame(rows)


def canary_corrected_rate(cube: xr.Dataset, *, judge: str, level: float = 0.95) -> xr.Dataset:
    """A judge's share of positive cells, raw and corrected by its pooled canary sensitivity and specificity.

    Parameters
    ----------
    cube
        A judgment cube with canary results for ``judge``.
    judge
        The judge.
    level
        The intervals' level.

    Returns
    -------
    xarray.Dataset
        ``rate`` over ``estimate`` (``raw``, ``corrected``) with ``ci``
        (``ci_bound``).  The raw rate is the share of the judge's valid cells
        meeting the canaries' standard, its interval clustered by conversation;
        the corrected one is ``(raw + specificity - 1) / (sensitivity + specificity - 1)``
        (Rogan and Gladen 1978), clipped to [0, 1], with a delta-method interval
        adding the canaries' binomial variances.  Attrs state the assumptions
        and count what was used and dropped: ``n_items`` (the conversations
        with a valid cell: the clusters), ``n_cells`` (valid cells),
        ``n_missing`` (cells whose judgment is missing, left out) and
        ``n_unjudged`` (conversations with cells to judge but none judged,
        left out).

    Raises
    ------
    ValueError
        If the cube holds no canary results for the judge, or its J is not positive
        (no correction exists for a judge without signal).
    """
    results = canary_results(cube)
    if judge not in results:
        raise ValueError(f"canary_corrected_rate: no canary results for judge {judge!r} (judged: {', '.join(results) or 'none'})")
    result = results[judge]
    pooled = result["pooled"]
    sens, spec = pooled["sensitivity"], pooled["specificity"]
    if sens is None or spec is None or sens + spec - 1 <= 0:
        raise ValueError(f"canary_corrected_rate: judge {judge!r} has no signal on its canaries (J <= 0); nothing to correct with")
    threshold = CANARY_STANDARDS[result["standard"]]
    severity = cube["severity"].sel(judge=judge)
    cells = severity.transpose(*S.CONVERSATION_DIMS, ...).values.reshape(-1, int(np.prod([severity.sizes[d] for d in severity.dims if d not in S.CONVERSATION_DIMS])))
    valid = cells >= 0
    missing = cells == S.MISSING
    counts, positives = valid.sum(axis=1), ((cells >= threshold) & valid).sum(axis=1)
    keep = counts > 0
    unjudged = int((~keep & missing.any(axis=1)).sum())
    counts, positives = counts[keep].astype(float), positives[keep].astype(float)
    g, n = len(counts), counts.sum()
    raw = positives.sum() / n
    var_raw = g / (g - 1) * ((positives - raw * counts) ** 2).sum() / n**2 if g > 1 else np.nan
    youden = sens + spec - 1
    corrected = (raw + spec - 1) / youden
    var_sens = sens * (1 - sens) / pooled["breaks"]
    var_spec = spec * (1 - spec) / pooled["keeps"]
    var_corrected = (var_raw + corrected**2 * var_sens + (1 - corrected) ** 2 * var_spec) / youden**2
    z = stats.norm.ppf(0.5 + level / 2)
    t = stats.t.ppf(0.5 + level / 2, df=g - 1) if g > 1 else np.nan
    rate = np.array([raw, min(1.0, max(0.0, corrected))])
    half = np.array([t * np.sqrt(var_raw), z * np.sqrt(var_corrected)])
    ci = np.clip(np.stack([rate - half, rate + half], axis=-1), 0.0, 1.0)
    out = xr.Dataset(
        {"rate": ("estimate", rate), "ci": (("estimate", "ci_bound"), ci)},
        coords={"estimate": ["raw", "corrected"], "ci_bound": ["lower", "upper"]},
    )
    out.attrs.update(
        analysis="canary_corrected_rate",
        multiverse_version=__version__,
        judge=judge,
        standard=result["standard"],
        sensitivity=sens,
        specificity=spec,
        n_items=g,
        n_cells=int(n),
        n_missing=int(missing.sum()),
        n_unjudged=unjudged,
        correction="Rogan-Gladen: (raw + specificity - 1) / (sensitivity + specificity - 1), clipped to [0, 1]",
        assumptions=(
            "the judge's sensitivity and specificity on the cube's cells equal those on the canaries "
            "(non-differential, transportable error rates); cells independent of the canaries' sampling"
        ),
        level=level,
    )
    return out


def canary_anchors(cube: xr.Dataset, *, standard: str | None = None, raters: list[str] | None = None) -> xr.DataArray:
    """The judges' canary confusion counts as Dawid-Skene anchors: ``(rater, true, observed)``.

    ``standard=None`` keeps severity codes (true 0 and 2, observed 0..2);
    a cell standard (``clear_breach``, ``any_deviation``) its binary codes
    (0 clean, 1 violated), as :func:`multiverse.analysis.latent_class` reads them.
    Raters without canary results get zero counts.
    """
    results = canary_results(cube)
    names = list(raters if raters is not None else results)
    codes = [0, 1] if standard is not None else [0, 1, 2]
    threshold = CANARY_STANDARDS.get(standard or "", None)
    if standard is not None and threshold is None:
        raise ValueError(f"canary_anchors: standard {standard!r}: expected None or one of {', '.join(CANARY_STANDARDS)}")
    counts = np.zeros((len(names), len(codes), len(codes)))
    for r, name in enumerate(names):
        for truth, row in (results.get(name, {}).get("confusion") or {}).items():
            for observed, n in row.items():
                t, o = int(truth), int(observed)
                if threshold is not None:
                    t, o = int(t >= threshold), int(o >= threshold)
                counts[r, t, o] += n
    return xr.DataArray(counts, dims=("rater", "true", "observed"),
                        coords={"rater": names, "true": codes, "observed": codes}, name="anchors")
