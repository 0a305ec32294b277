"""The ``contract`` judge: role-contract verdicts as cube severities.

Assistant turn ``i`` (the cube's 1-based ``turn``) is the ``i``-th assistant
event of a transcript.  On the principle its contract enforces (the contract's
``enforces``), the judge writes 2 (clear breach) at every assistant turn with an
action outside the active role and 0 at the other assistant turns; a case with
fixture errors has no verdict, so those cells are missing (-1, reason
``invalid_fixture``).  Other principles, turns past the conversation's end, and
every cell of a contract that enforces no listed principle are not applicable (-2).

:func:`contract_verdicts` also keeps, per conversation, what the severities
cannot hold: the outcome lane, the first context error (a harness defect) and
the first semantic-review reason, which the run writes to the cube as
``contract_lane``, ``contract_context_error`` and ``contract_review_reason``.
A transcript is a whole conversation, so its case is marked as starting at the
session start; the events' text and a tool event's ``status`` and ``action`` go
into the case, so prose claims and denied attempts are seen.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from multiverse.contract import evaluate_batch
from multiverse.core.schema import CLEAR_BREACH, FULL_ADHERENCE, MISSING, NOT_APPLICABLE
from multiverse.core.transcript import Transcript

__all__ = ["CONVERSATION_VARIABLES", "contract_severities", "contract_verdicts"]

CONVERSATION_VARIABLES: tuple[str, ...] = ("contract_lane", "contract_context_error", "contract_review_reason")
"""Per-conversation cube variables of the contract judge (``""`` where it does not rule)."""


def _as_dict(contract: Any) -> dict[str, Any]:
    if isinstance(contract, Mapping):
        return dict(contract)
    to_dict = getattr(contract, "to_dict", None)
    if not callable(to_dict):
        raise TypeError(f"contract: expected a case-JSON dict or a Contract, got {type(contract).__name__}")
    data = to_dict()
    pairs = getattr(contract, "transitions", ())
    if pairs and "transitions" not in data:
        data["transitions"] = [{"from": a, "to": b} for a, b in pairs]
    return data


def _case(transcript: Transcript, contract: dict[str, Any], case_id: str) -> dict[str, Any]:
    """The case JSON of a whole conversation, with text and tool outcomes."""
    case = transcript.to_case(contract, case_id=case_id)
    case["session_start"] = True
    for item, event in zip(case["transcript"], transcript.events):
        if event.text:
            item["text"] = event.text
        for key in ("status", "action"):
            if event.actor == "tool" and key in event.meta:
                item[key] = event.meta[key]
    return case


def contract_severities(
    transcripts: Sequence[Transcript],
    contracts: Any,
    *,
    principle_ids: Sequence[str],
    horizon: int,
) -> tuple[np.ndarray, list[str | None]]:
    """Severities of the role-contract oracle for each transcript.

    Parameters
    ----------
    transcripts
        Finished conversations.
    contracts
        One contract for all transcripts, or one per transcript: case-JSON dicts
        or objects with ``to_dict()`` (:class:`multiverse.config.specs.Contract`).
    principle_ids
        The cube's ``principle`` labels, in order.
    horizon
        Number of assistant turns in the cube; later turns are not judged.

    Returns
    -------
    severity : numpy.ndarray
        int8, shape ``(len(transcripts), horizon, len(principle_ids))``.
    reasons : list of str or None
        ``"invalid_fixture"`` for a transcript whose cells are missing, else ``None``.

    Raises
    ------
    ValueError
        If the number of contracts does not match the transcripts, or a contract
        is unreadable (:class:`multiverse.contract.CaseFormatError`).

    See Also
    --------
    multiverse.contract.evaluate_case : the verdict of one case, with every error.
    """
    severity, reasons, _ = contract_verdicts(transcripts, contracts, principle_ids=principle_ids, horizon=horizon)
    return severity, reasons


def contract_verdicts(
    transcripts: Sequence[Transcript],
    contracts: Any,
    *,
    principle_ids: Sequence[str],
    horizon: int,
) -> tuple[np.ndarray, list[str | None], dict[str, list[str]]]:
    """:func:`contract_severities`, plus per transcript the variables in :data:`CONVERSATION_VARIABLES`.

    Returns
    -------
    severity, reasons
        As :func:`contract_severities`.
    conversation : dict
        ``contract_lane`` (:data:`multiverse.contract.LANES`), ``contract_context_error``
        and ``contract_review_reason`` (first codes, ``""`` when none): one string per transcript.
    """
    n = len(transcripts)
    if isinstance(contracts, Mapping) or callable(getattr(contracts, "to_dict", None)):
        contracts = [_as_dict(contracts)] * n
    else:
        contracts = [_as_dict(c) for c in contracts]
    if len(contracts) != n:
        raise ValueError(f"contract_severities: {len(contracts)} contracts for {n} transcripts")
    principles = list(principle_ids)
    severity = np.full((n, horizon, len(principles)), NOT_APPLICABLE, dtype=np.int8)
    reasons: list[str | None] = [None] * n
    if n == 0:
        return severity, reasons, {name: [] for name in CONVERSATION_VARIABLES}

    verdicts = evaluate_batch([_case(t, c, str(i)) for i, (t, c) in enumerate(zip(transcripts, contracts))])
    conversation = {
        "contract_lane": verdicts["lane"].values.tolist(),
        "contract_context_error": verdicts["context_error"].values.tolist(),
        "contract_review_reason": verdicts["review_reason"].values.tolist(),
    }
    violation = verdicts["violation"].values
    invalid = verdicts["first_error"].values != ""
    for i, (transcript, contract) in enumerate(zip(transcripts, contracts)):
        enforced = contract.get("enforces")
        if enforced not in principles:
            continue
        column = principles.index(enforced)
        events = [k for k, event in enumerate(transcript.events) if event.actor == "assistant"][:horizon]
        if not events:
            continue
        if invalid[i]:
            severity[i, : len(events), column] = MISSING
            reasons[i] = "invalid_fixture"
        else:
            severity[i, : len(events), column] = np.where(violation[i, events], CLEAR_BREACH, FULL_ADHERENCE)
    return severity, reasons, conversation
