"""What a run would do, found without calling anything: layer sizes, calls, cache, cost.

Calls already cached are counted exactly by replaying the run against the
cache alone: every request is looked up and, when present, served from the
cache; the first request the cache lacks stops its rollout (what follows
depends on its answer), so nothing is ever called.  Calls needed are exact for
rollouts the cache answers completely and estimated
(:func:`multiverse.plan.estimate_unit_calls`) for the others.  Cost is priced from litellm's bundled price table,
read as data (:mod:`multiverse.llm.prices`: litellm itself is not imported); ``sim/`` models cost nothing and
a model without a price has cost ``None``.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from multiverse.config.experiment import Experiment
from multiverse.plan import Plan, estimate_unit_calls, make_plan

__all__ = ["PROMPT_TOKENS_PER_CALL", "COMPLETION_TOKENS_PER_CALL", "count_calls", "estimate_cost_usd", "plan_report"]

PROMPT_TOKENS_PER_CALL = 1500
"""Assumed prompt tokens per call, for the cost estimate."""
COMPLETION_TOKENS_PER_CALL = 300
"""Assumed completion tokens per call, for the cost estimate."""


class _Uncached(Exception):
    """A request the cache does not hold: the replay stops here."""


class _CacheOnly:
    """A client stand-in that answers only from the cache and counts the distinct requests it served."""

    def __init__(self, client: Any, seen: set[str]):
        self._client = client
        self._seen = seen
        self.hits: Counter[str] = Counter()

    @property
    def sim(self) -> Any:
        """The offline world of the wrapped client (campaigns ask it about planted harness defects)."""
        return self._client.sim

    def key(self, request: Any) -> str:
        """The request's cache key (assistant turns record it as their ``request_id``)."""
        return self._client.key(request)

    async def acomplete(self, request: Any) -> Any:
        key = self._client.key(request)
        if key not in self._client.cache:
            raise _Uncached(request.model)
        if key not in self._seen:
            self._seen.add(key)
            self.hits[request.model] += 1
        return await self._client.acomplete(request)

    async def agather(self, requests: Iterable[Any]) -> list[Any]:
        results = await asyncio.gather(*(self.acomplete(r) for r in requests), return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                raise result
        return list(results)


def count_calls(plan: Plan, roles: Mapping[str, Any], *, cache: str | Path) -> tuple[Counter[str], Counter[str]]:
    """Calls a plan needs and calls the cache already holds, model -> count; nothing is called.

    A rollout unit the cache answers completely contributes its exact counts;
    any other unit contributes the estimate of :func:`multiverse.plan.estimate_unit_calls`
    (or what the cache served, when that is more).  The canaries (the
    experiment's ``canaries:``) count the same way: exactly when cached, else
    one call per canary and model judge.
    """
    from multiverse._run.canaries import canary_call_estimate, canary_judging, judge_canaries
    from multiverse._run.execute import judge_unit, make_client, run_sync, run_unit
    from multiverse.judge.build import make_judges

    judges = make_judges(plan.experiment.judges)

    needed: Counter[str] = Counter()
    cached: Counter[str] = Counter()
    seen: set[str] = set()

    async def one(client: Any, unit: Any) -> None:
        replay = _CacheOnly(client, seen)
        try:
            role = roles[unit.role]
            await judge_unit(replay, plan, unit, role, judges, await run_unit(replay, plan, unit, role, judges))
            complete = True
        except _Uncached:
            complete = False
        cached.update(replay.hits)
        if complete:
            needed.update(replay.hits)
            return
        estimate: Counter[str] = Counter()
        for layer in estimate_unit_calls(plan, unit).values():
            estimate.update(layer)
        needed.update(estimate | replay.hits)

    async def canaries(client: Any) -> None:
        if plan.experiment.canaries is None:
            return
        replay = _CacheOnly(client, seen)
        try:
            await judge_canaries(canary_judging(plan.experiment), [roles[r] for r in plan.experiment.roles], client=replay,
                                 per_principle=plan.experiment.canaries.per_principle)
            complete = True
        except _Uncached:
            complete = False
        cached.update(replay.hits)
        needed.update(replay.hits if complete else canary_call_estimate(plan.experiment, roles) | replay.hits)

    async def replay_all(client: Any) -> None:
        await asyncio.gather(canaries(client), *(one(client, unit) for unit in plan.units()))

    with make_client(plan.experiment, cache, offline=True, roles=roles) as client:
        run_sync(replay_all(client))
    return needed, cached


def estimate_cost_usd(model: str, calls: int) -> float | None:
    """Estimated cost of ``calls`` calls to ``model`` (``None`` when its price is unknown)."""
    from multiverse.llm.prices import model_entry

    if model.startswith("sim/") or calls == 0:
        return 0.0
    entry = model_entry(model)
    if not entry or "input_cost_per_token" not in entry:
        return None
    per_call = (
        PROMPT_TOKENS_PER_CALL * float(entry["input_cost_per_token"])
        + COMPLETION_TOKENS_PER_CALL * float(entry.get("output_cost_per_token", 0.0))
    )
    return calls * per_call


def plan_report(experiment: Experiment, *, cache: str | Path | None = None) -> dict[str, Any]:
    """Layer sizes, calls needed and cached, and estimated cost per model.

    Parameters
    ----------
    experiment
        The experiment.
    cache
        The cache folder (default as :func:`multiverse._run.run`).

    Returns
    -------
    dict
        ``layers`` (cells per layer), ``models`` (model -> ``needed``,
        ``cached``, ``to_call``, ``cost_usd``), the totals ``needed``,
        ``cached``, ``to_call``, ``cost_usd`` (``None`` if any price is unknown),
        ``missing_credentials`` (model -> environment variable names its
        provider needs and lacks, for models with calls to make; never values)
        and ``model_problems`` (model -> why it cannot be called at all:
        litellm not installed, no provider for the model string).
    """
    from multiverse._run.runner import load_roles, resolve_cache

    plan = make_plan(experiment)
    needed, cached = count_calls(plan, load_roles(experiment), cache=resolve_cache(experiment, cache))
    models = {}
    for model in sorted(needed):
        to_call = needed[model] - cached[model]
        models[model] = {
            "needed": needed[model],
            "cached": cached[model],
            "to_call": to_call,
            "cost_usd": estimate_cost_usd(model, to_call),
        }
    costs = [m["cost_usd"] for m in models.values()]
    from multiverse.llm.credentials import check_credentials, model_problem

    specs = [spec for _, spec in experiment.named_models() if models.get(spec.model, {}).get("to_call")]
    problems = {spec.model: model_problem(spec) for spec in specs}
    return {
        "missing_credentials": {model: list(names) for model, names in check_credentials(specs).items()},
        "model_problems": {model: why for model, why in problems.items() if why is not None},
        "experiment": experiment.name,
        "plan_digest": plan.digest,
        "layers": plan.layer_sizes(),
        "models": models,
        "needed": sum(m["needed"] for m in models.values()),
        "cached": sum(m["cached"] for m in models.values()),
        "to_call": sum(m["to_call"] for m in models.values()),
        "cost_usd": None if any(c is None for c in costs) else sum(costs),
    }
