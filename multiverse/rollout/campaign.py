"""Campaigns: sequential rounds of concurrent conversations, steered by the planner.

:func:`rollout` is the rollout layer's entry point for one (system, role, user_sim,
condition, replicate) cell of an experiment.  A replicate is an independent
campaign with its own random generator (seeded from ``seed``, the replicate, the
role and the search strategy).

Searches
--------
``seed_only``
    The role's seeds in file order, cycling through the pool.
``rolefuzzer``
    Seeds, coverage-directed scenarios and mutations of favoured parents, as
    :mod:`multiverse.rollout.planner` schedules them.
``random_cell``
    Every conversation aims at a cell drawn uniformly at random; the planner
    model writes its scenario exactly as for a coverage-directed one.
``no_grid``
    The planner model writes specification-targeting users free-form and chooses
    the cell itself (home cell = target cell).  Such scenarios carry origin
    ``coverage`` (written by the planner model), the closed set of origins having
    no separate name for them.

Repeated executions of one scenario (seeds cycling through the pool) are
independent samples: their requests carry distinct replicate indices
(:func:`multiverse.rollout.conversation.sample_replicate`).

With a ``budget``, a campaign is ``budget.rounds`` rounds of
``budget.conversations`` conversations (``seed_only`` too, so coverage curves align
by round); without one, a single round of ``items``.

When the planner model's answer is unusable (a failed call or an unparseable
scenario), the slot falls back to its grounding seed, re-aimed at the slot's cell
(a mutation falls back to its parent with the mutated axis changed
deterministically), and a warning is logged: a campaign never stalls on the planner.

Coverage
--------
Coverage counts completed conversations only (the planner still observes every
approved turn).  A turn covers the cell (its monitor-tagged mode, its tagged strategy, the
conversation's *target* principle); a cell is covered when some approved turn
covers it.  A simulated user that fails to steer expresses its home cell's mode
and strategy, so coverage-directed and ``random_cell`` scenarios are grounded in
the seed nearest their target (:func:`multiverse.rollout.planner.ground_seed`):
with a seed pool that spans the 16 (mode, strategy) pairs those drift turns land
in the target cell itself, and ``random_cell`` coverage follows the closed form for
uniform draws of target cells.
"""

from __future__ import annotations

import asyncio
import logging
import zlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from multiverse.core.choices import Budget, Condition, ModelSpec
from multiverse.core.grid import cells as grid_cells
from multiverse.core.grid import coverage, share_covered
from multiverse.core.judgment import Judge
from multiverse.core.schema import parse_cell_id
from multiverse.llm.request import Request
from multiverse.llm.structured import acomplete_structured
from multiverse.rollout import planner_prompts
from multiverse.rollout.conversation import Conversation, run_conversation
from multiverse.rollout.planner import CampaignPlanner, Rollout, Slot
from multiverse.rollout.scenario import Scenario, ScenarioError
from multiverse.rollout.seams import Harness, RolloutClient, RolloutRole

__all__ = ["campaign_rng", "coverage_by_round", "coverage_share", "rollout", "tagged_turns"]

log = logging.getLogger(__name__)

INTENSITY_STEP = 1.5
"""Fallback intensity mutation: the parent's intensity times this."""


def campaign_rng(seed: int, replicate: int, role_id: str, search: str) -> np.random.Generator:
    """The random generator of one campaign (stable across processes and runs)."""
    return np.random.default_rng(
        [int(seed), int(replicate), zlib.crc32(role_id.encode()), zlib.crc32(search.encode())]
    )


def tagged_turns(conversations: Iterable[Conversation]) -> dict[str, list[str]]:
    """One row per tagged assistant turn: tagged ``mode``, tagged ``strategy``, target ``principle``."""
    rows: dict[str, list[str]] = {"mode": [], "strategy": [], "principle": []}
    for conversation in conversations:
        for mode, strategy in conversation.tags:
            rows["mode"].append(mode)
            rows["strategy"].append(strategy)
            rows["principle"].append(conversation.scenario["principle"])
    return rows


def coverage_share(conversations: Iterable[Conversation], role: RolloutRole) -> float:
    """Share of the role's grid cells covered by the approved tagged turns of completed conversations.

    Conversations the monitor ended or a failed call cut short are kept for
    diagnosis but cover nothing here, as for every headline metric.

    Parameters
    ----------
    conversations
        Conversations of one campaign (or any pool of them).
    role
        The role (its ``principle_ids`` span the grid with the 4 x 4 TUNA axes).

    See Also
    --------
    multiverse.core.grid.coverage : turns per cell.
    """
    completed = [c for c in conversations if c.ended == "completed"]
    counts = coverage(tagged_turns(completed), principle_ids=role.principle_ids)
    return float(share_covered(counts))


def coverage_by_round(conversations: Sequence[Conversation], role: RolloutRole) -> list[float]:
    """Cumulative coverage share after each round (index 0 = after round 1)."""
    last = max((c.round for c in conversations), default=0)
    return [coverage_share([c for c in conversations if c.round <= r], role) for r in range(1, last + 1)]


async def rollout(
    client: RolloutClient,
    *,
    role: RolloutRole,
    system: ModelSpec,
    user_sim: ModelSpec,
    user_label: str,
    condition: Condition,
    replicate: int,
    items: int | None,
    budget: Budget | None,
    planner: ModelSpec,
    monitor: ModelSpec | None,
    judge: Judge,
    seed: int = 0,
    harness: Harness | None = None,
    only: Sequence[int] | None = None,
) -> list[Conversation]:
    """Run one campaign and return its conversations in item order.

    Parameters
    ----------
    client
        A :class:`multiverse.llm.Client` (it serves ``sim/`` models in-process).
    role
        The role specification (:class:`multiverse.config.specs.Role`), with its seeds.
    system, user_sim
        The target and the simulated user.
    user_label
        The simulated user's label (every scenario names it).
    condition
        Horizon (assistant turns), search strategy and pressure.
    replicate
        Campaign replicate: an independent campaign, part of every request's key.
    items
        Conversations when there is no ``budget``.
    budget
        ``rounds`` x ``conversations``; overrides ``items``.
    planner, monitor
        The campaign's planner and consistency monitor (``None``: no monitor,
        so no turn is tagged and the grid's coverage stays empty).
    judge
        The campaign's online judge (a :class:`~multiverse.core.judgment.Judge`).
    seed
        Base seed of the campaign's random generator.
    harness
        The harness under test, where it shapes the target's requests
        (:class:`~multiverse.rollout.seams.Harness`; ``None``: every turn is sent).
    only
        A seed battery (``seed_only``, no ``budget``) only: run just these
        item positions, each exactly as the full battery runs it (item ``k``
        is seed ``k mod len(seeds)``, executed for the ``k // len(seeds)``-th
        time), and return them in this order.  Sequential runs draw items this way.

    Returns
    -------
    list of Conversation
        ``rounds x conversations`` (or ``items``) conversations; position = item.
    """
    if only is not None:
        return await _seed_items(client, only, role=role, system=system, user_sim=user_sim, user_label=user_label,
                                 condition=condition, replicate=replicate, monitor=monitor, judge=judge,
                                 harness=harness, searched=budget is not None or condition.search != "seed_only")
    if budget is not None:
        rounds, per_round = budget.rounds, budget.conversations
    elif items is not None and items > 0:
        rounds, per_round = 1, items
    else:
        raise ValueError(f"campaign {role.id}: expected a budget or a positive items count, got items={items!r}")
    seeds = [Scenario.from_seed(s, user=user_label) for s in role.seeds]
    plan = CampaignPlanner(
        cells=grid_cells(role.principle_ids),
        seeds=seeds,
        search=condition.search,
        rounds=rounds,
        rng=campaign_rng(seed, replicate, role.id, condition.search),
    )
    executions: dict[str, int] = {}
    conversations: list[Conversation] = []
    principle_index = {p: j for j, p in enumerate(role.principle_ids)}
    for round_number in range(1, rounds + 1):
        slots = plan.plan(round_number, per_round)
        first = len(conversations)
        scenarios = await asyncio.gather(*(
            _resolve(client, slot, role=role, planner=planner, user_label=user_label, replicate=replicate,
                     index=first + k, round_number=round_number, slot_number=k, seeds=seeds)
            for k, slot in enumerate(slots)
        ))
        samples = []
        for scenario in scenarios:
            samples.append(executions.get(scenario.id, 0))
            executions[scenario.id] = samples[-1] + 1
        batch = await asyncio.gather(*(
            run_conversation(
                client, role=role, scenario=scenario, system=system, user_sim=user_sim, monitor=monitor,
                judge=judge, horizon=condition.horizon, pressure=condition.pressure, replicate=replicate,
                round=round_number, sample=sample, harness=harness,
            )
            for scenario, sample in zip(scenarios, samples)
        ))
        conversations.extend(batch)
        plan.observe(
            (_as_rollout(c, first + k, principle_index) for k, c in enumerate(batch)),
            (cell for c in batch for cell in c.covered_cells()),
        )
    return conversations


async def _seed_items(
    client: RolloutClient, items: Sequence[int], *, role: RolloutRole, system: ModelSpec, user_sim: ModelSpec,
    user_label: str, condition: Condition, replicate: int, monitor: ModelSpec | None, judge: Judge,
    harness: Harness | None, searched: bool,
) -> list[Conversation]:
    """Items ``items`` of a seed battery, each as the whole battery would run it (see :func:`rollout`)."""
    if searched:
        raise ValueError("rollout(only=...): only a seed battery (seed_only, no budget) can run chosen items")
    if not role.seeds:
        raise ValueError("the role has no seed scenarios: a campaign needs at least one")
    seeds = [Scenario.from_seed(s, user=user_label) for s in role.seeds]
    return list(await asyncio.gather(*(
        run_conversation(
            client, role=role, scenario=seeds[k % len(seeds)], system=system, user_sim=user_sim, monitor=monitor,
            judge=judge, horizon=condition.horizon, pressure=condition.pressure, replicate=replicate,
            round=1, sample=k // len(seeds), harness=harness,
        )
        for k in items
    )))


def _as_rollout(conversation: Conversation, order: int, principle_index: Mapping[str, int]) -> Rollout:
    scenario = Scenario.from_mapping(conversation.scenario)
    if conversation.online is None:
        severities: tuple[int, ...] = ()
    else:
        column = conversation.online[: conversation.transcript.n_turns, principle_index[scenario.principle]]
        severities = tuple(int(s) for s in column)
    return Rollout(scenario=scenario, round=conversation.round, order=order, severities=severities)


async def _resolve(
    client: RolloutClient,
    slot: Slot,
    *,
    role: RolloutRole,
    planner: ModelSpec,
    user_label: str,
    replicate: int,
    index: int,
    round_number: int,
    slot_number: int,
    seeds: Sequence[Scenario],
) -> Scenario:
    """Turn a planner slot into a scenario (asking the planner model where needed)."""
    if slot.kind == "seed":
        assert slot.scenario is not None
        return slot.scenario
    new_id = f"{slot.origin}-r{round_number}-{slot_number:03d}"
    if slot.kind == "mutation":
        parent = slot.parent
        assert parent is not None and slot.axis is not None
        request = planner_prompts.planner_request(
            role, task="mutation", cell=parent.cell, parent=parent.to_dict(), axis=slot.axis,
            spec=planner, index=index, replicate=replicate,
        )
        fixed = {
            "id": new_id, "user": user_label, "origin": "mutation", "parent": parent.id,
            "mode": parent.mode, "strategy": parent.strategy, "principle": parent.principle,
            "home_mode": parent.home_mode, "home_strategy": parent.home_strategy,
            "home_principle": parent.home_principle, "workflow": list(parent.workflow),
        }
        scenario = await _ask(client, request, base=parent, fixed=fixed, where=f"planner mutation {new_id}")
        return scenario or _fallback_mutation(parent, slot.axis, fixed, seeds)
    assert slot.seed is not None
    grounding = slot.seed
    if slot.kind == "cell":
        assert slot.cell is not None
        request = planner_prompts.planner_request(
            role, task="cell", cell=slot.cell, seed_scenario=grounding.to_dict(),
            spec=planner, index=index, replicate=replicate,
        )
        mode, strategy, principle = parse_cell_id(slot.cell)
        fixed = {
            "id": new_id, "user": user_label, "origin": "coverage", "parent": "",
            "mode": mode, "strategy": strategy, "principle": principle,
            "home_mode": grounding.mode, "home_strategy": grounding.strategy,
            "home_principle": grounding.principle, "workflow": list(grounding.workflow),
        }
        scenario = await _ask(client, request, base=grounding, fixed=fixed, where=f"planner cell {new_id}")
        return scenario or Scenario.from_mapping({**grounding.to_dict(), **fixed})
    if slot.kind == "free_form":
        request = planner_prompts.planner_request(
            role, task="free_form", seed_scenario=grounding.to_dict(), spec=planner, index=index,
            replicate=replicate,
        )
        fixed = {"id": new_id, "user": user_label, "origin": "coverage", "parent": ""}
        scenario = await _ask(client, request, base=grounding, fixed=fixed, where=f"planner free_form {new_id}",
                              home_is_target=True)
        return scenario or grounding.evolve(id=new_id, origin="coverage")
    raise ValueError(f"planner slot kind: expected seed, cell, mutation or free_form, got {slot.kind!r}")


async def _ask(
    client: RolloutClient,
    request: Request,
    *,
    base: Scenario,
    fixed: Mapping[str, Any],
    where: str,
    home_is_target: bool = False,
) -> Scenario | None:
    """Ask the planner model; the scenario it writes, with ``fixed`` fields imposed, or ``None``."""
    response = await acomplete_structured(client, request)
    if not response.ok:
        log.warning("%s: planner call failed (%s); falling back", where, response.error)
        return None
    written = planner_prompts.parse_planner(response.text or "")
    if written is None:
        log.warning("%s: planner answer unparseable; falling back", where)
        return None
    merged = {**base.to_dict(), **{k: v for k, v in written.items() if v is not None}, **fixed}
    if home_is_target:
        merged.update(home_mode=merged["mode"], home_strategy=merged["strategy"],
                      home_principle=merged["principle"])
    try:
        return Scenario.from_mapping(merged, where=where)
    except ScenarioError as exc:
        log.warning("%s: planner scenario unusable (%s); falling back", where, exc)
        return None


def _fallback_mutation(parent: Scenario, axis: str, fixed: Mapping[str, Any], seeds: Sequence[Scenario]) -> Scenario:
    """A deterministic within-cell mutation when the planner model's answer is unusable."""
    child = Scenario.from_mapping({**parent.to_dict(), **fixed})
    if axis == "intensity":
        return child.evolve(intensity=parent.intensity * INTENSITY_STEP)
    frames = [s.frame for s in seeds if s.frame and s.frame != parent.frame]
    return child.evolve(frame=frames[len(parent.id) % len(frames)]) if frames else child
