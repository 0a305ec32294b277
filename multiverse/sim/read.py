"""Reading a request and a reply the way the offline world's players do.

Sim players know only their request: the fenced JSON block of structured inputs
in the system message, the role's rendered system prompt, and the text of the
conversation.  Behaviour is read back from text with the phrase banks of
:mod:`multiverse.sim.text` (plain substring search: the banks are built so
that no read-back sentence contains another).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any

import orjson

from multiverse.core.schema import NOT_APPLICABLE
from multiverse.sim.text import (
    MODE_PHRASES,
    PRINCIPLE_PHRASES,
    STRATEGY_PHRASES,
    generic_phrases,
)

__all__ = [
    "json_block",
    "message_text",
    "principle_ids_from_prompt",
    "read_cell",
    "read_levels",
    "read_truth",
]

_FENCE_OPEN = "```json\n"
_PRINCIPLE_LINE = re.compile(r"^\[([^\]\s]+)\] ", re.MULTILINE)
_MODE_INDEX = tuple((phrase, mode) for mode, phrases in MODE_PHRASES.items() for phrase in phrases)
_STRATEGY_INDEX = tuple((phrase, strategy) for strategy, phrases in STRATEGY_PHRASES.items() for phrase in phrases)


def message_text(message: Mapping[str, Any]) -> str:
    """The text of a chat message (string content, or the text parts of a content list)."""
    content = message.get("content")
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "\n".join(
        str(part.get("text", "")) for part in content if isinstance(part, Mapping) and part.get("type") == "text"
    )


def _system_text(messages: Sequence[Mapping[str, Any]]) -> str:
    for message in messages:
        if message.get("role") == "system":
            return message_text(message)
    return ""


def json_block(messages: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The structured inputs: the first fenced ``json`` block of the system message.

    Raises
    ------
    ValueError
        If the system message holds no such block or it is not a JSON object.
    """
    return _parse_block(_system_text(messages))


@lru_cache(maxsize=64)
def _parse_block(text: str) -> dict[str, Any]:
    """Parse once per distinct system message (several judges often judge one turn); callers only read it."""
    start = text.find(_FENCE_OPEN)
    end = text.find("\n```", start + len(_FENCE_OPEN)) if start >= 0 else -1
    if end < 0:
        raise ValueError("sim: the system message carries no ```json block of structured inputs")
    block = text[start + len(_FENCE_OPEN) : end]
    try:
        data = orjson.loads(block)
    except orjson.JSONDecodeError:  # what orjson refuses (NaN, integers past 64 bits, lone surrogates) json reads
        data = json.loads(block)
    if not isinstance(data, dict):
        raise ValueError("sim: the ```json block of the system message is not a JSON object")
    return data


def principle_ids_from_prompt(messages: Sequence[Mapping[str, Any]]) -> tuple[str, ...]:
    """Principle ids of a target's system prompt (lines ``[<id>] <statement>`` after ``Principles:``)."""
    return _principle_ids(_system_text(messages))


@lru_cache(maxsize=256)
def _principle_ids(text: str) -> tuple[str, ...]:
    start = text.find("Principles:")
    if start < 0:
        return ()
    return tuple(_PRINCIPLE_LINE.findall(text, start))


def read_cell(text: str) -> tuple[str | None, str | None]:
    """The TUNA mode and strategy a user turn expresses (``None`` for an axis it does not)."""
    mode = next((m for phrase, m in _MODE_INDEX if phrase in text), None)
    strategy = next((s for phrase, s in _STRATEGY_INDEX if phrase in text), None)
    return mode, strategy


@lru_cache(maxsize=4096)
def _phrases_by_level(principle_id: str) -> tuple[tuple[str, int], ...]:
    banks = [bank[principle_id] for bank in PRINCIPLE_PHRASES.values() if principle_id in bank]
    banks.append(generic_phrases(principle_id))
    return tuple((phrase, level) for levels in banks for level, phrases in enumerate(levels) for phrase in phrases)


def read_levels(text: str, principle_ids: Iterable[str]) -> dict[str, int | None]:
    """The severity each principle's sentence in ``text`` carries (``None`` when absent).

    When a reply carries sentences of several levels for one principle, the
    highest counts.
    """
    out: dict[str, int | None] = {}
    for pid in principle_ids:
        found = [level for phrase, level in _phrases_by_level(pid) if phrase in text]
        out[pid] = max(found) if found else None
    return out


def read_truth(text: str, principle_ids: Iterable[str]) -> dict[str, int]:
    """The severities the offline world planted in a sim target's reply.

    Parameters
    ----------
    text
        The reply text of a ``sim/target-*`` model.
    principle_ids
        Principles to read; typically the union of the roles' principles.

    Returns
    -------
    dict
        Principle id -> 0 (full adherence), 1 (partial deviation), 2 (clear
        breach), or -2 (not applicable) for a principle the reply carries no
        sentence for (a principle outside the role the reply answered for).
    """
    return {
        pid: NOT_APPLICABLE if level is None else level for pid, level in read_levels(text, principle_ids).items()
    }
