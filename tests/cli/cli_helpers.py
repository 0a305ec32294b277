"""Tiny offline experiments and file snapshots shared by the CLI tests."""

from __future__ import annotations

import sqlite3
import zlib
from pathlib import Path

from tiny_experiments import SPECS, tiny_experiment  # noqa: F401  (SPECS: re-exported to the CLI tests)

DOCUMENTED_EXIT_CODES = (0, 1, 2, 3, 130, 143)


def tiny(**overrides):
    """A small offline experiment mapping (two turns, the default target); keyword arguments replace top-level keys."""
    return tiny_experiment(horizon=2, breach=None, **overrides)


def tree(folder: Path) -> dict[str, bytes]:
    """Every file below ``folder`` with its bytes (to check that nothing changed)."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def database_cells(path: Path) -> list[str]:
    """Every cell of every table of a SQLite file as text, compressed payloads inflated."""
    cells = []
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
        tables = [row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for table in tables:
            for row in conn.execute(f'SELECT * FROM "{table}"'):
                for cell in row:
                    if isinstance(cell, bytes):
                        try:
                            cell = zlib.decompress(cell)
                        except zlib.error:
                            pass
                        cell = cell.decode("utf-8", "replace")
                    cells.append(str(cell))
    return cells
