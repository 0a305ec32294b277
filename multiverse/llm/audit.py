"""What a model-call cache holds, read without writing: entries by model and version, size.

``multiverse cache audit`` is documented as read-only, so :func:`audit_cache`
opens the database with a ``mode=ro`` URI: auditing any SQLite file creates no
table, sets no layout version and switches no journal mode.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from pathlib import Path
from typing import Any

from multiverse.llm.cache_layout import DB_NAME, CacheError, check_layout, sqlite_errors

__all__ = ["audit_cache", "summarise"]


def audit_cache(directory: str | os.PathLike[str]) -> dict[str, Any]:
    """Summarise the cache in ``directory`` without writing anything to it.

    The database is opened read-only (a ``mode=ro`` URI): no table is created,
    no layout version set, no journal mode changed.

    Returns
    -------
    dict
        ``path``, ``entries``, ``size_bytes`` (database plus write-ahead log),
        ``by_model`` ``{model: n}``, ``by_version`` ``{"multiverse=... litellm=...": n}``,
        ``oldest`` and ``newest`` (ISO 8601 UTC, ``None`` when empty),
        ``replays`` (stored replays of finished work).

    Raises
    ------
    CacheError
        If there is no cache there, or it cannot be read, is corrupt or of a newer layout.
    """
    path = Path(directory) / DB_NAME
    if not path.is_file():
        raise CacheError(f"no cache at {directory} (expected {path})")
    with sqlite_errors(path, "read it"):
        conn = sqlite3.connect(path.resolve().as_uri() + "?mode=ro", uri=True, timeout=60.0)
        try:
            check_layout(conn, path)
            return summarise(conn, path)
        finally:
            conn.close()


def summarise(conn: sqlite3.Connection, path: Path | None) -> dict[str, Any]:
    """The audit of the cache open on ``conn`` (read queries only); see :func:`audit_cache`."""
    tables = {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if not {"responses", "replays"} <= tables:
        raise CacheError(f"cache {path}: not a model-call cache (no responses and replays tables)")
    by_model = dict(conn.execute("SELECT model, count(*) FROM responses GROUP BY model ORDER BY model"))
    by_version: dict[str, int] = {}
    for versions, n in conn.execute("SELECT versions, count(*) FROM responses GROUP BY versions"):
        try:
            parsed = json.loads(versions)
        except (TypeError, ValueError):
            parsed = {}
        items = sorted(parsed.items()) if isinstance(parsed, dict) else []
        label = " ".join(f"{name}={value}" for name, value in items) or "unknown"
        by_version[label] = by_version.get(label, 0) + n
    oldest, newest = conn.execute("SELECT min(created), max(created) FROM responses").fetchone()
    size = 0
    if path is not None:
        for suffix in ("", "-wal", "-shm"):
            part = Path(f"{path}{suffix}")
            size += part.stat().st_size if part.exists() else 0
    return {
        "path": str(path) if path else None,
        "entries": sum(by_model.values()),
        "size_bytes": size,
        "by_model": by_model,
        "by_version": dict(sorted(by_version.items())),
        "oldest": _iso(oldest),
        "newest": _iso(newest),
        "replays": conn.execute("SELECT count(*) FROM replays").fetchone()[0],
    }



def _iso(timestamp: float | None) -> str | None:
    if timestamp is None:
        return None
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(timestamp))
