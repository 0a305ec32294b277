"""The numpy scoring kernel: severities of many conversations -> values and estimation terms under every standard and rule."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from multiverse.core import schema as S
from multiverse.scoring._reduce import any_last, first_true
from multiverse.scoring.estimate import STATUS, TURN_MODELS, decided_terms, imputed_terms
from multiverse.scoring.registry import rule_fn, rule_units, standard_fn
from multiverse.scoring.violations import Violations

__all__ = ["Scored", "final_turn", "score_kernel"]

_CELLS_PER_CHUNK = 1 << 23


def final_turn(severity: np.ndarray) -> np.ndarray:
    """Index of each conversation's final assistant turn, -1 when nothing is ruled.

    ``severity`` is ``(n, judge, turn, principle)``; the final turn is the last one
    at which any judge rules (severity other than -2) on any principle, so a judge
    that rules only on the final reply still finds it.
    """
    ruled = severity[:, 0] != S.NOT_APPLICABLE
    for j in range(1, severity.shape[1]):
        ruled |= severity[:, j] != S.NOT_APPLICABLE
    ruled_turn = any_last(ruled)
    n_turns = ruled_turn.shape[-1]
    last = n_turns - 1 - first_true(ruled_turn[:, ::-1])
    last[~any_last(ruled_turn)] = -1
    return last


def _workers() -> int:
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return min(8, cpus)


@dataclass
class Scored:
    """What :func:`score_kernel` returns for ``n`` conversations.

    ``values``, ``status``, ``expected``, ``weight``:
    ``(n, judge, standard, rule)``; ``clean``: ``(n, judge, standard)``
    (``any_turn`` decided clean).  See :mod:`multiverse.scoring.estimate`.
    """

    values: np.ndarray
    clean: np.ndarray
    status: np.ndarray
    expected: np.ndarray
    weight: np.ndarray


def score_kernel(
    severity: np.ndarray,
    *,
    target: np.ndarray,
    turns: np.ndarray,
    standards: Sequence[str],
    rules: Sequence[str],
    stratum: np.ndarray | None = None,
    reruns: int = 1,
    missing: str = "mar",
    workers: int | None = None,
) -> Scored:
    """Score a batch of conversations under every standard and rule, with their estimation terms.

    Parameters
    ----------
    severity
        int8 ``(n, judge, turn, principle)``: ``n`` conversations (censored
        turns of failed conversations already read as missing).
    target
        ``(n, principle)`` target mask.
    turns
        ``(turn,)`` turn labels.
    standards, rules
        Registered names.
    stratum
        ``(n,)`` int: conversations that share a model of their missing
        judgments (default: all of them); strata are equally large, and within
        one the conversations run rerun by rerun over the items.
    reruns
        Reruns of each item in a stratum (``R``; the items are ``G = size / R``).
    missing
        The assumption of the estimation terms (:data:`~multiverse.scoring.estimate.METHODS`).
    workers
        Threads over chunks of conversations (numpy releases the GIL);
        default: the CPUs available, at most 8.
    """
    n, n_judges = severity.shape[:2]
    shape = (n, n_judges, len(standards), len(rules))
    out = Scored(
        values=np.empty(shape), clean=np.empty(shape[:3], dtype=bool), status=np.empty(shape, dtype=np.int8),
        expected=np.empty(shape), weight=np.empty(shape),
    )
    step = max(1, _CELLS_PER_CHUNK // max(1, int(np.prod(severity.shape[1:]))))
    turn_labels = np.asarray(turns, dtype=float)
    standard_fns = [standard_fn(s) for s in standards]
    rule_fns = [rule_fn(r) for r in rules]
    units = [rule_units([r])[r] for r in rules]

    def batch(block: np.ndarray, s: int, last: np.ndarray, target_rows: np.ndarray) -> Violations:
        codes = np.asarray(standard_fns[s](block), dtype=np.int8)
        if codes.shape != block.shape:
            raise ValueError(f"standard {standards[s]!r} returned shape {codes.shape}, expected {block.shape}")
        return Violations(codes, turn_labels, last, target_rows)

    def run(start: int) -> None:
        stop = min(n, start + step)
        block = np.ascontiguousarray(severity[start:stop])
        last = np.repeat(final_turn(block), n_judges)
        target_rows = np.repeat(target[start:stop], n_judges, axis=0)
        block = block.reshape((-1,) + block.shape[-2:])
        for s in range(len(standards)):
            v = batch(block, s, last, target_rows)
            values = np.stack([rule(v) for rule in rule_fns], axis=-1)
            terms = decided_terms(v, values, rules=rule_fns, units=units, method=missing)
            for name, array in (("values", values), ("status", terms.status), ("expected", terms.expected),
                                ("weight", terms.weight)):
                getattr(out, name)[start:stop, :, s] = array.reshape(stop - start, n_judges, -1)
            out.clean[start:stop, :, s] = (v.any_turn == 0).reshape(-1, n_judges)

    workers = _workers() if workers is None else workers
    starts = range(0, n, step)
    if workers <= 1 or len(starts) <= 1:
        for start in starts:
            run(start)
    else:
        with ThreadPoolExecutor(workers) as pool:
            list(pool.map(run, starts))
    if missing == "mar":
        _impute_undecided(out, severity, target, batch, rule_fns,
                          np.zeros(n, dtype=np.int64) if stratum is None else np.asarray(stratum), reruns)
    return out


def _impute_undecided(out: Scored, severity: np.ndarray, target: np.ndarray, batch, rule_fns: list,
                      stratum: np.ndarray, reruns: int) -> None:
    """Fill the estimation terms of undecided conversations, the strata of one judge and standard at once.

    Strata are equally large (the pooled dims of a rectangular cube), so they
    are fitted together (:func:`multiverse.scoring.impute.fit_classes`).
    """
    undecided = out.status == STATUS["undecided"]
    undecided &= np.array([fn in TURN_MODELS for fn in rule_fns])
    if not undecided.any():
        return
    labels, inverse = np.unique(stratum, return_inverse=True)
    order = np.argsort(inverse, kind="stable")
    size = len(stratum) // len(labels)
    if size * len(labels) != len(stratum) or size % reruns:
        raise ValueError("scoring: strata of unequal sizes, or not whole items")
    grouped = undecided[order].reshape((len(labels), size) + undecided.shape[1:])
    for j, s in zip(*np.nonzero(undecided.any(axis=(0, 3)))):
        needed = np.flatnonzero(grouped[:, :, j, s].any(axis=(1, 2)))
        rows = order.reshape(len(labels), size)[needed].ravel()
        block = np.ascontiguousarray(severity[rows])
        v = batch(block[:, j], s, final_turn(block), target[rows])
        chosen = undecided[rows, j, s]
        terms = imputed_terms(v, rules=rule_fns, undecided=chosen, shape=(len(needed), reruns, size // reruns))
        out.expected[rows, j, s] = np.where(chosen, terms[0], out.expected[rows, j, s])
        out.weight[rows, j, s] = np.where(chosen, terms[1], out.weight[rows, j, s])
