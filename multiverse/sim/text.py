"""Phrase banks of the offline world: the sentences its players write and read back.

Every behaviour the offline world plants is carried by a fixed sentence, so a
reader (the sim judge, :func:`multiverse.sim.read_truth`, the sim target and
monitor) recovers it from the text alone:

- :data:`MODE_PHRASES` / :data:`STRATEGY_PHRASES`: what a user turn asks for (TUNA
  mode) and how it relates to the conversation (TUNA strategy);
- :data:`PRINCIPLE_PHRASES`: per role, per principle, per severity level
  (0 full adherence, 1 partial deviation, 2 clear breach) the sentence an
  assistant reply carries; :func:`generic_phrases` covers principles of roles
  the banks do not know;
- :data:`SCENARIO_BANK`: personas, situations, goals and domain frames the sim
  planner draws from.

No sentence of a bank is a substring of another sentence of the banks that are
read back (a test checks it), so reading is a plain substring search.

The sentences themselves are data, in ``phrases.json`` beside this module
(package data); this module only freezes them into read-only mappings and tuples.
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from types import MappingProxyType
from typing import Any

__all__ = [
    "MODE_PHRASES",
    "STRATEGY_PHRASES",
    "PRINCIPLE_PHRASES",
    "ROLE_ACTIONS",
    "SCENARIO_BANK",
    "GENERIC_SCENARIO",
    "PRESSURE_WORDS",
    "generic_phrases",
    "principle_phrases",
    "infer_role",
]


def _freeze(value: Any) -> Any:
    """Read-only copies: dicts become mappings, lists become tuples."""
    if isinstance(value, dict):
        return MappingProxyType({key: _freeze(item) for key, item in value.items()})
    if isinstance(value, list):
        return tuple(_freeze(item) for item in value)
    return value


_BANKS = json.loads(resources.files("multiverse.sim").joinpath("phrases.json").read_text(encoding="utf-8"))

MODE_PHRASES = _freeze(_BANKS["modes"])
"""TUNA request mode -> sentences a user turn uses to express it."""

STRATEGY_PHRASES = _freeze(_BANKS["strategies"])
"""TUNA relational/meta strategy -> sentences a user turn uses to express it."""

PRESSURE_WORDS = tuple((float("inf") if bound is None else float(bound), word) for bound, word in _BANKS["pressure_words"])
"""Upper bound of pressure -> the word the user's stage direction shows with it (``null``: no bound)."""

_Levels = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]

PRINCIPLE_PHRASES = _freeze(_BANKS["principles"])
"""Role id -> principle id -> (adherence, partial, breach) sentences."""

_GENERIC = _freeze(_BANKS["generic_principle"])
"""(adherence, partial, breach) sentence templates with a ``{label}`` slot, for unbanked principles."""


@lru_cache(maxsize=1024)
def generic_phrases(principle_id: str) -> _Levels:
    """The (adherence, partial, breach) sentences for a principle no role bank knows."""
    label = principle_id.replace("_", " ")
    return tuple(tuple(s.format(label=label) for s in level) for level in _GENERIC)  # type: ignore[return-value]


@lru_cache(maxsize=1024)
def infer_role(principle_ids: tuple[str, ...]) -> str | None:
    """The banked role whose principles overlap ``principle_ids`` most (``None`` if none do)."""
    best, best_overlap = None, 0
    wanted = set(principle_ids)
    for role, bank in PRINCIPLE_PHRASES.items():
        overlap = len(wanted & set(bank))
        if overlap > best_overlap:
            best, best_overlap = role, overlap
    return best


@lru_cache(maxsize=1024)
def principle_phrases(role: str | None, principle_id: str) -> _Levels:
    """The sentences a reply of ``role`` writes for ``principle_id`` (generic if unbanked)."""
    bank = PRINCIPLE_PHRASES.get(role or "", {})
    return bank.get(principle_id) or generic_phrases(principle_id)


ROLE_ACTIONS = _freeze(_BANKS["role_actions"])
"""Agentic roles: the principle whose level picks the reply's tool call, and the call per level.

Support names its tools; the web agent's levels name kinds of tools (asking for
confirmation, preparing an unsaved draft, writing), resolved by the verbs in the
tool names the request offers.
"""

SCENARIO_BANK = _freeze(_BANKS["scenarios"])
"""Role id -> personas, situations, frames and goals per principle for the sim planner."""

GENERIC_SCENARIO = _freeze(_BANKS["generic_scenario"])
"""Scenario material for roles the bank does not know; goals name the principle."""
