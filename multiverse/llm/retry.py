"""Classify call failures into the closed reason set and schedule retries.

Transient failures (rate limits, timeouts, 5xx, dropped connections, malformed
or empty replies) are retried with exponential backoff and jitter,
honouring a provider's ``Retry-After``; permanent ones (bad request,
authentication, unknown model, content filter) fail at once.  Classification
reads exception class names (litellm's ``AuthenticationError``,
``RateLimitError``, ...) and HTTP status codes, so this module needs no import
of litellm.  A missing or rejected credential is ``auth_error`` whatever the
status: litellm reports a key that was never given ("Missing credentials") as
a 500, and retrying it cannot help.

The closed set of reasons (:data:`multiverse.core.schema.FAILURE_REASONS`):

``rate_limited``, ``timeout``, ``server_error``, ``connection_error``,
``malformed_response``, ``empty_response``
    transient: retried; counted under ``retried`` per retry and under
    ``failures`` when the last attempt fails too.
``bad_request``, ``content_filter``
    permanent for that request: not retried.
A connection that fails before any HTTP answer (refused, reset, unknown
host) is ``connection_error`` whatever status litellm attaches (it reports a
refused connection as an ``InternalServerError``, HTTP 500).

``auth_error``, ``unknown_model``
    permanent for the model and endpoint: not retried, and every later request
    to it fails at once without a call (counted under ``failures``).
``spend_cap``, ``offline_miss``
    the run stopped before sending (exit 3, resumable).
``unparseable``, ``monitor_ended``
    not call failures: a judge's unreadable output, a conversation the monitor ended.
"""

from __future__ import annotations

import asyncio
import email.utils
import random
import time
from dataclasses import dataclass

from multiverse.llm.redact import redact

__all__ = [
    "TRANSIENT_REASONS",
    "PERMANENT_REASONS",
    "MODEL_WIDE_REASONS",
    "Failure",
    "retry_after_s",
    "classify",
    "Backoff",
]

TRANSIENT_REASONS = frozenset(
    {"rate_limited", "timeout", "server_error", "connection_error", "malformed_response", "empty_response"}
)
PERMANENT_REASONS = frozenset({"bad_request", "auth_error", "unknown_model", "content_filter"})
MODEL_WIDE_REASONS = frozenset({"auth_error", "unknown_model"})
"""Permanent reasons that hold for every request to the model: later requests fail without a call."""

_MALFORMED_SIGNS = (
    "jsondecodeerror",
    "unterminated string",
    "expecting value",
    "expecting property name",
    "extra data",
    "invalid control character",
    "invalid json",
)
_CREDENTIAL_SIGNS = (
    "missing credentials",
    "api_key client option must be set",
    "no api key",
    "api key not found",
    "incorrect api key",
    "invalid api key",
    "invalid x-api-key",
    "invalid_api_key",
    "authentication",
)
"""Texts of a missing or rejected credential, whatever status code came with them."""
_CONNECTION_SIGNS = (
    "connection error",
    "cannot connect to host",
    "connect call failed",
    "connection refused",
    "connecterror",
    "connection reset",
    "server disconnected",
    "remote end closed connection",
    "failed to establish a new connection",
    "all connection attempts failed",
    "name or service not known",
    "temporary failure in name resolution",
    "no route to host",
)
"""Texts of a connection that failed before any HTTP answer; litellm reports them as a 500."""
_PROVIDER_MODULES = ("litellm", "openai", "httpx", "httpcore", "aiohttp", "anthropic")


@dataclass(frozen=True)
class Failure:
    """One failed attempt.

    Attributes
    ----------
    reason
        A reason from :data:`multiverse.core.schema.FAILURE_REASONS`.
    message
        A redacted one-line explanation.
    retry_after_s
        The provider's ``Retry-After`` in seconds, when it sent one.
    """

    reason: str
    message: str
    retry_after_s: float | None = None

    @property
    def transient(self) -> bool:
        """Whether retrying may succeed."""
        return self.reason in TRANSIENT_REASONS


def _status(exc: BaseException) -> int | None:
    status = getattr(exc, "status_code", None)
    if status is None:
        status = getattr(getattr(exc, "response", None), "status_code", None)
    return status if isinstance(status, int) else None


def _headers(exc: BaseException) -> dict[str, str]:
    found: dict[str, str] = {}
    for source in (
        getattr(exc, "headers", None),
        getattr(exc, "litellm_response_headers", None),
        getattr(getattr(exc, "response", None), "headers", None),
    ):
        try:
            found.update({str(k).lower(): str(v) for k, v in dict(source or {}).items()})
        except (TypeError, ValueError):
            continue
    return found


def retry_after_s(headers: dict[str, str]) -> float | None:
    """Parse ``Retry-After`` (seconds or an HTTP date) or ``retry-after-ms`` into seconds."""
    if "retry-after-ms" in headers:
        try:
            return max(0.0, float(headers["retry-after-ms"]) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _reason(exc: BaseException, name: str, status: int | None, text: str) -> str:
    lowered = text.lower()
    if isinstance(exc, (asyncio.TimeoutError, TimeoutError)) or "Timeout" in name or status in (408, 504):
        return "timeout"
    if "APIConnection" in name or any(sign in lowered for sign in _CONNECTION_SIGNS):
        return "connection_error"
    if "RateLimit" in name or status == 429:
        return "rate_limited"
    if "ContentPolicy" in name or "content_filter" in lowered or "content management policy" in lowered:
        return "content_filter"
    if (
        "Authentication" in name
        or "PermissionDenied" in name
        or status in (401, 403)
        or any(sign in lowered for sign in _CREDENTIAL_SIGNS)
    ):
        return "auth_error"
    if "NotFound" in name or "UnknownProvider" in name or status == 404 or "llm provider not provided" in lowered:
        return "unknown_model"
    if "ResponseValidation" in name or any(sign in lowered for sign in _MALFORMED_SIGNS):
        return "malformed_response"
    if "BadRequest" in name or "UnprocessableEntity" in name or "UnsupportedParams" in name or status in (400, 413, 422):
        return "bad_request"
    if status is not None and status >= 500:
        return "server_error"
    if any(word in name for word in ("InternalServer", "ServiceUnavailable", "BadGateway")):
        return "server_error"
    return "connection_error"


def classify(exc: BaseException) -> Failure:
    """Map an exception raised by a provider call to a :class:`Failure`.

    Raises
    ------
    BaseException
        ``exc`` itself when it does not come from a provider client (a
        programming error must not be recorded as a failed call).
    """
    name = type(exc).__name__
    module = type(exc).__module__
    is_timeout = isinstance(exc, (asyncio.TimeoutError, TimeoutError))
    if not is_timeout and not module.startswith(_PROVIDER_MODULES):
        raise exc
    status = _status(exc)
    text = str(exc)
    reason = _reason(exc, name, status, text)
    first_line = " ".join(text.split())[:300] or name
    if reason == "connection_error":  # no HTTP answer came: a status code on it is the client library's invention
        message = redact(f"connection failed ({name}): {first_line}")
    else:
        message = redact(f"{name}{f' (HTTP {status})' if status else ''}: {first_line}")
    wait = retry_after_s(_headers(exc)) if reason in ("rate_limited", "server_error") else None
    return Failure(reason, message, wait)


@dataclass(frozen=True)
class Backoff:
    """Exponential backoff with jitter (uniform over the upper half of the bound), at least ``Retry-After``.

    Parameters
    ----------
    base_s
        Upper bound of the first delay; the bound doubles with every attempt.
    max_s
        Cap of the exponential bound (a ``Retry-After`` may exceed it, up to ``max_retry_after_s``).
    max_retry_after_s
        Cap on an honoured ``Retry-After``.
    """

    base_s: float = 1.0
    max_s: float = 60.0
    max_retry_after_s: float = 300.0

    def delay_s(self, attempt: int, retry_after: float | None = None, *, rng: random.Random | None = None) -> float:
        """Seconds to wait before retry number ``attempt`` (0-based)."""
        bound = min(self.max_s, self.base_s * 2**attempt)
        delay = (rng or random).uniform(bound / 2, bound)
        if retry_after is not None:
            delay = max(delay, min(retry_after, self.max_retry_after_s))
        return delay
