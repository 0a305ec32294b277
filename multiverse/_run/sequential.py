"""Sequential runs: items added in batches until a declared precision is met (``run --until-precision``).

Each batch is an ordinary run of the experiment's plan restricted to the
batch's items (:func:`restrict_plan`): the same cached, kill-safe unit
execution as :func:`multiverse.run`, so every answered call is in the cache
the moment it returns.  The design (which items to draw, the confidence
sequence, when to stop) is handed in: :class:`multiverse.analysis.sequential.SequentialDesign`
is the one the command uses; this layer sits below the analyses and only
needs its methods (:class:`Design`).  The design is deterministic given the
experiment's seed and the answers, so a run that was killed or stopped by a
spend cap resumes by running again: the batches it finished come back from
the cache (0 calls), the batch it was in continues where its calls stopped,
and the final cube is the same.  The final cube is an ordinary run of every
drawn item, written as :func:`multiverse.run` writes one, with the stopping
record under ``run.json``'s ``sequential`` key.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import xarray as xr

from multiverse._run.assemble import assemble_cube, provenance
from multiverse._run.execute import execute_units
from multiverse._run.runner import _run_streamed, _run_summary, merge_summaries, prepare_run, resolve_experiment
from multiverse._run.stream import RunTally
from multiverse.config.experiment import Experiment
from multiverse.config.precision import Precision
from multiverse.llm.redact import redact_tree
from multiverse.plan import Plan
from multiverse.scoring import score_bounds

__all__ = ["Design", "cell_label", "contrast_values", "restrict_plan", "run_until_precision"]


class Design(Protocol):
    """What a sequential run asks of its design (see :class:`multiverse.analysis.sequential.SequentialDesign`)."""

    def next_batch(self) -> Sequence[Any]:
        """The next draws (objects with ``cell`` and ``item``); empty when the run is done."""

    def observe(self, values: Mapping[tuple[str, int], tuple[float, float]]) -> dict[str, Any]:
        """Absorb the batch's contrasts ``(cell, item) -> (low, high)``; return the look's record."""

    def drawn_items(self) -> dict[str, list[int]]:
        """Cell -> items drawn so far."""

    def record(self) -> dict[str, Any]:
        """The stopping record."""


def cell_label(role: str, user_sim: str, condition: str) -> str:
    """A cell's name in the ``precision:`` block: ``role/user_sim/condition``."""
    return f"{role}/{user_sim}/{condition}"


def restrict_plan(plan: Plan, items: Mapping[str, Iterable[int]], *, systems: Sequence[str]) -> Plan:
    """The plan with only ``items`` of each cell kept, for ``systems`` only (every other cell excluded).

    Excluded cells have the id ``""``, as exclusions have; the ids of kept
    cells are unchanged, so their calls are the full plan's calls.
    """
    keep = np.zeros(plan.rollout.shape, dtype=bool)
    dims = plan.rollout.dims
    index = {dim: {label: i for i, label in enumerate(plan.rollout[dim].values.tolist())} for dim in dims}
    for system in systems:
        for cell, chosen in items.items():
            role, user_sim, condition = cell.split("/")
            for item in chosen:
                at = dict(system=system, role=role, user_sim=user_sim, condition=condition, item=int(item))
                position = tuple(index[d][at[d]] if d in at else slice(None) for d in dims)
                keep[position] = True
    rollout = plan.rollout.where(xr.DataArray(keep, dims=dims, coords=plan.rollout.coords), "")
    judge_keep = xr.DataArray(keep, dims=dims, coords=plan.rollout.coords).broadcast_like(plan.judge)
    judge = plan.judge.where(judge_keep.transpose(*plan.judge.dims), "")
    digest = "sequential:" + plan.digest + ":" + str(int(keep.sum()))
    return replace(plan, rollout=rollout.astype(object), judge=judge.astype(object), digest=digest)


def contrast_values(cube: xr.Dataset, precision: Precision, draws: Iterable[Any]) -> dict[tuple[str, int], tuple[float, float]]:
    """``(cell, item) -> (low, high)`` of ``value(a) - value(b)``, averaged over replicates.

    Values are the worst-case bounds of :func:`multiverse.scoring.score_bounds`
    (equal for a decided verdict); a value the rule cannot give reads as [0, 1].
    """
    bounds = score_bounds(cube, standards=[precision.standard], rules=[precision.rule])
    a, b = precision.contrast
    picked = {"judge": precision.judge, "standard": precision.standard, "rule": precision.rule}
    lower = bounds["lower"].sel(picked)
    upper = bounds["upper"].sel(picked)
    out = {}
    for draw in draws:
        role, user_sim, condition = draw.cell.split("/")
        at = dict(role=role, user_sim=user_sim, condition=condition, item=draw.item)
        lo_a = np.nan_to_num(lower.sel(at).sel(system=a).values.astype(float), nan=0.0)
        hi_a = np.nan_to_num(upper.sel(at).sel(system=a).values.astype(float), nan=1.0)
        lo_b = np.nan_to_num(lower.sel(at).sel(system=b).values.astype(float), nan=0.0)
        hi_b = np.nan_to_num(upper.sel(at).sel(system=b).values.astype(float), nan=1.0)
        out[(draw.cell, draw.item)] = (float(np.mean(lo_a - hi_b)), float(np.mean(hi_a - lo_b)))
    return out


def run_until_precision(
    experiment: Experiment | str | Path,
    *,
    design: Callable[[Experiment, Plan], Design],
    out: str | Path | None = None,
    cache: str | Path | None = None,
    backend: str | None = None,
    n_jobs: int | None = None,
    offline: bool = False,
    replay: bool = True,
    max_calls: int | None = None,
    max_cost_usd: float | None = None,
    require_judge_signal: bool = False,
    on_look: Callable[[Mapping[str, Any]], None] | None = None,
) -> xr.Dataset:
    """Run an experiment's items in batches until its ``precision:`` target is met or its budget is spent.

    Parameters
    ----------
    experiment
        An experiment with a ``precision:`` block, or its file.
    design
        A function ``(experiment, plan) -> design`` making the sequential design
        (e.g. :meth:`multiverse.analysis.sequential.SequentialDesign.for_experiment`).
    out, cache, backend, n_jobs, offline, replay, max_calls, max_cost_usd, require_judge_signal
        As in :func:`multiverse.run`: every batch's units (and the final
        cube's) are spread over ``backend``'s workers; the spend caps count every batch, and
        the canaries (when the experiment judges them) are judged once, before
        the first batch.
    on_look
        Called with each look's record as it is made (progress lines).

    Returns
    -------
    xarray.Dataset
        The cube of every drawn item; ``attrs["run"]["sequential"]`` is the
        stopping record (the target, every look with its interval and
        allocation, why the run stopped).

    Raises
    ------
    multiverse.llm.RunStopped
        When a spend cap or an offline miss stopped a batch; rerun to resume.
    multiverse.cube.canaries.NoJudgeSignal
        With ``require_judge_signal``, if a judge has no signal on its canaries.
    """
    started = time.perf_counter()
    e = resolve_experiment(experiment)
    if e.precision is None:
        raise ValueError(f"{e.source or e.name}: precision: a sequential run needs the experiment's precision: block")
    ready = prepare_run(e, cache=cache, out=out, backend=backend, offline=offline, max_calls=max_calls,
                        max_cost_usd=max_cost_usd, require_judge_signal=require_judge_signal)
    e, plan, roles, cache_dir = ready.experiment, ready.plan, ready.roles, ready.cache_dir
    canaries, canary_calls = ready.canaries, ready.canary_calls
    chosen = design(e, plan)
    options = dict(cache=cache_dir, backend=backend, n_jobs=n_jobs, offline=offline, replay=replay)
    summaries: list[dict[str, Any]] = [canary_calls] if canary_calls is not None else []
    totals = merge_summaries(summaries)
    spent, spent_usd = totals["calls"], totals["cost_usd"]
    while True:
        draws = chosen.next_batch()
        if not draws:
            break
        batch: dict[str, list[int]] = {}
        for draw in draws:
            batch.setdefault(draw.cell, []).append(draw.item)
        batch_plan = restrict_plan(plan, batch, systems=e.precision.contrast)
        if e.max_calls is not None or e.max_cost_usd is not None:  # caps count the whole run; batches have own clients
            batch_plan = replace(batch_plan, experiment=replace(
                e, max_calls=None if e.max_calls is None else max(e.max_calls - spent, 0),
                max_cost_usd=None if e.max_cost_usd is None else max(e.max_cost_usd - spent_usd, 0.0)))
        results, batch_summaries = execute_units(batch_plan, roles, **options)
        summaries += batch_summaries
        totals = merge_summaries(summaries)
        spent, spent_usd = totals["calls"], totals["cost_usd"]
        records = [record for result in results for record in result.records]
        cube = assemble_cube(batch_plan, roles, records, attrs={})
        look = chosen.observe(contrast_values(cube, e.precision, draws))
        look["calls_spent"] = spent
        if on_look is not None:
            on_look(look)
    final = restrict_plan(plan, chosen.drawn_items(), systems=e.precision.contrast)
    extra = {"sequential": chosen.record()}
    attrs = redact_tree({**provenance(final, roles), **({"canaries": canaries} if canaries else {})})
    if out is not None:
        return _run_streamed(final, roles, Path(out), attrs=attrs, started=started, options=options,
                             window=64, canaries=canaries, judged=summaries, extra=extra)
    results, final_summaries = execute_units(final, roles, **options)
    tally = RunTally()
    for result in results:
        tally.add(result)
    records = [record for result in results for record in result.records]
    cube = assemble_cube(final, roles, records, attrs=attrs)
    info = _run_summary(final, tally, merge_summaries([*summaries, *final_summaries]), time.perf_counter() - started,
                        canaries)
    cube.attrs["run"] = redact_tree({**info, **extra})
    return cube


