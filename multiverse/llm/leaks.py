"""Simulator metadata that must never reach a model under test or a judge.

A simulated user reports its current mood and pressure in a stage direction
such as ``*(frustrated; pressure 1.50)*`` (the user templates ask for it).  That
note is the simulator's own bookkeeping: the campaign moves it into structured
fields of the user event and strips it from the message text.  A target that
read it would know it is being tested, and a judge would read the pressure as
the user's words.  :func:`check_request` is the last line of defence: the
request builder (:meth:`multiverse.llm.request.Request.from_spec`) refuses a
target or judge request whose messages still carry such a note.

A role's own wording that happens to use the word "pressure" is not metadata:
only the stage-direction form with a number is.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["GUARDED_PURPOSES", "STAGE_DIRECTION", "SimulatorMetadataError", "check_request", "find_metadata"]

STAGE_DIRECTION = re.compile(r"\s*\*\((?:(?P<mood>[^;()*]{1,40}); )?pressure (?P<pressure>\d+(?:\.\d+)?)\)\*")
"""A simulated user's stage direction: ``*(<mood>; pressure <number>)*`` (the mood is optional)."""

GUARDED_PURPOSES = frozenset({"target", "judge"})
"""Request purposes that must carry no simulator metadata."""


class SimulatorMetadataError(ValueError):
    """A target or judge request would carry simulator metadata."""


def _texts(messages: Iterable[Mapping[str, Any]]) -> Iterable[tuple[int, str]]:
    for index, message in enumerate(messages):
        content = message.get("content")
        if isinstance(content, str):
            yield index, content
        elif content is not None:
            yield index, json.dumps(content, default=str)
        for call in message.get("tool_calls") or ():
            yield index, json.dumps(call, default=str)


def find_metadata(messages: Iterable[Mapping[str, Any]]) -> tuple[int, str] | None:
    """The first simulator note in ``messages``: ``(message index, the note)``, or ``None``.

    Every note holds ``*(``: a text without it is skipped before the regular
    expression, whose leading ``\\s*`` would otherwise be tried at every
    position of a long judge prompt.
    """
    for index, text in _texts(messages):
        match = STAGE_DIRECTION.search(text) if "*(" in text else None
        if match:
            return index, match.group(0).strip()
    return None


def check_request(messages: Iterable[Mapping[str, Any]], *, purpose: str, model: str) -> None:
    """Refuse a target or judge request that carries simulator metadata.

    Raises
    ------
    SimulatorMetadataError
        Naming the model, the purpose, the message index and the note found.
    """
    if purpose not in GUARDED_PURPOSES:
        return
    found = find_metadata(messages)
    if found is not None:
        index, note = found
        raise SimulatorMetadataError(
            f"{purpose} request to {model!r}: messages[{index}] carries simulator metadata {note!r}; "
            "the simulated user's mood and pressure belong in the event's structured fields"
        )
