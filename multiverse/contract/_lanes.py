"""Outcome lanes of a batch: the verdicts of :mod:`._kernel` joined with the evidence checks.

The lane of a case follows :data:`~multiverse.contract.LANES`: an invalid case is
``invalid_fixture``; a valid one with context errors ``missing_context_evidence``;
then ``violation``; then ``semantic_review`` when :func:`._evidence.review_reasons`
finds a reason; else ``pass``.  The evidence checks run in Python over a case's
events, so they run only on the cases that can have a finding: context errors
need request metadata on some event, an unrecorded action claim needs assistant
text; ``no_observed_actions`` is read from the action counts.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from multiverse.contract._case import walk
from multiverse.contract._evidence import context_errors, review_reasons
from multiverse.contract._rules import REQUEST_METADATA, ContractRules

_METADATA = frozenset(REQUEST_METADATA)


def _lane(invalid: bool, context: list, violated: bool, review: list) -> str:
    if invalid:
        return "invalid_fixture"
    if context:
        return "missing_context_evidence"
    if violated:
        return "violation"
    return "semantic_review" if review else "pass"


def lanes_of(
    judged: dict[str, np.ndarray],
    n_actions: np.ndarray,
    rules_of_case: Callable[[int], ContractRules],
    transcript_of: Callable[[int], list | None],
    candidates: Sequence[int],
    started_of: Callable[[int], bool | None] = lambda k: None,
) -> dict[str, np.ndarray]:
    """Per-case ``lane``, ``context_error`` and ``review_reason`` (first codes, ``""`` for none).

    Parameters
    ----------
    judged
        The kernel's per-case arrays (``first_error``, ``n_violations``).
    n_actions
        Recorded actions per case (a case with none has nothing observable).
    rules_of_case, transcript_of
        The contract and the event dicts of case ``k`` (``transcript_of`` may
        return ``None`` for a case whose events hold no metadata nor assistant text).
    candidates
        The cases whose events may hold request metadata or assistant text;
        the evidence checks run on these only.
    started_of
        The ``session_start`` flag of case ``k``.
    """
    invalid = judged["first_error"] != ""
    violated = judged["n_violations"] > 0
    n_cases = len(invalid)
    lane = np.where(invalid, "invalid_fixture", np.where(violated, "violation", "pass")).astype(object)
    nothing = ~invalid & ~violated & (n_actions == 0)
    lane[nothing] = "semantic_review"
    context_error = np.full(n_cases, "", dtype=object)
    review_reason = np.where(nothing, "no_observed_actions", "").astype(object)
    for k in candidates:
        transcript = transcript_of(k)
        if transcript is None:
            continue
        rules = rules_of_case(k)
        roles = walk(rules, transcript, started=started_of(k))["roles"]
        context = context_errors(rules, transcript, roles)
        review = [] if invalid[k] or violated[k] else review_reasons(rules, transcript)
        lane[k] = _lane(bool(invalid[k]), context, bool(violated[k]), review)
        context_error[k] = context[0]["code"] if context else ""
        review_reason[k] = review[0]["code"] if review else ""
    return {"lane": lane, "context_error": context_error, "review_reason": review_reason}


def evidence_candidates(transcripts: Sequence[list], judged: dict[str, np.ndarray]) -> list[int]:
    """Cases whose events may hold request metadata, or (when clean) assistant text.

    Context errors are listed for every case, invalid ones included (as
    :func:`~multiverse.contract.evaluate_case` does); review reasons only matter
    for clean cases.  The key scan per case is one C-level set union.
    """
    clean = (judged["first_error"] == "") & (judged["n_violations"] == 0)
    found = []
    for k, transcript in enumerate(transcripts):
        try:
            keys = set().union(*transcript)
        except TypeError:  # an event that is not a mapping: let the checks read it
            found.append(k)
            continue
        if not _METADATA.isdisjoint(keys) or (clean[k] and "text" in keys and _assistant_text(transcript)):
            found.append(k)
    return found


def _assistant_text(transcript: list) -> bool:
    return any(type(e) is dict and e.get("actor") == "assistant" and e.get("text") for e in transcript)


def add_lanes(ds: Any, lanes: dict[str, np.ndarray]) -> Any:
    """The batch Dataset with the per-case lane variables added."""
    import xarray as xr

    descriptions = {
        "lane": "outcome lane (multiverse.contract.LANES)",
        "context_error": "code of the case's first context error; empty when none",
        "review_reason": "code of the case's first semantic-review reason; empty when none",
    }
    for name, values in lanes.items():
        ds[name] = xr.Variable(("case",), values, attrs={"description": descriptions[name]}, fastpath=True)
    return ds
