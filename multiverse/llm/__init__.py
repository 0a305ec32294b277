"""Model access: the one call path every rollout and judgment goes through.

:class:`Request` in, :class:`Response` out, through a :class:`Client` that adds
the kill-safe :class:`Cache`, offline mode, bounded concurrency, per-model
:class:`RateLimit` s, retries with backoff and spend caps.  Real models are
called through litellm, imported only when the first real call is made;
``sim/`` models are answered in-process by the offline world
(:mod:`multiverse.sim`).

Examples
--------
>>> from multiverse.llm import Client, Request
>>> client = Client(cache=".cache/multiverse", max_cost_usd=2.0)  # doctest: +SKIP
>>> reply = client.complete(Request("openai/gpt-4o-mini", ({"role": "user", "content": "Hi"},)))  # doctest: +SKIP
>>> client.summary()["calls"]  # doctest: +SKIP
1
"""

from __future__ import annotations

from multiverse.llm.cache import Cache, CacheEntry, default_cache_dir
from multiverse.llm.client import Client
from multiverse.llm.errors import EndpointUnreachable, OfflineCacheMiss, RunStopped, SpendCapReached
from multiverse.llm.keys import request_key
from multiverse.llm.limits import RateLimit
from multiverse.llm.request import Request, Response

__all__ = [
    "Cache",
    "CacheEntry",
    "Client",
    "EndpointUnreachable",
    "OfflineCacheMiss",
    "RateLimit",
    "Request",
    "Response",
    "RunStopped",
    "SpendCapReached",
    "default_cache_dir",
    "request_key",
]
