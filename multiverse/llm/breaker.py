"""The circuit breaker: stop a run when one endpoint refuses connection after connection.

A server that died (a local model server killed, a tunnel down) refuses every
request at once.  Retrying each request with backoff would spend every
remaining call of the run on it (a killed local server once drew 284 failed
requests over three minutes).  :class:`CircuitBreaker` counts connection
failures in a row per endpoint, across all requests to it; at ``threshold``
it opens and :meth:`CircuitBreaker.check` raises
:class:`~multiverse.llm.errors.EndpointUnreachable` before any further attempt
to that endpoint, which stops the run with exit 3: everything answered is
cached, so a rerun once the server is back resumes.  Any answer from the
endpoint, even an HTTP error, closes the count again.

Connection failures are retried on a short schedule of their own
(:data:`CONNECTION_BACKOFF`): a closed port is reported within seconds, not after
the minute of backoff that rate limits and server errors get.
"""

from __future__ import annotations

from multiverse.llm.errors import EndpointUnreachable
from multiverse.llm.redact import strip_url_credentials
from multiverse.llm.request import Request
from multiverse.llm.retry import Backoff

__all__ = ["CONNECTION_BACKOFF", "DEFAULT_THRESHOLD", "CircuitBreaker", "endpoint"]

DEFAULT_THRESHOLD = 5
"""Connection failures in a row to one endpoint after which the run stops."""

CONNECTION_BACKOFF = Backoff(base_s=0.25, max_s=2.0, max_retry_after_s=2.0)
"""Delays between attempts after a connection failure: 0.25, 0.5, 1, 2, 2 s bounds (with jitter)."""


def endpoint(request: Request) -> str:
    """The endpoint a request goes to: its ``api_base`` without credentials, else its provider prefix."""
    if request.api_base:
        return strip_url_credentials(request.api_base) or request.api_base
    return request.model.split("/", 1)[0]


class CircuitBreaker:
    """Counts connection failures in a row per endpoint and stops the run at ``threshold``.

    Parameters
    ----------
    threshold
        Connection failures in a row to one endpoint that open the breaker
        (an integer >= 1).
    """

    def __init__(self, threshold: int = DEFAULT_THRESHOLD) -> None:
        if isinstance(threshold, bool) or not isinstance(threshold, int) or threshold < 1:
            raise ValueError(f"max_connection_failures: expected an integer >= 1, got {threshold!r}")
        self.threshold = threshold
        self._in_a_row: dict[str, int] = {}
        self._last: dict[str, str] = {}

    def check(self, request: Request) -> None:
        """Raise when the breaker of the request's endpoint is open (no attempt may be sent).

        Raises
        ------
        EndpointUnreachable
            One line naming the endpoint, the failures in a row and the last error.
        """
        where = endpoint(request)
        failures = self._in_a_row.get(where, 0)
        if failures >= self.threshold:
            raise EndpointUnreachable(
                f"{where}: {failures} connection failures in a row (last: {self._last.get(where, '')[:160]}); "
                "everything answered is cached: start the server and rerun to resume",
                endpoint=where,
            )

    def record(self, request: Request, *, connection_failed: bool, message: str = "") -> None:
        """Count one attempt's outcome: a connection failure, or any answer (which resets the count)."""
        where = endpoint(request)
        if connection_failed:
            self._in_a_row[where] = self._in_a_row.get(where, 0) + 1
            self._last[where] = message
        else:
            self._in_a_row.pop(where, None)

    def failures_in_a_row(self, request: Request) -> int:
        """Connection failures in a row so far to the request's endpoint."""
        return self._in_a_row.get(endpoint(request), 0)
