"""What a rollout unit produces, as plain data, and its JSON form.

The records cross process boundaries (joblib backends pickle them) and are
stored as replays in the cache (:mod:`multiverse._run.replay`), so they hold
only lists, dicts, strings, numbers and small ``int8`` arrays.  The JSON form is
exact: :func:`result_from_json` of :func:`result_to_json` gives back an equal
result.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["ConversationRecord", "UnitResult", "result_from_json", "result_to_json"]


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
        Model judge label -> ``(severity, reason)`` arrays ``(turns, role
        principles)``; ``reason`` holds indices into
        :data:`~multiverse.core.schema.MISSING_REASONS` where severity is missing.
    unparsed
        Model judge label -> {1-based turn: raw reply text} for every reply
        that did not parse, kept for diagnosis (``multiverse show --raw``).
    reasons
        Model judge label -> ``[turn, principle, reason]`` rows: the judge's
        stated reasons (kept in the run's transcript store).
    """

    unit: tuple[str, str, str, str, int]
    item: int
    transcript: dict[str, Any]
    tags: list[tuple[str, str]]
    truth: np.ndarray | None
    judged: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    unparsed: dict[str, dict[int, str]] = field(default_factory=dict)
    reasons: dict[str, list[list[Any]]] = field(default_factory=dict)


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


def _record_to_json(record: ConversationRecord) -> dict[str, Any]:
    out = {
        "item": record.item,
        "transcript": record.transcript,
        "tags": [list(tag) for tag in record.tags],
        "truth": None if record.truth is None else _array_to_json(record.truth),
        "judged": {
            label: [_array_to_json(severity), _array_to_json(reason)]
            for label, (severity, reason) in record.judged.items()
        },
        "reasons": record.reasons,
    }
    if record.unparsed:  # only when present: results without any stay byte-identical
        out["unparsed"] = {label: {str(t): text for t, text in turns.items()} for label, turns in record.unparsed.items()}
    return out


def result_to_json(result: UnitResult) -> dict[str, Any]:
    """``result`` as JSON-ready data (see :func:`result_from_json`)."""
    return {
        "unit": list(result.unit),
        "coverage": result.coverage,
        "unparseable": result.unparseable,
        "records": [_record_to_json(record) for record in result.records],
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
        )
        for record in data["records"]
    ]
    coverage = data["coverage"]
    return UnitResult(unit, records, None if coverage is None else float(coverage), int(data["unparseable"]))
