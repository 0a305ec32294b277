"""The numpy scoring kernel: severities of many conversations -> values under every standard and rule."""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from multiverse.core import schema as S
from multiverse.scoring._reduce import any_last, first_true
from multiverse.scoring.registry import rule_fn, standard_fn
from multiverse.scoring.violations import Violations

__all__ = ["final_turn", "score_kernel"]

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


def score_kernel(
    severity: np.ndarray,
    *,
    target: np.ndarray,
    completed: np.ndarray,
    turns: np.ndarray,
    standards: Sequence[str],
    rules: Sequence[str],
    workers: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Score a batch of conversations under every standard and rule.

    Parameters
    ----------
    severity
        int8 ``(n, judge, turn, principle)``: ``n`` conversations.
    target, completed
        ``(n, principle)`` target mask and ``(n,)`` bool.
    turns
        ``(turn,)`` turn labels.
    standards, rules
        Registered names.
    workers
        Threads over chunks of conversations (numpy releases the GIL);
        default: the CPUs available, at most 8.

    Returns
    -------
    values, clean
        float ``(n, judge, standard, rule)`` and bool ``(n, judge, standard)``
        (completed, and ``any_turn`` decided clean).
    """
    n, n_judges = severity.shape[:2]
    values = np.empty((n, n_judges, len(standards), len(rules)))
    clean = np.empty((n, n_judges, len(standards)), dtype=bool)
    step = max(1, _CELLS_PER_CHUNK // max(1, int(np.prod(severity.shape[1:]))))
    turn_labels = np.asarray(turns, dtype=float)
    standard_fns = [standard_fn(s) for s in standards]
    rule_fns = [rule_fn(r) for r in rules]

    def run(start: int) -> None:
        stop = min(n, start + step)
        block = np.ascontiguousarray(severity[start:stop])
        last = np.repeat(final_turn(block), n_judges)
        target_rows = np.repeat(target[start:stop], n_judges, axis=0)
        done = np.repeat(completed[start:stop], n_judges)
        block = block.reshape((-1,) + block.shape[-2:])
        for s, (standard, fn) in enumerate(zip(standards, standard_fns)):
            codes = np.asarray(fn(block), dtype=np.int8)
            if codes.shape != block.shape:
                raise ValueError(f"standard {standard!r} returned shape {codes.shape}, expected {block.shape}")
            v = Violations(codes, turn_labels, last, target_rows)
            for r, rule in enumerate(rule_fns):
                values[start:stop, :, s, r] = np.where(done, rule(v), np.nan).reshape(-1, n_judges)
            clean[start:stop, :, s] = (done & (v.any_turn == 0)).reshape(-1, n_judges)

    workers = _workers() if workers is None else workers
    starts = range(0, n, step)
    if workers <= 1 or len(starts) <= 1:
        for start in starts:
            run(start)
    else:
        with ThreadPoolExecutor(workers) as pool:
            list(pool.map(run, starts))
    return values, clean
