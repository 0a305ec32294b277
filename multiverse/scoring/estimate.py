"""Estimation terms: what each conversation contributes to a mean, under a stated missing-data assumption.

A decided verdict (:mod:`multiverse.scoring.violations`) is known; an undecided
one is not, and dropping it as if at random biases every rate: undecided
conversations are mostly clean-looking ones (a seen violation decides), so the
decided ones over-represent violations.  Every conversation therefore carries
two *estimation terms*, and every mean over conversations is
``sum(weight * expected) / sum(weight)``:

``expected``
    The value itself when decided; for an undecided conversation its expected
    value under the assumption; NaN where it is not used.
``weight``
    1 for a conversation a rate uses, NaN for one it leaves out.  For rules in
    turns (``first_turn``: the mean turn of the first violation over violating
    conversations) the probability that the conversation violates: 1 or 0 when
    decided, the expected share when undecided.

Two assumptions are offered (``missing=``):

``"mar"`` (default)
    Missing at random given what was observed: whether a judgment went missing
    (or a conversation failed early) does not depend on the missing verdict,
    given the conversation's system, role, user simulator, condition, judge
    and standard (its *stratum*), its item, which cells it has, and its
    observed cells.
    An undecided conversation's expected value is its value averaged over the
    completions of its missing cells, under a latent class model of the
    stratum's cells fitted to every observed cell (:mod:`multiverse.scoring.impute`):
    multiple imputation from a cell-level model, with the imputed mean's limit
    in place of a finite number of draws.  The model reads the conversation's
    own observed cells (a clean-looking conversation is probably a cleaner
    one), its item's cells and share of missing cells (a judge that fails
    more often on hard items loses more cells where more breaches are), the
    principle and the turn of each missing cell.

    "Given its item" allows missingness that goes with anything fixed about
    the item (its difficulty, length or topic) and with its observed cells,
    but not with the missing cells' own verdicts, even through the item's
    total: a judge that fails more often on the items that *turned out* to
    breach more (counting the breaches it failed to judge) loses breached
    cells more often than clean cells of items as hard, which is missing not
    at random.  The model reads the item's difficulty from its own observed
    cells and those of the items that lose as many cells (the item classes'
    prior is a multinomial logit in the item's missing share), so it holds
    when difficulty follows the missing share smoothly, as in the coverage
    benchmark's ``unequal_missing_hard_items`` setting
    (``benchmarks/README.md``).
``"complete_case"``
    Only conversations with no missing cell in the rule's scope count (the
    rule of earlier releases): unbiased when judgments go missing completely at
    random and every conversation has the same cells, biased otherwise (longer
    conversations lose cells more often and breach more).

A rule registered by a user declares no scope, so it is estimated by complete
cases over the whole conversation under either assumption.  Neither
assumption holds when missingness depends on the missing verdict itself (a
judge that fails more often on breaches): :func:`multiverse.scoring.score_bounds`
gives the worst-case bounds for that case.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import xarray as xr

from multiverse.core import schema as S
from multiverse.scoring.impute import fit_classes
from multiverse.scoring.violations import (
    Violations,
    any_turn,
    first_turn,
    last_turn,
    scope_of,
    targeted_principle,
    turn_mean,
)

__all__ = [
    "METHODS",
    "STATUS",
    "TURN_MODELS",
    "Terms",
    "decided_terms",
    "estimated_mean",
    "imputed_terms",
    "status_codes",
    "terms_of",
]

METHODS = ("mar", "complete_case")
STATUS = {"complete": 0, "decided": 1, "undecided": 2, "not_ruled": 3}
"""Codes of the ``status`` coordinate: decided from complete judgments, decided despite missing
cells, undecided, and nothing to rule on (no cell in the rule's scope)."""

TURN_MODELS = {any_turn: "any", last_turn: "last", targeted_principle: "target", first_turn: "first", turn_mean: "share"}
"""The built-in rules, which are imputed, and how each reads the imputed cells."""


@dataclass
class Terms:
    """Estimation terms of one batch under one standard: ``(n, rule)`` arrays."""

    status: np.ndarray
    expected: np.ndarray
    weight: np.ndarray


def status_codes(values: np.ndarray, clean: np.ndarray, in_scope: np.ndarray, complete: np.ndarray) -> np.ndarray:
    """``status`` of ``(n,)`` conversations under one rule (see :data:`STATUS`).

    ``clean`` marks decided clean conversations, whose value is NaN under a
    rule in turns.
    """
    decided = ~np.isnan(values) | clean
    out = np.full(values.shape, STATUS["undecided"], dtype=np.int8)
    out[decided] = np.where(complete[decided], STATUS["complete"], STATUS["decided"])
    out[~in_scope] = STATUS["not_ruled"]
    return out


def decided_terms(
    v: Violations, values: np.ndarray, *, rules: Sequence[object], units: Sequence[str], method: str
) -> Terms:
    """Status, and the estimation terms of decided conversations, of a batch under one standard.

    Undecided conversations get NaN terms here; :func:`imputed_terms` fills
    them under ``"mar"`` (it needs whole strata, a batch need not hold them).

    Parameters
    ----------
    v
        The batch's violation codes under the standard (``n`` conversations).
    values
        ``(n, rule)`` decided values.
    rules, units
        The rule functions and their units, in the order of ``values``' last axis.
    method
        One of :data:`METHODS`.
    """
    n, n_rules = values.shape
    clean = v.any_turn == 0
    terms = Terms(
        status=np.empty((n, n_rules), dtype=np.int8),
        expected=np.full((n, n_rules), np.nan),
        weight=np.full((n, n_rules), np.nan),
    )
    for r, (rule, unit) in enumerate(zip(rules, units, strict=True)):
        value = values[:, r]
        in_scope, complete = scope_of(rule, v)
        if rule not in TURN_MODELS:
            complete = ~v.missing
        status = status_codes(value, clean & (unit == "turns"), in_scope, complete)
        terms.status[:, r] = status
        usable = status == STATUS["complete"]
        if method == "mar" and rule in TURN_MODELS:
            usable |= status == STATUS["decided"]
        if unit == "turns":
            violated = usable & ~np.isnan(value)
            terms.weight[usable, r] = violated[usable].astype(float)
            terms.expected[violated, r] = value[violated]
        else:
            terms.weight[usable, r] = 1.0
            terms.expected[usable, r] = value[usable]
    return terms


def imputed_terms(v: Violations, *, rules: Sequence[object], undecided: np.ndarray, shape: tuple[int, int, int]
                  ) -> np.ndarray:
    """Expected values and weights of the undecided conversations of whole strata under built-in rules.

    ``v`` holds ``S`` strata of ``R`` reruns of ``G`` items each (``shape``),
    stratum by stratum, rerun by rerun (every conversation informs its
    stratum's model); ``undecided`` (``(n, rule)`` bool) marks the
    conversations to impute under each rule.  Returns ``(2, n, rule)``:
    ``expected`` and ``weight``, NaN where nothing is imputed.
    """
    n = undecided.shape[0]
    out = np.full((2, n, len(rules)), np.nan)
    cells = np.moveaxis(v.codes, -1, 1)  # (n, principle, turn)
    grid = cells.reshape(shape + cells.shape[1:])
    model = fit_classes(grid == 1, grid == 0, missing=grid == S.MISSING)
    rows = np.flatnonzero(undecided.any(axis=1))
    n_classes = model.q.shape[1] * model.q.shape[2]
    posterior = model.posterior.reshape(n, n_classes)[rows]
    per_stratum = n // shape[0]
    log_not = np.log1p(-model.q).reshape((shape[0], n_classes) + model.q.shape[3:])[rows // per_stratum]
    missing = cells[rows] == S.MISSING
    for r, rule in enumerate(rules):
        if rule not in TURN_MODELS or not undecided[:, r].any():
            continue
        expected, weight = _expected(TURN_MODELS[rule], log_not, posterior, missing, v, rows)
        chosen = undecided[rows, r]
        out[0, rows[chosen], r] = expected[chosen]
        out[1, rows[chosen], r] = weight[chosen]
    return out


def _expected(kind: str, log_not: np.ndarray, posterior: np.ndarray, missing: np.ndarray, v: Violations,
              rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Expected value and weight of each conversation in ``rows`` under one kind of built-in rule.

    ``log_not`` ``(rows, K, P, T)``: log chance each cell is clean, per class;
    ``posterior`` ``(rows, K)``; ``missing`` ``(rows, P, T)``.
    """
    n_turns = missing.shape[-1]
    ones = np.ones(len(rows))

    def none_violated(cells: np.ndarray) -> np.ndarray:
        return (posterior * np.exp(np.einsum("npt,nkpt->nk", cells.astype(float), log_not))).sum(axis=1)

    if kind == "any":
        return 1 - none_violated(missing), ones
    if kind == "target":
        return 1 - none_violated(missing & v.target[rows][:, :, None]), ones
    if kind == "last":
        return 1 - none_violated(missing & (np.arange(n_turns) == v.last[rows][:, None])[:, None, :]), ones
    violated = v.turn_violated[rows]
    undecided = v.turn_undecided[rows]
    turn_hit = 1 - np.exp(np.einsum("npt,nkpt->nkt", missing.astype(float), log_not))  # (n, K, T)
    if kind == "share":
        expected_turns = (posterior[:, :, None] * turn_hit).sum(axis=1)
        total = violated.sum(axis=-1) + (expected_turns * undecided).sum(axis=-1)
        return total / np.maximum(v.turn_ruled[rows].sum(axis=-1), 1), ones
    # first_turn: the undecided turns before the first seen violation, in order
    seen = violated.any(axis=-1)
    first = np.where(seen, np.argmax(violated, axis=-1), n_turns)
    before = undecided & (np.arange(n_turns) < first[:, None])
    hit = np.where(before[:, None, :], turn_hit, 0.0)
    survive = np.cumprod(1 - hit, axis=-1)  # (n, K, T): no violation up to and including t
    survive_before = np.concatenate([np.ones_like(survive[..., :1]), survive[..., :-1]], axis=-1)
    labels = np.asarray(v.turns, dtype=float)
    at_turn = (survive_before * hit * labels).sum(axis=-1)  # (n, K)
    clean_through = survive[..., -1]
    last_label = labels[np.minimum(first, n_turns - 1)]
    numerator = at_turn + np.where(seen[:, None], clean_through * last_label[:, None], 0.0)
    violates = 1 - np.where(seen[:, None], 0.0, clean_through)
    weight = (posterior * violates).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        expected = (posterior * numerator).sum(axis=1) / weight
    return expected, weight


# --- the xarray layer -------------------------------------------------------------------------------


def terms_of(scores: xr.DataArray) -> tuple[xr.DataArray, xr.DataArray]:
    """``(weight * expected, weight)`` of every conversation, 0 where unused.

    Scores without estimation terms (a table of values built by hand) count
    every non-NaN value with weight 1.
    """
    if "weight" not in scores.coords:
        return scores.fillna(0.0), scores.notnull().astype(float)
    weight = scores["weight"].broadcast_like(scores).fillna(0.0)
    numerator = (weight * scores["expected"].broadcast_like(scores)).fillna(0.0)
    drop = [c for c in numerator.coords if c not in numerator.dims and c not in numerator.xindexes]
    return numerator.drop_vars(drop), weight.drop_vars(drop)


def estimated_mean(scores: xr.DataArray, *, dim: str | Sequence[str] | None = None) -> xr.DataArray:
    """The mean of ``scores`` over ``dim`` under their missing-data assumption.

    ``sum(weight * expected) / sum(weight)`` over ``dim`` (default: every
    conversation dim present): a rate for rate rules, the mean turn of the
    first violation over violating conversations for ``first_turn``.  Undecided
    conversations enter through their expected values (``"mar"``) or not at all
    (``"complete_case"``); see :mod:`multiverse.scoring.estimate`.

    Parameters
    ----------
    scores
        The output of :func:`multiverse.scoring.score` (or a selection of it).
    dim
        Dims averaged over.

    Returns
    -------
    xarray.DataArray
        The estimates, NaN where no conversation is used.

    See Also
    --------
    multiverse.scoring.score, multiverse.scoring.score_counts
    """
    if dim is None:
        dim = [d for d in S.CONVERSATION_DIMS if d in scores.dims]
    numerator, weight = terms_of(scores)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = numerator.sum(dim) / weight.sum(dim)
    out = out.where(weight.sum(dim) > 0)
    if "unit" in scores.coords and "unit" not in out.coords and "rule" in out.dims:
        out = out.assign_coords(unit=scores["unit"])
    out.name = "estimate"
    out.attrs = {"missing": scores.attrs.get("missing", "mar" if "weight" in scores.coords else "none")}
    return out
