"""What a rollout unit produces, as plain data, and its JSON form.

The records cross process boundaries (joblib backends pickle them) and are
stored as replays in the cache (:mod:`multiverse._run.replay`), so they hold
only lists, dicts, strings, numbers and small ``int8`` arrays.  The JSON form is
exact: :func:`result_from_json` of :func:`result_to_json` gives back an equal
result.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from multiverse.core.judgment import NO_REASON, Judgment
from multiverse.core.schema import NOT_APPLICABLE

__all__ = ["ConversationRecord", "UnitResult", "record_judgment", "result_from_json", "result_to_json", "store_judgment"]


@dataclass
class ConversationRecord:
    """One conversation's results as plain, picklable data.

    Attributes
    ----------
    unit
        ``(system, role, user_sim, condition, replicate)`` labels.
    item
        The conversation's slot in its unit.
    transcript
        :meth:`Transcript.to_dict` of the conversation.
    tags
        The monitor's ``(mode, strategy)`` per assistant turn.
    truth
        Planted severities ``(turns, role principles)`` read from a sim target's
        replies, or ``None`` for a real model.
    judged
        Judge label -> ``(severity, reason)`` arrays ``(turns, role
        principles)``; ``reason`` holds indices into
        :data:`~multiverse.core.schema.MISSING_REASONS` where severity is missing.
        A judge the plan does not have for this conversation has no entry.
    unparsed
        Judge label -> {1-based turn: raw reply text} for every reply that did
        not parse, kept for diagnosis (``multiverse show --raw``).
    reasons
        Judge label -> ``[turn, principle, reason]`` rows: the judge's stated
        reasons (kept in the run's transcript store).
    conversation
        Judge label -> ``{variable: text}``: per-conversation results the cube
        keeps as variables (the contract judge's lanes).
    """

    unit: tuple[str, str, str, str, int]
    item: int
    transcript: dict[str, Any]
    tags: list[tuple[str, str]]
    truth: np.ndarray | None
    judged: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    unparsed: dict[str, dict[int, str]] = field(default_factory=dict)
    reasons: dict[str, list[list[Any]]] = field(default_factory=dict)
    conversation: dict[str, dict[str, str]] = field(default_factory=dict)


def store_judgment(record: ConversationRecord, label: str, judgment: Judgment, principle_ids: Sequence[str]) -> None:
    """Keep one judge's judgment of the record's conversation (columns: ``principle_ids``), cut to the turns it had."""
    turns = min(sum(1 for event in record.transcript["events"] if event["actor"] == "assistant"), judgment.severity.shape[0])
    record.judged[label] = (judgment.severity[:turns], judgment.missing[:turns])
    record.reasons[label] = [list(row) for row in judgment.reason_rows(principle_ids)]
    if judgment.unparsed:
        record.unparsed[label] = {int(t): str(text) for t, text in judgment.unparsed.items()}
    if judgment.conversation:
        record.conversation[label] = {str(k): str(v) for k, v in judgment.conversation.items()}


def record_judgment(record: ConversationRecord, label: str, horizon: int, n_principles: int) -> Judgment | None:
    """The judgment :func:`store_judgment` kept for ``label`` (``None`` when none), padded back to ``horizon`` turns."""
    if label not in record.judged:
        return None
    values, codes = record.judged[label]
    severity = np.full((horizon, n_principles), NOT_APPLICABLE, dtype=np.int8)
    missing = np.full((horizon, n_principles), NO_REASON, dtype=np.int8)
    severity[: len(values)] = values
    missing[: len(codes)] = codes
    reasons = {(int(turn), str(principle)): str(text) for turn, principle, text in record.reasons.get(label, ())}
    return Judgment(severity, missing, reasons, dict(record.conversation.get(label, {})), dict(record.unparsed.get(label, {})))


@dataclass
class UnitResult:
    """What one unit produced: its conversations, coverage share and unusable outputs."""

    unit: tuple[str, str, str, str, int]
    records: list[ConversationRecord]
    coverage: float | None
    unparseable: int


def _array_to_json(array: np.ndarray) -> dict[str, Any]:
    return {"shape": list(array.shape), "values": array.reshape(-1).tolist()}


def _array_from_json(data: dict[str, Any]) -> np.ndarray:
    return np.asarray(data["values"], dtype=np.int8).reshape(data["shape"])


def _unit(labels: list[Any]) -> tuple[str, str, str, str, int]:
    system, role, user_sim, condition, replicate = labels
    return (system, role, user_sim, condition, int(replicate))


def _record_to_json(record: ConversationRecord, keep: Sequence[str] | None) -> dict[str, Any]:
    def kept(table: dict[str, Any]) -> dict[str, Any]:
        return {label: value for label, value in table.items() if keep is None or label in keep}

    out = {
        "item": record.item,
        "transcript": record.transcript,
        "tags": [list(tag) for tag in record.tags],
        "truth": None if record.truth is None else _array_to_json(record.truth),
        "judged": {
            label: [_array_to_json(severity), _array_to_json(reason)]
            for label, (severity, reason) in kept(record.judged).items()
        },
        "reasons": kept(record.reasons),
    }
    if kept(record.unparsed):  # only when present: results without any stay small
        out["unparsed"] = {label: {str(t): text for t, text in turns.items()} for label, turns in kept(record.unparsed).items()}
    if kept(record.conversation):
        out["conversation"] = kept(record.conversation)
    return out


def result_to_json(result: UnitResult, *, keep: Sequence[str] | None = None) -> dict[str, Any]:
    """``result`` as JSON-ready data (see :func:`result_from_json`); with ``keep``, only those judges' judgments."""
    return {
        "unit": list(result.unit),
        "coverage": result.coverage,
        "unparseable": result.unparseable,
        "records": [_record_to_json(record, keep) for record in result.records],
    }


def result_from_json(data: dict[str, Any]) -> UnitResult:
    """The :class:`UnitResult` that :func:`result_to_json` turned into ``data``.

    Raises
    ------
    KeyError, TypeError, ValueError
        If ``data`` is not in that form.
    """
    unit = _unit(data["unit"])
    records = [
        ConversationRecord(
            unit=unit,
            item=int(record["item"]),
            transcript=record["transcript"],
            tags=[(mode, strategy) for mode, strategy in record["tags"]],
            truth=None if record["truth"] is None else _array_from_json(record["truth"]),
            judged={
                label: (_array_from_json(severity), _array_from_json(reason))
                for label, (severity, reason) in record["judged"].items()
            },
            reasons={
                label: [[int(turn), str(principle), str(text)] for turn, principle, text in rows]
                for label, rows in record["reasons"].items()
            },
            unparsed={
                label: {int(t): str(text) for t, text in turns.items()}
                for label, turns in (record.get("unparsed") or {}).items()
            },
            conversation={
                label: {str(k): str(v) for k, v in values.items()}
                for label, values in (record.get("conversation") or {}).items()
            },
        )
        for record in data["records"]
    ]
    coverage = data["coverage"]
    return UnitResult(unit, records, None if coverage is None else float(coverage), int(data["unparseable"]))
