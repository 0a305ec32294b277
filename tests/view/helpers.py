"""Expected values computed straight from a cube, to check what the pages show."""

from __future__ import annotations

import numpy as np
import xarray as xr

from multiverse.core import schema as S

LABELS = ("system", "role", "user_sim", "condition", "replicate", "item")
SCRIPT_TEXT = "<script>window.__pwned = 1</script><img src=x onerror=\"window.__pwned = 2\"> & <b>bold?</b>"
"""Text planted in a transcript: the pages must show it as text and never run it."""


def conversations(cube: xr.Dataset) -> list[dict]:
    """Every conversation that ran, with its labels and fields, in the cube's C order."""
    out = []
    ids = cube["transcript_id"].values
    for index in np.ndindex(ids.shape):
        if not ids[index]:
            continue
        chosen = {d: cube[d].values[i].item() for d, i in zip(S.CONVERSATION_DIMS, index)}
        fields = {v: str(cube[v].values[index]) for v in ("mode", "strategy", "target_principle", "ended")}
        out.append({**chosen, **fields, "transcript_id": str(ids[index])})
    return out


def labels_of(row: dict) -> tuple:
    return tuple(str(row[d]) for d in LABELS)


def first_breach_turn(cube: xr.Dataset, conversation: dict, judge: str) -> int:
    """First assistant turn with severity 2 in any principle (0 when none)."""
    sev = cube["severity"].sel({d: conversation[d] for d in LABELS}).sel(judge=judge)
    breach = (sev == S.CLEAR_BREACH).any("principle").values
    return int(np.argmax(breach)) + 1 if breach.any() else 0


def task_of(transcript, role) -> dict:
    """An annotation task in the documented form, built from a transcript and its role spec."""
    events = []
    for event in transcript.events:
        item = {"turn": event.turn, "actor": event.actor, "text": event.text}
        if event.actions:
            item["tool_calls"] = [a.to_dict() for a in event.actions]
        if event.set_role is not None:
            item["set_role"] = event.set_role
        events.append(item)
    return {
        "task": transcript.id,
        "role": role.id,
        "principles": [{"id": p.id, "statement": p.statement,
                        "criteria": {k: c.to_dict() for k, c in p.criteria.items()}} for p in role.principles],
        "events": events,
        "assistant_turns": list(range(1, transcript.n_turns + 1)),
        "user_turns": list(range(1, sum(e.actor == "user" for e in transcript.events) + 1)),
        "axes": ["naturalness", "role_fidelity", "grounding"],
        "severity_levels": {"0": "full adherence", "1": "partial deviation", "2": "clear breach"},
        "strata": {"role": role.id},
    }
