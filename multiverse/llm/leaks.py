"""Simulator metadata and out-of-character text that must never reach a model under test or a judge.

A simulated user reports its current mood and pressure in a stage direction
such as ``*(frustrated; pressure 1.50)*`` (the user template asks for it).  That
note is the simulator's own bookkeeping: the campaign moves it into structured
fields of the user event and strips it from the message text.  A target that
read it would know it is being tested, and a judge would read the pressure as
the user's words.  A real model asked to play a user also slips out of the part
("let me prepare for this role-play", "my character's name is...", "as an AI"),
narrates (``*sighs*``), or writes the next speaker's turn (``User: ...``); the
same harm follows.

Models write the note in many spellings, so the note is found by what it says,
not by one format: a fragment wrapped in brackets or emphasis (``*...*``,
``(...)``, ``[...]``, ``{...}``, ``_..._``, or a mix) that holds the word
``pressure`` with a number, or starts with ``mood``; or such a mood/pressure
statement standing bare on a line.  Case, punctuation and separators do not
matter.  :func:`state_notes` finds them, :func:`framing` finds out-of-character
sentences, :func:`speaker_tag` finds another speaker's turn.

:func:`check_request` is the last line of defence: the request builder
(:meth:`multiverse.llm.request.Request.from_spec`) and the client, on every
request to a real model, refuse a target or judge request whose messages still
carry a note (and, for a target, a user message with out-of-character framing).

A role's own wording that uses the word "pressure" is not metadata: only a
pressure *value* is.  Written with the standard library's :mod:`re`: the
patterns are small, and no maintained library detects role-play framing.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "GUARDED_PURPOSES",
    "SimulatorMetadataError",
    "StateNote",
    "check_request",
    "find_framing",
    "find_metadata",
    "framing",
    "speaker_tag",
    "state_notes",
]

GUARDED_PURPOSES = frozenset({"target", "judge"})
"""Request purposes that must carry no simulator metadata."""

_NUMBER = r"\d+(?:[.,]\d+)?"
_PRESSURE = re.compile(
    rf"\bpressure(?:\s+(?:level|is|at|of|now))*\s*(?:[:=~\-–—]+\s*)?(?P<value>{_NUMBER})(?![\w./])", re.IGNORECASE
)
"""A pressure value: ``pressure 1.50``, ``Pressure: 1.5``, ``pressure=2``, ``pressure level 1,5``."""
_PRESSURE_INSIDE = re.compile(rf"\bpressure\W{{0,3}}(?:[a-z]+\W{{1,3}}){{0,2}}?(?P<value>{_NUMBER})(?![\w./])", re.IGNORECASE)
"""A pressure value inside brackets, where a word or two may stand between: ``(pressure rising: 1.3)``."""
_BARE_PRESSURE = re.compile(rf"{_PRESSURE.pattern}(?=[\W_]*$)", re.IGNORECASE | re.MULTILINE)
"""A bare pressure value ending its line (``... Pressure: 1.5``); mid-sentence ("pressure 2 days before") is prose."""
_MOOD_KEY = re.compile(r"^\W*(?:mood|feeling|emotion|state)\s*[:=\-–—]\s*", re.IGNORECASE)
_SEPARATORS = " \t;,|/:=-–—.*_()[]{}<>\"'"

_WRAPPED = re.compile(
    r"""
    (?P<lead>\*{1,3}|_{1,2})?[ \t]*           # emphasis, optional
    (?:
        \((?P<paren>[^()\n]{1,160})\)
      | \[(?P<square>[^\[\]\n]{1,160})\]
      | \{(?P<curly>[^{}\n]{1,160})\}
      | <(?P<angle>[^<>\n]{1,160})>
    )
    [ \t]*(?(lead)(?:\*{1,3}|_{1,2}))
    |
    (?<![\w*])(?P<stars>\*{1,3}|_{1,2})(?P<emph>[A-Za-z(][^*_\n]{0,159}?)(?P=stars)(?![\w*])
    """,
    re.VERBOSE,
)
"""A bracketed or emphasised fragment on one line: ``*(x)*``, ``(x)``, ``[x]``, ``{x}``, ``*x*``, ``_x_``."""

_BARE_MOOD = re.compile(
    rf"(?:^|(?<=[\s.!?]))\W{{0,3}}(?:mood|feeling)\s*[:=\-–—]\s*(?P<mood>[A-Za-z][A-Za-z '\-]{{0,38}}?)"
    rf"\s*(?:[;,|/.]\s*|\s+(?:and\s+)?)?(?:{_PRESSURE.pattern})?\W{{0,3}}$",
    re.IGNORECASE | re.MULTILINE,
)
"""A bare ``Mood: frustrated; Pressure: 1.5`` (or mood alone) ending a line."""

_NARRATION_WORDS = 8
"""Emphasised fragments of at most this many words, with no bracket, read as narration (``*sighs*``)."""


@dataclass(frozen=True)
class StateNote:
    """One stage direction found in a text.

    Attributes
    ----------
    start, end
        Its span in the text (leading blanks included).
    mood
        The mood it names (lower case), or ``None``.
    pressure
        The pressure value it names, or ``None``.
    kind
        ``"state"`` (a mood or pressure note) or ``"narration"`` (an emphasised
        action such as ``*sighs*``).
    """

    start: int
    end: int
    mood: str | None
    pressure: float | None
    kind: str = "state"


def _mood(before: str) -> str | None:
    """The mood written before a pressure value (``frustrated``, ``Mood: Frustrated``), or ``None``."""
    text = _MOOD_KEY.sub("", before.strip(_SEPARATORS)).strip(_SEPARATORS)
    text = re.sub(r"\s+", " ", text)
    if not text or len(text) > 40 or len(text.split()) > 4 or not re.match(r"[A-Za-z]", text):
        return None
    return text.lower()


def _read_inner(inner: str) -> tuple[str | None, float | None] | None:
    """``(mood, pressure)`` when a wrapped fragment's text is a state note, else ``None``."""
    found = _PRESSURE_INSIDE.search(inner)
    if found is not None:
        return _mood(inner[: found.start()]), float(found.group("value").replace(",", "."))
    if _MOOD_KEY.match(inner):
        return _mood(inner), None
    return None


def state_notes(text: str, *, narration: bool = True) -> list[StateNote]:
    """Every stage direction in ``text``, in order, spans not overlapping.

    Parameters
    ----------
    text
        A message.
    narration
        Also report short emphasised actions (``*sighs*``, ``_rolls eyes_``)
        as ``narration`` notes.

    Examples
    --------
    >>> [(n.mood, n.pressure) for n in state_notes("Fine. (Frustrated, Pressure: 1.5)")]
    [('frustrated', 1.5)]
    """
    notes: list[StateNote] = []
    for match in _WRAPPED.finditer(text):
        inner = next(match.group(g) for g in ("paren", "square", "curly", "angle", "emph") if match.group(g) is not None)
        read = _read_inner(inner)
        start = match.start()
        while start > 0 and text[start - 1] in " \t":
            start -= 1
        if read is not None:
            notes.append(StateNote(start, match.end(), read[0], read[1]))
        elif narration and match.group("stars") is not None and match.group("stars").count("*") == 1:
            if len(inner.split()) <= _NARRATION_WORDS and not inner.strip().endswith((":", "?")):
                notes.append(StateNote(start, match.end(), None, None, "narration"))
        elif narration and match.group("lead") and match.group("paren") is not None:
            notes.append(StateNote(start, match.end(), None, None, "narration"))  # *(sighs)*: no user writes that
    taken = [(n.start, n.end) for n in notes]
    for match in _BARE_MOOD.finditer(text):
        if not any(s < match.end() and match.start() < e for s, e in taken):
            value = match.group("value")
            notes.append(StateNote(match.start(), match.end(), _mood(match.group("mood")),
                                   float(value.replace(",", ".")) if value else None))
            taken.append((match.start(), match.end()))
    for match in _BARE_PRESSURE.finditer(text):
        if not any(s <= match.start() < e for s, e in taken):
            start = _bare_start(text, match.start())
            mood = _mood(text[start : match.start()]) if start < match.start() else None
            notes.append(StateNote(start, match.end(), mood, float(match.group("value").replace(",", "."))))
            taken.append((start, match.end()))
    return sorted(notes, key=lambda n: n.start)


def _bare_start(text: str, at: int) -> int:
    """Where a bare pressure statement starts: after the sentence or line before it, taking a mood word along."""
    line_start = max(text.rfind("\n", 0, at) + 1, 0)
    before = text[line_start:at]
    cut = max(before.rfind(". "), before.rfind("! "), before.rfind("? "))
    head = before[cut + 2 :] if cut >= 0 else before
    words = head.strip(_SEPARATORS)
    if words and len(words.split()) <= 3 and re.search(r"[;,|/:\-–—]\s*$", head):
        return line_start + (cut + 2 if cut >= 0 else 0) + (len(head) - len(head.lstrip()))
    start = at
    while start > line_start and text[start - 1] in " \t;,|/:=-–—*_":
        start -= 1
    return start


_ALWAYS_FRAMING = re.compile(
    r"""
    \bmy\s+character(?:'s)?\s+(?:name|is|would)\b
  | \bI(?:'m|\s+am)\s+(?:just\s+|only\s+)?(?:an?\s+)?(?:AI|A\.I\.|language\s+model|LLM|chatbot|AI\s+assistant)\b
  | \bas\s+an?\s+(?:AI|language\s+model|LLM)\s*,?\s*I\b
  | \b(?:out\s+of|break(?:ing)?)\s+character\b
  | \bOOC\b
  | \bstage\s+direction\b
  | \b(?:this|the)\s+simulation\b
  | ^\W*narrator\s*:
    """,
    re.IGNORECASE | re.VERBOSE | re.MULTILINE,
)
"""Framing no user writes in any scenario: the guard refuses it, the parser always strips it."""

_SCENARIO_FRAMING = re.compile(
    r"""
    \b(?P<roleplay>role[\s\-]?play(?:s|ing|ed|er)?)\b
  | \b(?P<simulation>simulat(?:ion|ions|ed|ing|e|or))\b
  | \b(?:my|this|the|your)\s+(?P<character>character|persona)(?:'s)?\b
  | \b(?:the|this)\s+(?P<scenario>scenario)\b
  | \bI(?:'ll|\s+will)\s+(?:now\s+)?(?P<play>play|act\s+as|pretend)\b
  | \b(?:playing|play)\s+the\s+(?P<role>role|part)\s+of\b
  | \bin\s+this\s+(?P<inrole>role)\b
  | ^\W*(?:here\s+is|here's)\s+(?:my|the)\s+(?:next\s+|first\s+|opening\s+|user's\s+)?(?P<here>message|reply|response)\b
  | ^\W*(?:note|author's\s+note)\s*:
    """,
    re.IGNORECASE | re.VERBOSE | re.MULTILINE,
)
"""Framing a scenario may legitimately use (a role-playing game, a flight simulation): framing only
when the scenario the simulator was given does not use the word itself."""
_STEMS = {"roleplay": r"role[\s\-]?play", "simulation": "simulat", "character": "character", "scenario": "scenario"}


def framing(text: str, *, scenario_text: str = "") -> re.Match[str] | None:
    """The first out-of-character framing in ``text``, or ``None``.

    Parameters
    ----------
    text
        A simulated user's message.
    scenario_text
        The scenario the simulator plays: a word it uses there (``role-play``
        in a role-playing game, ``simulation`` for a flight simulator) is the
        user's own topic, not framing.  Phrases no user writes ("my character's
        name is", "I am an AI", "out of character") are framing whatever the scenario.

    Examples
    --------
    >>> framing("Let me prepare for this new role-play. Hi!").group(0)
    'role-play'
    >>> framing("Stop role-playing, please.", scenario_text="a role-playing game") is None
    True
    """
    always = _ALWAYS_FRAMING.search(text)
    for found in _SCENARIO_FRAMING.finditer(text, 0, always.start() if always else len(text)):
        stem = next((_STEMS.get(g, "") for g, v in found.groupdict().items() if v), "")
        if not stem or not re.search(stem, scenario_text, re.IGNORECASE):
            return found
    return always


_SPEAKER = re.compile(
    r"""
    (?:^|(?<=\n))[ \t]*[*_]{0,2}(?:user|assistant|ai|human|bot|tutor|student|customer|agent|interviewer|candidate|me|you)[*_]{0,2}[ \t]*:
  | (?<=[.!?"'\)])[ \t]+[*_]{0,2}(?:user|assistant|ai|human)[*_]{0,2}[ \t]*:
    """,
    re.IGNORECASE | re.VERBOSE,
)


def speaker_tag(text: str, *, after: int = 1) -> re.Match[str] | None:
    """The first speaker tag (``User:``, ``Assistant:``, ``**AI:**``) at or after position ``after``.

    A tag after the message has begun marks a turn written for another speaker
    (or the user's own next turn): everything from it on is not this message.
    """
    return _SPEAKER.search(text, after)


class SimulatorMetadataError(ValueError):
    """A target or judge request would carry simulator metadata."""


def _texts(messages: Iterable[Mapping[str, Any]]) -> Iterable[tuple[int, str, str]]:
    for index, message in enumerate(messages):
        role = str(message.get("role", ""))
        content = message.get("content")
        if isinstance(content, str):
            yield index, role, content
        elif content is not None:
            yield index, role, json.dumps(content, default=str)
        for call in message.get("tool_calls") or ():
            yield index, role, json.dumps(call, default=str)


_PRESSURE_WORD = re.compile("pressure|mood", re.IGNORECASE)
_REMEMBERED_TEXTS = 16384
"""How many message texts :func:`find_metadata` remembers the verdict of (the most recently checked)."""
_REMEMBERED: OrderedDict[bytes, str | None] = OrderedDict()
_REMEMBERED_LOCK = threading.Lock()


def find_metadata(messages: Iterable[Mapping[str, Any]]) -> tuple[int, str] | None:
    """The first simulator note in ``messages``: ``(message index, the note)``, or ``None``.

    Only a mood or pressure note counts here (narration is the user's text to
    strip, not metadata).  A text without the word ``pressure`` or ``mood`` is
    skipped before the fuller patterns run; a text checked before is not
    scanned again (its verdict is remembered by digest).
    """
    for index, _role, text in _texts(messages):
        note = _first_note(text)
        if note is not None:
            return index, note
    return None


def _first_note(text: str) -> str | None:
    """The first mood or pressure note in one message text, stripped, or ``None``.

    Remembered by the text's digest (a few hundred bytes per text, however long
    the text): a judge prompt holds the role (whose wording may say "pressure")
    and the transcript up to the turn it judges, and every judge is asked about
    the same turn, so the same long text is checked several times in one run.
    """
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
    with _REMEMBERED_LOCK:
        if digest in _REMEMBERED:
            _REMEMBERED.move_to_end(digest)
            return _REMEMBERED[digest]
    if _PRESSURE_WORD.search(text) is None:
        note = None  # the digest costs a seventh of this search over a long text, so repeats skip both
    else:
        note = next((text[n.start : n.end].strip() for n in state_notes(text, narration=False)), None)
    with _REMEMBERED_LOCK:
        _REMEMBERED[digest] = note
        while len(_REMEMBERED) > _REMEMBERED_TEXTS:
            _REMEMBERED.popitem(last=False)
    return note


def find_framing(messages: Iterable[Mapping[str, Any]]) -> tuple[int, str] | None:
    """The first user message with framing no scenario excuses: ``(message index, the phrase)``, or ``None``.

    Only the phrases :func:`framing` finds whatever the scenario ("my
    character's name is", "I am an AI", "out of character", ...): the request
    does not know the scenario that would excuse the others.
    """
    for index, role, text in _texts(messages):
        if role == "user":
            found = _ALWAYS_FRAMING.search(text)
            if found is not None:
                return index, found.group(0).strip()
    return None


def check_request(messages: Iterable[Mapping[str, Any]], *, purpose: str, model: str) -> None:
    """Refuse a target or judge request that carries simulator metadata.

    A target request is also refused when a user message carries
    out-of-character framing (the target reads user messages as the user's
    words; a judge reads them inside its prompt, where the target request
    already checked them).

    Raises
    ------
    SimulatorMetadataError
        Naming the model, the purpose, the message index and the note found.
    """
    if purpose not in GUARDED_PURPOSES:
        return
    messages = list(messages)
    found = find_metadata(messages)
    if found is not None:
        index, note = found
        raise SimulatorMetadataError(
            f"{purpose} request to {model!r}: messages[{index}] carries simulator metadata {note!r}; "
            "the simulated user's mood and pressure belong in the event's structured fields"
        )
    if purpose == "target":
        framed = find_framing(messages)
        if framed is not None:
            index, phrase = framed
            raise SimulatorMetadataError(
                f"{purpose} request to {model!r}: messages[{index}] carries the user simulator's "
                f"out-of-character text {phrase!r}; it belongs stripped from the user's message"
            )
