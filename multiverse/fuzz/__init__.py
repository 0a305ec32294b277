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

from multiverse._lazy import lazy_exports


_EXPORTS: dict[str, str] = {
    "Conversation": "multiverse.fuzz.conversation",
    "Scenario": "multiverse.fuzz.scenario",
    "coverage_by_round": "multiverse.fuzz.campaign",
    "coverage_share": "multiverse.fuzz.campaign",
    "rollout": "multiverse.fuzz.campaign",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
