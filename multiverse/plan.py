"""Planning: an experiment's cross-product as xarray grids of spec ids.

Nothing runs here.  A plan has one grid per cached layer:

* the rollout layer over ``(system, role, user_sim, condition, replicate, item)``:
  one conversation per cell;
* the judge layer, which adds ``judge``: one verdict set per conversation and judge.

Standards and rules come after the judge layer and cost no model call, so they
are not planned.  A cell's spec id is the sha256 (first 16 hex digits) of the
canonical JSON of everything that determines it, so equal ids mean equal work;
an excluded cell (or a cell a ``rollouts:`` file has no conversation for) has
the id ``""``.  Conversations of one
``(system, role, user_sim, condition, replicate)`` come from one rollout (one
seed battery or one campaign), the plan's *unit* of work.
"""

from __future__ import annotations

import hashlib
import itertools
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import xarray as xr

from multiverse.config.experiment import Experiment
from multiverse.core.canonical import digest as canonical_digest
from multiverse.core.canonical import plain
from multiverse.core.choices import SIM_PREFIX, ModelSpec, sim_entry
from multiverse.core.schema import CONVERSATION_DIMS

__all__ = ["Plan", "Unit", "base_judge", "make_plan", "estimate_calls", "estimate_unit_calls", "model_judge_specs"]

UNIT_DIMS: tuple[str, ...] = CONVERSATION_DIMS[:-1]
"""Dims of one rollout (seed battery or campaign): every conversation dim but ``item``."""


@dataclass(frozen=True)
class Unit:
    """One rollout: a seed battery or campaign producing ``items`` conversations."""

    system: str
    role: str
    user_sim: str
    condition: str
    replicate: int
    items: tuple[int, ...]

    @property
    def key(self) -> tuple[str, str, str, str, int]:
        return (self.system, self.role, self.user_sim, self.condition, self.replicate)


def _digest(value: Any) -> str:
    return canonical_digest(value, length=16)


def _model(spec: ModelSpec) -> dict[str, Any]:
    out = {"model": spec.model, "api_base": spec.api_base, "params": dict(spec.params), "template": spec.template}
    # Only when set, so the digests of plans written before these keys existed stay the same.
    if spec.response_format is not None:
        out["response_format"] = plain(spec.response_format)
    if spec.seed is not None:
        out["seed"] = spec.seed
    return out


def _sim_part(experiment: Experiment, spec: ModelSpec) -> Any:
    """The slice of the ``sim:`` block one model's answers depend on (``None`` for real models)."""
    if not spec.is_sim:
        return None
    block = dict(experiment.sim or {})
    located = sim_entry(spec.model)
    entry: Any = block.get(spec.model.removeprefix(SIM_PREFIX))
    if located is not None and located[1] is not None:
        section, name = located
        entry = (block.get(section) or {}).get(name)
    return {"seed": block.get("seed", 0), "entry": entry}


def _identity(experiment: Experiment, spec: ModelSpec) -> dict[str, Any]:
    return {**_model(spec), "sim": _sim_part(experiment, spec)}


def _judge(experiment: Experiment, label: str) -> dict[str, Any]:
    """What a judge's verdicts depend on: its kind, its model's identity or its value, its members'."""
    spec = experiment.judges[label]
    if spec.model is not None:
        out = {"kind": spec.kind, **_identity(experiment, spec.model)}
        if spec.kind != "model":  # a probed judge: the same model reading something else
            out["value"] = spec.value
        if spec.against is not None:  # a pairwise judge: its verdicts depend on the reference replies too
            out["against"] = _identity(experiment, spec.against)
        return out
    out: dict[str, Any] = {"kind": spec.kind, "value": spec.value}
    if spec.members:
        out["members"] = [_judge(experiment, m) for m in spec.members]
    return out


def base_judge(experiment: Experiment, label: str) -> str:
    """The judge of ``dims.judge`` a judge label stands for: itself, or the judge a probed judge probes."""
    spec = experiment.judges[label]
    return getattr(spec.spec, "base", label) if spec.kind == "probe" else label


def model_judge_specs(experiment: Experiment) -> dict[str, ModelSpec]:
    """The model judges of an experiment, label -> model spec."""
    return {label: spec.model for label, spec in experiment.judges.items() if spec.model is not None}


@dataclass(frozen=True)
class Plan:
    """An experiment's planned cells.

    Attributes
    ----------
    experiment
        The experiment planned.
    rollout
        Spec ids (str) over the conversation dims; ``""`` where excluded (or,
        for recorded conversations, where the rollouts file has none).
    judge
        Spec ids over the conversation dims plus ``judge``; ``""`` where excluded.
    digest
        sha256 of every cell id, in grid order: equal digests, equal work.
    """

    experiment: Experiment
    rollout: xr.DataArray
    judge: xr.DataArray
    digest: str

    def units(self) -> Iterator[Unit]:
        """The rollouts to run, each with the items it keeps."""
        ids = self.rollout.transpose(*CONVERSATION_DIMS).values
        coords = [self.rollout[d].values.tolist() for d in UNIT_DIMS]
        for index in itertools.product(*(range(len(c)) for c in coords)):
            kept = tuple(int(i) for i, cell in enumerate(ids[index]) if cell)
            if kept:
                labels = [coords[d][i] for d, i in enumerate(index)]
                yield Unit(*labels[:4], int(labels[4]), items=kept)

    def unit_judge(self, unit: Unit) -> xr.DataArray:
        """The judge grid of one unit's conversations, over ``(item, judge)``."""
        return self.judge.sel(dict(zip(UNIT_DIMS, unit.key))).transpose("item", "judge")

    def layer_sizes(self) -> dict[str, int]:
        """Planned cells per layer (excluded cells not counted)."""
        return {
            "rollouts": sum(1 for _ in self.units()),
            "conversations": int((self.rollout != "").sum()),
            "judgments": int((self.judge != "").sum()),
        }


def _excluded(experiment: Experiment, labels: Mapping[str, str], *, with_judge: bool) -> bool:
    for exclusion in experiment.exclusions:
        if ("judge" in exclusion.where) != with_judge:
            continue
        if all(labels[dim] in chosen for dim, chosen in exclusion.where.items()):
            return True
    return False


def make_plan(experiment: Experiment) -> Plan:
    """The cross-product of an experiment's dims, exclusions applied.

    Parameters
    ----------
    experiment
        A loaded experiment.

    Returns
    -------
    Plan
        The rollout and judge grids of spec ids.
    """
    e = experiment
    coords = {
        "system": list(e.systems),
        "role": list(e.roles),
        "user_sim": list(e.user_sims),
        "condition": list(e.conditions),
        "replicate": list(range(e.replicates)),
        "item": list(range(e.items_per_cell)),
    }
    judges = list(e.judges)
    campaign = {
        "planner": _identity(e, e.campaign.planner),
        "monitor": None if e.campaign.monitor is None else _identity(e, e.campaign.monitor),
        "judge": _judge(e, e.campaign.judge) if e.campaign.judge else None,
        "budget": None if e.budget is None else [e.budget.rounds, e.budget.conversations],
        "seed": e.seed,
    }
    judge_parts = {label: _judge(e, label) for label in judges}
    base_judges = {label: base_judge(e, label) for label in judges}
    systems = {label: _identity(e, spec) for label, spec in e.systems.items()}
    user_sims = {label: _identity(e, spec) for label, spec in e.user_sims.items()}
    shape = tuple(len(coords[d]) for d in CONVERSATION_DIMS)
    rollout = np.full(shape, "", dtype=object)
    judged = np.full(shape + (len(judges),), "", dtype=object)
    for index in itertools.product(*(range(n) for n in shape)):
        labels = {d: coords[d][i] for d, i in zip(CONVERSATION_DIMS, index)}
        if _excluded(e, labels, with_judge=False):
            continue
        if e.recorded_cells is not None and (labels["system"], labels["role"], labels["item"]) not in e.recorded_cells:
            continue  # a rollouts file has no conversation here: nothing to judge
        cell = _digest(
            {
                "system": systems[labels["system"]],
                "role": labels["role"],
                "user_sim": user_sims[labels["user_sim"]],
                "condition": vars(e.conditions[labels["condition"]]),
                "replicate": labels["replicate"],
                "item": labels["item"],
                "campaign": campaign,
            }
        )
        rollout[index] = cell
        for j, label in enumerate(judges):
            if not _excluded(e, {**labels, "judge": base_judges[label]}, with_judge=True):
                judged[index + (j,)] = _digest([cell, judge_parts[label]])
    rollout_da = xr.DataArray(rollout, dims=CONVERSATION_DIMS, coords=coords, name="rollout")
    judge_da = xr.DataArray(
        judged, dims=CONVERSATION_DIMS + ("judge",), coords={**coords, "judge": judges}, name="judge"
    )
    digest = hashlib.sha256("\n".join(judged.reshape(-1).tolist() + rollout.reshape(-1).tolist()).encode()).hexdigest()
    return Plan(experiment=e, rollout=rollout_da, judge=judge_da, digest=digest)


def estimate_unit_calls(plan: Plan, unit: Unit) -> dict[str, dict[str, int]]:
    """Model calls one rollout unit needs, estimated: layer -> model -> calls.

    A conversation of horizon ``H`` takes ``H`` target, ``H`` user-simulator,
    ``H`` monitor and ``H`` online-judge calls, plus one planner call when its
    condition searches beyond the seed battery.  The judge layer takes one call
    per assistant turn per model judge, except the campaign's online judge,
    whose verdicts the rollout already cached, and a pairwise judge's
    reference model one call per assistant turn (shared by every judge
    comparing with the same reference).  Monitor rejections, conversations
    that end early and retries make the real count differ.  Recorded
    conversations (``rollouts:``) take no rollout call and one call per turn
    per model judge.
    """
    e = plan.experiment
    rollout: Counter[str] = Counter()
    judging: Counter[str] = Counter()
    model_judges = model_judge_specs(e)
    online = model_judges.get(e.campaign.judge) if e.rollouts is None else None
    condition = e.conditions[unit.condition]
    n = len(unit.items)
    turns = n * condition.horizon
    for spec in (e.systems[unit.system], e.user_sims[unit.user_sim], e.campaign.monitor, online):
        if spec is not None and e.rollouts is None:
            rollout[spec.model] += turns
    if condition.search != "seed_only" and e.rollouts is None:
        rollout[e.campaign.planner.model] += n
    judge_cells = plan.unit_judge(unit)
    for label, spec in model_judges.items():
        if spec != online or e.judges[label].kind == "probe":
            judging[spec.model] += int((judge_cells.sel(judge=label) != "").sum()) * condition.horizon
    references: dict[str, np.ndarray] = {}
    for label, judge in e.judges.items():
        if judge.against is not None:  # one reference reply per turn, shared by every judge comparing with it
            judged = (judge_cells.sel(judge=label) != "").to_numpy()
            model = judge.against.model
            references[model] = judged | references.get(model, np.zeros_like(judged))
    for model, judged in references.items():
        judging[model] += int(judged.sum()) * condition.horizon
    return {"rollout": dict(rollout), "judge": dict(judging)}


def estimate_calls(plan: Plan) -> dict[str, dict[str, int]]:
    """Model calls a plan needs, estimated: layer -> model -> calls (see :func:`estimate_unit_calls`)."""
    totals: dict[str, Counter[str]] = {"rollout": Counter(), "judge": Counter()}
    for unit in plan.units():
        for layer, calls in estimate_unit_calls(plan, unit).items():
            totals[layer].update(calls)
    return {layer: dict(calls) for layer, calls in totals.items()}
