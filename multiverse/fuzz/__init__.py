"""Coverage-guided user-behaviour fuzzing of role specifications (the RoleFUZZER campaign).

A campaign is a sequence of rounds of concurrent conversations between a simulated
user and the target assistant.  A planner chooses each conversation's scenario
(seeds, coverage-directed scenarios for under-observed cells of the TUNA x principles
grid, mutations of favoured parents); a consistency monitor keeps every user turn
plausible and tags its TUNA mode and strategy; an online judge scores every
assistant turn against every principle and feeds the planner between rounds.

Modules: :mod:`~multiverse.fuzz.scenario` (what a conversation is about),
:mod:`~multiverse.fuzz.planner` (the budget schedule and favoured parents),
:mod:`~multiverse.fuzz.conversation` (one conversation),
:mod:`~multiverse.fuzz.campaign` (rounds, baselines, coverage),
:mod:`~multiverse.fuzz.embed` (text embedders for user diversity),
:mod:`~multiverse.fuzz.prompts` (the request builders and parsers).


Names are resolved on first use, so importing one submodule (say, the planner)
does not load the request builders.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS: dict[str, str] = {
    "Conversation": "multiverse.fuzz.conversation",
    "Scenario": "multiverse.fuzz.scenario",
    "coverage_by_round": "multiverse.fuzz.campaign",
    "coverage_share": "multiverse.fuzz.campaign",
    "rollout": "multiverse.fuzz.campaign",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'multiverse.fuzz' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
