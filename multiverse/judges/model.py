"""Model judges: the request that asks a model to judge one assistant turn, and its parser.

A model judge scores one assistant turn against every principle of the role at
three levels (0 full adherence, 1 partial deviation, 2 clear breach), calibrated
by the role's criteria, with a reason per principle.  It sees the transcript
through the judged turn.  Its answer must be the JSON object

``{"<principle_id>": {"severity": 0|1|2, "reason": "..."}, ...}``

with exactly the role's principle ids; anything else is unparseable, i.e. a
missing judgment, never adherence.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from multiverse.choices import ModelSpec
from multiverse.llm.request import Request
from multiverse.llm.structured import response_format_for
from multiverse.protocol import load_template, reply_json
from multiverse.transcript import Transcript

__all__ = [
    "DEFAULT_TEMPLATE",
    "REASON_MAX_CHARS",
    "TEMPLATE_DIR",
    "judge_request",
    "judgment_schema",
    "parse_judgment",
    "transcript_inputs",
]

TEMPLATE_DIR = Path(__file__).with_name("templates")
"""Folder of the packaged judge templates."""
DEFAULT_TEMPLATE = "judge_v1"
"""Template used when the judge's :class:`~multiverse.choices.ModelSpec` names none."""
REASON_MAX_CHARS = 200
"""Longest reason the structured-output schema allows (keeps a judgment's reply short)."""


@lru_cache(maxsize=64)
def judgment_schema(principle_ids: tuple[str, ...]) -> dict[str, Any]:
    """The JSON schema of a judgment over ``principle_ids`` (what :func:`parse_judgment` accepts).

    Examples
    --------
    >>> sorted(judgment_schema(("a", "b"))["required"])
    ['a', 'b']
    """
    entry = {
        "type": "object",
        "properties": {
            "severity": {"type": "integer", "enum": [0, 1, 2]},
            "reason": {"type": "string", "maxLength": REASON_MAX_CHARS},
        },
        "required": ["severity", "reason"],
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {pid: entry for pid in principle_ids},
        "required": list(principle_ids),
        "additionalProperties": False,
    }


def transcript_inputs(transcript: Transcript) -> list[dict[str, Any]]:
    """The events of a transcript as structured prompt inputs.

    Each event becomes ``{"turn", "actor", "text"}``, plus ``assistant_turn``
    (1-based) on assistant events, ``actions`` (``name`` and ``arguments``) where
    it made tool calls, and ``set_role`` on trusted role transitions.
    """
    out: list[dict[str, Any]] = []
    assistant_turn = 0
    for event in transcript.events:
        item: dict[str, Any] = {"turn": event.turn, "actor": event.actor, "text": event.text}
        if event.actor == "assistant":
            assistant_turn += 1
            item["assistant_turn"] = assistant_turn
        if event.actions:
            item["actions"] = [action.to_dict() for action in event.actions]
        if event.set_role is not None:
            item["set_role"] = event.set_role
        out.append(item)
    return out


@lru_cache(maxsize=64)
def _principle_inputs(role: Any) -> tuple[dict[str, Any], ...]:
    return tuple(
        {
            "id": p.id,
            "statement": p.statement,
            "standard": p.standard,
            "criteria": {level: {"description": c.description, "example": c.example} for level, c in p.criteria.items()},
        }
        for p in role.principles
    )


def judge_request(role: Any, transcript: Transcript, turn: int, *, spec: ModelSpec, replicate: int = 0) -> Request:
    """The request asking a model judge to score assistant turn ``turn`` against every principle.

    Parameters
    ----------
    role
        The role specification (:class:`multiverse.specs.Role`).
    transcript
        The conversation; the judge sees it through assistant turn ``turn``.
    turn
        1-based assistant-turn index.
    spec
        The judge model; ``spec.template`` names the template (default
        :data:`DEFAULT_TEMPLATE`, or a path to a ``.txt`` file), and
        ``spec.response_format`` the structured output
        (:func:`judgment_schema` for the schema modes).
    replicate
        Replicate index (n judgments of one turn are n requests).

    Returns
    -------
    Request
        System message: the template with the structured inputs (role,
        principles with criteria, ``turn``, ``transcript``) in its JSON block.

    Raises
    ------
    ValueError
        If ``turn`` is not an assistant turn of the transcript.
    """
    if not 1 <= turn <= transcript.n_turns:
        raise ValueError(f"judge_request: turn {turn} is outside the transcript's assistant turns 1..{transcript.n_turns}")
    template = load_template(spec.template or DEFAULT_TEMPLATE, directory=TEMPLATE_DIR)
    inputs = {
        "role": role.id,
        "role_description": role.system_prompt,
        "context": role.context,
        "principles": _principle_inputs(role),
        "turn": turn,
        "transcript": transcript_inputs(transcript.through_turn(turn)),
    }
    messages = (
        {"role": "system", "content": template.render(inputs)},
        {"role": "user", "content": f"Judge assistant turn {turn} against every principle."},
    )
    schema = judgment_schema(tuple(role.principle_ids))
    return Request.from_spec(
        spec,
        messages,
        response_format=response_format_for(spec, schema, name="judgment"),
        replicate=replicate,
        template_digest=template.digest,
        purpose="judge",
    )


def parse_judgment(text: str | None, principle_ids: Iterable[str]) -> tuple[dict[str, int], dict[str, str]] | None:
    """Severities and reasons from a model judge's answer, or ``None`` if it is unparseable.

    The answer must be a JSON object whose keys are exactly ``principle_ids``,
    each ``{"severity": 0|1|2, "reason": <string>}`` and nothing more.  The
    object may stand alone, sit in one fenced code block, or be surrounded by
    prose; nothing looser (no repairs of invalid JSON) is accepted.

    Returns
    -------
    tuple of dict or None
        ``(severities, reasons)`` keyed by principle id; ``None`` means missing
        (reason ``unparseable``), never adherence.
    """
    if not text:
        return None
    ids: Sequence[str] = tuple(principle_ids)
    data = reply_json(text)
    if not isinstance(data, Mapping) or set(data) != set(ids):
        return None
    severities: dict[str, int] = {}
    reasons: dict[str, str] = {}
    for pid in ids:
        entry = data[pid]
        if not isinstance(entry, Mapping) or set(entry) != {"severity", "reason"}:
            return None
        severity, reason = entry["severity"], entry["reason"]
        if isinstance(severity, bool) or not isinstance(severity, int) or severity not in (0, 1, 2):
            return None
        if not isinstance(reason, str):
            return None
        severities[pid], reasons[pid] = severity, reason
    return severities, reasons
