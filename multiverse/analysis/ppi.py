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
(the tests pin it to that package).

That Wald interval fails where human studies live: a few dozen labels, or a
rare outcome (at a 2% rate with 200 labels it covered 90%): its variance rests
on a handful of disagreements.  The default (``small_sample=True``) therefore
recalibrates the judge on the labels instead of scaling it by ``lam``: the
judge's verdicts are discrete, so the best predictor of the human verdict from
the judge's is the labelled mean within each verdict, and PPI with that
recalibrated predictor is the post-stratified estimator
``sum_v pi_v theta_v`` (``pi_v`` the share of all judged units with verdict
``v``, ``theta_v`` the human mean among the labelled ones; double sampling for
stratification, Cochran 1977 ch. 12).  Its interval combines score intervals:
each ``theta_v`` gets Wilson's (for a mean of verdict differences in -1/0/1,
MOVER over its categories, with their multinomial correlation, which for two
categories is Newcombe's paired-difference interval), and the strata's are
added by MOVER (Zou & Donner 2008), with the sampling error of the
``pi_v`` as one more term.  A verdict no label has leaves its ``theta_v``
anywhere in the verdicts' range (its estimate is the overall labelled mean).
``benchmarks/coverage_ppi.py`` records both variants' coverage.  Written here
so the analysis layer needs no extra runtime dependency.  A paired difference
between two systems is the same estimator on per-item differences.

Judge error rates measured on canaries (planted replies of known verdict) do
not enter here: the rectifier needs labels of conversations drawn like the
judged ones, and canaries are not.  A rate corrected by canary error rates is
:func:`multiverse.analysis.canary_corrected_rate` (Rogan-Gladen, raw and
corrected, with its assumptions in its attrs).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import xarray as xr
from scipy import stats

from multiverse import __version__
from multiverse.analysis._intervals import wilson_interval
from multiverse.analysis._categories import category_verdicts, resolve_standard
from multiverse.core import schema as S
from multiverse.scoring import score

__all__ = ["corrected_difference", "corrected_rate", "human_labels_needed", "labels_needed", "ppi_mean"]


def ppi_mean(
    y: np.ndarray, yhat: np.ndarray, yhat_unlabeled: np.ndarray, *, ci: float = 0.95, lam: float | None = None,
    small_sample: bool = True,
) -> dict[str, float]:
    """Judge-corrected estimate and interval of a mean from labelled and judge-only units.

    Parameters
    ----------
    y, yhat
        Human labels and the judge's verdicts on the ``n`` labelled units
        (verdicts 0/1, or differences of them in -1/0/1).
    yhat_unlabeled
        The judge's verdicts on the ``N`` units without a human label.
    ci
        Interval level.
    lam
        PPI++'s power-tuning parameter (``small_sample=False`` only); ``None``
        estimates the variance-optimal one.
    small_sample
        ``True`` (default): the recalibrated (post-stratified) estimator with
        score intervals (see the module docstring).  ``False``: PPI++ as
        ``ppi_py.ppi_mean_ci`` (normal quantile, variances with ddof 0).  The
        human-only interval on the same labels uses the same rule (Wilson's,
        or Wald's), so widths compare like with like.

    Returns
    -------
    dict
        ``estimate``, ``lower``, ``upper``, ``se``, ``lam`` (PPI++'s, or the
        recalibrated predictor's slope when the judge has two verdicts), and
        the human-only ``human_estimate``, ``human_lower``, ``human_upper``.
    """
    y, yhat, unl = (np.asarray(a, dtype=float) for a in (y, yhat, yhat_unlabeled))
    n, big_n = len(y), len(unl)
    if n < 2 or big_n < 1:
        raise ValueError(f"ppi: needs at least 2 labelled and 1 judge-only unit, got {n} and {big_n}")
    if small_sample:
        return _recalibrated(y, yhat, unl, ci=ci)
    if lam is None:
        cov = np.mean((y - y.mean()) * (yhat - yhat.mean()))
        var = np.var(np.concatenate([yhat, unl]), ddof=1)
        lam = float(np.clip(cov / ((1 + n / big_n) * var), 0, 1)) if var > 0 else 0.0
    estimate = lam * unl.mean() + (y - lam * yhat).mean()
    se = float(np.sqrt(np.var(lam * unl) / big_n + np.var(y - lam * yhat) / n))
    q = stats.norm.ppf(0.5 + ci / 2)
    human_se = float(np.sqrt(np.var(y) / n))
    return {
        "estimate": float(estimate), "lower": float(estimate - q * se), "upper": float(estimate + q * se),
        "se": se, "lam": float(lam), "human_estimate": float(y.mean()),
        "human_lower": float(y.mean() - q * human_se), "human_upper": float(y.mean() + q * human_se),
    }


def _mean_interval(values: np.ndarray, support: np.ndarray, q: float) -> tuple[float, float, float]:
    """Mean of a discrete variable and its score interval: MOVER over its categories' Wilson limits.

    ``support`` lists every value the variable can take (so a category no
    unit shows still has an upper limit); for 0/1 values this is Wilson's
    interval.  Without values: the support's range around NaN.
    """
    if not len(values):
        return np.nan, float(support.min()), float(support.max())
    n = len(values)
    share = np.array([np.mean(values == v) for v in support])
    low, high = wilson_interval(share, np.full(share.shape, float(n)), np.full(share.shape, q))
    with np.errstate(invalid="ignore", divide="ignore"):
        r = -np.sqrt(np.outer(share, share) / np.outer(1 - share, 1 - share))  # multinomial shares
    r = np.nan_to_num(r)
    np.fill_diagonal(r, 1.0)
    sign = np.where(support < 0, -1.0, 1.0)
    corr = r * np.outer(sign, sign)
    keep = support != 0
    term = (support * share)[keep]
    below = np.where(support >= 0, support * (share - low), support * (share - high))[keep]
    above = np.where(support >= 0, support * (high - share), support * (low - share))[keep]
    c = corr[np.ix_(keep, keep)]
    mean = float(term.sum())
    return mean, mean - float(np.sqrt(max(below @ c @ below, 0.0))), mean + float(np.sqrt(max(above @ c @ above, 0.0)))


def _recalibrated(y: np.ndarray, yhat: np.ndarray, unl: np.ndarray, *, ci: float) -> dict[str, float]:
    """The post-stratified (recalibrated PPI) estimate and its MOVER interval; see the module docstring."""
    q = float(stats.norm.ppf(0.5 + ci / 2))
    support = np.array([-1.0, 0.0, 1.0]) if (y < 0).any() or (yhat < 0).any() else np.array([0.0, 1.0])
    judged = np.concatenate([yhat, unl])
    verdicts = np.unique(judged)
    pooled = float(y.mean())
    terms, below, above, variances = [], [], [], []
    for v in verdicts:
        weight = float(np.mean(judged == v))
        mean, low, high = _mean_interval(y[yhat == v], support, q)
        mean = pooled if np.isnan(mean) else mean
        terms.append(weight * mean)
        below.append(weight * (mean - low))
        above.append(weight * (high - mean))
        labelled = y[yhat == v]
        variances.append(weight**2 * np.var(labelled) / len(labelled) if len(labelled) else 0.0)
    means = np.asarray(terms) / np.array([np.mean(judged == v) for v in verdicts])
    shares = np.array([np.mean(judged == v) for v in verdicts])
    weights_error = float(np.sqrt(max(shares @ means**2 - (shares @ means) ** 2, 0.0) / len(judged)))  # the pi_v
    estimate = float(np.sum(terms))
    lower = estimate - float(np.sqrt(np.sum(np.square(below)) + (q * weights_error) ** 2))
    upper = estimate + float(np.sqrt(np.sum(np.square(above)) + (q * weights_error) ** 2))
    human, human_lower, human_upper = _mean_interval(y, support, q)
    slope = float(means[1] - means[0]) if len(verdicts) == 2 else np.nan
    return {
        "estimate": estimate, "lower": lower, "upper": upper, "se": float(np.sqrt(sum(variances) + weights_error**2)),
        "lam": slope, "human_estimate": human, "human_lower": human_lower, "human_upper": human_upper,
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


RECALIBRATED = ("recalibrated PPI (post-stratified by the judge's verdict), score intervals combined by MOVER")
PPI_PLUS_PLUS = "PPI++ (Angelopoulos, Duchi and Zrnic 2023), power-tuned, Wald interval"


def _result(parts: dict[str, float], *, n: int, big_n: int, missing: int, what: str, ci: float,
            limits: tuple[float, float], method: str) -> xr.Dataset:
    """The kernel's numbers as a Dataset, the intervals clipped to the estimand's range (which keeps coverage)."""
    for name in ("lower", "upper", "human_lower", "human_upper"):
        parts[name] = float(np.clip(parts[name], *limits))
    out = xr.Dataset({name: ((), value) for name, value in parts.items()})
    out["ci"] = xr.DataArray([parts["lower"], parts["upper"]], dims="ci_bound", coords={"ci_bound": ["lower", "upper"]})
    out["human_ci"] = xr.DataArray([parts["human_lower"], parts["human_upper"]], dims="ci_bound")
    out = out.drop_vars(["lower", "upper", "human_lower", "human_upper"])
    out.attrs.update(analysis=what, method=method, multiverse_version=__version__, ci_level=ci, n_labelled=n,
                     n_judge_only=big_n, n_missing=missing)
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
        Interval level; PPI++'s power tuning (``None``: optimal; with
        ``small_sample=False``); the small-sample variant of :func:`ppi_mean`.
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
    out = _result(parts, n=len(y_l), big_n=len(f_u), missing=missing, what="corrected_rate", ci=ci, limits=(0.0, 1.0),
                  method=RECALIBRATED if small_sample else PPI_PLUS_PLUS)
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
    out = _result(parts, n=len(y_l), big_n=len(f_u), missing=missing, what="corrected_difference", ci=ci,
                  limits=(-1.0, 1.0), method=RECALIBRATED if small_sample else PPI_PLUS_PLUS)
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
