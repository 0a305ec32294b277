"""Judge reasons from the transcript store, when the store keeps them.

Model judges answer ``{"<principle>": {"severity": ..., "reason": "..."}}``.
Stores that keep the reason hold it by (conversation, turn, principle, judge),
read here through the store's own ``reasons()`` (read-only).  A store without
reasons gives an empty table, and the viewer then shows severities alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

__all__ = ["COLUMNS", "ReasonIndex", "read_reasons"]

COLUMNS = ("transcript_id", "turn", "principle", "judge", "reason")
"""The columns a reasons table must have (others, such as ``severity``, are ignored)."""


def read_reasons(store_path: str | Path | None) -> pd.DataFrame:
    """Every kept judge reason of the store at ``store_path`` as a tidy table.

    Parameters
    ----------
    store_path
        A transcript store's SQLite file, or ``None``.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`COLUMNS`; empty when the store keeps no reasons or
        does not exist.

    Raises
    ------
    multiverse.core.transcript.StoreError
        If the file is not a readable transcript store.
    """
    from multiverse.core.transcript import TranscriptStore

    if store_path is None or not Path(store_path).exists():
        return pd.DataFrame(columns=list(COLUMNS))
    with TranscriptStore.open_existing(store_path) as store:
        table = pd.DataFrame(store.reasons())
    if not set(COLUMNS) <= set(table.columns):
        return pd.DataFrame(columns=list(COLUMNS))
    return table.loc[:, list(COLUMNS)]


class ReasonIndex:
    """Reasons looked up by transcript: ``{turn: {principle: {judge: reason}}}``."""

    def __init__(self, table: pd.DataFrame | None):
        self._by_transcript: dict[str, dict[int, dict[str, dict[str, str]]]] = {}
        if table is None or table.empty:
            return
        for row in table.itertuples(index=False):
            reason = "" if pd.isna(row.reason) else str(row.reason)
            if not reason:
                continue
            turns = self._by_transcript.setdefault(str(row.transcript_id), {})
            turns.setdefault(int(row.turn), {}).setdefault(str(row.principle), {})[str(row.judge)] = reason

    def __bool__(self) -> bool:
        return bool(self._by_transcript)

    def of(self, transcript_id: str) -> Mapping[int, Mapping[str, Mapping[str, str]]]:
        """The reasons kept for one transcript (empty when none)."""
        empty: dict[int, Any] = {}
        return self._by_transcript.get(transcript_id, empty)
