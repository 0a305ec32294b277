"""Running a plan's units: each unit's rollout, then every judge on its transcripts.

One *unit* (a seed battery or a campaign of one system, role, user simulator,
condition and replicate) runs as one coroutine on a :class:`~multiverse.llm.Client`:
the rollout (:func:`run_unit`), then every judge of the experiment
(:func:`judge_unit`) in the one place a run judges (:func:`judge_records`, where
the roles' canaries are judged too).  The result is plain data (:class:`ConversationRecord`),
so units can run in one event loop, in threads, in processes or on a dask/ray
cluster through joblib and be assembled the same way.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
from collections.abc import Callable, Coroutine, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from multiverse._run.backends import check_backend
from multiverse._run.records import ConversationRecord, UnitResult, record_judgment, store_judgment
from multiverse.config.experiment import Experiment
from multiverse.core.choices import ModelSpec
from multiverse.core.judgment import REASON_CODES, Judge, judge_transcripts
from multiverse.core.schema import MISSING
from multiverse.core.transcript import Transcript
from multiverse.judge.build import make_judges
from multiverse.judge.canaries import canary_table
from multiverse.plan import Plan, Unit, make_plan

__all__ = ["execute_units", "judge_records", "judge_unit", "make_client", "run_or_replay", "run_sync", "run_unit"]

T = TypeVar("T")


def run_sync(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to completion from synchronous code, also inside a running event loop.

    Notebooks run an event loop in the main thread, where :func:`asyncio.run`
    refuses to start; the coroutine then runs in a fresh loop on a worker thread.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="multiverse-run") as pool:
        return pool.submit(asyncio.run, coroutine).result()


def make_client(
    experiment: Experiment, cache: str | Path, *, offline: bool = False, observer: Any = None,
    roles: Mapping[str, Any] | None = None,
) -> Any:
    """A :class:`~multiverse.llm.Client` with the experiment's limits and offline world (and ``observer``).

    The offline world knows the canaries of ``roles`` (its judges look them up by their text's digest).
    """
    from multiverse.llm import Client, RateLimit
    from multiverse.sim import SimWorld

    limits = {
        pattern: value if isinstance(value, RateLimit) else RateLimit(**dict(value))
        for pattern, value in experiment.rate_limits.items()
    }
    return Client(
        cache=cache,
        offline=offline,
        concurrency=experiment.concurrency,
        rate_limits=limits or None,
        max_calls=experiment.max_calls,
        max_cost_usd=experiment.max_cost_usd,
        sim=SimWorld.from_config(
            dict(experiment.sim) if experiment.sim is not None else None, canaries=canary_table((roles or {}).values())
        ),
        observer=observer,
        **({"timeout_s": experiment.timeout_s} if experiment.timeout_s is not None else {}),
    )


def _truth(system: ModelSpec, transcript: Transcript, principle_ids: Sequence[str]) -> np.ndarray | None:
    if not system.model.startswith("sim/target-"):
        return None
    from multiverse.sim import read_truth

    rows = []
    for event in transcript.assistant_events:
        found = read_truth(event.text, principle_ids)
        rows.append([found.get(p, MISSING) for p in principle_ids])
    return np.asarray(rows, dtype=np.int8).reshape(len(rows), len(principle_ids))


async def run_unit(client: Any, plan: Plan, unit: Unit, role: Any, judges: Mapping[str, Judge]) -> UnitResult:
    """Roll out one unit (or read its recorded conversations): the records, not yet judged.

    The campaign's online judge is the experiment's judge of that label (the
    same :class:`~multiverse.core.judgment.Judge` object); its requests are
    served from the cache when :func:`judge_unit` judges the finished transcripts.
    """
    from multiverse.rollout import coverage_share, rollout

    e = plan.experiment
    system = e.systems[unit.system]
    if e.rollouts is not None:
        conversations = _recorded(e, unit)
    else:
        only = None if unit.items == tuple(range(e.items_per_cell)) else unit.items  # a sequential run's batch
        found = await rollout(
            client,
            role=role,
            system=system,
            user_sim=e.user_sims[unit.user_sim],
            user_label=unit.user_sim,
            condition=e.conditions[unit.condition],
            replicate=unit.replicate,
            items=None if e.budget is not None else e.items_per_cell,
            budget=e.budget,
            planner=e.campaign.planner,
            monitor=e.campaign.monitor,
            judge=judges[e.campaign.judge],
            seed=e.seed,
            harness=client.sim if system.is_sim else None,
            only=only,
        )
        conversations = dict(enumerate(found)) if only is None else dict(zip(only, found))
    kept = [(item, conversations[item]) for item in unit.items if item in conversations]
    principle_ids = tuple(role.principle_ids)
    records = [
        ConversationRecord(
            unit=unit.key,
            item=item,
            transcript=conversation.transcript.to_dict(),
            tags=[tuple(tag) for tag in conversation.tags],
            truth=_truth(system, conversation.transcript, principle_ids),
        )
        for item, conversation in kept
    ]
    coverage = coverage_share([c for _, c in kept], role) if e.is_campaign and kept else None
    return UnitResult(unit.key, records, coverage, 0)


def _recorded(e: Experiment, unit: Unit) -> dict[int, Any]:
    """Item -> the recorded conversation of a ``rollouts:`` experiment's unit (nothing generated)."""
    from multiverse.config.recorded import read_rollouts
    from multiverse.rollout.conversation import Conversation

    assert e.rollouts is not None
    recorded = read_rollouts(e.resolve(e.rollouts)).select(unit.system, unit.role)
    return {item: Conversation(t, t.scenario, (), None, 1) for item, t in recorded.items()}


async def judge_unit(
    client: Any,
    plan: Plan,
    unit: Unit,
    role: Any,
    judges: Mapping[str, Judge],
    result: UnitResult,
    *,
    known: Sequence[str] = (),
) -> UnitResult:
    """Every judge of the experiment on a unit's conversations, each only on those the plan has for it.

    The unit's horizon, replicate, system and plan go to :func:`judge_records`,
    the one place a run judges; the judgments are written into the records,
    which cube assembly reads as they are.

    Parameters
    ----------
    judges
        Label -> judge, for every judge of the experiment.
    result
        The unit's records.
    known
        Labels whose judgments the records already hold (a replay's model
        judges): they are not judged again, and panels read them.
    """
    e = plan.experiment
    planned = plan.unit_judge(unit).values != ""
    column = {label: j for j, label in enumerate(e.judges)}
    flags = {label: [bool(planned[r.item, column[label]]) for r in result.records] for label in judges}
    unparseable = await judge_records(
        client, result.records, role, judges, horizon=e.conditions[unit.condition].horizon,
        replicate=unit.replicate, planned=flags, known=known, system=e.systems.get(unit.system),
    )
    return UnitResult(result.unit, result.records, result.coverage, unparseable)


async def judge_records(
    client: Any,
    records: Sequence[ConversationRecord],
    role: Any,
    judges: Mapping[str, Judge],
    *,
    horizon: int,
    replicate: int = 0,
    planned: Mapping[str, Sequence[bool]] | None = None,
    known: Sequence[str] = (),
    system: ModelSpec | None = None,
) -> int:
    """Judges on conversation records of one role, their judgments stored into the records: the one place a run judges.

    Model judges, pairwise judges, deterministic judges, judges of kinds users
    registered, probed judges (the order probe of a pairwise judge too) and
    panels all go through one
    :func:`~multiverse.core.judgment.judge_transcripts` call (panels after their
    members).  A plan's units are judged here (:func:`judge_unit`), and so are
    the roles' canaries (:mod:`multiverse._run.canaries`): a judge reads a
    canary exactly as it reads any conversation.

    Parameters
    ----------
    records
        The conversations; each judge's judgment is stored into its record.
    horizon
        Assistant turns judged.
    replicate
        Replicate index of the judge requests.
    planned
        Label -> one flag per record (default: every record for every judge).
    known
        Labels whose judgments the records already hold: not judged again; panels read them.
    system
        The model that wrote the judged replies, when one did.

    Returns
    -------
    int
        Judgments with a reply that did not parse (the records' unusable outputs).
    """
    principle_ids = tuple(role.principle_ids)
    held = {label: [record_judgment(r, label, horizon, len(principle_ids)) for r in records] for label in known}
    judged = await judge_transcripts(
        {label: judge for label, judge in judges.items() if label not in held},
        [Transcript.from_dict(r.transcript) for r in records],
        roles=[role] * len(records),
        principle_ids=principle_ids,
        horizon=horizon,
        client=client,
        replicate=replicate,
        planned=planned,
        known=held,
        system=system,
    )
    unparseable = 0
    for label, judgments in judged.items():
        for record, judgment in zip(records, judgments):
            if judgment is not None:
                store_judgment(record, label, judgment, principle_ids)
                unparseable += int((judgment.missing == REASON_CODES["unparseable"]).any(axis=1).sum())
    for label in held:
        unparseable += sum(len(r.unparsed.get(label, {})) for r in records)
    return unparseable


async def run_or_replay(client: Any, plan: Plan, unit: Unit, role: Any, judges: Mapping[str, Judge], *, replay: bool = True) -> UnitResult:
    """:func:`run_unit` then :func:`judge_unit`, or the stored replay of the unit when nothing it depends on has changed.

    With ``replay``, a unit whose replay is in the cache (see
    :mod:`multiverse._run.replay`) comes back without a request, its requests
    counted as cache hits; the replay holds the rollout and the model judges'
    judgments (which depend only on cached responses), and every other judge
    (deterministic ones, panels, judges of registered kinds: code that may
    change without the cache knowing) judges afresh, its model calls served
    from the cache.  A pairwise judge's reference model is part of its plan
    (:func:`multiverse.plan.make_plan`), so of the unit's key.  A unit run afresh is
    stored as a replay if none of its calls failed.  Units of recorded
    conversations (``rollouts:``) are judged afresh (their judge calls come
    from the cache), since the file they read is not part of the replay's key.
    """
    if not replay or plan.experiment.rollouts is not None:
        return await judge_unit(client, plan, unit, role, judges, await run_unit(client, plan, unit, role, judges))
    from multiverse._run.replay import decode_replay, encode_replay, replay_key

    models = [label for label, spec in plan.experiment.judges.items() if spec.model is not None]
    key = replay_key(plan, unit, role)
    payload = client.cache.get_replay(key)
    stored = decode_replay(payload) if payload is not None else None
    if stored is not None:
        result, calls = stored
        client.count_replayed(calls)
        return await judge_unit(client, plan, unit, role, judges, result, known=models)
    with client.recording() as ledger:
        result = await judge_unit(client, plan, unit, role, judges, await run_unit(client, plan, unit, role, judges))
    if all(call.ok for call in ledger):
        client.cache.put_replay(key, response_keys=[call.key for call in ledger], payload=encode_replay(result, ledger, keep=models))
    return result


async def _run_all(
    client: Any,
    plan: Plan,
    units: Sequence[Unit],
    roles: Mapping[str, Any],
    judges: Mapping[str, Judge],
    *,
    replay: bool,
    on_result: Callable[[UnitResult], None] | None = None,
    window: int = 0,
) -> list[UnitResult]:
    """Run units concurrently; all at once, or, with ``on_result``, ``window`` conversations at a time.

    With ``on_result`` every result is handed to it in unit order as soon as
    it and those before it are done, then dropped (nothing is returned), and
    a unit starts only while fewer than ``window`` conversations are in
    flight (always at least one unit).
    """
    if on_result is None:
        return list(
            await asyncio.gather(*(run_or_replay(client, plan, unit, roles[unit.role], judges, replay=replay) for unit in units))
        )
    pending: collections.deque[tuple[asyncio.Future[UnitResult], int]] = collections.deque()
    in_flight = 0
    try:
        for unit in units:
            while pending and in_flight + len(unit.items) > window:
                task, size = pending.popleft()
                on_result(await task)
                in_flight -= size
            pending.append((asyncio.ensure_future(run_or_replay(client, plan, unit, roles[unit.role], judges, replay=replay)),
                            len(unit.items)))
            in_flight += len(unit.items)
        while pending:
            task, _ = pending.popleft()
            on_result(await task)
    finally:
        for task, _ in pending:
            task.cancel()
    return []


def _unit_job(
    experiment: Experiment,
    unit: Unit,
    role: Any,
    judges: Mapping[str, Judge],
    shipment: Any,
    offline: bool,
    replay: bool,
) -> tuple[UnitResult, dict[str, Any], Any]:
    """One joblib task: run and judge one unit on the shipped responses.

    The experiment, the loaded ``role`` and the judges built on the driver
    travel with the task (joblib's backends pickle them with cloudpickle), so
    workers need no specs folder and judges or judge kinds registered in the
    driver's session judge there too.  The task never opens the cache: its
    client reads an in-memory cache seeded with ``shipment`` and what it adds
    goes back to the driver (:mod:`multiverse._run.shipping`).
    """
    from multiverse._run.replay import replay_key
    from multiverse._run.shipping import seeded_cache, unpack_returned

    plan = make_plan(experiment)
    cache = seeded_cache(shipment)
    try:
        with make_client(experiment, cache, offline=offline, roles={role.id: role}) as client:
            result = run_sync(run_or_replay(client, plan, unit, role, judges, replay=replay))
            summary = client.summary()
        return result, summary, unpack_returned(cache, shipment, replay_key(plan, unit, role))
    finally:
        cache.close()


def _run_shipped(
    plan: Plan,
    roles: Mapping[str, Any],
    units: Sequence[Unit],
    judges: Mapping[str, Judge],
    *,
    cache: str | Path,
    offline: bool,
    replay: bool,
    on_result: Callable[[UnitResult], None] | None = None,
) -> tuple[list[UnitResult], list[dict[str, Any]]]:
    """Run units as joblib tasks that carry their cached responses; the driver alone writes the cache.

    In offline mode a unit whose needs the cache does not know runs here, on
    the driver's cache, so it is not reported missing when the responses are stored.
    With ``on_result``, results are handed to it (tasks' in unit order, then
    the driver's own) instead of being returned.
    """
    import joblib

    from multiverse._run.replay import replay_key
    from multiverse._run.shipping import pack_shipment, store_returned
    from multiverse.llm import Cache

    experiment = plan.experiment
    results: dict[int, UnitResult] = {}
    summaries: list[dict[str, Any]] = []
    with Cache(cache) as store:
        shipments: list[Any] = [pack_shipment(store, replay_key(plan, unit, roles[unit.role])) for unit in units]
        remote = [i for i, s in enumerate(shipments) if s.known or not offline]
        local = [i for i in range(len(units)) if i not in set(remote)]
        tasks = (
            joblib.delayed(_unit_job)(experiment, units[i], roles[units[i].role], judges, shipments[i], offline, replay)
            for i in remote
        )
        done = joblib.Parallel(return_as="generator")(tasks) if remote else ()
        for i, (result, summary, returned) in zip(remote, done):
            store_returned(store, [returned])
            shipments[i] = None  # the driver keeps no shipment it sent
            summaries.append(summary)
            if on_result is None:
                results[i] = result
            else:
                on_result(result)
        if local:
            with make_client(experiment, store, offline=offline, roles=roles) as client:
                found = run_sync(_run_all(
                    client, plan, [units[i] for i in local], roles, judges, replay=replay, on_result=on_result, window=1
                ))
                summaries.append(client.summary())
            results.update(zip(local, found))
    return [results[i] for i in sorted(results)], summaries


def execute_units(
    plan: Plan,
    roles: Mapping[str, Any],
    *,
    cache: str | Path,
    backend: str | None = None,
    n_jobs: int | None = None,
    offline: bool = False,
    replay: bool = True,
    progress: bool = False,
    on_result: Callable[[UnitResult], None] | None = None,
    window: int = 0,
) -> tuple[list[UnitResult], list[dict[str, Any]]]:
    """Run every unit of a plan; return the results and each client's summary.

    Parameters
    ----------
    plan
        The plan to run.
    roles
        Role id -> loaded :class:`~multiverse.config.specs.Role`.
    cache
        The cache directory every client shares.
    backend
        ``None``: every unit in one event loop on one client (model calls are
        I/O; concurrency comes from the client).  Otherwise a joblib backend
        name (``threading``, ``loky``, ``dask``, ``ray``, ...): units are spread
        over its workers, one unit and one client per task.  Workers never open
        the cache: each task carries the responses its unit needs and returns
        the new ones, which this process alone stores
        (:mod:`multiverse._run.shipping`).  Spend caps then apply per task.
    n_jobs
        Workers for a joblib backend (default: the backend's).
    offline
        Raise instead of calling a model on a cache miss.
    replay
        Reuse stored replays of finished units (see :func:`run_or_replay`);
        ``False`` rebuilds every unit from its cached responses.
    progress
        Show one live bar per layer (:class:`~multiverse._run.progress.RunProgress`);
        only without ``backend`` (workers elsewhere cannot draw here).
    on_result
        Stream the results instead of returning them: each is handed to this
        function as it finishes (in unit order without ``backend``) and then
        dropped; the returned list is empty.
    window
        With ``on_result`` and no ``backend``: the conversations kept in flight
        (whole units, at least one), which bounds the run's memory.  A joblib
        backend bounds it by its tasks in flight (``pre_dispatch``).
    """
    units = list(plan.units())
    check_backend(backend)
    judges = make_judges(plan.experiment.judges)
    if backend is None:
        from multiverse._run.progress import RunProgress

        with RunProgress() as bars, make_client(
            plan.experiment, cache, offline=offline, observer=bars if progress else None, roles=roles
        ) as client:
            found = run_sync(_run_all(client, plan, units, roles, judges, replay=replay, on_result=on_result, window=window))
            return found, [client.summary()]
    import joblib

    if backend == "ray":
        from ray.util.joblib import register_ray

        register_ray()
    with joblib.parallel_config(backend=backend, n_jobs=n_jobs):
        return _run_shipped(plan, roles, units, judges, cache=cache, offline=offline, replay=replay, on_result=on_result)
