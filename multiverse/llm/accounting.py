"""What a client did: calls, cache hits, retries and failures by reason, tokens and spend.

:class:`Accounts` is the bookkeeping of one :class:`~multiverse.llm.client.Client`,
per model and per purpose (the layer a request belongs to: target, user
simulator, judge, ...), and the spend caps that stop a run before the next
request is sent.  It holds counts only, never request or reply text.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from multiverse.llm.errors import SpendCapReached
from multiverse.llm.leaks import GUARDED_PURPOSES
from multiverse.llm.request import Request

__all__ = ["Accounts", "CallRecord", "estimate_tokens", "note_call", "prompt_chars", "recording"]

CHARS_PER_TOKEN = 4
"""Characters per token of the rough estimate used before a provider reports usage."""


@dataclass(frozen=True)
class CallRecord:
    """One request a client answered: its cache key, model and purpose, and whether it succeeded."""

    key: str
    model: str
    purpose: str
    ok: bool


_LEDGER: contextvars.ContextVar[list[CallRecord] | None] = contextvars.ContextVar("multiverse_ledger", default=None)
"""The ledger of the innermost :func:`recording` block (shared by the tasks it starts)."""


@contextlib.contextmanager
def recording() -> Iterator[list[CallRecord]]:
    """Record every request answered inside the block, in the order answered.

    The ledger follows the current :mod:`contextvars` context, so it sees the
    requests of the coroutine that opened the block and of every task it
    starts, and none of concurrent coroutines outside it.  Used to replay a
    finished piece of work (:meth:`Client.count_replayed
    <multiverse.llm.client.Client.count_replayed>`) without rebuilding its
    requests.

    Yields
    ------
    list of CallRecord
        Filled as requests finish.
    """
    ledger: list[CallRecord] = []
    token = _LEDGER.set(ledger)
    try:
        yield ledger
    finally:
        _LEDGER.reset(token)


def note_call(record: CallRecord) -> None:
    """Append ``record`` to the ledger of the innermost :func:`recording` block, if any."""
    ledger = _LEDGER.get()
    if ledger is not None:
        ledger.append(record)


def prompt_chars(request: Request) -> int:
    """Characters of text in the request's messages."""
    return sum(len(str(m.get("content") or "")) for m in request.messages)


def estimate_tokens(request: Request) -> float:
    """Tokens a request may use (prompt at four characters a token, plus its completion budget).

    Used to reserve rate-limit capacity before the call; the provider's reported
    usage settles the reservation afterwards.
    """
    budget = request.params.get("max_tokens", request.params.get("max_completion_tokens", 0))
    try:
        budget = float(budget or 0)
    except (TypeError, ValueError):
        budget = 0.0
    return prompt_chars(request) / CHARS_PER_TOKEN + budget


@dataclass
class _Tally:
    calls: int = 0
    cache_hits: int = 0
    retries: int = 0
    retried: Counter = field(default_factory=Counter)
    failures: Counter = field(default_factory=Counter)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "cache_hits": self.cache_hits,
            "retries": self.retries,
            "retried": dict(sorted(self.retried.items())),
            "failures": dict(sorted(self.failures.items())),
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cost_usd": round(self.cost_usd, 10),
        }


class Accounts:
    """Counts of one client's requests by model and by purpose, and its spend caps.

    Parameters
    ----------
    max_calls
        :meth:`check_caps` raises once this many requests were sent (retries
        count as requests); ``None`` for no cap.
    max_cost_usd
        :meth:`check_caps` raises once this much was spent; ``None`` for no cap.
    """

    def __init__(self, *, max_calls: int | None = None, max_cost_usd: float | None = None) -> None:
        self.max_calls = max_calls
        self.max_cost_usd = max_cost_usd
        self._models: dict[str, _Tally] = {}
        self._purposes: dict[str, _Tally] = {}
        self._failures: Counter = Counter()
        self._spent_usd = 0.0
        self._guarded: Counter = Counter()
        self._formats: dict[str, Counter] = {}

    def _model(self, model: str) -> _Tally:
        tally = self._models.get(model)
        if tally is None:
            tally = self._models[model] = _Tally()
        return tally

    def _purpose(self, purpose: str) -> _Tally:
        return self._purposes.setdefault(purpose, _Tally())

    def hit(self, model: str, purpose: str) -> None:
        """Count a request answered from the cache (or by an identical request in flight)."""
        self._model(model).cache_hits += 1
        self._purpose(purpose).cache_hits += 1

    def sent(self, request: Request) -> None:
        """Count a request sent to its model (each attempt counts)."""
        self._model(request.model).calls += 1
        self._purpose(request.purpose).calls += 1

    def retried(self, model: str, reason: str) -> None:
        """Count a retry after an attempt that failed for ``reason``."""
        tally = self._model(model)
        tally.retries += 1
        tally.retried[reason] += 1

    def succeeded(self, request: Request, usage: Mapping[str, int], cost_usd: float) -> int:
        """Count a reply's tokens and cost; return the tokens it used (prompt plus completion)."""
        prompt = int(usage.get("prompt_tokens", 0) or 0)
        completion = int(usage.get("completion_tokens", 0) or 0)
        for tally in (self._model(request.model), self._purpose(request.purpose)):
            tally.prompt_tokens += prompt
            tally.completion_tokens += completion
        self._model(request.model).cost_usd += cost_usd
        self._spent_usd += cost_usd
        return prompt + completion

    def failed(self, model: str, reason: str) -> None:
        """Count a request that finally failed for ``reason``."""
        self._model(model).failures[reason] += 1
        self._failures[reason] += 1

    def guarded(self, purpose: str) -> None:
        """Count a real-model request the leak guard checked (only target and judge requests are checked)."""
        if purpose in GUARDED_PURPOSES:
            self._guarded[purpose] += 1

    def format_fallback(self, model: str, choice: str) -> None:
        """Count a structured-output request asked again in another form (``json_schema->json_object_schema``)."""
        self._formats.setdefault(model, Counter())[choice] += 1

    def check_caps(self) -> None:
        """Raise :class:`SpendCapReached` when a spend cap is reached.

        Raises
        ------
        SpendCapReached
            ``max_calls`` requests were sent, or ``max_cost_usd`` was spent.
        """
        calls = sum(tally.calls for tally in self._models.values())
        if self.max_calls is not None and calls >= self.max_calls:
            raise SpendCapReached(
                f"spend cap reached: max_calls={self.max_calls} requests sent; "
                "everything finished is cached, rerun with a higher cap to resume"
            )
        if self.max_cost_usd is not None and self._spent_usd >= self.max_cost_usd:
            raise SpendCapReached(
                f"spend cap reached: ${self._spent_usd:.4f} spent, max_cost_usd={self.max_cost_usd}; "
                "everything finished is cached, rerun with a higher cap to resume"
            )

    def summary(self) -> dict[str, Any]:
        """The counts as plain data (see :meth:`multiverse.llm.client.Client.summary`)."""
        models = {model: tally.as_dict() for model, tally in sorted(self._models.items())}
        return {
            "calls": sum(s["calls"] for s in models.values()),
            "cache_hits": sum(s["cache_hits"] for s in models.values()),
            "retries": sum(s["retries"] for s in models.values()),
            "retried": dict(sorted(sum((t.retried for t in self._models.values()), Counter()).items())),
            "failures": dict(sorted(self._failures.items())),
            "cost_usd": round(self._spent_usd, 10),
            "models": models,
            "leak_guard": {purpose: self._guarded[purpose] for purpose in sorted(GUARDED_PURPOSES)},
            "response_format_fallbacks": {m: dict(sorted(c.items())) for m, c in sorted(self._formats.items())},
            "purposes": {
                purpose or "unlabelled": {
                    "calls": tally.calls,
                    "cache_hits": tally.cache_hits,
                    "prompt_tokens": tally.prompt_tokens,
                    "completion_tokens": tally.completion_tokens,
                }
                for purpose, tally in sorted(self._purposes.items())
            },
        }
