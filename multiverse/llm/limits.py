"""Per-model request and token rate limits for async callers.

A token bucket per limit: a bucket holding ``burst_s`` seconds' worth of
requests (or tokens) refills continuously at ``rpm / 60`` per second.  Token use is estimated
before a call (prompt characters / 4 plus ``max_tokens``) and corrected with
the usage the provider reports.  A provider's 429 with ``Retry-After`` pauses
every call under the same limit.  Hand-written because the available
limiters (aiolimiter, limits) would be new dependencies for ~60 lines, and
neither debits a correction after the fact.
"""

from __future__ import annotations

import asyncio
import fnmatch
import time
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["RateLimit", "Limiter"]


@dataclass(frozen=True)
class RateLimit:
    """Requests-per-minute and tokens-per-minute limits for one model or model pattern.

    Parameters
    ----------
    rpm
        Requests per minute (``None``: unlimited).
    tpm
        Tokens per minute, prompt plus completion (``None``: unlimited).
    burst_s
        Seconds of budget that may be spent at once.  The default, 60, lets a
        run start with a whole minute's budget, as providers count per minute;
        lower it to spread calls evenly.

    Examples
    --------
    >>> limits = {"openai/*": RateLimit(rpm=500, tpm=200_000), "anthropic/claude-*": RateLimit(rpm=50)}
    """

    rpm: float | None = None
    tpm: float | None = None
    burst_s: float = 60.0

    def __post_init__(self) -> None:
        if isinstance(self.burst_s, bool) or not isinstance(self.burst_s, (int, float)) or self.burst_s <= 0:
            raise ValueError(f"RateLimit.burst_s: expected a positive number, got {self.burst_s!r}")
        for name in ("rpm", "tpm"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0):
                raise ValueError(f"RateLimit.{name}: expected a positive number or None, got {value!r}")


class _Bucket:
    def __init__(self, per_minute: float, burst_s: float) -> None:
        self.rate = per_minute / 60.0
        self.capacity = max(1.0, self.rate * burst_s)
        self.level = self.capacity
        self.stamp = time.monotonic()

    def _refill(self) -> None:
        now = time.monotonic()
        self.level = min(self.capacity, self.level + (now - self.stamp) * self.rate)
        self.stamp = now

    def wait_s(self, amount: float) -> float:
        self._refill()
        return max(0.0, (min(amount, self.capacity) - self.level) / self.rate)

    def take(self, amount: float) -> None:
        self.level -= min(amount, self.capacity)

    def debit(self, amount: float) -> None:
        self._refill()
        self.level -= amount


class _Gate:
    """The buckets of one rate limit plus a pause set by a provider's Retry-After."""

    def __init__(self, limit: RateLimit) -> None:
        self.requests = _Bucket(limit.rpm, limit.burst_s) if limit.rpm else None
        self.tokens = _Bucket(limit.tpm, limit.burst_s) if limit.tpm else None
        self.resume_at = 0.0

    async def acquire(self, tokens: float) -> None:
        while True:
            wait = self.resume_at - time.monotonic()
            if self.requests is not None:
                wait = max(wait, self.requests.wait_s(1))
            if self.tokens is not None:
                wait = max(wait, self.tokens.wait_s(tokens))
            if wait <= 0:
                break
            await asyncio.sleep(wait)
        if self.requests is not None:
            self.requests.take(1)
        if self.tokens is not None:
            self.tokens.take(tokens)


class Limiter:
    """Applies :class:`RateLimit` s to models by exact name or ``fnmatch`` pattern.

    One limit (and one set of buckets) per pattern: ``"openai/*"`` limits all
    OpenAI models together, as a provider account does.  The first matching
    pattern wins; an exact model name is matched before patterns.
    """

    def __init__(self, limits: Mapping[str, RateLimit] | None = None) -> None:
        self._limits = dict(limits or {})
        for pattern, limit in self._limits.items():
            if not isinstance(limit, RateLimit):
                raise TypeError(f"rate_limits[{pattern!r}]: expected a RateLimit, got {type(limit).__name__}")
        self._gates: dict[str, _Gate] = {}
        self._pattern_of: dict[str, str | None] = {}

    def _gate(self, model: str) -> _Gate | None:
        if model not in self._pattern_of:
            match = model if model in self._limits else None
            if match is None:
                match = next((p for p in self._limits if fnmatch.fnmatchcase(model, p)), None)
            self._pattern_of[model] = match
        pattern = self._pattern_of[model]
        if pattern is None:
            return None
        if pattern not in self._gates:
            self._gates[pattern] = _Gate(self._limits[pattern])
        return self._gates[pattern]

    async def acquire(self, model: str, estimated_tokens: float) -> None:
        """Wait until ``model`` may send one request of about ``estimated_tokens`` tokens."""
        gate = self._gate(model)
        if gate is not None:
            await gate.acquire(estimated_tokens)

    def settle(self, model: str, estimated_tokens: float, used_tokens: float) -> None:
        """Correct the token bucket once the provider has reported real usage."""
        gate = self._gate(model)
        if gate is not None and gate.tokens is not None:
            gate.tokens.debit(used_tokens - min(estimated_tokens, gate.tokens.capacity))

    def pause(self, model: str, seconds: float) -> None:
        """Hold every call under ``model``'s limit for ``seconds`` (a provider's Retry-After)."""
        gate = self._gate(model)
        if gate is not None:
            gate.resume_at = max(gate.resume_at, time.monotonic() + seconds)
