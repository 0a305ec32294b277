"""One conversation page's data: events, active roles, tags and every judge's severity per turn.

A missing judgment is shown as missing with its reason.  The cube counts
missing reasons per judge, not per cell, so a cell's reason is the judge's one
recorded reason when it has exactly one, and the list of its reasons otherwise;
a contract judge's missing cells carry the oracle's fixture errors.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
import xarray as xr

from multiverse.core import schema as S
from multiverse.core.transcript import Transcript, TranscriptStore
from multiverse.view._oracle import RoleContracts, oracle_view
from multiverse.view._reasons import ReasonIndex
from multiverse.view._table import ConversationTable
from multiverse.view._table import stacked as _stacked

__all__ = ["conversation_records", "missing_reasons"]


def missing_reasons(cube: xr.Dataset) -> dict[str, str]:
    """Per judge, the text shown for its missing cells (``""`` when it has none recorded)."""
    if "missing_count" not in cube:
        return {str(j): "" for j in cube["judge"].values}
    out: dict[str, str] = {}
    counts = cube["missing_count"]
    for judge in counts["judge"].values.tolist():
        row = counts.sel(judge=judge)
        named = [(str(r), int(c)) for r, c in zip(row["missing_reason"].values, row.values) if c > 0]
        if len(named) == 1:
            out[str(judge)] = named[0][0]
        else:
            out[str(judge)] = "one of " + ", ".join(f"{r} ({c})" for r, c in named) if named else ""
    return out


def _events(transcript: Transcript) -> list[dict[str, Any]]:
    events = []
    for event in transcript.events:
        item: dict[str, Any] = {"turn": event.turn, "actor": event.actor, "text": event.text}
        if event.actions:
            item["actions"] = [a.to_dict() for a in event.actions]
        if event.set_role is not None:
            item["set_role"] = event.set_role
        if event.meta:
            item["meta"] = dict(event.meta)
        events.append(item)
    return events


def _turns(severity: np.ndarray, truth: np.ndarray | None, tags: list[np.ndarray], turns: list[int],
           principles: list[int], names: list[str],
           reasons: Mapping[int, Mapping[str, Mapping[str, str]]]) -> list[dict[str, Any]]:
    """Per judged turn: tag, severities ``{principle: [code per judge]}``, truth and reasons."""
    out = []
    for t, turn in enumerate(turns):
        codes = severity[t][principles]
        planted = truth[t][principles] if truth is not None else None
        if (codes == S.NOT_APPLICABLE).all() and (planted is None or (planted == S.NOT_APPLICABLE).all()):
            continue
        entry: dict[str, Any] = {
            "turn": turn,
            "tag": "/".join(str(v[t]) for v in tags if str(v[t])),
            "severity": dict(zip(names, codes.tolist())),
        }
        if planted is not None:
            entry["truth"] = dict(zip(names, planted.tolist()))
        if turn in reasons:
            entry["reasons"] = {p: dict(r) for p, r in reasons[turn].items() if p in names}
        out.append(entry)
    return out


def conversation_records(
    cube: xr.Dataset,
    table: ConversationTable,
    *,
    store: TranscriptStore | None,
    contracts: RoleContracts,
    reasons: ReasonIndex,
) -> Iterator[dict[str, Any]]:
    """The record of every row of ``table``, in row order.

    Each record holds the conversation's labels and cube fields, the
    applicable ``principles``, the ``judges``, per judged turn its monitor tag
    and severities (``severity[principle]`` lists one code per judge) with
    reasons where kept, the planted ``truth`` when present, the transcript's
    ``events`` (``None`` without a store) and the oracle's verdict.
    """
    judges = [str(j) for j in cube["judge"].values.tolist()]
    all_principles = [str(p) for p in cube["principle"].values.tolist()]
    turns = [int(t) for t in cube["turn"].values.tolist()]
    applies = {str(r): cube["principle_applies"].sel(role=r).values for r in cube["role"].values} \
        if "principle_applies" in cube else {}
    missing = missing_reasons(cube)
    shape = tuple(cube.sizes[d] for d in S.CONVERSATION_DIMS)
    flat = np.ravel_multi_index(tuple(table.positions.T), shape) if len(table.positions) else np.zeros(0, int)
    severity = _stacked(cube["severity"], "turn", "principle", "judge")[flat]
    truth = _stacked(cube["truth"], "turn", "principle")[flat] if "truth" in cube else None
    tags = [_stacked(cube[v], "turn")[flat].astype(str) for v in S.TURN_VARS if v in cube]
    parent = _stacked(cube["parent"])[flat].astype(str) if "parent" in cube else np.full(len(flat), "")
    column = {name: i for i, name in enumerate(table.columns)}
    for k, row in enumerate(table.rows):
        role = row[column["role"]]
        mask = applies.get(role, np.ones(len(all_principles), dtype=bool))
        chosen = [i for i, a in enumerate(mask) if a]
        names = [all_principles[i] for i in chosen]
        transcript_id = row[column["transcript_id"]]
        transcript = None
        if store is not None and transcript_id and transcript_id in store:
            transcript = store.get(transcript_id)
        yield {
            "n": row[0],
            "labels": {d: row[column[d]] for d in S.CONVERSATION_DIMS},
            "fields": {name: row[column[name]] for name in ("mode", "strategy", "target_principle", "origin", "ended")},
            "parent": str(parent[k]),
            "transcript_id": transcript_id,
            "principles": names,
            "judges": judges,
            "first": {j: row[column[f"first:{j}"]] for j in judges},
            "missing_reason": missing,
            "turns": _turns(severity[k], truth[k] if truth is not None else None, [v[k] for v in tags],
                            turns, chosen, names, reasons.of(transcript_id)),
            "events": _events(transcript) if transcript is not None else None,
            "scenario": dict(transcript.scenario) if transcript is not None else None,
            "oracle": oracle_view(transcript, contracts.case_contract(transcript)) if transcript is not None else None,
        }
