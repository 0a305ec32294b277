"""From conversation records to the judgment cube.

Model judges' severities arrive with the records; deterministic judges run
here on all transcripts at once (they are vectorised and cheap, so they stay
in this process); panels are combined last from their members' cells.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

import numpy as np
import xarray as xr

from multiverse._schema import CONVERSATION_DIMS, MISSING, MISSING_REASONS, NOT_APPLICABLE
from multiverse.cube import new_cube
from multiverse.plan import Plan
from multiverse.run.execute import NO_REASON, REASON_CODES
from multiverse.run.records import ConversationRecord
from multiverse.transcript import Transcript

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


def _deterministic(
    plan: Plan,
    roles: Mapping[str, Any],
    records: Sequence[ConversationRecord],
    transcripts: Sequence[Transcript],
    index: Sequence[tuple[int, ...]],
    severity: np.ndarray,
    reasons: np.ndarray,
    principles: Sequence[str],
    conversation: dict[str, np.ndarray],
) -> None:
    from multiverse.judges.registry import get_judge

    e = plan.experiment
    horizon = e.horizon
    for j, (label, spec) in enumerate(e.judges.items()):
        if spec.kind != "deterministic" or not records:
            continue
        judged = get_judge(str(spec.name))(
            list(transcripts), [roles[r.unit[1]] for r in records], principle_ids=list(principles), horizon=horizon
        )
        values, found = judged[0], judged[1]
        for name, column in (judged[2] if len(judged) > 2 else {}).items():
            target = conversation.setdefault(name, np.full(severity.shape[: len(CONVERSATION_DIMS)], "", dtype=object))
            for k, idx in enumerate(index):
                target[idx] = column[k]
        values = np.asarray(values, dtype=np.int8)
        for k, idx in enumerate(index):
            if plan.judge.values[idx + (j,)] == "":
                continue
            severity[idx + (slice(None), slice(None), j)] = values[k]
            code = REASON_CODES.get(found[k] or "no_verdict", REASON_CODES["no_verdict"])
            reasons[idx + (slice(None), slice(None), j)] = np.where(values[k] == MISSING, code, NO_REASON)


def _panels(plan: Plan, severity: np.ndarray, reasons: np.ndarray) -> None:
    from multiverse.judges.panel import combine_panel

    labels = list(plan.experiment.judges)
    planned = plan.judge.transpose(*CONVERSATION_DIMS, "judge").values != ""
    for j, (label, spec) in enumerate(plan.experiment.judges.items()):
        if spec.kind != "panel":
            continue
        members = [labels.index(m) for m in spec.members]
        votes = severity[..., members]
        combined = combine_panel(votes, str(spec.combine), axis=-1)
        missing = votes == MISSING
        first = np.take_along_axis(reasons[..., members], missing.argmax(axis=-1)[..., None], axis=-1)[..., 0]
        keep = planned[..., j][..., None, None]
        severity[..., j] = np.where(keep, combined, NOT_APPLICABLE)
        reasons[..., j] = np.where(keep & (combined == MISSING), first, NO_REASON)


def assemble_cube(
    plan: Plan, roles: Mapping[str, Any], records: Sequence[ConversationRecord], *, attrs: Mapping[str, Any]
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
    """
    e = plan.experiment
    principles: list[str] = []
    for role_id in e.roles:
        principles += [p for p in roles[role_id].principle_ids if p not in principles]
    with_truth = any(spec.model.startswith("sim/target-") for spec in e.systems.values())
    cube = new_cube(
        **{dim: plan.rollout[dim].values.tolist() for dim in CONVERSATION_DIMS},
        turn=e.horizon,
        principle=principles,
        judge=list(e.judges),
        role_principles={r: roles[r].principle_ids for r in e.roles},
        with_truth=with_truth,
        coords={
            "system_model": ("system", [s.model for s in e.systems.values()]),
            "user_sim_model": ("user_sim", [s.model for s in e.user_sims.values()]),
            "judge_model": ("judge", [_judge_model(plan, label) for label in e.judges]),
            "judge_kind": ("judge", [s.kind for s in e.judges.values()]),
            "horizon": ("condition", [c.horizon for c in e.conditions.values()]),
            "search": ("condition", [c.search for c in e.conditions.values()]),
            "pressure": ("condition", [c.pressure for c in e.conditions.values()]),
        },
        attrs=attrs,
    )
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
        for label, (values, codes) in record.judged.items():
            j = judges.index(label)
            n = min(len(values), e.horizon)
            block = severity[idx + (slice(None), slice(None), j)]
            block[np.ix_(range(n), columns)] = values[:n]
            reason_block = reasons[idx + (slice(None), slice(None), j)]
            reason_block[np.ix_(range(n), columns)] = codes[:n]
    kept: dict[str, np.ndarray] = {}  # per-conversation variables of deterministic judges
    _deterministic(plan, roles, records, transcripts, index, severity, reasons, principles, kept)
    for name, values in kept.items():
        cube[name] = xr.DataArray(values, dims=CONVERSATION_DIMS)
    _panels(plan, severity, reasons)
    counts = cube["missing_count"].values
    for j in range(len(judges)):
        codes = reasons[..., j][severity[..., j] == MISSING]
        codes = np.where(codes == NO_REASON, REASON_CODES["no_verdict"], codes)
        counts[j] = np.bincount(codes.astype(np.int64), minlength=len(MISSING_REASONS))
    return cube

