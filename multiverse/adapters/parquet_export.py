"""A run (or a cube with its transcripts) -> parquet files for pandas and Hugging Face ``datasets``.

``multiverse export RUN --format parquet --out DIR`` writes (schema in
``docs/export.md``):

``judgments.parquet``
    :func:`multiverse.to_long` of the cube, exactly: one row per judged cell
    (the nine dims, ``severity``, ``truth`` / ``rating`` where the cube has
    them, the per-conversation fields).  ``pandas.read_parquet`` gives back the
    same table.
``judges.parquet``
    One row per judge: ``judge``, ``scale``, ``categories`` and the model
    string where the cube records one.
``conversations.parquet``
    One row per event of every conversation in the transcript store beside
    the cube: the six conversation dims, ``transcript_id``, ``ended``,
    ``event`` (0-based position), ``turn`` (the event's sequence number),
    ``actor``, ``assistant_turn`` (1-based, null on other actors), ``text``,
    ``actions`` (a list of ``{name, arguments}`` with the arguments as JSON
    text) and ``meta`` (JSON text).

Every column has a plain type (strings, integers, floats, lists of structs),
so ``datasets.load_dataset("parquet", data_files=...)`` reads each file.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import xarray as xr

from multiverse.core import schema as S
from multiverse.core.outputs import check_output_dir, replace_dir
from multiverse.core.transcript import TranscriptStore
from multiverse.cube.build import to_long
from multiverse.cube.io import CUBE_NAMES, open_cube
from multiverse.llm.redact import scrub
from multiverse.cube.scales import judge_categories, judge_scales

__all__ = ["EXPORT_KIND", "FILES", "CONVERSATION_SCHEMA", "export_parquet", "conversation_table"]

EXPORT_KIND = "export"
FILES = ("judgments.parquet", "judges.parquet", "conversations.parquet")
_ACTION = pa.struct([("name", pa.string()), ("arguments", pa.string())])
CONVERSATION_SCHEMA = pa.schema(
    [(dim, pa.int64() if dim in ("replicate", "item") else pa.string()) for dim in S.CONVERSATION_DIMS]
    + [("transcript_id", pa.string()), ("ended", pa.string()), ("event", pa.int64()), ("turn", pa.int64()),
       ("actor", pa.string()), ("assistant_turn", pa.int64()), ("text", pa.string()),
       ("actions", pa.list_(_ACTION)), ("meta", pa.string())]
)
"""The columns of ``conversations.parquet``."""


def _locate(source: str | os.PathLike[str]) -> tuple[xr.Dataset, Path | None]:
    """The cube and the transcript store beside it (``None`` when there is none)."""
    path = Path(source)
    cube = open_cube(path, lazy=False)
    folder = path if path.is_dir() and path.suffix != ".zarr" else path.parent
    store = folder / TranscriptStore.FILENAME
    return cube, store if store.exists() else None


def conversation_table(cube: xr.Dataset, store: TranscriptStore) -> pa.Table:
    """One row per event of every conversation of ``cube`` whose transcript ``store`` holds."""
    ids = cube["transcript_id"].transpose(*S.CONVERSATION_DIMS)
    ended = cube["ended"].transpose(*S.CONVERSATION_DIMS).values
    columns: dict[str, list[Any]] = {name: [] for name in CONVERSATION_SCHEMA.names}
    labels = {dim: cube[dim].values for dim in S.CONVERSATION_DIMS}
    for index in np.ndindex(ids.shape):
        transcript_id = str(ids.values[index])
        if not transcript_id:
            continue
        try:
            transcript = store.get(transcript_id)
        except KeyError as exc:
            raise ValueError(f"{exc.args[0]}: the transcript store does not hold this cube's conversations") from None
        assistant = 0
        for position, event in enumerate(transcript.events):
            for dim, at in zip(S.CONVERSATION_DIMS, index, strict=True):
                value = labels[dim][at]
                columns[dim].append(int(value) if dim in ("replicate", "item") else str(value))
            assistant += event.actor == "assistant"
            columns["transcript_id"].append(transcript_id)
            columns["ended"].append(str(ended[index]))
            columns["event"].append(position)
            columns["turn"].append(int(event.turn))
            columns["actor"].append(event.actor)
            columns["assistant_turn"].append(assistant if event.actor == "assistant" else None)
            columns["text"].append(scrub(event.text))
            columns["actions"].append([{"name": a.name, "arguments": scrub(json.dumps(dict(a.arguments), sort_keys=True))}
                                       for a in event.actions])
            columns["meta"].append(scrub(json.dumps(dict(event.meta), sort_keys=True, default=str)))
    return pa.table(columns, schema=CONVERSATION_SCHEMA)


def _judges(cube: xr.Dataset) -> pd.DataFrame:
    scales = judge_scales(cube)
    table = pd.DataFrame({
        "judge": list(scales),
        "scale": list(scales.values()),
        "categories": [",".join(f"{name}={code}" for name, code in judge_categories(cube, j).items()) for j in scales],
    })
    if "judge_model" in cube.coords:
        table["judge_model"] = [str(m) for m in cube["judge_model"].values]
    return table


def export_parquet(source: str | os.PathLike[str], *, out: str | os.PathLike[str]) -> dict[str, int]:
    """Write a run's judgments, judges and conversations as parquet files into ``out`` (module docstring).

    Parameters
    ----------
    source
        A run folder (``cube.nc`` or ``cube.zarr`` and ``transcripts.sqlite``),
        or a cube file with its transcript store beside it.
    out
        The output folder; replaced only when missing, empty or an earlier
        export, keeping what that export did not write
        (:func:`multiverse.core.outputs.check_output_dir`).

    Returns
    -------
    dict
        Rows written per file (``conversations.parquet`` is left out when
        there is no transcript store).

    Raises
    ------
    FileNotFoundError
        If no cube is found at ``source``.
    multiverse.core.outputs.OutputDirError
        If ``out`` must not be replaced (checked before the cube is read).
    multiverse.core.transcript.StoreError
        If the transcript store beside the cube cannot be read.

    Notes
    -----
    Known secret values (the environment's, the experiment's) are scrubbed from
    every conversation text before it is written (:func:`multiverse.llm.redact.scrub`).
    """
    path = Path(source)
    check_output_dir(out, kind=EXPORT_KIND, protected={"the run or cube": path})
    if path.is_dir() and path.suffix != ".zarr" and not any((path / name).exists() for name in CUBE_NAMES):
        raise FileNotFoundError(f"{path}: no {' or '.join(CUBE_NAMES)} in this folder")
    cube, store_path = _locate(path)
    counts: dict[str, int] = {}
    with replace_dir(out, kind=EXPORT_KIND) as staging:
        judgments = to_long(cube)
        judgments.to_parquet(staging / "judgments.parquet", index=False)
        counts["judgments.parquet"] = len(judgments)
        judges = _judges(cube)
        judges.to_parquet(staging / "judges.parquet", index=False)
        counts["judges.parquet"] = len(judges)
        if store_path is not None:
            with TranscriptStore.open_existing(store_path) as store:
                table = conversation_table(cube, store)
            pq.write_table(table, staging / "conversations.parquet")
            counts["conversations.parquet"] = table.num_rows
    return counts
