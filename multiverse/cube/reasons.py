"""Judge reasons: what each judge said about each turn and principle, as a tidy table.

A run with an output folder keeps every reason a judge stated (model judges
give one per turn and principle; deterministic judges may) in the folder's
transcript store, keyed by (conversation, turn, principle, judge).  The cube
itself carries severities only, so reasons and transcripts stay out of the
default views; :func:`judge_reasons` reads them, ``multiverse.to_long(cube,
reasons=True)`` joins them to the judgments, and ``multiverse show ...
--reasons`` prints them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from multiverse.core.schema import CONVERSATION_DIMS
from multiverse.core.transcript import REASON_FIELDS, TranscriptStore

__all__ = ["judge_reasons", "reason_store_path"]


def reason_store_path(source: str | Path) -> Path:
    """The transcript store of a run folder, of the cube file inside one, or the store itself.

    Raises
    ------
    FileNotFoundError
        If there is no transcript store there.
    """
    path = Path(source)
    if path.is_dir() and path.suffix != ".zarr":
        store = path / TranscriptStore.FILENAME
    elif path.name == TranscriptStore.FILENAME or path.suffix == ".sqlite":
        store = path
    else:
        store = path.parent / TranscriptStore.FILENAME
    if not store.is_file():
        raise FileNotFoundError(f"{source}: no transcript store ({TranscriptStore.FILENAME}) holding judge reasons")
    return store


def judge_reasons(source: str | Path, **selection: Any) -> pd.DataFrame:
    """Every stored judge reason, one row per (conversation, turn, principle, judge).

    Parameters
    ----------
    source
        A run folder (``multiverse.run(..., out=...)``), the cube file in it,
        or its ``transcripts.sqlite``.
    **selection
        Column -> value (or list of values) to keep, e.g. ``judge="strict"``
        or ``turn=[1, 2]``.

    Returns
    -------
    pandas.DataFrame
        Columns ``system``, ``role``, ``user_sim``, ``condition``,
        ``replicate``, ``item``, ``turn``, ``principle``, ``judge``,
        ``transcript_id`` and ``reason``; empty (with those columns) when no
        judge stated a reason.

    Raises
    ------
    FileNotFoundError
        If ``source`` holds no transcript store.
    KeyError
        If ``selection`` names a column that does not exist.

    Examples
    --------
    >>> table = judge_reasons("runs/quickstart", judge="strict")  # doctest: +SKIP
    >>> table.groupby("principle").size()  # doctest: +SKIP
    """
    with TranscriptStore.open_existing(reason_store_path(source)) as store:
        frame = pd.DataFrame(store.reasons(), columns=list(REASON_FIELDS))
    for column in ("replicate", "item", "turn"):
        frame[column] = frame[column].astype("int64")
    for column, wanted in selection.items():
        if column not in frame.columns:
            raise KeyError(f"judge_reasons: no column {column!r} (columns: {', '.join(frame.columns)})")
        values = wanted if isinstance(wanted, (list, tuple, set)) else [wanted]
        frame = frame[frame[column].isin(list(values))]
    order = [*CONVERSATION_DIMS, "turn", "principle", "judge"]
    return frame.sort_values(order, kind="stable").reset_index(drop=True)
