"""The canary probe's conversations: a role's canaries as the one-turn conversations a judge reads.

A canary (:class:`multiverse.config.specs.Canary`) is judged as a one-turn
conversation: its user turn, then its reply (with the tool calls it made).
:func:`multiverse._run.canaries.judge_canaries` has judges judge them in the
one place a run judges (:func:`multiverse._run.execute.judge_records`: the same
prompt, template, client and cache as any conversation) and keeps only the
verdict on each canary's principle;
:func:`multiverse.cube.canaries.score_canaries` turns the verdicts into
sensitivity, specificity and the ``no_signal`` flag.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from multiverse.core.transcript import Action, Event, Transcript

__all__ = ["canary_table", "canary_transcript", "chosen_canaries"]


def chosen_canaries(role: Any, per_principle: int | None = None) -> tuple[Any, ...]:
    """A role's canaries, or the first ``per_principle`` of each truth per principle (file order)."""
    if per_principle is None:
        return tuple(role.canaries)
    taken: dict[tuple[str, int], int] = {}
    out = []
    for canary in role.canaries:
        key = (canary.principle, canary.truth)
        if taken.get(key, 0) < per_principle:
            taken[key] = taken.get(key, 0) + 1
            out.append(canary)
    return tuple(out)


def canary_transcript(role: Any, canary: Any) -> Transcript:
    """A canary as the conversation a judge reads: its user turn, then its reply."""
    actions = tuple(Action(a["name"], dict(a.get("arguments") or {})) for a in canary.actions)
    events = (Event(turn=1, actor="user", text=canary.user), Event(turn=2, actor="assistant", text=canary.reply, actions=actions))
    return Transcript(role=role.id, events=events, scenario={"canary": canary.principle})


def canary_table(roles: Iterable[Any]) -> dict[str, dict[str, int]]:
    """Reply digest -> ``{principle: truth}`` over every canary of ``roles``: what the offline world's judges know."""
    table: dict[str, dict[str, int]] = {}
    for role in roles:
        table.update(role.canary_table)
    return table
