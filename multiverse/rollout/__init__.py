"""Coverage-guided user-behaviour fuzzing of role specifications (the RoleFUZZER campaign).

A campaign is a sequence of rounds of concurrent conversations between a simulated
user and the target assistant.  A planner chooses each conversation's scenario
(seeds, coverage-directed scenarios for under-observed cells of the TUNA x principles
grid, mutations of favoured parents); a consistency monitor keeps every user turn
plausible and tags its TUNA mode and strategy; an online judge scores every
assistant turn against every principle and feeds the planner between rounds.

Modules: :mod:`~multiverse.rollout.scenario` (what a conversation is about),
:mod:`~multiverse.rollout.planner` (the budget schedule and favoured parents),
:mod:`~multiverse.rollout.conversation` (one conversation),
:mod:`~multiverse.rollout.campaign` (rounds, baselines, coverage),
:mod:`~multiverse.rollout.embed` (text embedders for user diversity),
:mod:`~multiverse.rollout.prompts` (the request builders and parsers).


Names are resolved on first use, so importing one submodule (say, the planner)
does not load the request builders.
"""

from __future__ import annotations

from multiverse.core.lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "Conversation": "multiverse.rollout.conversation",
    "Scenario": "multiverse.rollout.scenario",
    "coverage_by_round": "multiverse.rollout.campaign",
    "coverage_share": "multiverse.rollout.campaign",
    "rollout": "multiverse.rollout.campaign",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
