"""Failure classification, backoff and rate limits, without a provider."""

from __future__ import annotations

import asyncio
import email.utils
import random
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from multiverse.core.schema import FAILURE_REASONS
from multiverse.llm import RateLimit
from multiverse.llm.limits import Limiter
from multiverse.llm.redact import redact, register_secret
from multiverse.llm.retry import Backoff, classify, retry_after_s


def provider_error(name: str, message: str = "failed", *, status: int | None = None, headers=None) -> Exception:
    cls = type(name, (Exception,), {"__module__": "litellm.exceptions"})
    exc = cls(message)
    if status is not None:
        exc.status_code = status
    if headers is not None:
        exc.headers = headers
    return exc


@pytest.mark.parametrize(
    ("exc", "reason", "transient"),
    [
        pytest.param(provider_error("RateLimitError", status=429), "rate_limited", True, id="rate-limit"),
        pytest.param(provider_error("Timeout", status=408), "timeout", True, id="provider-timeout"),
        pytest.param(asyncio.TimeoutError(), "timeout", True, id="asyncio-timeout"),
        pytest.param(provider_error("InternalServerError", status=500), "server_error", True, id="500"),
        pytest.param(provider_error("ServiceUnavailableError", status=503), "server_error", True, id="503"),
        pytest.param(provider_error("APIConnectionError", "Connection error."), "connection_error", True, id="dropped"),
        pytest.param(provider_error("APIError", "Expecting value: line 1", status=500), "malformed_response", True, id="bad-json"),
        pytest.param(provider_error("BadRequestError", status=400), "bad_request", False, id="400"),
        pytest.param(provider_error("ContextWindowExceededError", status=400), "bad_request", False, id="context-window"),
        pytest.param(provider_error("AuthenticationError", status=401), "auth_error", False, id="401"),
        pytest.param(provider_error("PermissionDeniedError", status=403), "auth_error", False, id="403"),
        pytest.param(provider_error("NotFoundError", status=404), "unknown_model", False, id="404"),
        pytest.param(provider_error("BadRequestError", "LLM Provider NOT provided"), "unknown_model", False, id="no-provider"),
        pytest.param(provider_error("ContentPolicyViolationError", status=400), "content_filter", False, id="filtered"),
        pytest.param(
            provider_error("InternalServerError", "OpenAIException - Missing credentials. Please pass an `api_key`", status=500),
            "auth_error", False, id="missing-credentials-as-500",
        ),
        pytest.param(
            provider_error("APIError", "The api_key client option must be set", status=500),
            "auth_error", False, id="no-api-key-as-500",
        ),
    ],
)
def test_provider_errors_map_to_closed_reasons(exc, reason, transient):
    failure = classify(exc)
    assert (failure.reason, failure.transient) == (reason, transient)
    assert failure.reason in FAILURE_REASONS


def test_programming_errors_are_not_recorded_as_failed_calls():
    with pytest.raises(KeyError):
        classify(KeyError("a bug"))


def test_failure_messages_are_redacted():
    register_secret("registered-secret-77")
    failure = classify(provider_error("AuthenticationError", "bad key registered-secret-77", status=401))
    assert "registered-secret-77" not in failure.message and "[REDACTED]" in failure.message


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        pytest.param({"retry-after": "2"}, 2.0, id="seconds"),
        pytest.param({"retry-after-ms": "250"}, 0.25, id="milliseconds"),
        pytest.param({"retry-after": "soon"}, None, id="unparseable"),
        pytest.param({}, None, id="absent"),
    ],
)
def test_retry_after_header_is_parsed(headers, expected):
    assert retry_after_s(headers) == expected


def test_retry_after_as_http_date():
    when = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 <= retry_after_s({"retry-after": when}) <= 31


def test_retry_after_reaches_the_failure():
    failure = classify(provider_error("RateLimitError", status=429, headers={"Retry-After": "7"}))
    assert failure.retry_after_s == 7.0


@given(attempt=st.integers(0, 20), retry_after=st.none() | st.floats(0, 1000), seed=st.integers(0, 2**16))
def test_backoff_grows_is_jittered_and_honours_retry_after(attempt, retry_after, seed):
    backoff = Backoff(base_s=0.5, max_s=30.0, max_retry_after_s=120.0)
    delay = backoff.delay_s(attempt, retry_after, rng=random.Random(seed))
    bound = min(30.0, 0.5 * 2**attempt)
    assert bound / 2 <= delay
    assert delay <= max(bound, min(retry_after or 0.0, 120.0))
    if retry_after is not None:
        assert delay >= min(retry_after, 120.0)


def test_tokens_per_minute_limit_waits_for_refill():
    limiter = Limiter({"m": RateLimit(tpm=6000, burst_s=0.1)})  # 100 tokens a second, 10 at once

    async def spend() -> float:
        started = time.monotonic()
        for _ in range(4):
            await limiter.acquire("m", 10)
        return time.monotonic() - started

    assert asyncio.run(spend()) >= 0.25


def test_reported_usage_beyond_the_estimate_delays_later_calls():
    limiter = Limiter({"m": RateLimit(tpm=6000, burst_s=0.1)})

    async def spend() -> float:
        await limiter.acquire("m", 1)
        limiter.settle("m", 1, 21)  # the call used 20 tokens more than estimated
        started = time.monotonic()
        await limiter.acquire("m", 1)
        return time.monotonic() - started

    assert asyncio.run(spend()) >= 0.1


def test_a_pause_holds_every_model_under_the_limit_and_unlisted_models_run_free():
    limiter = Limiter({"openai/*": RateLimit(rpm=10_000)})

    async def run() -> tuple[float, float]:
        limiter.pause("openai/a", 0.2)
        started = time.monotonic()
        await limiter.acquire("anthropic/x", 1)
        free = time.monotonic() - started
        await limiter.acquire("openai/b", 1)
        return free, time.monotonic() - started

    free, held = asyncio.run(run())
    assert free < 0.05 and held >= 0.18


@pytest.mark.parametrize("limit", [{"rpm": 0}, {"tpm": -1}, {"rpm": True}, {"burst_s": 0}])
def test_bad_rate_limits_name_the_field(limit):
    with pytest.raises(ValueError, match=f"RateLimit.{next(iter(limit))}"):
        RateLimit(**limit)


@given(st.text(min_size=0, max_size=40), st.text(alphabet="abcdefghijklmnop0123456789", min_size=8, max_size=20))
def test_a_known_secret_never_survives_redaction(prefix, secret):
    assert secret not in redact(prefix + secret + prefix, secrets=(secret,))
