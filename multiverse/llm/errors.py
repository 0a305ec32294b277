"""Exceptions that stop a run of model calls cleanly.

Each is raised *before* a request is sent, so every call that completed is
already in the cache and a rerun resumes where the stopped run left off.
"""

from __future__ import annotations

__all__ = ["RunStopped", "SpendCapReached", "OfflineCacheMiss", "EndpointUnreachable"]


class RunStopped(RuntimeError):
    """A run stopped on purpose (spend cap, offline miss); rerunning resumes it.

    Attributes
    ----------
    reason
        The failure reason from :data:`multiverse.core.schema.FAILURE_REASONS`
        (``"spend_cap"``, ``"offline_miss"`` or ``"connection_error"``).
    responses
        Set by :meth:`Client.agather`: the responses finished before the stop,
        in request order, ``None`` where a request did not finish.
    """

    reason = ""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.responses: list | None = None


class SpendCapReached(RunStopped):
    """``max_calls`` or ``max_cost_usd`` is reached; no further request is sent."""

    reason = "spend_cap"


class OfflineCacheMiss(RunStopped):
    """Offline mode found no cached response for a request."""

    reason = "offline_miss"


class EndpointUnreachable(RunStopped):
    """One endpoint refused or dropped this many connections in a row that the run stopped (circuit breaker).

    Attributes
    ----------
    endpoint
        The server (``api_base`` without credentials) or provider that cannot be reached.
    """

    reason = "connection_error"

    def __init__(self, message: str, *, endpoint: str = "") -> None:
        super().__init__(message)
        self.endpoint = endpoint
