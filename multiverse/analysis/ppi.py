"""Judge-corrected rates: prediction-powered inference with power tuning (PPI++).

A model judge rates every conversation; humans label a subset.  The PPI++
estimate of a rate (Angelopoulos, Duchi and Zrnic 2023, arXiv:2311.01453) is

    theta = lam * mean(f over the N judge-only conversations)
            + mean(y - lam * f over the n human-labelled ones),

with ``y`` the human verdict and ``f`` the judge's.  It is unbiased for the
human-verdict rate whatever the judge's errors; ``lam`` (power tuning)
minimises its variance, ``cov(y, f) / ((1 + n / N) var(f))`` clipped to [0, 1]
(``lam = 0`` is the human-only estimate, ``lam = 1`` plain PPI).  The interval
is the Wald one with variance ``var(lam f) / N + var(y - lam f) / n``.  With
``small_sample=False`` the kernel follows ``ppi_py.ppi_mean_ci`` step for step
(the tests pin it to that package); the default adds a small-sample
correction (see :func:`ppi_mean`).  It is written here so the analysis layer needs no extra
runtime dependency.  A paired difference between two systems is the same
estimator on per-item differences.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import xarray as xr
from scipy import stats

from multiverse import __version__
from multiverse.analysis._categories import category_verdicts, resolve_standard
from multiverse.core import schema as S
from multiverse.scoring import score

__all__ = ["corrected_difference", "corrected_rate", "human_labels_needed", "labels_needed", "ppi_mean"]


def _spread(values: np.ndarray, *, small_sample: bool) -> float:
    """Variance of ``values``: ppi_py's (ddof 0), or with two pseudo-values at the mean +- 1/2 (ddof 1)."""
    if not small_sample:
        return float(np.var(values))
    return float((((values - values.mean()) ** 2).sum() + 2 * PSEUDO**2) / (len(values) + 1))


PSEUDO = 0.5
"""Offset of the two pseudo-residuals of the small-sample variant (one success and one failure of a 0/1 label)."""


def ppi_mean(
    y: np.ndarray, yhat: np.ndarray, yhat_unlabeled: np.ndarray, *, ci: float = 0.95, lam: float | None = None,
    small_sample: bool = True,
) -> dict[str, float]:
    """PPI++ estimate and interval of a mean.

    Parameters
    ----------
    y, yhat
        Human labels and the judge's verdicts on the ``n`` labelled units.
    yhat_unlabeled
        The judge's verdicts on the ``N`` units without a human label.
    ci
        Interval level.
    lam
        Power-tuning parameter; ``None`` estimates the variance-optimal one.
    small_sample
        ``False`` gives ``ppi_py.ppi_mean_ci`` exactly (normal quantile,
        variances with ddof 0).  ``True`` (default) is a small-sample variant
        for the few dozen labels a human study has: a t quantile with n - 1
        degrees of freedom, and the rectifier's variance computed with two
        pseudo-residuals at its mean +- 1/2 added (ddof 1), in the spirit of
        Agresti and Caffo (2000), so that a labelled set without a single
        disagreement does not give a zero-width interval.  The human-only
        interval uses the same rule, so widths compare like with like.
        ``benchmarks/coverage_ppi.py`` records both variants' coverage.

    Returns
    -------
    dict
        ``estimate``, ``lower``, ``upper``, ``se``, ``lam``, and the human-only
        ``human_estimate``, ``human_lower``, ``human_upper`` on the same labels.
    """
    y, yhat, unl = (np.asarray(a, dtype=float) for a in (y, yhat, yhat_unlabeled))
    n, big_n = len(y), len(unl)
    if n < 2 or big_n < 1:
        raise ValueError(f"ppi: needs at least 2 labelled and 1 judge-only unit, got {n} and {big_n}")
    if lam is None:
        cov = np.mean((y - y.mean()) * (yhat - yhat.mean()))
        var = np.var(np.concatenate([yhat, unl]), ddof=1)
        lam = float(np.clip(cov / ((1 + n / big_n) * var), 0, 1)) if var > 0 else 0.0
    estimate = lam * unl.mean() + (y - lam * yhat).mean()
    imputed = np.var(lam * unl, ddof=1 if small_sample and big_n > 1 else 0) / big_n
    se = float(np.sqrt(imputed + _spread(y - lam * yhat, small_sample=small_sample) / n))
    q = stats.t.ppf(0.5 + ci / 2, n - 1) if small_sample else stats.norm.ppf(0.5 + ci / 2)
    human_se = float(np.sqrt(_spread(y, small_sample=small_sample) / n))
    return {
        "estimate": float(estimate), "lower": float(estimate - q * se), "upper": float(estimate + q * se),
        "se": se, "lam": float(lam), "human_estimate": float(y.mean()),
        "human_lower": float(y.mean() - q * human_se), "human_upper": float(y.mean() + q * human_se),
    }


def labels_needed(
    width: float, *, y: np.ndarray, yhat: np.ndarray, n_unlabeled: int, ci: float = 0.95
) -> int:
    """Human labels for a PPI++ interval of total ``width``, from a pilot's labels ``y`` and verdicts ``yhat``.

    With the optimal ``lam`` the variance is ``var(y) / n * (1 - rho^2 / (1 + n / N))``
    (``rho`` the pilot's correlation of ``y`` and ``f``; ``N`` = ``n_unlabeled``,
    the judge-only units, held fixed).  Returns the smallest ``n`` whose
    interval is at most ``width`` wide, or ``-1`` when not even ``n = N`` reaches it.
    """
    y, yhat = np.asarray(y, dtype=float), np.asarray(yhat, dtype=float)
    if not 0 < width:
        raise ValueError(f"labels_needed: width={width}, expected a positive width")
    var_y = np.var(y)
    rho2 = 0.0
    if np.var(yhat) > 0 and var_y > 0:
        rho2 = float(np.corrcoef(y, yhat)[0, 1] ** 2)
    z = stats.norm.ppf(0.5 + ci / 2)

    def half_width(n: int) -> float:
        return float(z * np.sqrt(var_y / n * (1 - rho2 / (1 + n / n_unlabeled))))

    if 2 * half_width(n_unlabeled) > width:
        return -1
    low, high = 2, n_unlabeled
    while low < high:
        mid = (low + high) // 2
        if 2 * half_width(mid) <= width:
            high = mid
        else:
            low = mid + 1
    return low


def _verdicts(cube: xr.Dataset, judge: str, human: str | Sequence[str], standard: str | None, rule: str,
              category: str | None = None) -> tuple[xr.DataArray, xr.DataArray]:
    """Conversation-level verdicts of the judge and of the humans (their majority; a tie is missing)."""
    humans = [human] if isinstance(human, str) else list(human)
    known = cube["judge"].values.tolist()
    unknown = [j for j in [judge] + humans if j not in known]
    if unknown:
        raise ValueError(f"corrected rate: {unknown} are not judges of the cube")
    standard = resolve_standard(cube, [judge] + humans, standard, category)
    if standard is None:
        scores = category_verdicts(cube, [judge] + humans, category)
    else:
        scores = score(cube.sel(judge=[judge] + humans), standards=standard, rules=rule).squeeze(["standard", "rule"], drop=True)
    scores = scores.reset_coords(drop=True)
    votes = scores.sel(judge=humans)
    n = votes.notnull().sum("judge")
    share = votes.sum("judge") / n
    majority = xr.where(n > 0, xr.where(share > 0.5, 1.0, xr.where(share < 0.5, 0.0, np.nan)), np.nan)
    return scores.sel(judge=judge, drop=True), majority


def _without_judge(f: xr.DataArray, y: xr.DataArray) -> int:
    """Human-labelled conversations left out because the judge's verdict is missing (reported, not hidden)."""
    return int((f.isnull() & y.notnull()).sum())


def _split(f: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    valid_f = ~np.isnan(f)
    labelled = valid_f & ~np.isnan(y)
    return y[labelled], f[labelled], f[valid_f & np.isnan(y)], int((~valid_f).sum())


def _result(parts: dict[str, float], *, n: int, big_n: int, missing: int, what: str, ci: float,
            limits: tuple[float, float]) -> xr.Dataset:
    """The kernel's numbers as a Dataset, the intervals clipped to the estimand's range (which keeps coverage)."""
    for name in ("lower", "upper", "human_lower", "human_upper"):
        parts[name] = float(np.clip(parts[name], *limits))
    out = xr.Dataset({name: ((), value) for name, value in parts.items()})
    out["ci"] = xr.DataArray([parts["lower"], parts["upper"]], dims="ci_bound", coords={"ci_bound": ["lower", "upper"]})
    out["human_ci"] = xr.DataArray([parts["human_lower"], parts["human_upper"]], dims="ci_bound")
    out = out.drop_vars(["lower", "upper", "human_lower", "human_upper"])
    out.attrs.update(analysis=what, method="PPI++ (Angelopoulos, Duchi and Zrnic 2023), power-tuned, Wald interval",
                     multiverse_version=__version__, ci_level=ci, n_labelled=n, n_judge_only=big_n, n_missing=missing)
    return out


def corrected_rate(
    cube: xr.Dataset, *, judge: str, human: str | Sequence[str], standard: str | None = None,
    rule: str = "any_turn", ci: float = 0.95, lam: float | None = None, small_sample: bool = True,
    category: str | None = None,
) -> xr.Dataset:
    """The human-verdict violation rate from every judged conversation plus the human-labelled ones.

    Parameters
    ----------
    cube
        A judgment cube holding the model ``judge`` and the human judge(s).
    judge
        The model judge that rated every conversation.
    human
        A human judge, or several (their majority verdict; a tie is missing).
    standard, rule
        How turn severities become the conversation's verdict (``standard=None``:
        ``clear_breach``).
    ci, lam, small_sample
        Interval level; power tuning (``None``: optimal); the small-sample
        variant of :func:`ppi_mean`.
    category
        Instead of a standard: the rate of conversations labelled with this
        category of the judges' scale, named (``"B"`` for "B wins" on the
        pairwise scale, whatever raw labels or codes the data used; ``"fail"``;
        a likert rating ``"10"``).  Required for pairwise and likert labels.

    Returns
    -------
    xarray.Dataset
        0-d ``estimate``, ``se``, ``lam``, ``human_estimate``; ``ci`` and
        ``human_ci`` (the human-only interval on the same labels) over
        ``ci_bound``, clipped to [0, 1]; attrs ``n_labelled``, ``n_judge_only``, ``n_missing``
        (conversations without a valid judge verdict) and
        ``n_labelled_without_judge`` (of those, the ones with a human verdict,
        left out of the estimate).  Pools every conversation of the cube:
        select one system (or one cell) first.

    Notes
    -----
    The labelled conversations must be a random sample of the judged ones
    (each with the same chance of a label), e.g. an export stratified by
    ``role`` or ``system`` over strata of equal size.  A sample stratified by
    the judges' verdicts (``severity``, ``bucket``) over-represents some
    conversations and biases the estimate.  The target is the rate the human
    judge(s) would report on every conversation, their own errors included.
    """
    f, y = _verdicts(cube, judge, human, standard, rule, category)
    y_l, f_l, f_u, missing = _split(f.values.ravel(), y.values.ravel())
    parts = ppi_mean(y_l, f_l, f_u, ci=ci, lam=lam, small_sample=small_sample)
    out = _result(parts, n=len(y_l), big_n=len(f_u), missing=missing, what="corrected_rate", ci=ci, limits=(0.0, 1.0))
    out.attrs.update(n_labelled_without_judge=_without_judge(f, y), verdict=f"category {category}" if category
                     else f"{standard or 'clear_breach'} / {rule}")
    return out


def corrected_difference(
    cube: xr.Dataset, *, judge: str, human: str | Sequence[str], a: str, b: str, dim: str = "system",
    standard: str | None = None, rule: str = "any_turn", ci: float = 0.95, lam: float | None = None,
    small_sample: bool = True, category: str | None = None,
) -> xr.Dataset:
    """The paired difference of human-verdict rates, ``a`` minus ``b`` along ``dim``, by PPI++.

    Conversations are paired on every other conversation dim (the same item,
    replicate, role ...); a pair is labelled when the humans judged both sides
    and judge-only when they judged neither; pairs with one side labelled are
    judge-only.  ``standard``, ``rule`` and ``category`` as in :func:`corrected_rate`.
    Returns what :func:`corrected_rate` returns (intervals clipped to [-1, 1]).
    """
    f, y = _verdicts(cube, judge, human, standard, rule, category)
    if dim not in S.CONVERSATION_DIMS:
        raise ValueError(f"corrected_difference: dim {dim!r} is not a conversation dim")
    df = (f.sel({dim: a}) - f.sel({dim: b})).values.ravel()
    dy = (y.sel({dim: a}) - y.sel({dim: b})).values.ravel()
    y_l, f_l, f_u, missing = _split(df, dy)
    parts = ppi_mean(y_l, f_l, f_u, ci=ci, lam=lam, small_sample=small_sample)
    out = _result(parts, n=len(y_l), big_n=len(f_u), missing=missing, what="corrected_difference", ci=ci, limits=(-1.0, 1.0))
    out.attrs.update(n_labelled_without_judge=int((np.isnan(df) & ~np.isnan(dy)).sum()))
    return out


def human_labels_needed(
    cube: xr.Dataset, *, judge: str, human: str | Sequence[str], width: float, standard: str | None = None,
    rule: str = "any_turn", ci: float = 0.95, category: str | None = None,
) -> int:
    """Human labels a PPI++ rate interval of ``width`` needs, with the cube's labelled conversations as the pilot.

    Returns ``-1`` when labelling every judged conversation would not reach ``width``.
    """
    f, y = _verdicts(cube, judge, human, standard, rule, category)
    y_l, f_l, f_u, _ = _split(f.values.ravel(), y.values.ravel())
    if len(y_l) < 2:
        raise ValueError("human_labels_needed: the pilot needs at least 2 labelled conversations")
    return labels_needed(width, y=y_l, yhat=f_l, n_unlabeled=len(f_u) + len(y_l), ci=ci)
