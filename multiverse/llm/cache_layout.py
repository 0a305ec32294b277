"""The cache's table layout and its errors, shared by the cache and its read-only audit.

:mod:`multiverse.llm.cache` writes the tables below; :mod:`multiverse.llm.audit`
reads them without writing.  Both check the layout version and turn SQLite's
errors into a one-line :class:`CacheError` through this module, so neither
imports the other's internals.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = [
    "CACHE_ENV",
    "CREATE_LEASES",
    "CREATE_REPLAYS",
    "CREATE_RESPONSES",
    "DB_NAME",
    "LAYOUT_VERSION",
    "CacheError",
    "CacheLayoutError",
    "check_layout",
    "sqlite_errors",
]

LAYOUT_VERSION = 1
"""Version of the table layout (``PRAGMA user_version``); the key layout is ``_schema.KEY_SCHEMA_VERSION``."""
DB_NAME = "calls.sqlite3"
CACHE_ENV = "MULTIVERSE_CACHE"

CREATE_RESPONSES = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY NOT NULL,
    model TEXT NOT NULL,
    text TEXT,
    tool_calls TEXT NOT NULL,
    usage TEXT NOT NULL,
    cost_usd REAL NOT NULL,
    latency_s REAL NOT NULL,
    created REAL NOT NULL,
    versions TEXT NOT NULL
)
"""
CREATE_REPLAYS = """
CREATE TABLE IF NOT EXISTS replays (
    key TEXT PRIMARY KEY NOT NULL,
    response_keys TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    payload BLOB NOT NULL,
    created REAL NOT NULL
)
"""
CREATE_LEASES = """
CREATE TABLE IF NOT EXISTS leases (
    key TEXT PRIMARY KEY NOT NULL,
    holder TEXT NOT NULL,
    expires REAL NOT NULL
)
"""

class CacheError(RuntimeError):
    """The cache cannot be used: not a folder, unreadable, not writable, corrupt, full; one-line message."""


class CacheLayoutError(CacheError):
    """The cache file was written by an incompatible (newer) layout."""


@contextmanager
def sqlite_errors(where: object, action: str) -> Iterator[None]:
    """Turn SQLite's errors into a :class:`CacheError` naming the cache and what failed."""
    try:
        yield
    except sqlite3.Error as exc:
        raise CacheError(f"cache {where}: cannot {action}: {exc}") from None


def check_layout(conn: sqlite3.Connection, path: object) -> None:
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version > LAYOUT_VERSION:
        raise CacheLayoutError(
            f"cache {path}: layout version {version} is newer than this library's {LAYOUT_VERSION}; "
            "upgrade multiverse (the cache is left untouched)"
        )
