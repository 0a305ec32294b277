"""A run's canary probe: its judges on the roles' canaries, before any conversation is rolled out.

The experiment's ``canaries:`` block (or ``--require-judge-signal``) names the
judges; they judge the canaries of every role of the run on one client (the
run's cache, the offline world knowing the canaries), and each judge's
verdicts are scored (:func:`multiverse.cube.canaries.score_canaries`).  Judging
the canaries first lets a run that requires judge signal refuse before it pays
for a rollout.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from multiverse._run.execute import judge_records, make_client, run_sync
from multiverse._run.records import ConversationRecord
from multiverse.config.experiment import Experiment
from multiverse.core.judgment import Judge
from multiverse.core.schema import MISSING, NOT_APPLICABLE
from multiverse.cube.canaries import CanaryVerdict, score_canaries
from multiverse.judge.build import make_judge
from multiverse.judge.canaries import canary_transcript, chosen_canaries

__all__ = ["canary_call_estimate", "canary_judges", "canary_judging", "judge_canaries", "run_canaries"]


def canary_judges(experiment: Experiment) -> list[str]:
    """The judges that judge the canaries: the block's ``judges``, else every model judge of ``dims.judge``."""
    options = experiment.canaries
    if options is None:
        return []
    if options.judges is not None:
        return list(options.judges)
    return [label for label, spec in experiment.judges.items() if spec.kind == "model"]


def canary_judging(experiment: Experiment) -> dict[str, Any]:
    """The judges the canaries need, label -> judge: the chosen ones and the members of chosen panels."""
    chosen = canary_judges(experiment)
    needed = list(dict.fromkeys(m for label in chosen for m in (*experiment.judges[label].members, label)))
    return {label: make_judge(experiment.judges[label], label=label, judges=experiment.judges) for label in needed}


def canary_call_estimate(experiment: Experiment, roles: Mapping[str, Any]) -> Counter[str]:
    """Model -> the calls judging the canaries takes (one per canary and model judge it needs)."""
    per_role = sum(len(chosen_canaries(roles[r], experiment.canaries.per_principle)) for r in experiment.roles) \
        if experiment.canaries is not None else 0
    calls: Counter[str] = Counter()
    for label in canary_judging(experiment):
        model = experiment.judges[label].model
        if model is not None:
            calls[model.model] += per_role
    return calls


async def judge_canaries(
    judges: Mapping[str, Judge],
    roles: Sequence[Any],
    *,
    client: Any,
    per_principle: int | None = None,
    report: Sequence[str] | None = None,
) -> dict[str, list[CanaryVerdict]]:
    """Every judge's verdict on every chosen canary of ``roles``, judged where a run judges any conversation.

    Each role's canaries are one-turn conversation records judged by
    :func:`multiverse._run.execute.judge_records` (the same prompt, template,
    client and cache as a unit's conversations); only the verdict on each
    canary's principle is kept.

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
        Label -> its verdicts; severity -1 where the verdict is missing, never
        read as adherence; a canary on whose principle the judge does not
        rule (-2) is left out.
    """
    wanted = list(judges) if report is None else list(report)
    out: dict[str, list[CanaryVerdict]] = {label: [] for label in wanted}
    for role in roles:
        canaries = chosen_canaries(role, per_principle)
        if not canaries:
            continue
        records = [
            ConversationRecord(unit=("canaries", role.id, "", "", 0), item=i,
                               transcript=canary_transcript(role, c).to_dict(), tags=[], truth=None)
            for i, c in enumerate(canaries)
        ]
        await judge_records(client, records, role, judges, horizon=1)
        principles = tuple(role.principle_ids)
        for label in wanted:
            for canary, record in zip(canaries, records):
                judged = record.judged.get(label)
                severity = MISSING if judged is None else int(judged[0][0, principles.index(canary.principle)])
                if severity != NOT_APPLICABLE:  # a judge that does not rule on the principle gave no verdict to score
                    out[label].append(CanaryVerdict(role.id, canary.principle, canary.truth, severity))
    return out


def run_canaries(
    experiment: Experiment, roles: Mapping[str, Any], *, cache: str | Path, offline: bool = False
) -> tuple[dict[str, dict[str, Any]], dict[str, Any] | None]:
    """Each chosen judge's canary results, and the summary of the client that judged them.

    Returns ``({}, None)`` when the experiment judges no canaries.
    """
    chosen = canary_judges(experiment)
    if not chosen:
        return {}, None
    judges = canary_judging(experiment)
    ordered = [roles[role_id] for role_id in experiment.roles]
    with make_client(experiment, cache, offline=offline, roles=roles) as client:
        found = run_sync(judge_canaries(
            judges, ordered, client=client, per_principle=experiment.canaries.per_principle, report=chosen,
        ))
        summary = client.summary()
    options = experiment.canaries
    results = {
        label: score_canaries(found[label], standard=options.standard, floor=options.floor)
        for label in chosen
    }
    return results, summary
