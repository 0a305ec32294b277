"""The on-disk cache of model responses: SQLite in WAL mode.

Why SQLite in WAL mode rather than files or a hand-made store: every write is one
atomic transaction, so a process killed at any instant leaves either the whole
entry or none of it (no torn or corrupt entries, no temp-file bookkeeping);
readers never block the writer and the writer never blocks readers, so lookups
stay fast while a run writes; it needs no server and ships with Python; and the
file is inspectable with any SQLite tool.  ``synchronous=NORMAL`` under WAL
makes every commit durable against a crash of the process (a SIGKILL loses
nothing committed); only a power loss can roll back the last commits, and even
then the database stays consistent.

Writes from async code are group-committed by one writer thread
(:meth:`Cache.aput`): entries queued while a commit runs go into the next
transaction, so a busy run commits many entries at once, and ``aput`` returns
only after the transaction holding its entry has committed.  A run killed with
SIGKILL therefore loses at most calls it never reported as done.

Beside the responses, the cache keeps *replays* (:meth:`Cache.put_replay`):
a finished piece of work (e.g. one rollout and its judgments) stored with the
keys of the responses it read, so a rerun can reuse it without rebuilding every
request.  A replay is handed back only while every one of those responses is
still stored with the same text (:meth:`Cache.fingerprint`); the responses stay
the source of truth, and a replay is never more than a shortcut to them.

The cache is never wiped automatically: entries stay until their owner deletes
the file.  :func:`multiverse.llm.audit.audit_cache` lists what is there, opening the file read-only
(``mode=ro``), so auditing never changes it.  A cache that cannot be used (a
file where a folder is expected, unreadable, not writable, corrupt, full, or of
a newer layout) raises :class:`CacheError` with a one-line message.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import queue
import sqlite3
import threading
import time
import uuid
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from multiverse.core.canonical import canonical_json
from multiverse.llm.audit import summarise
from multiverse.llm.cache_layout import (
    CACHE_ENV,
    CREATE_LEASES,
    CREATE_REPLAYS,
    CREATE_RESPONSES,
    DB_NAME,
    LAYOUT_VERSION,
    CacheError,
    CacheLayoutError,
    check_layout,
    sqlite_errors,
)

__all__ = [
    "LAYOUT_VERSION",
    "DB_NAME",
    "CACHE_ENV",
    "default_cache_dir",
    "CacheEntry",
    "CacheError",
    "CacheLayoutError",
    "Cache",
]

_INSERT = "INSERT OR IGNORE INTO responses VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
_LOOKUP_CHUNK = 500
"""Keys per ``IN (...)`` lookup, well under SQLite's bound-parameter limit."""
_SELECT = "SELECT model, text, tool_calls, usage, cost_usd, latency_s, created, versions FROM responses WHERE key = ?"
_STOP = object()


def default_cache_dir() -> Path:
    """Return the cache directory: ``$MULTIVERSE_CACHE``, else ``.cache/multiverse`` under the working directory."""
    return Path(os.environ.get(CACHE_ENV) or Path(".cache") / "multiverse")


@dataclass(frozen=True)
class CacheEntry:
    """One stored response: raw output plus metadata (never the request's credentials).

    Attributes
    ----------
    model, text, tool_calls, usage, cost_usd, latency_s
        As in :class:`~multiverse.llm.Response`.
    created
        Unix time the entry was written.
    versions
        Library versions that produced it (``multiverse``, ``litellm`` or ``sim``, ``python``).
    """

    model: str
    text: str | None
    tool_calls: tuple[Mapping[str, Any], ...] = ()
    usage: Mapping[str, int] = field(default_factory=dict)
    cost_usd: float = 0.0
    latency_s: float = 0.0
    created: float = 0.0
    versions: Mapping[str, str] = field(default_factory=dict)

    def _row(self, key: str) -> tuple:
        return (
            key,
            self.model,
            self.text,
            canonical_json(list(self.tool_calls)),
            canonical_json(dict(self.usage)),
            float(self.cost_usd),
            float(self.latency_s),
            float(self.created or time.time()),
            canonical_json(dict(self.versions)),
        )


class Cache:
    """A kill-safe, never-wiped store of model responses keyed by request key.

    Parameters
    ----------
    directory
        Directory holding ``calls.sqlite3`` (created if needed).  ``None`` keeps
        the entries in memory for the life of this object (tests, notebooks).

    Examples
    --------
    >>> cache = Cache(None)
    >>> cache.put("k", CacheEntry(model="sim/target-a", text="hello"))
    >>> cache.get("k").text
    'hello'
    >>> cache.close()
    """

    def __init__(self, directory: str | os.PathLike[str] | None = None) -> None:
        if directory is None:
            self.path: Path | None = None
            # The memdb VFS (not ``mode=memory&cache=shared``): its connections lock the whole
            # database and honour the busy timeout, where shared-cache table locks fail at once
            # with "database table is locked" when two threads write.
            self._uri = f"file:/multiverse-{uuid.uuid4().hex}?vfs=memdb"
        else:
            directory = Path(directory)
            if directory.exists() and not directory.is_dir():
                raise CacheError(f"cache {directory}: expected a folder, got a file")
            try:
                directory.mkdir(parents=True, exist_ok=True)
            except (OSError, ValueError) as exc:  # ValueError: a NUL in the path
                reason = exc.strerror if isinstance(exc, OSError) else str(exc)
                raise CacheError(f"cache {directory!s}: cannot create the folder ({reason})") from None
            self.path = directory / DB_NAME
            self._uri = self.path.resolve().as_uri() + "?mode=rwc"
        self._connections: list[sqlite3.Connection] = []
        self._local = threading.local()
        self._lock = threading.Lock()
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._writer: threading.Thread | None = None
        self._closed = False
        try:
            with sqlite_errors(self.path or "in memory", "open it"):
                anchor = self._connect()
                check_layout(anchor, self.path)
                if self.path is not None:
                    anchor.execute("PRAGMA journal_mode=WAL")
                with anchor:
                    anchor.execute(CREATE_RESPONSES)
                    anchor.execute(CREATE_REPLAYS)
                    anchor.execute(CREATE_LEASES)
                    anchor.execute(f"PRAGMA user_version = {LAYOUT_VERSION}")
        except CacheError:
            self.close()
            raise
        self._local.conn = anchor

    def __repr__(self) -> str:
        return f"Cache({str(self.path.parent) if self.path else None!r})"

    # --- connections --------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self._uri, uri=True, timeout=60.0, check_same_thread=False, isolation_level="DEFERRED")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA busy_timeout=60000")
        with self._lock:
            self._connections.append(conn)
        return conn

    def connection(self) -> sqlite3.Connection:
        """This thread's connection to the database (for :mod:`multiverse.llm.lease`)."""
        return self._conn()

    def _conn(self) -> sqlite3.Connection:
        if self._closed:
            raise RuntimeError(f"{self!r} is closed")
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = self._connect()
        return conn

    # --- reads ----------------------------------------------------------------------

    def get(self, key: str) -> CacheEntry | None:
        """Return the entry stored under ``key``, or ``None``."""
        try:  # not sqlite_errors: a context manager costs more than the lookup on a cold run's every call
            row = self._conn().execute(_SELECT, (key,)).fetchone()
        except sqlite3.Error as exc:
            raise CacheError(f"cache {self.path}: cannot read it: {exc}") from None
        if row is None:
            return None
        model, text, tool_calls, usage, cost, latency, created, versions = row
        try:
            return CacheEntry(
                model=model,
                text=text,
                tool_calls=tuple(json.loads(tool_calls)),
                usage=json.loads(usage),
                cost_usd=cost,
                latency_s=latency,
                created=created,
                versions=json.loads(versions),
            )
        except (ValueError, TypeError) as exc:  # a row changed by hand or by another program: never guessed at
            raise CacheError(f"cache {self.path}: the entry {key[:16]} is damaged ({type(exc).__name__}); "
                             "list it with 'multiverse cache audit'") from None

    def __contains__(self, key: object) -> bool:
        with sqlite_errors(self.path, "read it"):
            return self._conn().execute("SELECT 1 FROM responses WHERE key = ?", (key,)).fetchone() is not None

    def __len__(self) -> int:
        return self._conn().execute("SELECT count(*) FROM responses").fetchone()[0]

    def fingerprint(self, keys: Sequence[str]) -> str | None:
        """The sha256 of the stored text and tool calls of ``keys``, in order; ``None`` if one is missing.

        Equal fingerprints mean every response read is stored, unchanged.
        """
        conn = self._conn()
        unique = list(dict.fromkeys(keys))
        stored: dict[str, tuple[str | None, str]] = {}
        for start in range(0, len(unique), _LOOKUP_CHUNK):
            chunk = unique[start : start + _LOOKUP_CHUNK]
            marks = ",".join("?" * len(chunk))
            for key, text, tool_calls in conn.execute(
                f"SELECT key, text, tool_calls FROM responses WHERE key IN ({marks})", chunk
            ):
                stored[key] = (text, tool_calls)
        if len(stored) < len(unique):
            return None
        digest = hashlib.sha256()
        for key in keys:
            text, tool_calls = stored[key]
            digest.update(json.dumps([key, text, tool_calls]).encode("utf-8"))
        return digest.hexdigest()

    def keys(self) -> list[str]:
        """Every stored response key (for shipping an in-memory cache's new entries back to a driver)."""
        with sqlite_errors(self.path, "read it"):
            return [key for (key,) in self._conn().execute("SELECT key FROM responses")]

    def replay_response_keys(self, key: str) -> list[str] | None:
        """The response keys the replay under ``key`` was bound to, stored or not now; ``None`` without one."""
        with sqlite_errors(self.path, "read it"):
            row = self._conn().execute("SELECT response_keys FROM replays WHERE key = ?", (key,)).fetchone()
        try:
            keys = json.loads(row[0]) if row is not None else None
        except json.JSONDecodeError:
            return None
        return [str(k) for k in keys] if isinstance(keys, list) else None

    def get_replay(self, key: str) -> str | None:
        """The payload stored under ``key`` by :meth:`put_replay`, if every response it read is unchanged.

        Returns ``None`` when there is no such replay, when it is unreadable, or
        when one of its responses is no longer stored as it was (the work must
        then be redone from the responses).
        """
        row = self._conn().execute("SELECT response_keys, fingerprint, payload FROM replays WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        response_keys, fingerprint, payload = row
        try:
            keys = json.loads(response_keys)
        except json.JSONDecodeError:
            return None
        if not isinstance(keys, list) or self.fingerprint(keys) != fingerprint:
            return None
        try:
            return zlib.decompress(payload).decode("utf-8")
        except (zlib.error, TypeError, UnicodeDecodeError):
            return None

    def put_replay(self, key: str, *, response_keys: Sequence[str], payload: str) -> bool:
        """Store ``payload`` under ``key``, bound to the responses of ``response_keys`` as stored now.

        Every response must already be stored (committed); otherwise nothing is
        written.  An existing replay under ``key`` is replaced.  The payload is
        stored zlib-compressed (replays mostly hold transcripts, which compress
        well).

        Returns
        -------
        bool
            Whether the replay was stored.
        """
        fingerprint = self.fingerprint(response_keys)
        if fingerprint is None:
            return False
        conn = self._conn()
        with sqlite_errors(self.path, "write to it"), conn:
            conn.execute(
                "INSERT OR REPLACE INTO replays VALUES (?, ?, ?, ?, ?)",
                (key, json.dumps(list(response_keys)), fingerprint, zlib.compress(payload.encode("utf-8")), time.time()),
            )
        return True

    # --- writes ---------------------------------------------------------------------

    def put(self, key: str, entry: CacheEntry) -> None:
        """Store ``entry`` under ``key`` in one transaction; an existing entry is kept."""
        self.put_many([(key, entry)])

    def put_many(self, items: list[tuple[str, CacheEntry]]) -> None:
        """Store many entries in one transaction (existing keys are kept)."""
        conn = self._conn()
        with sqlite_errors(self.path, "write to it"), conn:
            conn.executemany(_INSERT, [entry._row(key) for key, entry in items])

    async def aput(self, key: str, entry: CacheEntry) -> None:
        """Queue ``entry`` for the writer thread; return once it is committed.

        Entries queued while a commit runs share the next transaction, and the
        writer wakes each waiting event loop once per transaction, not once per entry.
        """
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        self._submit((entry._row(key), loop, future))
        await future

    def _submit(self, item: tuple[tuple, asyncio.AbstractEventLoop, asyncio.Future[None]]) -> None:
        if self._closed:
            raise RuntimeError(f"{self!r} is closed")
        with self._lock:
            if self._writer is None:
                self._writer = threading.Thread(target=self._write_loop, name="multiverse-cache-writer", daemon=True)
                self._writer.start()
        self._queue.put(item)

    def _write_loop(self) -> None:
        conn = self._connect()
        stopping = False
        while not stopping:
            item = self._queue.get()
            if item is _STOP:
                break
            batch = [item]
            while True:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is _STOP:
                    stopping = True
                    break
                batch.append(item)
            error: BaseException | None = None
            try:
                with conn:
                    conn.executemany(_INSERT, [row for row, _, _ in batch])
            except sqlite3.Error as exc:
                error = CacheError(f"cache {self.path}: cannot write to it: {exc}")
            waiting: dict[asyncio.AbstractEventLoop, list[asyncio.Future[None]]] = {}
            for _, loop, future in batch:
                waiting.setdefault(loop, []).append(future)
            for loop, futures in waiting.items():
                try:
                    loop.call_soon_threadsafe(_settle, futures, error)
                except RuntimeError:  # the loop closed while the write ran; the entries are stored regardless
                    pass

    # --- audit and lifetime -------------------------------------------------------------

    def audit(self) -> dict[str, Any]:
        """Summarise the cache (see :func:`audit_cache`, which does the same read-only from a folder)."""
        with sqlite_errors(self.path, "read it"):
            return summarise(self._conn(), self.path)

    def close(self) -> None:
        """Flush queued writes and close every connection (idempotent)."""
        if self._closed:
            return
        writer = self._writer
        if writer is not None:
            self._queue.put(_STOP)
            writer.join()
        self._closed = True
        with self._lock:
            for conn in self._connections:
                conn.close()
            self._connections.clear()

    def __enter__(self) -> Cache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _settle(futures: list[asyncio.Future[None]], error: BaseException | None) -> None:
    for future in futures:
        if future.done():
            continue
        if error is None:
            future.set_result(None)
        else:
            future.set_exception(error)
