"""From conversation records to the judgment cube.

Model judges' severities arrive with the records; deterministic judges run
here on all transcripts at once (they are vectorised and cheap, so they stay
in this process, and a changed registered judge is never served from a
replay); panels are combined last from their members' judgments.  Both go
through :func:`multiverse.core.judgment.judge_transcripts`.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

import numpy as np
import xarray as xr

from multiverse._run.execute import run_sync
from multiverse._run.records import ConversationRecord
from multiverse.core.judgment import NO_REASON, REASON_CODES, Judgment, judge_transcripts
from multiverse.core.schema import CONVERSATION_DIMS, MISSING, MISSING_REASONS, NOT_APPLICABLE
from multiverse.core.transcript import Transcript
from multiverse.cube.build import new_cube
from multiverse.plan import Plan

__all__ = ["assemble_cube", "provenance"]

DEPENDENCIES = ("numpy", "pandas", "xarray", "netCDF4", "joblib", "pyyaml", "litellm")


def _version(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return ""


def provenance(plan: Plan, roles: Mapping[str, Any]) -> dict[str, Any]:
    """Provenance attrs: versions, plan and spec digests, creation time, the experiment, its standards and rules."""
    from multiverse import __version__

    e = plan.experiment
    # the experiment's dims.standard and dims.rule: score(cube) defaults to them
    chosen = {kind: ",".join(names) for kind, names in (("standards", e.standards), ("rules", e.rules)) if names}
    return {
        **chosen,
        "title": f"multiverse judgment cube: {e.name}",
        "multiverse_version": __version__,
        "dependency_versions": {name: _version(name) for name in DEPENDENCIES},
        "plan_digest": plan.digest,
        "experiment_digest": e.digest(),
        "spec_digests": {role_id: role.digest for role_id, role in roles.items()},
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "experiment": e.to_dict(),
        "campaign_judge": e.campaign.judge,
    }


def _judge_model(plan: Plan, label: str) -> str:
    spec = plan.experiment.judges[label]
    if spec.kind == "model":
        assert spec.model is not None
        return spec.model.model
    if spec.kind == "deterministic":
        return str(spec.name)
    return f"{spec.combine}({','.join(spec.members)})"


def _judgments(
    plan: Plan,
    roles: Mapping[str, Any],
    records: Sequence[ConversationRecord],
    transcripts: Sequence[Transcript],
    index: Sequence[tuple[int, ...]],
    principles: Sequence[str],
    judge_grid: xr.DataArray,
) -> dict[str, list[Judgment | None]]:
    """Every judge's judgments, in the cube's principle order, one per record.

    Model judges' judgments arrive with the records; deterministic judges and
    panels run here through :func:`~multiverse.core.judgment.judge_transcripts` on
    all transcripts at once (they are vectorised and cheap).
    """
    from multiverse.judge.build import make_judges

    e = plan.experiment
    horizon, n = e.horizon, len(principles)
    known: dict[str, list[Judgment | None]] = {
        label: [None] * len(records) for label, spec in e.judges.items() if spec.kind == "model"
    }
    for k, record in enumerate(records):
        columns = [principles.index(p) for p in roles[record.unit[1]].principle_ids]
        for label, (values, codes) in record.judged.items():
            severity = np.full((horizon, n), NOT_APPLICABLE, dtype=np.int8)
            missing = np.full((horizon, n), NO_REASON, dtype=np.int8)
            turns = min(len(values), horizon)
            severity[np.ix_(range(turns), columns)] = values[:turns]
            missing[np.ix_(range(turns), columns)] = codes[:turns]
            reasons = {(int(t), str(p)): str(text) for t, p, text in record.reasons.get(label, ())}
            known[label][k] = Judgment(severity, missing, reasons)
    others = {label: judge for label, judge in make_judges(e.judges).items() if label not in known}
    judge_column = {label: j for j, label in enumerate(e.judges)}
    grid = judge_grid.values
    planned = {label: [grid[idx + (judge_column[label],)] != "" for idx in index] for label in others}
    found = run_sync(
        judge_transcripts(
            others,
            transcripts,
            roles=[roles[r.unit[1]] for r in records],
            principle_ids=list(principles),
            horizon=horizon,
            planned=planned,
            known=known,
        )
    )
    return {**known, **found}


def assemble_cube(
    plan: Plan,
    roles: Mapping[str, Any],
    records: Sequence[ConversationRecord],
    *,
    attrs: Mapping[str, Any],
    reason_rows: list[dict[str, Any]] | None = None,
    where: Mapping[str, Any] | None = None,
    items: int | None = None,
) -> xr.Dataset:
    """The judgment cube of a plan from its conversation records.

    Parameters
    ----------
    plan
        The plan that was run.
    roles
        Role id -> loaded role.
    records
        Every conversation's record, in any order.
    attrs
        Provenance attrs for the cube.
    reason_rows
        A list that receives one row (:data:`multiverse.core.transcript.REASON_FIELDS`)
        per reason a judge stated, for the transcript store.
    where
        ``{dim: label}`` of the unit dims (``system`` ... ``replicate``): the
        part of the cube at one unit's position, from that unit's records (a
        streamed run writes the cube part by part, see
        :mod:`multiverse._run.stream`).  ``None``: the whole cube.
    items
        A number of items replacing the plan's (``0``: the cube's shape and
        coordinates without conversations, for a store's template).
    """
    e = plan.experiment
    principles: list[str] = []
    for role_id in e.roles:
        principles += [p for p in roles[role_id].principle_ids if p not in principles]
    with_truth = any(spec.model.startswith("sim/target-") for spec in e.systems.values())
    chosen = {dim: [label] for dim, label in (where or {}).items()}
    labels = {dim: chosen.get(dim, plan.rollout[dim].values.tolist()) for dim in CONVERSATION_DIMS}
    if items is not None:
        labels["item"] = list(range(items))
    systems = [e.systems[s] for s in labels["system"]]
    user_sims = [e.user_sims[u] for u in labels["user_sim"]]
    conditions = [e.conditions[c] for c in labels["condition"]]
    cube = new_cube(
        **labels,
        turn=e.horizon,
        principle=principles,
        judge=list(e.judges),
        role_principles={r: roles[r].principle_ids for r in e.roles},
        with_truth=with_truth,
        coords={
            "system_model": ("system", [s.model for s in systems]),
            "user_sim_model": ("user_sim", [s.model for s in user_sims]),
            "judge_model": ("judge", [_judge_model(plan, label) for label in e.judges]),
            "judge_kind": ("judge", [s.kind for s in e.judges.values()]),
            "horizon": ("condition", [c.horizon for c in conditions]),
            "search": ("condition", [c.search for c in conditions]),
            "pressure": ("condition", [c.pressure for c in conditions]),
        },
        attrs=attrs,
    )
    judge_grid = plan.judge.sel(chosen).transpose(*CONVERSATION_DIMS, "judge")
    severity = cube["severity"].values
    reasons = np.full(severity.shape, NO_REASON, dtype=np.int8)
    truth = cube["truth"].values if with_truth else None
    conv = {name: cube[name].values for name in ("mode", "strategy", "target_principle", "origin", "parent", "transcript_id", "ended")}
    tag_mode, tag_strategy = cube["tag_mode"].values, cube["tag_strategy"].values
    conv["ended"][...] = ""
    positions = {
        dim: {label: i for i, label in enumerate(cube[dim].values.tolist())} for dim in CONVERSATION_DIMS[:-1]
    }
    judges = list(e.judges)
    transcripts: list[Transcript] = []
    index: list[tuple[int, ...]] = []
    for record in records:
        idx = tuple(positions[d][label] for d, label in zip(CONVERSATION_DIMS[:-1], record.unit)) + (record.item,)
        transcript = Transcript.from_dict(record.transcript)
        transcripts.append(transcript)
        index.append(idx)
        scenario = transcript.scenario
        conv["mode"][idx] = str(scenario.get("mode", ""))
        conv["strategy"][idx] = str(scenario.get("strategy", ""))
        conv["target_principle"][idx] = str(scenario.get("principle", ""))
        conv["origin"][idx] = str(scenario.get("origin", ""))
        conv["parent"][idx] = str(scenario.get("parent", "") or "")
        conv["transcript_id"][idx] = transcript.id
        conv["ended"][idx] = transcript.ended
        columns = [principles.index(p) for p in roles[record.unit[1]].principle_ids]
        for t, (mode, strategy) in enumerate(record.tags[: e.horizon]):
            tag_mode[idx + (t,)] = mode
            tag_strategy[idx + (t,)] = strategy
        if truth is not None and record.truth is not None:
            n = min(len(record.truth), e.horizon)
            truth[idx + (slice(0, n),)][:, columns] = record.truth[:n]
    kept: dict[str, np.ndarray] = {}  # per-conversation variables of deterministic judges
    for label, judgments in _judgments(plan, roles, records, transcripts, index, principles, judge_grid).items():
        j = judges.index(label)
        for record, transcript, idx, judgment in zip(records, transcripts, index, judgments):
            if judgment is None:
                continue
            severity[idx + (slice(None), slice(None), j)] = judgment.severity
            reasons[idx + (slice(None), slice(None), j)] = judgment.missing
            for name, value in judgment.conversation.items():  # e.g. the contract judge's lanes
                column = kept.setdefault(name, np.full(severity.shape[: len(CONVERSATION_DIMS)], "", dtype=object))
                column[idx] = value
            if reason_rows is not None:
                labels = dict(zip(CONVERSATION_DIMS, (*record.unit, record.item)))
                reason_rows.extend(
                    {**labels, "turn": turn, "principle": principle, "judge": label,
                     "transcript_id": transcript.id, "reason": text}
                    for turn, principle, text in judgment.reason_rows(principles)
                )
    for name, values in kept.items():
        cube[name] = xr.DataArray(values, dims=CONVERSATION_DIMS)
    counts = cube["missing_count"].values
    for j in range(len(judges)):
        codes = reasons[..., j][severity[..., j] == MISSING]
        codes = np.where(codes == NO_REASON, REASON_CODES["no_verdict"], codes)
        counts[j] = np.bincount(codes.astype(np.int64), minlength=len(MISSING_REASONS))
    return cube

