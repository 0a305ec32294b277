"""Cross-process single flight: processes sharing a cache pay for each request once.

Within one client, identical requests in flight share one call.  Across
processes (two runs of one experiment on one cache, joblib workers), a request
key is *leased* before its call: a row in the cache database's ``leases``
table names the holder and an expiry.  Another process that misses the same
key finds the lease held, waits, and reads the holder's response from the
cache once it is stored; if the holder's call failed (nothing stored) or the
holder died, the waiter takes the lease and calls itself.  Every lease expires
``ttl_s`` (default :data:`LEASE_TTL_S`) after it was taken or last renewed; its
holder renews it every third of that while its call, with retries and backoff,
is still running (a heartbeat).  So a holder that died, on this machine or on
another one sharing the cache, blocks the key for at most one TTL; one on this
machine is known dead at once, by its pid.  A holder that lives but stopped
renewing (a frozen process) loses its lease at expiry too: at worst a request
is paid twice, never waited on for ever.

Offline-world calls with no simulated latency take no lease: the reply costs
less to compute than the lease's two write transactions, and two processes that
both compute it store the same bytes.  Offline targets given a latency are
leased like provider calls, which is how the concurrent-run benchmark measures
single flight.

Why a lease row rather than an advisory file lock: the cache is already one
SQLite database whose transactions serialise writers across processes, a row
expires on its own when its holder is killed (no lock file to clean up), and it
works wherever the cache works.
"""

from __future__ import annotations

import asyncio
import os
import socket
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from multiverse.core.process import process_alive

if TYPE_CHECKING:
    from multiverse.llm.cache import Cache, CacheEntry

__all__ = ["LEASE_TTL_S", "holder_id", "single_flight"]

LEASE_TTL_S = 60.0
"""How long a lease holds without renewal: the longest wait a dead holder on another machine can cause."""
_POLL_S = (0.01, 0.5)
"""First and largest wait between looks at a key another process holds."""
_HOST = socket.gethostname()
_HOLDERS: dict[int, str] = {}


def holder_id() -> str:
    """This process's lease holder id, ``host:pid:random`` (a forked child gets its own)."""
    pid = os.getpid()
    if pid not in _HOLDERS:
        _HOLDERS[pid] = f"{_HOST}:{pid}:{uuid.uuid4().hex[:12]}"
    return _HOLDERS[pid]


def _local_holder_dead(holder: str) -> bool:
    """Whether ``holder`` (``host:pid:random``) is a process of this machine that is gone."""
    host, _, rest = holder.rpartition(":")[0].rpartition(":")
    return host == _HOST and rest.isdigit() and not process_alive(int(rest))


def _take(cache: Cache, key: str, *, ttl_s: float) -> bool:
    now = time.time()
    conn = cache.connection()
    with conn:
        conn.execute("BEGIN IMMEDIATE")
        row = conn.execute("SELECT holder, expires FROM leases WHERE key = ?", (key,)).fetchone()
        if row is not None and row[0] != holder_id() and row[1] >= now and not _local_holder_dead(row[0]):
            return False
        conn.execute("INSERT OR REPLACE INTO leases VALUES (?, ?, ?)", (key, holder_id(), now + ttl_s))
    return True


def _release(cache: Cache, key: str) -> None:
    conn = cache.connection()
    with conn:
        conn.execute("DELETE FROM leases WHERE key = ? AND holder = ?", (key, holder_id()))


async def _renew(cache: Cache, key: str, ttl_s: float) -> None:
    while True:
        await asyncio.sleep(ttl_s / 3)
        _take(cache, key, ttl_s=ttl_s)


@asynccontextmanager
async def single_flight(cache: Cache, key: str, *, ttl_s: float = LEASE_TTL_S) -> AsyncIterator[CacheEntry | None]:
    """Hold ``key``'s lease for the block, or yield the entry another process stored meanwhile.

    Yields ``None`` when the caller holds the lease and should call the model
    (and store the response before the block ends); yields the stored
    :class:`~multiverse.llm.cache.CacheEntry` when another process answered
    the request while this one waited.  An in-memory cache is private to its
    process, so it always yields ``None`` at once.

    Raises
    ------
    multiverse.llm.cache.CacheError
        If the cache cannot be written.
    """
    from multiverse.llm.cache_layout import sqlite_errors

    if cache.path is None:
        yield None
        return
    wait = _POLL_S[0]
    while True:
        with sqlite_errors(cache.path, "write to it"):
            taken = _take(cache, key, ttl_s=ttl_s)
        if taken:
            break
        await asyncio.sleep(wait)
        wait = min(_POLL_S[1], wait * 2)
        entry = cache.get(key)
        if entry is not None:
            yield entry
            return
    renewal = asyncio.ensure_future(_renew(cache, key, ttl_s))
    try:
        entry = cache.get(key)  # stored between our miss and our lease: no call needed
        yield entry
    finally:
        renewal.cancel()
        with sqlite_errors(cache.path, "write to it"):
            _release(cache, key)
