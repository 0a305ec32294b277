"""What a run would do, found without calling anything: layer sizes, calls, cache, cost.

Calls needed come from :func:`multiverse.plan.estimate_calls`.  Calls already
cached are counted exactly by replaying the run against the cache alone: every
request is looked up and, when present, served from the cache; the first
request the cache lacks stops its rollout (what follows depends on its answer),
so nothing is ever called.  Cost is priced from litellm's bundled price table,
read as data (litellm itself is not imported); ``sim/`` models cost nothing and
a model without a price has cost ``None``.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
from collections import Counter
from collections.abc import Iterable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from multiverse.experiment import Experiment
from multiverse.plan import Plan, estimate_calls, make_plan

__all__ = ["PROMPT_TOKENS_PER_CALL", "COMPLETION_TOKENS_PER_CALL", "plan_report", "count_cached_calls"]

PROMPT_TOKENS_PER_CALL = 1500
"""Assumed prompt tokens per call, for the cost estimate."""
COMPLETION_TOKENS_PER_CALL = 300
"""Assumed completion tokens per call, for the cost estimate."""
PRICE_TABLE = "model_prices_and_context_window_backup.json"


class _Uncached(Exception):
    """A request the cache does not hold: the replay stops here."""


class _CacheOnly:
    """A client stand-in that answers only from the cache and counts what it served."""

    def __init__(self, client: Any):
        self._client = client
        self.hits: Counter[str] = Counter()

    async def acomplete(self, request: Any) -> Any:
        if not self._client.is_cached(request):
            raise _Uncached(request.model)
        self.hits[request.model] += 1
        return await self._client.acomplete(request)

    async def agather(self, requests: Iterable[Any]) -> list[Any]:
        results = await asyncio.gather(*(self.acomplete(r) for r in requests), return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                raise result
        return list(results)


def count_cached_calls(plan: Plan, roles: Mapping[str, Any], *, cache: str | Path) -> dict[str, int]:
    """Calls of a plan the cache already holds, model -> count (nothing is called)."""
    from multiverse.run.execute import make_client, run_unit

    async def replay(client: _CacheOnly) -> None:
        async def one(unit: Any) -> None:
            try:
                await run_unit(client, plan, unit, roles[unit.role])
            except _Uncached:
                pass

        await asyncio.gather(*(one(unit) for unit in plan.units()))

    with make_client(plan.experiment, cache, offline=True) as client:
        cache_only = _CacheOnly(client)
        asyncio.run(replay(cache_only))
    return dict(cache_only.hits)


@lru_cache(maxsize=1)
def _prices() -> dict[str, Any]:
    spec = importlib.util.find_spec("litellm")
    if spec is None or spec.origin is None:
        return {}
    path = Path(spec.origin).parent / PRICE_TABLE
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def estimate_cost_usd(model: str, calls: int) -> float | None:
    """Estimated cost of ``calls`` calls to ``model`` (``None`` when its price is unknown)."""
    if model.startswith("sim/") or calls == 0:
        return 0.0
    prices = _prices()
    entry = prices.get(model) or prices.get(model.partition("/")[2])
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
        The cache folder (default as :func:`multiverse.run.run`).

    Returns
    -------
    dict
        ``layers`` (cells per layer), ``models`` (model -> ``needed``,
        ``cached``, ``to_call``, ``cost_usd``), and the totals ``needed``,
        ``cached``, ``to_call``, ``cost_usd`` (``None`` if any price is unknown).
    """
    from multiverse.run.runner import load_roles, resolve_cache

    plan = make_plan(experiment)
    estimate = estimate_calls(plan)
    needed: Counter[str] = Counter()
    for layer in estimate.values():
        needed.update(layer)
    cached = count_cached_calls(plan, load_roles(experiment), cache=resolve_cache(experiment, cache))
    models = {}
    for model in sorted(set(needed) | set(cached)):
        total = max(needed[model], cached.get(model, 0))
        to_call = total - cached.get(model, 0)
        models[model] = {
            "needed": total,
            "cached": cached.get(model, 0),
            "to_call": to_call,
            "cost_usd": estimate_cost_usd(model, to_call),
        }
    costs = [m["cost_usd"] for m in models.values()]
    return {
        "experiment": experiment.name,
        "plan_digest": plan.digest,
        "layers": plan.layer_sizes(),
        "models": models,
        "needed": sum(m["needed"] for m in models.values()),
        "cached": sum(m["cached"] for m in models.values()),
        "to_call": sum(m["to_call"] for m in models.values()),
        "cost_usd": None if any(c is None for c in costs) else sum(costs),
    }
