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

from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from multiverse.core.choices import ModelSpec
from multiverse.core.judgment import NO_REASON, REASON_CODES, JudgeContext, Judgment
from multiverse.core.schema import MISSING, NOT_APPLICABLE
from multiverse.core.transcript import Transcript, transcript_inputs
from multiverse.llm.protocol import encode_inputs, load_template, reply_json
from multiverse.llm.request import Request
from multiverse.llm.structured import agather_structured, response_format_for

__all__ = [
    "DEFAULT_TEMPLATE",
    "REASON_MAX_CHARS",
    "TEMPLATE_DIR",
    "ModelJudge",
    "judge_request",
    "judge_requests",
    "judgment_from_answers",
    "judgment_schema",
    "parse_judgment",
    "unparseable_turns",
]

TEMPLATE_DIR = Path(__file__).with_name("templates")
"""Folder of the packaged judge templates."""
DEFAULT_TEMPLATE = "judge_v1"
"""Template used when the judge's :class:`~multiverse.core.choices.ModelSpec` names none."""
REASON_MAX_CHARS = 200
"""Longest reason the structured-output schema allows (keeps a judgment's reply short)."""


def per_principle_schema(principle_ids: Sequence[str], field: str, value: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON schema of an answer keyed by exactly ``principle_ids``, each ``{field: <value>, "reason": <string>}``."""
    entry = {
        "type": "object",
        "properties": {field: dict(value), "reason": {"type": "string", "maxLength": REASON_MAX_CHARS}},
        "required": [field, "reason"],
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {pid: entry for pid in principle_ids},
        "required": list(principle_ids),
        "additionalProperties": False,
    }


def read_per_principle(
    text: str | None, principle_ids: Iterable[str], field: str, read: Callable[[Any], int | None],
) -> tuple[dict[str, int], dict[str, str]] | None:
    """``(codes, reasons)`` from an answer of :func:`per_principle_schema`'s form, or ``None`` if it is anything else.

    The answer's keys must be exactly ``principle_ids``, each entry exactly
    ``{field, "reason"}`` with a string reason; ``read`` turns an entry's
    ``field`` value into its code, or ``None`` when the value is not allowed.
    """
    if not text:
        return None
    ids: Sequence[str] = tuple(principle_ids)
    data = reply_json(text)
    if not isinstance(data, Mapping) or set(data) != set(ids):
        return None
    codes: dict[str, int] = {}
    reasons: dict[str, str] = {}
    for pid in ids:
        entry = data[pid]
        if not isinstance(entry, Mapping) or set(entry) != {field, "reason"} or not isinstance(entry["reason"], str):
            return None
        code = read(entry[field])
        if code is None:
            return None
        codes[pid], reasons[pid] = code, entry["reason"]
    return codes, reasons


@lru_cache(maxsize=64)
def judgment_schema(principle_ids: tuple[str, ...]) -> dict[str, Any]:
    """The JSON schema of a judgment over ``principle_ids`` (what :func:`parse_judgment` accepts).

    Examples
    --------
    >>> sorted(judgment_schema(("a", "b"))["required"])
    ['a', 'b']
    """
    return per_principle_schema(principle_ids, "severity", {"type": "integer", "enum": [0, 1, 2]})


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


@lru_cache(maxsize=64)
def _inputs_head(role: Any) -> str:
    """The encoded judge inputs before the transcript's events: the keys that sort before ``transcript``."""
    parts = {
        "context": role.context,
        "principles": _principle_inputs(role),
        "role": role.id,
        "role_description": role.system_prompt,
    }
    return "{" + ", ".join(f"{encode_inputs(key)}: {encode_inputs(value)}" for key, value in parts.items())


def judge_requests(
    role: Any, transcript: Transcript, turns: Iterable[int], *, spec: ModelSpec, replicate: int = 0,
    context_events: int | None = None,
) -> list[Request]:
    """The requests asking a model judge to score each of ``turns`` of one transcript (see :func:`judge_request`).

    The role's inputs are encoded once per role and each event once per
    transcript; the prompt of turn ``t`` joins the encoded events through
    assistant turn ``t``.  The system messages are exactly those of
    :func:`judge_request` (the one-line JSON of a container is its parts'
    encodings joined, :func:`multiverse.llm.protocol.encode_inputs`), so the cache
    keys are too.

    Parameters
    ----------
    role, transcript, spec, replicate
        As for :func:`judge_request`.
    turns
        1-based assistant-turn indices, one request each, in this order.
    context_events
        Show the judge only the last this many events through the judged turn
        (the judged reply included; ``None``: every event).

    Returns
    -------
    list of Request

    Raises
    ------
    ValueError
        If a turn is not an assistant turn of the transcript.
    """
    turns = list(turns)
    n_turns = transcript.n_turns
    for turn in turns:
        if not 1 <= turn <= n_turns:
            raise ValueError(f"judge_request: turn {turn} is outside the transcript's assistant turns 1..{n_turns}")
    if not turns:
        return []
    template = load_template(spec.template or DEFAULT_TEMPLATE, directory=TEMPLATE_DIR)
    events = [encode_inputs(item) for item in transcript_inputs(transcript)]
    ends = [i + 1 for i, event in enumerate(transcript.events) if event.actor == "assistant"]
    head = _inputs_head(role) + ', "transcript": ['
    response_format = response_format_for(spec, judgment_schema(tuple(role.principle_ids)), name="judgment")
    requests = []
    for turn in turns:
        end = ends[turn - 1]
        start = 0 if context_events is None else max(0, end - context_events)
        encoded = f'{head}{", ".join(events[start:end])}], "turn": {encode_inputs(turn)}}}'
        messages = (
            {"role": "system", "content": template.render_encoded(encoded)},
            {"role": "user", "content": f"Judge assistant turn {turn} against every principle."},
        )
        requests.append(
            Request.from_spec(
                spec,
                messages,
                response_format=response_format,
                replicate=replicate,
                template_digest=template.digest,
                purpose="judge",
            )
        )
    return requests


def judge_request(role: Any, transcript: Transcript, turn: int, *, spec: ModelSpec, replicate: int = 0) -> Request:
    """The request asking a model judge to score assistant turn ``turn`` against every principle.

    Parameters
    ----------
    role
        The role specification (:class:`multiverse.config.specs.Role`).
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

    See Also
    --------
    judge_requests : every turn of one transcript, its encoding shared.
    """
    return judge_requests(role, transcript, [turn], spec=spec, replicate=replicate)[0]


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
    return read_per_principle(text, principle_ids, "severity", _severity)


def _severity(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value in (0, 1, 2) else None


class ModelJudge:
    """A model judge as a :class:`~multiverse.core.judgment.Judge`: one request per assistant turn.

    Parameters
    ----------
    spec
        The judge model (and its template).

    Notes
    -----
    Assistant turn ``t`` is judged from the transcript through turn ``t``
    (:func:`judge_request`), turns 1 to ``min(n_turns, horizon)`` of each
    transcript, in turn order within each transcript (so each prompt extends the
    previous one and servers that keep an evaluated prefix, such as llama.cpp,
    reuse it), all gathered at once on ``context.client``; a provider that
    rejects the spec's ``response_format`` is asked again with the plain prompt
    (:func:`multiverse.llm.structured.agather_structured`).  A failed
    call is missing with the call's failure reason (``call_failed`` when it
    names none in :data:`multiverse.core.schema.MISSING_REASONS`), an unparseable
    answer is missing with reason ``unparseable``; principles outside the
    transcript's role and turns past its end are not applicable.
    """

    def __init__(self, spec: ModelSpec, *, context_events: int | None = None):
        self.spec = spec
        self.context_events = context_events
        """Events shown through each judged turn (``None``: all; see :func:`judge_requests`)."""

    def __repr__(self) -> str:
        return f"ModelJudge({self.spec.model!r})"

    async def judge(self, transcripts: Sequence[Transcript], *, roles: Sequence[Any], context: JudgeContext) -> list[Judgment]:
        """One :class:`~multiverse.core.judgment.Judgment` per transcript (see the class notes)."""
        if context.client is None:
            raise ValueError(f"model judge {self.spec.model!r}: no client to call the model with")
        asked: list[tuple[int, int]] = []
        requests: list[Request] = []
        for index, (transcript, role) in enumerate(zip(transcripts, roles)):
            turns = range(1, min(transcript.n_turns, context.horizon) + 1)
            asked.extend((index, turn) for turn in turns)
            requests.extend(judge_requests(role, transcript, turns, spec=self.spec, replicate=context.replicate,
                                           context_events=self.context_events))
        responses = await agather_structured(context.client, requests) if requests else []
        by_transcript: dict[int, list[tuple[int, Any]]] = {}
        for (index, turn), response in zip(asked, responses):
            by_transcript.setdefault(index, []).append((turn, response))
        return [
            judgment_from_answers(by_transcript.get(index, []), tuple(role.principle_ids), context)
            for index, role in enumerate(roles)
        ]


def judgment_from_answers(
    answers: Sequence[tuple[int, Any]], role_principles: Sequence[str], context: JudgeContext,
    *, parse: Callable[[str | None, Sequence[str]], tuple[dict[str, int], dict[str, str]] | None] = parse_judgment,
) -> Judgment:
    """The judgment of one transcript from its ``(turn, response)`` answers, each read by ``parse``.

    ``parse(text, principle_ids)`` gives codes and reasons per principle, or
    ``None`` (missing, ``unparseable``); a failed call is missing with its
    failure reason.  Model judges read severities (:func:`parse_judgment`),
    pairwise judges pairwise codes (:func:`multiverse.judge.pairwise.parse_preferences`).
    """
    shape = (context.horizon, len(context.principle_ids))
    severity = np.full(shape, NOT_APPLICABLE, dtype=np.int8)
    missing = np.full(shape, NO_REASON, dtype=np.int8)
    columns = [(j, p) for j, p in enumerate(context.principle_ids) if p in role_principles]
    reasons: dict[tuple[int, str], str] = {}
    unparsed: dict[int, str] = {}
    for turn, response in answers:
        row = turn - 1
        parsed = parse(response.text or "", role_principles) if response.ok else None
        if parsed is None:
            reason = "unparseable" if response.ok else (response.error if response.error in REASON_CODES else "call_failed")
            if response.ok:
                unparsed[turn] = response.text or ""
            for j, _ in columns:
                severity[row, j], missing[row, j] = MISSING, REASON_CODES[reason]
            continue
        values, texts = parsed
        for j, principle in columns:
            severity[row, j] = values[principle]
            reasons[(turn, principle)] = texts[principle]
    return Judgment(severity, missing, reasons, unparsed=unparsed)


def unparseable_turns(judgment: Judgment) -> int:
    """Turns whose answer was unparseable (every cell of the row missing as ``unparseable``)."""
    return int((judgment.missing == REASON_CODES["unparseable"]).any(axis=1).sum())
