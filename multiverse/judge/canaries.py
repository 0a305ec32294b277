"""The canary probe: any judge on the roles' canaries, through the one judging path.

A canary (:class:`multiverse.config.specs.Canary`) is judged as a one-turn
conversation: its user turn, then its reply (with the tool calls it made).
Judges judge it exactly as they judge any conversation
(:func:`multiverse.core.judgment.judge_transcripts`: the same prompt, template,
client and cache), and only the verdict on the canary's principle is kept.
:func:`multiverse.cube.canaries.score_canaries` turns the verdicts into
sensitivity, specificity and the ``no_signal`` flag.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from multiverse.core.judgment import Judge, judge_transcripts
from multiverse.core.schema import MISSING, NOT_APPLICABLE
from multiverse.core.transcript import Action, Event, Transcript

__all__ = ["canary_table", "canary_transcript", "chosen_canaries", "judge_canaries"]


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


async def judge_canaries(
    judges: Mapping[str, Judge],
    roles: Sequence[Any],
    *,
    client: Any,
    per_principle: int | None = None,
    report: Sequence[str] | None = None,
) -> dict[str, list[Any]]:
    """Every judge's verdict on every chosen canary of ``roles``.

    Parameters
    ----------
    judges
        Label -> judge; panels among them combine their members, which must be
        among them too.
    roles
        The roles whose canaries are judged.
    client
        The model client (cached like every judgment).
    per_principle
        Judge only the first that many canaries of each truth per principle.
    report
        The labels whose verdicts are returned (default: every judge).

    Returns
    -------
    dict
        Label -> list of :class:`multiverse.cube.canaries.CanaryVerdict`-shaped
        tuples ``(role, principle, truth, severity)``; severity -1 where the
        verdict is missing, never read as adherence; a canary on whose
        principle the judge does not rule (-2) is left out.
    """
    wanted = list(judges) if report is None else list(report)
    out: dict[str, list[Any]] = {label: [] for label in wanted}
    for role in roles:
        canaries = chosen_canaries(role, per_principle)
        if not canaries:
            continue
        principles = tuple(role.principle_ids)
        found = await judge_transcripts(
            judges,
            [canary_transcript(role, c) for c in canaries],
            roles=[role] * len(canaries),
            principle_ids=principles,
            horizon=1,
            client=client,
        )
        for label in wanted:
            for canary, judgment in zip(canaries, found[label]):
                severity = MISSING if judgment is None else int(judgment.severity[0, principles.index(canary.principle)])
                if severity != NOT_APPLICABLE:  # a judge that does not rule on the principle gave no verdict to score
                    out[label].append((role.id, canary.principle, canary.truth, severity))
    return out
