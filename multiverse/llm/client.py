"""The one call path: cache, offline mode, concurrency, rate limits, retries, spend caps.

Every model call of the library goes through :class:`Client`: real models via
litellm (:mod:`multiverse.llm.litellm_call`) and ``sim/`` models in-process via
the offline world, both behind the same cache, semaphore, limits, retries and
failure handling.

Notebooks
---------
In a notebook an event loop is already running, so use ``await
client.acomplete(request)`` / ``await client.agather(requests)`` directly in a
cell.  The sync :meth:`Client.complete` and :meth:`Client.gather` also work
there: they run the coroutine on the client's own background loop and block
until it finishes.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.metadata
import logging
import platform
import random
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from os import PathLike
from typing import Any

from multiverse.llm.accounting import Accounts, CallRecord, estimate_tokens, note_call, recording
from multiverse.llm.attempt import Reply, World, send_once
from multiverse.llm.background_loop import BackgroundLoop
from multiverse.llm.breaker import CONNECTION_BACKOFF, DEFAULT_THRESHOLD, CircuitBreaker
from multiverse.llm.cache import Cache, CacheEntry
from multiverse.llm.errors import OfflineCacheMiss, RunStopped
from multiverse.llm.keys import request_key
from multiverse.llm.leaks import check_request
from multiverse.llm.lease import single_flight
from multiverse.llm.limits import Limiter, RateLimit
from multiverse.llm.redact import redact, strip_url_credentials
from multiverse.llm.request import Request, Response
from multiverse.llm.retry import MODEL_WIDE_REASONS, Backoff, Failure
from multiverse.llm.structured import schema_fallback

__all__ = ["CallRecord", "Client", "World"]

log = logging.getLogger("multiverse.llm")


@dataclass
class _LoopState:
    loop: asyncio.AbstractEventLoop
    semaphore: asyncio.Semaphore
    inflight: dict[str, asyncio.Future] = field(default_factory=dict)


class Client:
    """Sends model requests through the cache with bounded concurrency, limits, retries and caps.

    Parameters
    ----------
    cache
        A :class:`Cache`, a cache directory, or ``None`` for an in-memory cache
        that lives as long as the client.
    offline
        Never call a model: a cache miss raises :class:`OfflineCacheMiss`.
    concurrency
        Maximum number of requests in flight at once.
    rate_limits
        ``{model or fnmatch pattern: RateLimit(rpm=..., tpm=...)}``.
    max_calls
        Stop (raise :class:`SpendCapReached`) before sending request number
        ``max_calls + 1`` (retries count as requests).
    max_cost_usd
        Stop before sending a request once this much has been spent.  Calls in
        flight when the cap is reached still finish, so the spend may exceed the
        cap by at most ``concurrency`` calls.
    sim
        The offline world answering ``sim/`` models, e.g.
        ``multiverse.sim.SimWorld.from_config(None)`` for every default setting.
        Model access does not know the offline world itself: a ``sim/`` request
        to a client without one raises ``ValueError``.
    timeout_s
        Timeout of one attempt.
    max_retries
        Retries of a transiently failing request (rate limit, timeout, 5xx,
        dropped connection, malformed or empty reply).  Permanent failures
        (bad request, authentication, unknown model, content filter) are not
        retried; authentication and unknown-model failures also fail every later
        request to the same model and server without a call.  Connection
        failures are retried on a short schedule of their own
        (:data:`multiverse.llm.breaker.CONNECTION_BACKOFF`).  A server error
        in reply to a ``json_schema`` response format is not retried: the
        structured-output path asks again with ``json_object`` and the schema
        (:func:`multiverse.llm.structured.agather_structured`).
    max_connection_failures
        Connection failures in a row to one endpoint (``api_base``, else the
        provider) after which no request is sent to it and
        :class:`~multiverse.llm.errors.EndpointUnreachable` stops the run
        (:mod:`multiverse.llm.breaker`; default 5).
    progress
        Show a ``tqdm.auto`` progress bar (terminal or notebook) in :meth:`agather`.
    observer
        Called as ``observer(request, response)`` once per answered request
        (cache hits and failures too), e.g. to show live progress.
    backoff_base_s, backoff_max_s
        First and largest exponential backoff bound; a provider's
        ``Retry-After`` is honoured on top.
    rng_seed
        Seed of the backoff jitter (``None``: unseeded).

    Examples
    --------
    >>> client = Client(cache="runs/cache", concurrency=32, max_cost_usd=5.0)  # doctest: +SKIP
    >>> request = Request("openai/gpt-4o-mini", ({"role": "user", "content": "Hello"},))  # doctest: +SKIP
    >>> client.complete(request).text  # doctest: +SKIP
    """

    def __init__(
        self,
        *,
        cache: Cache | str | PathLike[str] | None = None,
        offline: bool = False,
        concurrency: int = 16,
        rate_limits: Mapping[str, RateLimit] | None = None,
        max_calls: int | None = None,
        max_cost_usd: float | None = None,
        sim: World | None = None,
        timeout_s: float = 60.0,
        max_retries: int = 6,
        progress: bool = False,
        backoff_base_s: float = 1.0,
        backoff_max_s: float = 60.0,
        rng_seed: int | None = None,
        observer: Callable[[Request, Response], None] | None = None,
        max_connection_failures: int = DEFAULT_THRESHOLD,
    ) -> None:
        if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
            raise ValueError(f"Client concurrency: expected a positive integer, got {concurrency!r}")
        if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
            raise ValueError(f"Client max_retries: expected an integer >= 0, got {max_retries!r}")
        if max_calls is not None and (isinstance(max_calls, bool) or not isinstance(max_calls, int) or max_calls < 0):
            raise ValueError(f"Client max_calls: expected an integer >= 0 or None, got {max_calls!r}")
        if max_cost_usd is not None and not max_cost_usd >= 0:
            raise ValueError(f"Client max_cost_usd: expected a number >= 0 or None, got {max_cost_usd!r}")
        if not timeout_s > 0:
            raise ValueError(f"Client timeout_s: expected a positive number, got {timeout_s!r}")
        self._owns_cache = not isinstance(cache, Cache)
        self.cache = cache if isinstance(cache, Cache) else Cache(cache)
        self.offline = bool(offline)
        self.concurrency = concurrency
        self.timeout_s = float(timeout_s)
        self.max_retries = max_retries
        self.progress = bool(progress)
        self._sim = sim
        self._limiter = Limiter(rate_limits)
        self._backoff = Backoff(base_s=backoff_base_s, max_s=backoff_max_s)
        self._rng = random.Random(rng_seed)
        self._accounts = Accounts(max_calls=max_calls, max_cost_usd=max_cost_usd)
        self._dead: dict[tuple[str, str | None], Failure] = {}
        self._breaker = CircuitBreaker(max_connection_failures)
        self._logged: set[tuple[str, str]] = set()
        self._state: _LoopState | None = None
        self._background = BackgroundLoop(name="multiverse-llm-loop")
        self._versions: dict[bool, dict[str, str]] = {}
        self._observer = observer

    def __repr__(self) -> str:
        return f"Client(cache={self.cache!r}, offline={self.offline}, concurrency={self.concurrency})"

    # --- keys and the offline world --------------------------------------------------

    @property
    def sim(self) -> World:
        """The offline world answering ``sim/`` models (``ValueError`` when none was given)."""
        if self._sim is None:
            raise ValueError(
                "sim/ models need an offline world: pass Client(sim=multiverse.sim.SimWorld.from_config(...))"
            )
        return self._sim

    def key(self, request: Request) -> str:
        """Return the cache key of ``request``."""
        return request_key(request, world=self.sim if request.is_sim else None)

    def is_cached(self, request: Request) -> bool:
        """Whether the cache already holds the response to ``request`` (no call is made)."""
        return self.key(request) in self.cache

    def _entry_versions(self, is_sim: bool) -> dict[str, str]:
        if is_sim not in self._versions:
            from multiverse import __version__

            versions = {"multiverse": __version__, "python": platform.python_version()}
            if is_sim:
                versions["sim"] = str(self.sim.version)
            else:
                versions["litellm"] = importlib.metadata.version("litellm")
            self._versions[is_sim] = versions
        return self._versions[is_sim]

    # --- the async call path ---------------------------------------------------------

    def _loop_state(self) -> _LoopState:
        loop = asyncio.get_running_loop()
        state = self._state
        if state is None or state.loop is not loop:
            state = self._state = _LoopState(loop, asyncio.Semaphore(self.concurrency))
        return state

    async def acomplete(self, request: Request) -> Response:
        """Return the response to ``request``, from the cache or from one call (with retries).

        Identical requests in flight at the same time share one call, also
        across processes sharing an on-disk cache (:mod:`multiverse.llm.lease`).

        Raises
        ------
        OfflineCacheMiss
            Offline mode and the cache holds no response.
        SpendCapReached
            A spend cap stops the run before this request was sent.
        EndpointUnreachable
            The request's endpoint failed ``max_connection_failures`` connections in a row.
        multiverse.llm.leaks.SimulatorMetadataError
            A target or judge request to a real model carries simulator
            metadata or out-of-character framing (the leak guard).
        """
        if not request.is_sim:  # the leak guard, on every request to a real model
            check_request(request.messages, purpose=request.purpose, model=request.model)
            self._accounts.guarded(request.purpose)
        state = self._loop_state()
        key = self.key(request)
        shared = state.inflight.get(key)
        if shared is not None:
            response = await asyncio.shield(shared)
            if response.ok:
                self._accounts.hit(request.model, request.purpose)
                response = replace(response, cached=True)
            return self._logged_in_ledger(request, key, response)
        task = asyncio.ensure_future(self._fetch(request, key, state))
        state.inflight[key] = task
        try:
            return self._logged_in_ledger(request, key, await task)
        finally:
            if state.inflight.get(key) is task:
                del state.inflight[key]

    def _logged_in_ledger(self, request: Request, key: str, response: Response) -> Response:
        if self._observer is not None:
            self._observer(request, response)
        note_call(CallRecord(key, request.model, request.purpose, response.ok))
        return response

    def recording(self) -> contextlib.AbstractContextManager[list[CallRecord]]:
        """Record every request answered inside the block (see :func:`multiverse.llm.accounting.recording`)."""
        return recording()

    def note_format_fallback(self, request: Request, choice: str) -> None:
        """Record that a structured-output request was asked again in another form (``json_schema->json_object_schema``)."""
        self._accounts.format_fallback(request.model, choice)

    def count_replayed(self, calls: Iterable[tuple[str, str]]) -> None:
        """Count recorded requests, ``(model, purpose)`` each, as cache hits, as if asked again.

        For work replayed from its recorded result after checking that the
        cache still holds every response it read (see
        :meth:`Cache.get_replay`), so summaries match a rerun that asks again.
        """
        for model, purpose in calls:
            self._accounts.hit(model, purpose)

    async def agather(self, requests: Iterable[Request]) -> list[Response]:
        """Return the responses to ``requests`` in order, sending them concurrently.

        Raises
        ------
        RunStopped
            After every started request has finished (and been cached), if a
            spend cap or an offline miss stopped the run; its ``responses``
            holds the finished responses (``None`` for the others).
        """
        requests = list(requests)
        tasks = [asyncio.ensure_future(self.acomplete(r)) for r in requests]
        bar = self._progress_bar(len(tasks))
        if bar is not None:
            for task in tasks:
                task.add_done_callback(lambda _task: bar.update(1))
        try:
            results = await asyncio.gather(*tasks, return_exceptions=True)
        finally:
            if bar is not None:
                bar.close()
        errors = [r for r in results if isinstance(r, BaseException)]
        unexpected = [e for e in errors if not isinstance(e, RunStopped)]
        if unexpected:
            raise unexpected[0]
        if errors:
            stop = errors[0]
            stop.responses = [r if isinstance(r, Response) else None for r in results]
            raise stop
        return results

    def _progress_bar(self, total: int) -> Any:
        if not self.progress or total == 0:
            return None
        from tqdm.auto import tqdm

        return tqdm(total=total, desc="model calls", unit="req", dynamic_ncols=True)

    def _hit(self, request: Request, key: str, entry: CacheEntry) -> Response:
        self._accounts.hit(request.model, request.purpose)
        return Response(
            text=entry.text,
            tool_calls=entry.tool_calls,
            usage=entry.usage,
            cost_usd=entry.cost_usd,
            latency_s=entry.latency_s,
            cached=True,
            key=key,
            model=request.model,
        )

    async def _fetch(self, request: Request, key: str, state: _LoopState) -> Response:
        entry = self.cache.get(key)
        if entry is not None:
            return self._hit(request, key, entry)
        if self.offline:
            raise OfflineCacheMiss(
                redact(
                    f"offline mode: no cached response for model {request.model!r}"
                    f"{f' ({request.purpose})' if request.purpose else ''}, key {key[:16]}; "
                    f"run once online to fill {self.cache!r}, or point cache= at the cache that holds it"
                )
            )
        if self._instant(request):
            # an instant offline reply costs less than the lease's two write transactions; a process
            # sharing the cache that makes it too stores the same bytes
            return await self._call_and_store(request, key, state)
        async with single_flight(self.cache, key) as entry:
            if entry is not None:  # another process sharing the cache answered it
                return self._hit(request, key, entry)
            return await self._call_and_store(request, key, state)

    async def _call_and_store(self, request: Request, key: str, state: _LoopState) -> Response:
        response = await self._call(request, key, state)
        if response.ok:
            await self.cache.aput(
                key,
                CacheEntry(
                    model=request.model,
                    text=response.text,
                    tool_calls=response.tool_calls,
                    usage=response.usage,
                    cost_usd=response.cost_usd,
                    latency_s=response.latency_s,
                    created=time.time(),
                    versions=self._entry_versions(request.is_sim),
                ),
            )
        return response

    async def _call(self, request: Request, key: str, state: _LoopState) -> Response:
        target = (request.model, strip_url_credentials(request.api_base))
        failure = self._dead.get(target)
        latency = 0.0
        if failure is None:
            estimate = estimate_tokens(request)
            for attempt in range(self.max_retries + 1):
                async with state.semaphore:
                    self._breaker.check(request)
                    self._accounts.check_caps()
                    await self._limiter.acquire(request.model, estimate)
                    self._accounts.check_caps()
                    self._breaker.check(request)
                    self._accounts.sent(request)
                    started = time.monotonic()
                    outcome = await self._attempt(request, attempt)
                    latency = time.monotonic() - started
                connection_failed = isinstance(outcome, Failure) and outcome.reason == "connection_error"
                self._breaker.record(request, connection_failed=connection_failed,
                                     message=outcome.message if connection_failed else "")
                if connection_failed:
                    self._breaker.check(request)  # stop at once, not after one more backoff
                if isinstance(outcome, Reply):
                    return self._succeeded(request, key, outcome, estimate, latency)
                failure = outcome
                if failure.reason == "rate_limited" and failure.retry_after_s:
                    self._limiter.pause(request.model, failure.retry_after_s)
                if not failure.transient or attempt == self.max_retries:
                    break
                if failure.reason == "server_error" and schema_fallback(request) is not None:
                    break  # the structured-output path asks again with json_object and the schema
                self._accounts.retried(request.model, failure.reason)
                backoff = CONNECTION_BACKOFF if connection_failed else self._backoff
                await asyncio.sleep(backoff.delay_s(attempt, failure.retry_after_s, rng=self._rng))
            if failure.reason in MODEL_WIDE_REASONS:
                self._dead[target] = failure
        return self._failed(request, key, failure, latency)

    def _instant(self, request: Request) -> bool:
        """Whether the offline world answers ``request`` at once (no simulated latency)."""
        return request.is_sim and self.sim.instant(request.model)

    async def _attempt(self, request: Request, attempt: int) -> Reply | Failure:
        world = self.sim if request.is_sim else None
        return await send_once(request, attempt, world=world, timeout_s=self.timeout_s, instant=self._instant(request))

    # --- bookkeeping ---------------------------------------------------------------------

    def _succeeded(self, request: Request, key: str, reply: Reply, estimate: float, latency: float) -> Response:
        used = self._accounts.succeeded(request, reply.usage, reply.cost_usd)
        self._limiter.settle(request.model, estimate, used)
        return Response(
            text=reply.text if reply.text is not None else "",
            tool_calls=reply.tool_calls,
            usage=dict(reply.usage),
            cost_usd=reply.cost_usd,
            latency_s=latency,
            cached=False,
            key=key,
            model=request.model,
        )

    def _failed(self, request: Request, key: str, failure: Failure, latency: float) -> Response:
        self._accounts.failed(request.model, failure.reason)
        message = redact(f"{request.model}: {failure.reason}: {failure.message}")
        level = logging.WARNING if (request.model, failure.reason) not in self._logged else logging.DEBUG
        self._logged.add((request.model, failure.reason))
        log.log(level, "model call failed: %s", message)
        return Response(
            text=None, error=failure.reason, error_message=message, latency_s=latency, key=key, model=request.model
        )

    def summary(self) -> dict[str, Any]:
        """Return what this client did so far.

        Returns
        -------
        dict
            ``calls`` (requests sent, retries included), ``cache_hits``,
            ``retries``, ``retried`` ``{reason: n}`` (retries by the reason of
            the attempt that failed), ``failures`` ``{reason: n}`` (requests
            that finally failed), ``cost_usd`` (spent by this client), ``models``
            ``{model: {calls, cache_hits, retries, failures, prompt_tokens,
            completion_tokens, cost_usd}}``, ``purposes`` ``{purpose: {calls,
            cache_hits, prompt_tokens, completion_tokens}}``, ``leak_guard``
            ``{"target": n, "judge": n}`` (real-model requests the leak guard
            checked and passed, cache hits included) and
            ``response_format_fallbacks`` ``{model: {"json_schema->json_object_schema"
            or "<format>->plain": n}}`` (structured-output requests asked again
            in another form).
        """
        return self._accounts.summary()

    # --- sync wrappers and lifetime ---------------------------------------------------------

    def complete(self, request: Request) -> Response:
        """Blocking :meth:`acomplete` (safe in scripts and in notebooks with a running loop)."""
        return self._background.run(self.acomplete(request))

    def gather(self, requests: Iterable[Request]) -> list[Response]:
        """Blocking :meth:`agather`."""
        return self._background.run(self.agather(requests))

    def close(self) -> None:
        """Stop the background loop and close the cache if this client opened it."""
        self._background.close()
        if self._owns_cache:
            self.cache.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
