"""From judged conversation records to the judgment cube.

Nothing is judged here: every judge's judgments arrive with the records
(:func:`multiverse._run.execute.judge_unit` is the one place a run judges), and
assembly places them, with the conversations' labels, scenarios, tags and
planted truth, at their cells of the cube.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

import numpy as np
import xarray as xr

from multiverse._run.records import ConversationRecord
from multiverse.core.judgment import NO_REASON, REASON_CODES
from multiverse.core.schema import CONVERSATION_DIMS, MISSING, MISSING_REASONS, NOT_APPLICABLE
from multiverse.core.transcript import Transcript
from multiverse.cube.build import new_cube
from multiverse.core.probes import NO_PROBE
from multiverse.core.scales import category_codes
from multiverse.cube.scales import scale_coords
from multiverse.plan import Plan, base_judge

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
    chosen = {kind: list(names) for kind, names in (("standards", e.standards), ("rules", e.rules)) if names}
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


def _probe_coords(e: Any) -> dict[str, Any]:
    """``judge_base`` and ``judge_probe`` along ``judge`` when the experiment probes its judges (else none)."""
    if not e.judge_probes:
        return {}
    base = [base_judge(e, label) for label in e.judges]
    probe = [getattr(spec.spec, "label", NO_PROBE) if spec.kind == "probe" else NO_PROBE for spec in e.judges.values()]
    return {"judge_base": ("judge", base), "judge_probe": ("judge", probe)}


def _scale_coords(e: Any) -> dict[str, Any]:
    """``scale``, ``categories`` and ``against`` along ``judge`` when some judge is not on the severity scale (else none).

    ``against`` names the reference model of a pairwise judge (its ``system_a``;
    the cube's ``system`` is its ``system_b``), empty for the other judges.
    """
    scales = [spec.scale for spec in e.judges.values()]
    if set(scales) == {"severity"}:
        return {}
    against = [spec.against.model if spec.against is not None else "" for spec in e.judges.values()]
    return {**scale_coords(scales, [category_codes(s) for s in scales]), "against": ("judge", against)}


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
            "judge_model": ("judge", [spec.describe() for spec in e.judges.values()]),
            "judge_kind": ("judge", [spec.kind for spec in e.judges.values()]),
            **_probe_coords(e),
            **_scale_coords(e),
            "horizon": ("condition", [c.horizon for c in conditions]),
            "search": ("condition", [c.search for c in conditions]),
            "pressure": ("condition", [c.pressure for c in conditions]),
        },
        attrs=attrs,
    )
    severity = cube["severity"].values
    reasons = np.full(severity.shape, NO_REASON, dtype=np.int8)
    truth = cube["truth"].values if with_truth else None
    conv = {name: cube[name].values for name in ("mode", "strategy", "target_principle", "origin", "parent", "transcript_id", "ended")}
    tag_mode, tag_strategy = cube["tag_mode"].values, cube["tag_strategy"].values
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
    kept: dict[str, np.ndarray] = {}  # per-conversation variables of judges (the contract judge's lanes)
    for record, transcript, idx in zip(records, transcripts, index):
        columns = [principles.index(p) for p in roles[record.unit[1]].principle_ids]
        for label, (values, codes) in record.judged.items():
            j = judges.index(label)
            turns = min(len(values), e.horizon)
            cell = severity[idx + (slice(None), slice(None), j)]
            cell[...] = NOT_APPLICABLE
            cell[np.ix_(range(turns), columns)] = values[:turns]
            why = reasons[idx + (slice(None), slice(None), j)]
            why[np.ix_(range(turns), columns)] = codes[:turns]
            for name, value in record.conversation.get(label, {}).items():
                column = kept.setdefault(name, np.full(severity.shape[: len(CONVERSATION_DIMS)], "", dtype=object))
                column[idx] = value
            if reason_rows is not None:
                labels = dict(zip(CONVERSATION_DIMS, (*record.unit, record.item)))
                reason_rows.extend(
                    {**labels, "turn": int(turn), "principle": str(principle), "judge": label,
                     "transcript_id": transcript.id, "reason": str(text)}
                    for turn, principle, text in record.reasons.get(label, ())
                )
    for name, values in kept.items():
        cube[name] = xr.DataArray(values, dims=CONVERSATION_DIMS)
    counts = cube["missing_count"].values
    for j in range(len(judges)):
        codes = reasons[..., j][severity[..., j] == MISSING]
        codes = np.where(codes == NO_REASON, REASON_CODES["no_verdict"], codes)
        counts[j] = np.bincount(codes.astype(np.int64), minlength=len(MISSING_REASONS))
    return cube

