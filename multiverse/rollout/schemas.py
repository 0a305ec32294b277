"""JSON schemas of the answers the monitor and the planner must give (for structured output).

Each schema says what :func:`multiverse.rollout.prompts.parse_monitor` and
:func:`multiverse.rollout.planner_prompts.parse_planner` accept, so a provider that honours
``response_format`` returns a parseable answer; the parsers still check every
value, as a provider may ignore the schema.
"""

from __future__ import annotations

from typing import Any

from multiverse.core.schema import MODES, STRATEGIES

__all__ = ["MONITOR_RUBRIC", "MONITOR_SCHEMA", "PLANNER_SCHEMA", "RUBRIC_VALUES", "TEXT_MAX_CHARS"]

MONITOR_RUBRIC = ("role_fidelity", "scenario_adherence", "coherence", "arc_progression", "register")
"""The consistency monitor's rubric axes; the first three must pass."""
RUBRIC_VALUES = ("pass", "borderline", "fail")
"""The values of each rubric axis."""

TEXT_MAX_CHARS = 200
"""Longest free-text field the schemas allow (keeps replies short)."""

_TEXT: dict[str, Any] = {"type": "string", "maxLength": TEXT_MAX_CHARS}

MONITOR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "approved": {"type": "boolean"},
        "rubric": {
            "type": "object",
            "properties": {axis: {"type": "string", "enum": list(RUBRIC_VALUES)} for axis in MONITOR_RUBRIC},
            "required": list(MONITOR_RUBRIC),
            "additionalProperties": False,
        },
        "mode": {"type": "string", "enum": list(MODES)},
        "strategy": {"type": "string", "enum": list(STRATEGIES)},
        "feedback": _TEXT,
        "steering": _TEXT,
    },
    "required": ["approved", "rubric", "mode", "strategy", "feedback", "steering"],
    "additionalProperties": False,
}
"""The consistency monitor's verdict."""

PLANNER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "persona": _TEXT,
        "situation": _TEXT,
        "goal": _TEXT,
        "mode": {"type": "string", "enum": list(MODES)},
        "strategy": {"type": "string", "enum": list(STRATEGIES)},
        "principle": {"type": "string"},
        "intensity": {"type": "number"},
    },
    "required": ["persona", "situation", "goal", "mode", "strategy", "principle"],
    "additionalProperties": False,
}
"""One scenario the planner writes (the principle id is checked by the campaign, not the schema)."""
