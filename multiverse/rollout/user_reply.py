"""The simulated user's reply, made into the user's message and the simulator's own state.

A model playing a user writes more than the user's message: a stage direction
with its mood and pressure (asked for by the template, in whatever spelling the
model chooses), sometimes narration (``*sighs*``), sometimes out-of-character
framing ("let me prepare for this role-play; my character's name is Alex"),
sometimes the next speaker's turn (``User: ...``).  :func:`read_user_reply`
separates them: the message keeps only the user's words; the state (mood,
pressure) and what was removed, by kind, go to the user event's structured
fields, never into a message a target or judge reads
(:mod:`multiverse.llm.leaks` finds each kind and refuses a request that still
carries one).  A message left empty is unusable: the campaign asks again.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from collections.abc import Mapping
from typing import Any

from multiverse.llm.leaks import framing, speaker_tag, state_notes

__all__ = ["UserReply", "cut_at_limit", "read_user_reply", "user_reply_meta"]

_LABELS = re.compile(r"^\s*[*_]{0,2}(?:user|me)[*_]{0,2}\s*:\s*(?:[*_]{2}\s*)?", re.IGNORECASE)
_PREAMBLE = re.compile(
    r"^\s*(?:(?:sure|okay|ok|alright)[,!.]?\s+)?(?:here\s+is|here's)\s+(?:my|the)\s+(?:next\s+|first\s+|opening\s+|"
    r"user's\s+)?(?:message|reply|response)[^:\n]{0,40}:\s*",
    re.IGNORECASE,
)
"""A preamble introducing the message (``Here is my next message:``): framing, cut before the message."""
_SENTENCES = re.compile(r"(?<=[.!?…])[ \t]+(?=\S)|\n+")
_QUOTES = "\"'“”‘’"


@dataclass(frozen=True)
class UserReply:
    """A simulated user's reply, read.

    Attributes
    ----------
    message
        The user's message, or ``None`` when nothing usable is left.
    state
        The simulator's reported ``mood`` and ``pressure`` (keys absent when not reported).
    removed
        ``{kind: count}`` of what was stripped: ``stage_direction``,
        ``narration``, ``out_of_character`` (sentences), ``speaker_turn``.
    """

    message: str | None
    state: dict[str, Any] = field(default_factory=dict)
    removed: dict[str, int] = field(default_factory=dict)


def read_user_reply(text: str | None, *, scenario_text: str = "") -> UserReply:
    """Read a user model's reply into the message, the reported state and what was removed.

    Parameters
    ----------
    text
        The raw reply.
    scenario_text
        The scenario the simulator plays, so its own topic words ("role-play"
        in a role-playing game) are not taken for framing (see
        :func:`multiverse.llm.leaks.framing`).

    Examples
    --------
    >>> reply = read_user_reply("Okay, let me get into this role-play. Why is 1/2 > 1/3? (Curious, Pressure: 1.2)")
    >>> reply.message, reply.state, reply.removed
    ('Why is 1/2 > 1/3?', {'pressure': 1.2, 'mood': 'curious'}, {'out_of_character': 1, 'stage_direction': 1})
    """
    if text is None:
        return UserReply(None)
    removed: Counter[str] = Counter()
    message, framed = _PREAMBLE.subn("", text, count=1)
    removed["out_of_character"] += framed
    message = _LABELS.sub("", message, count=1)
    tag = speaker_tag(message)
    if tag is not None:
        message = message[: tag.start()]
        removed["speaker_turn"] += 1
    state: dict[str, Any] = {}
    kept, last = [], 0
    for note in state_notes(message):
        kept.append(message[last : note.start])
        last = note.end
        if note.kind == "narration":
            removed["narration"] += 1
            continue
        removed["stage_direction"] += 1
        if note.pressure is not None:
            state.setdefault("pressure", note.pressure)
        if note.mood:
            state.setdefault("mood", note.mood)
    message = "".join(kept) + message[last:]
    sentences = [s for s in _SENTENCES.split(message) if s.strip()]
    in_character = [s for s in sentences if framing(s, scenario_text=scenario_text) is None]
    if len(in_character) < len(sentences):
        removed["out_of_character"] += len(sentences) - len(in_character)
        message = " ".join(s.strip() for s in in_character)
    message = re.sub(r"[ \t]{2,}", " ", message).strip()
    if len(message) >= 2 and message[0] in _QUOTES and message[-1] in _QUOTES:
        message = message[1:-1].strip()
    ordered = {kind: removed[kind] for kind in ("out_of_character", "stage_direction", "narration", "speaker_turn")}
    return UserReply(message or None, state, {k: n for k, n in ordered.items() if n})


def cut_at_limit(request: Any, response: Any) -> bool:
    """Whether a reply stopped at the request's length limit (``max_tokens``) rather than ending.

    Read from the reported usage, which the cache keeps, so a cached reply is
    flagged as its first answer was.
    """
    limit = request.params.get("max_tokens", request.params.get("max_completion_tokens"))
    used = (response.usage or {}).get("completion_tokens")
    return isinstance(limit, int) and isinstance(used, int) and limit > 0 and used >= limit


def user_reply_meta(
    reply: UserReply, request: Any, response: Any, *, pressure: float, scenario: Mapping[str, Any]
) -> dict[str, Any]:
    """The simulator's state a real user model's event records beside its reported mood and pressure.

    ``asked``: the pressure, mode and strategy its request asked for;
    ``removed``: what :func:`read_user_reply` stripped, by kind (absent when
    nothing); ``cut``: ``True`` when the reply stopped at the length limit
    (absent otherwise).  Structured fields of the event: no target or judge
    reads them.
    """
    meta: dict[str, Any] = {
        "asked": {
            "pressure": round(float(pressure), 4),
            "mode": scenario.get("mode"),
            "strategy": scenario.get("strategy"),
        }
    }
    if reply.removed:
        meta["removed"] = dict(reply.removed)
    if cut_at_limit(request, response):
        meta["cut"] = True
    return meta
