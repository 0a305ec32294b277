"""``run``: an experiment in, the judgment cube (and optionally a run folder) out."""

from __future__ import annotations

import json
import statistics
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import xarray as xr

from multiverse._run.assemble import assemble_cube, provenance
from multiverse._run.canaries import run_canaries
from multiverse._run.backends import check_backend
from multiverse._run.execute import execute_units
from multiverse._run.records import UnitResult
from multiverse._run.stream import STREAM_CONVERSATIONS, CubeStore, RunTally, unparsed_lines, write_netcdf
from multiverse.config.experiment import Experiment, load_experiment
from multiverse.config.experiment_fields import CanaryOptions
from multiverse.core.schema import ENDED_STATES, FAILURE_REASONS
from multiverse.cube.canaries import NoJudgeSignal
from multiverse.llm.redact import redact_tree, register_secrets_of, scrub
from multiverse.plan import Plan, make_plan

__all__ = ["UNPARSED_FILE", "failed_share", "run", "resolve_experiment", "resolve_cache", "load_roles", "merge_summaries"]


def resolve_experiment(experiment: Experiment | str | Path) -> Experiment:
    """An :class:`Experiment` from itself or from a file path (fully validated), its secrets registered.

    Every value the experiment holds under a secret name or as a header, and
    every URL password, is registered for redaction
    (:func:`multiverse.llm.redact.register_secrets_of`) before any request is
    built or anything is written.
    """
    e = experiment if isinstance(experiment, Experiment) else load_experiment(experiment)
    register_secrets_of(e.to_dict())  # its secret values are scrubbed from everything written or printed
    return e


def resolve_cache(experiment: Experiment, cache: str | Path | None) -> Path:
    """The cache folder: ``cache=``, else the file's ``cache:``, else the default."""
    if cache is not None:
        return Path(cache)
    if experiment.cache is not None:
        return experiment.resolve(experiment.cache)
    from multiverse.llm import default_cache_dir

    return default_cache_dir()


def load_roles(experiment: Experiment) -> dict[str, Any]:
    """Role id -> loaded role, from the experiment's specs folder."""
    from multiverse.config.specs import load_roles as load_spec_roles

    return load_spec_roles(list(experiment.roles), specs_dir=experiment.specs_dir())


def merge_summaries(summaries: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Sum client summaries (one per worker) into one.

    Numbers add; mappings (counts by reason, per model, per purpose) add key by
    key, at any depth; anything else (text) is dropped.  Keys come out sorted.
    """
    out: dict[str, Any] = {"calls": 0, "cache_hits": 0, "retries": 0, "cost_usd": 0.0,
                           "failures": {}, "retried": {}, "models": {}, "purposes": {}}
    for summary in summaries:
        _add_counts(out, summary)
    return _sorted_tree(out)


def _add_counts(into: dict[str, Any], counts: Mapping[str, Any]) -> None:
    for name, value in counts.items():
        if isinstance(value, Mapping):
            _add_counts(into.setdefault(name, {}), value)
        elif isinstance(value, (int, float)):
            into[name] = into.get(name, 0) + value


def _sorted_tree(tree: dict[str, Any]) -> dict[str, Any]:
    return {key: _sorted_tree(value) if isinstance(value, dict) else value for key, value in sorted(tree.items())}


def _coverage(tally: RunTally) -> dict[str, Any]:
    """role -> system -> user_sim -> condition -> coverage share, mean over replicates."""
    nested: dict[str, Any] = {}
    for (role, system, user_sim, condition), values in sorted(tally.coverage.items()):
        nested.setdefault(role, {}).setdefault(system, {}).setdefault(user_sim, {})[condition] = statistics.fmean(values)
    return nested


USER_REPLY_COUNTS = ("replies", "cut", "out_of_character", "stage_direction", "narration", "speaker_turn")
"""``run.json``'s ``user_replies``: a real user model's replies, those cut at the length limit, and what was stripped."""


def _run_summary(
    plan: Plan, tally: RunTally, summary: Mapping[str, Any], wall_s: float, canaries: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    failures: Counter[str] = Counter(summary["failures"])
    failures["unparseable"] += tally.unparseable
    failures["monitor_ended"] += tally.ended["monitor_ended"]
    unknown = set(failures) - set(FAILURE_REASONS)
    if unknown:
        raise RuntimeError(f"run summary: failure reasons outside the documented set: {sorted(unknown)}")
    info = {
        "experiment": plan.experiment.name,
        "plan_digest": plan.digest,
        "layers": plan.layer_sizes(),
        "calls": summary["calls"],
        "cache_hits": summary["cache_hits"],
        "retries": summary["retries"],
        "retried": summary["retried"],
        "cost_usd": summary["cost_usd"],
        "failures": {reason: failures[reason] for reason in FAILURE_REASONS if failures[reason]},
        "models": summary["models"],
        "purposes": summary.get("purposes", {}),
        "wall_s": round(wall_s, 3),
        "ended": {state: tally.ended[state] for state in ENDED_STATES},
    }
    if plan.experiment.is_campaign:
        info["coverage"] = _coverage(tally)
    if any(summary.get("leak_guard", {}).values()):
        info["leak_guard"] = summary["leak_guard"]
    if summary.get("response_format_fallbacks"):
        info["response_format_fallbacks"] = summary["response_format_fallbacks"]
    if tally.user_replies:
        info["user_replies"] = {kind: tally.user_replies[kind] for kind in USER_REPLY_COUNTS}
    if canaries:
        info["judges"] = {label: {"canaries": result, "no_signal": result["no_signal"]} for label, result in canaries.items()}
    return info


@dataclass(frozen=True)
class PreparedRun:
    """What every run knows before its first rollout: the experiment, its plan and roles, its cache, the canaries."""

    experiment: Experiment
    plan: Plan
    roles: dict[str, Any]
    cache_dir: Path
    canaries: dict[str, Any]
    canary_calls: dict[str, Any] | None


def prepare_run(
    experiment: Experiment | str | Path,
    *,
    cache: str | Path | None,
    out: str | Path | None,
    backend: str | None,
    offline: bool,
    max_calls: int | None,
    max_cost_usd: float | None,
    require_judge_signal: bool,
) -> PreparedRun:
    """Everything a run (fixed or sequential) checks and judges before its first rollout.

    Checks that ``backend`` can run here, applies the spend caps given on the call, checks credentials (unless
    ``offline``) and the output folder before any call, then judges the roles'
    canaries and refuses a judge without signal when ``require_judge_signal``.

    Raises
    ------
    multiverse._run.backends.BackendError
        If ``backend`` cannot run here.
    multiverse.core.outputs.OutputDirError
        If ``out`` must not be replaced.
    multiverse.cube.canaries.NoJudgeSignal
        With ``require_judge_signal``, if a judge has no signal on its canaries.
    """
    check_backend(backend)
    e = resolve_experiment(experiment)
    if max_calls is not None or max_cost_usd is not None:
        e = replace(
            e,
            max_calls=e.max_calls if max_calls is None else max_calls,
            max_cost_usd=e.max_cost_usd if max_cost_usd is None else max_cost_usd,
        )
    if require_judge_signal and e.canaries is None:
        e = replace(e, canaries=CanaryOptions())
    if not offline:
        _require_credentials(e)
    plan = make_plan(e)
    roles = load_roles(e)
    cache_dir = resolve_cache(e, cache)
    if out is not None:
        from multiverse.core.outputs import check_output_dir

        protected = {"the cache": cache_dir, "the experiment file": e.source or None, "the specs": e.specs_dir()}
        check_output_dir(out, kind="run", protected=protected)
    canaries, canary_calls = run_canaries(e, roles, cache=cache_dir, offline=offline)
    flagged = {label: result for label, result in canaries.items() if result["no_signal"]}
    if require_judge_signal and flagged:
        raise NoJudgeSignal(flagged)
    return PreparedRun(e, plan, roles, cache_dir, canaries, canary_calls)


def run(
    experiment: Experiment | str | Path,
    *,
    out: str | Path | None = None,
    cache: str | Path | None = None,
    backend: str | None = None,
    n_jobs: int | None = None,
    offline: bool = False,
    replay: bool = True,
    max_calls: int | None = None,
    max_cost_usd: float | None = None,
    progress: bool = False,
    in_flight: int = STREAM_CONVERSATIONS,
    require_judge_signal: bool = False,
) -> xr.Dataset:
    """Run an experiment: rollouts, then every judge on every transcript, into one cube.

    Every model call goes through the cache, so a rerun costs nothing and a
    changed experiment pays only for its new cells.

    Parameters
    ----------
    experiment
        An :class:`~multiverse.config.experiment.Experiment` or the path of an
        experiment file.
    out
        A folder to write ``cube.nc``, ``run.json`` and ``transcripts.sqlite``
        to (with the manifest ``multiverse-output.json``), and ``cube.zarr``,
        the chunked store the cube is streamed into unit by unit as the run
        goes (:mod:`multiverse._run.stream`): with ``out`` the run never holds
        the whole cube or every conversation in memory while it runs, and
        returns the written ``cube.nc`` read into memory (for a cube larger
        than memory, ``multiverse.open_cube(out / "cube.zarr")`` reads it
        chunk by chunk instead).  The folder is
        replaced as a whole, atomically: readers see the old outputs or the new
        ones, never a mix.  It must be missing, empty or an earlier run's
        output, and must neither be nor contain the working directory, the
        cache, the experiment file or the specs; this and its writability are
        checked before any model call (:func:`multiverse.core.outputs.check_output_dir`).
        The store also keeps every judge's stated reasons
        (:func:`multiverse.judge_reasons`), and the returned cube's
        ``encoding["source"]`` names the written ``cube.nc``.
    cache
        The model-call cache folder (default: the file's ``cache:``, else
        ``$MULTIVERSE_CACHE``, else ``.cache/multiverse``).
    backend
        ``None`` runs every rollout in one event loop (model calls are I/O
        bound; the client bounds concurrency).  A joblib backend name
        (``loky``, ``threading``, ``dask``, ``ray``) spreads rollouts over its
        workers; ``dask`` needs a ``distributed.Client``, ``ray`` the ray extra.
    n_jobs
        Workers for ``backend``.
    offline
        Answer only from the cache, ``sim/`` models included: a miss raises
        :class:`~multiverse.llm.OfflineCacheMiss` instead of calling.
    replay
        Reuse the stored result of a rollout unit whose cells, role, templates,
        library code and cached responses are all unchanged, instead of
        rebuilding it request by request from the cache (same cube, no model
        call either way; see :mod:`multiverse._run.replay`).  ``False`` rebuilds.
    max_calls, max_cost_usd
        Spend caps replacing the experiment file's (``None``: the file's).
    progress
        Show live progress, one ``tqdm.auto`` bar per layer (terminal or
        notebook; see :mod:`multiverse._run.progress`).
    in_flight
        With ``out`` and no ``backend``: how many conversations run at once
        (whole rollout units, at least one), which bounds the run's memory.
    require_judge_signal
        Refuse to report from a judge without signal on its canaries: the
        canaries are judged first (every model judge's, when the experiment's
        ``canaries:`` block does not name judges), and a judge flagged
        ``no_signal`` stops the run before any rollout, with
        :class:`~multiverse.cube.canaries.NoJudgeSignal` (``multiverse run``
        exits 2 naming each judge and its pooled figures).

    Returns
    -------
    xarray.Dataset
        The judgment cube; its ``run`` attr holds the run summary
        (``calls``, ``cache_hits``, ``failures``, ``wall_s``, ...; ``judges``
        with each judge's canary results and ``no_signal`` flag when the
        experiment's ``canaries:`` block had them judge the roles' canaries,
        before any rollout), and its ``canaries`` attr the same results.

    Raises
    ------
    multiverse.config.located.SpecError
        If the experiment file is invalid.
    multiverse.llm.RunStopped
        If a spend cap or an offline cache miss stopped the run; everything
        finished is cached, and a rerun resumes.
    multiverse.core.outputs.OutputDirError
        If ``out`` must not be replaced or cannot be written (before any call).
    multiverse.cube.canaries.NoJudgeSignal
        With ``require_judge_signal``, if a judge has no signal on its canaries.

    Notes
    -----
    Secrets (URL credentials, header values, secret-named parameters, the
    environment's keys) are masked in the cube's attrs and in ``run.json``
    (:func:`multiverse.llm.redact.redact_tree`).
    multiverse.llm.credentials.ModelNotCallable
        If a real model cannot be called: litellm is not installed, the model
        string names no provider, or (``MissingCredentials``) its provider's
        credentials are missing (checked before any call and before litellm
        is imported, unless ``offline``).
    """
    started = time.perf_counter()
    ready = prepare_run(experiment, cache=cache, out=out, backend=backend, offline=offline, max_calls=max_calls,
                        max_cost_usd=max_cost_usd, require_judge_signal=require_judge_signal)
    plan, roles, cache_dir, canaries = ready.plan, ready.roles, ready.cache_dir, ready.canaries
    canary_calls = ready.canary_calls
    attrs = redact_tree({**provenance(plan, roles), **({"canaries": canaries} if canaries else {})})
    judged = [canary_calls] if canary_calls is not None else []
    options = dict(cache=cache_dir, backend=backend, n_jobs=n_jobs, offline=offline, replay=replay, progress=progress)
    if out is not None:
        return _run_streamed(plan, roles, Path(out), attrs=attrs, started=started, options=options, window=in_flight,
                             canaries=canaries, judged=judged)
    results, summaries = execute_units(plan, roles, **options)
    tally = RunTally()
    for result in results:
        tally.add(result)
    records = [record for result in results for record in result.records]
    cube = assemble_cube(plan, roles, records, attrs=attrs)
    info = redact_tree(_run_summary(plan, tally, merge_summaries(judged + summaries), time.perf_counter() - started, canaries))
    cube.attrs["run"] = info
    return cube


def _run_streamed(
    plan: Plan, roles: Mapping[str, Any], out: Path, *, attrs: Mapping[str, Any], started: float,
    options: Mapping[str, Any], window: int, canaries: Mapping[str, Any], judged: Sequence[Mapping[str, Any]],
    extra: Mapping[str, Any] | None = None,
) -> xr.Dataset:
    """Run into an output folder, writing each unit's cube part, transcripts and reasons as it finishes.

    See :mod:`multiverse._run.stream`; the folder is swapped in whole at the end.
    ``judged`` client summaries made before the units (the canaries', a
    sequential run's batches) count into the run's calls, and ``extra`` keys
    join its ``run.json``.
    """
    from multiverse.core.outputs import replace_dir
    from multiverse.core.transcript import Transcript, TranscriptStore
    from multiverse.cube.integrity import RECORD_FILE, store_record
    from multiverse.cube.io import CUBE_NAMES, open_cube

    tally = RunTally()
    with replace_dir(out, kind="run") as staging:
        cube_store = CubeStore(staging / "cube.zarr", plan, roles, attrs=attrs)
        with TranscriptStore(staging / TranscriptStore.FILENAME, scrub=scrub) as store, \
                (staging / UNPARSED_FILE).open("w", encoding="utf-8") as unparsed:

            def keep(result: UnitResult) -> None:
                tally.add(result)
                reason_rows: list[dict[str, Any]] = []
                cube_store.write(result, reason_rows=reason_rows)
                store.put(Transcript.from_dict(record.transcript) for record in result.records)
                store.put_reasons(reason_rows)
                unparsed.writelines(scrub(line) for line in unparsed_lines(result.records))

            _, summaries = execute_units(plan, roles, **options, on_result=keep, window=window)
        info = _run_summary(plan, tally, merge_summaries([*judged, *summaries]), time.perf_counter() - started, canaries)
        info = redact_tree({**info, **(extra or {})})
        cube_store.finish(run_info=info)
        write_netcdf(staging / "cube.zarr", staging / "cube.nc")
        record = {**info, "integrity": store_record(staging, CUBE_NAMES, sizes=cube_store.sizes)}
        (staging / RECORD_FILE).write_text(json.dumps(record, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return open_cube(out / "cube.nc", lazy=False)


def _require_credentials(experiment: Experiment) -> None:
    from multiverse.llm.credentials import require_callable

    require_callable(spec for _, spec in experiment.named_models())


def failed_share(info: Mapping[str, Any]) -> float:
    """The share of a run's conversations that ended ``failed`` (0 for a run without any)."""
    ended = info.get("ended") or {}
    total = sum(ended.values())
    return ended.get("failed", 0) / total if total else 0.0


UNPARSED_FILE = "unparseable.jsonl"
"""The run folder's file of raw judge replies that did not parse (one JSON object a line)."""
