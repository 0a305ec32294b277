"""Any long-format judgment table -> a cube: how users bring their own (e.g. human) annotations.

One row per judgment; named columns say what each column means (the
pingouin convention).  Scores are severity codes: 0 full adherence, 1 partial
deviation, 2 clear breach; an empty cell is a missing judgment (-1, reason
``not_recorded``); -1 and -2 are accepted as written.  With ``labels=`` the
score column holds raw labels (``"Tie"``, ``"A"``, ``5``...) mapped to codes;
a value the mapping does not cover is a missing judgment (reason
``no_verdict``), counted per value in ``attrs["unmapped"]``.  Codes of a
mapping may be nominal categories rather than severities (e.g. a pairwise
preference ``{"A": 0, "B": 1, "Tie": 2}``): agreement and latent-class models
read them as categories; ``attrs["label_kind"]`` says ``nominal`` and
``attrs["label_codes"]`` keeps the mapping.

Rows are numbered from 1 in the order read (the header is not a row).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Hashable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from multiverse.adapters._items import item_labels
from multiverse.core import schema as S
from multiverse.cube.build import new_cube

__all__ = ["DEFAULT_PRINCIPLE", "IMPORTED", "read_table", "long_table"]

DEFAULT_PRINCIPLE = "overall"
IMPORTED = "imported"
_READERS = {".csv": pd.read_csv, ".tsv": lambda p: pd.read_csv(p, sep="\t"), ".parquet": pd.read_parquet,
            ".jsonl": lambda p: pd.read_json(p, lines=True), ".json": pd.read_json}


def read_table(source: pd.DataFrame | str | os.PathLike[str]) -> pd.DataFrame:
    """A DataFrame, or a CSV / TSV / JSON / JSONL / parquet file read with pandas by its extension."""
    if isinstance(source, pd.DataFrame):
        return source.reset_index(drop=True)
    path = Path(source)
    reader = _READERS.get(path.suffix.lower())
    if reader is None:
        raise ValueError(f"{path}: unknown table format {path.suffix!r}; expected one of {', '.join(_READERS)}")
    try:
        return reader(path).reset_index(drop=True)
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: cannot read the table ({exc})") from None


def long_table(
    df_or_path: pd.DataFrame | str | os.PathLike[str],
    *,
    item: str,
    system: str,
    judge: str,
    score: str,
    turn: str | None = None,
    principle: str | None = None,
    replicate: str | None = None,
    role: str = IMPORTED,
    labels: Mapping[Hashable, int] | None = None,
    nominal: bool = False,
) -> xr.Dataset:
    """A long-format table of judgments -> a cube.

    Parameters
    ----------
    df_or_path
        A DataFrame or a file (see :func:`read_table`).
    item, system, judge, score
        Names of the columns holding the rated unit, the rated system, the rater
        and the severity code.
    turn
        Column of 1-based assistant turns (default: every row is turn 1).
    principle
        Column of principle ids (default: one principle, ``overall``).
    replicate
        Column of non-negative integer replicates (default: 0).
    role
        The role label (``user_sim`` and ``condition`` are ``imported``).
    labels
        Raw label -> code (0, 1, 2; or -1 missing, -2 not applicable).  Keys
        match a cell's value exactly or as text (``"1"`` matches ``1`` and
        ``1.0``); unmapped values are missing (reason ``no_verdict``) and
        counted.  Without it the column must hold severity codes.
    nominal
        The codes are categories without an order (e.g. preferences), not
        severities; recorded in ``attrs["label_kind"]``.

    Returns
    -------
    xarray.Dataset
        Integer items are their own labels; other items are numbered in sorted
        order, the originals kept in coordinate ``item_id``.  Attrs
        ``unmapped`` ({raw value: rows}) and ``n_unmapped`` count the values
        ``labels`` did not cover.  A (conversation,
        principle, judge) with no row is missing (``not_recorded``) on every
        turn some rater judged in that conversation; turns no one judged are
        not applicable.

    Raises
    ------
    ValueError
        Naming the missing column, or the row and column of a bad value, or two
        rows judging the same cell.
    """
    table = read_table(df_or_path)
    where = "" if isinstance(df_or_path, pd.DataFrame) else f"{df_or_path}: "
    columns = {"item": item, "system": system, "judge": judge, "score": score,
               "turn": turn, "principle": principle, "replicate": replicate}
    for option, name in columns.items():
        if name is not None and name not in table.columns:
            raise ValueError(f"{where}no column {name!r} (given as {option}=); columns: {', '.join(map(str, table.columns))}")
    rows = pd.DataFrame({"system": _labels(table, system, where), "judge": _labels(table, judge, where)})
    rows["item"] = _labels(table, item, where)
    rows["principle"] = _labels(table, principle, where) if principle else DEFAULT_PRINCIPLE
    rows["turn"] = _integers(table, turn, where, minimum=1) if turn else 1
    rows["replicate"] = _integers(table, replicate, where, minimum=0) if replicate else 0
    if labels is None:
        rows["severity"], rows["unmapped"], unmapped = _scores(table, score, where), False, Counter()
    else:
        rows["severity"], rows["unmapped"], unmapped = _mapped_scores(table, score, where, labels)
    keys = ["system", "replicate", "item", "turn", "principle", "judge"]
    repeated = rows.duplicated(keys, keep=False)
    if repeated.any():
        first, second = np.flatnonzero(repeated.to_numpy())[:2]
        raise ValueError(f"{where}rows {first + 1} and {second + 1} judge the same cell ({', '.join(keys)})")

    item_ids, items = item_labels(rows["item"])
    systems = sorted(rows["system"].unique())
    judges = sorted(rows["judge"].unique())
    principles = sorted(rows["principle"].unique())
    replicates = sorted(rows["replicate"].unique())
    cube = new_cube(
        system=systems,
        role=[role],
        user_sim=[IMPORTED],
        condition=[IMPORTED],
        replicate=replicates,
        item=items,
        turn=int(rows["turn"].max()),
        principle=principles,
        judge=judges,
        role_principles={role: principles},
        coords={"item_id": ("item", item_ids)},
        attrs={"source": "long table", "label_kind": "nominal" if nominal else "severity",
               "label_codes": {str(k): int(v) for k, v in (labels or {}).items()},
               "unmapped": dict(unmapped), "n_unmapped": int(sum(unmapped.values()))},
    )
    positions = {
        "system": rows["system"].map({v: i for i, v in enumerate(systems)}).to_numpy(),
        "replicate": rows["replicate"].map({v: i for i, v in enumerate(replicates)}).to_numpy(),
        "item": rows["item"].map({v: i for i, v in enumerate(item_ids)}).to_numpy(),
        "turn": rows["turn"].to_numpy() - 1,
        "principle": rows["principle"].map({v: i for i, v in enumerate(principles)}).to_numpy(),
        "judge": rows["judge"].map({v: i for i, v in enumerate(judges)}).to_numpy(),
    }
    # (system, replicate, item, turn, principle, judge) with role/user_sim/condition squeezed
    grid = np.full(
        (len(systems), len(replicates), len(item_ids), cube.sizes["turn"], len(principles), len(judges)),
        S.NOT_APPLICABLE,
        dtype=np.int8,
    )
    judged_turn = np.zeros(grid.shape[:4], dtype=bool)
    judged_turn[positions["system"], positions["replicate"], positions["item"], positions["turn"]] = True
    rated = np.zeros(grid.shape[:3] + grid.shape[4:], dtype=bool)
    rated[positions["system"], positions["replicate"], positions["item"], positions["principle"], positions["judge"]] = True
    unrated = judged_turn[..., None, None] & ~rated[:, :, :, None, :, :]
    grid[unrated] = S.MISSING
    grid[tuple(positions[d] for d in ("system", "replicate", "item", "turn", "principle", "judge"))] = rows["severity"].to_numpy()
    cube["severity"].values[:, 0, 0, 0] = grid
    not_recorded = S.MISSING_REASONS.index("not_recorded")
    no_verdict = np.bincount(positions["judge"][rows["unmapped"].to_numpy(dtype=bool)], minlength=len(judges))
    cube["missing_count"].values[:, not_recorded] = (grid == S.MISSING).sum(axis=(0, 1, 2, 3, 4)) - no_verdict
    cube["missing_count"].values[:, S.MISSING_REASONS.index("no_verdict")] = no_verdict
    conversation = judged_turn.any(axis=-1)
    cube["ended"].values[:, 0, 0, 0] = np.where(conversation, "completed", "failed")
    return cube


def _labels(table: pd.DataFrame, column: str, where: str) -> pd.Series:
    values = table[column]
    empty = values.isna()
    if empty.any():
        raise ValueError(f"{where}row {int(np.flatnonzero(empty.to_numpy())[0]) + 1}: column {column!r} is empty")
    return values.map(_as_label)


def _as_label(value: Hashable) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _integers(table: pd.DataFrame, column: str, where: str, *, minimum: int) -> pd.Series:
    out = []
    for row, value in enumerate(table[column], start=1):
        number = _integer(value)
        if number is None or number < minimum:
            raise ValueError(f"{where}row {row}: column {column!r} holds {value!r}; expected an integer >= {minimum}")
        out.append(number)
    return pd.Series(out, dtype=np.int64)


def _integer(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    return None


def _mapped_scores(
    table: pd.DataFrame, column: str, where: str, labels: Mapping[Hashable, int]
) -> tuple[pd.Series, pd.Series, Counter]:
    """Codes of the raw labels in ``column``, which rows no key covered, and the count of each such value."""
    allowed = {S.FULL_ADHERENCE, S.PARTIAL_DEVIATION, S.CLEAR_BREACH, S.MISSING, S.NOT_APPLICABLE}
    bad = {k: v for k, v in labels.items() if _integer(v) not in allowed}
    if bad:
        raise ValueError(f"labels=: codes must be 0, 1, 2 (or -1, -2); got {bad}")
    as_text = {_as_label(k) if not isinstance(k, str) else k.strip(): int(v) for k, v in labels.items()}
    out, flags, unmapped = [], [], Counter()
    for value in table[column]:
        code, uncovered = S.MISSING, False
        blank = value is None or (isinstance(value, float) and np.isnan(value)) or (isinstance(value, str) and not value.strip())
        if not blank:
            text = value.strip() if isinstance(value, str) else _as_label(value)
            found = labels[value] if value in labels else as_text.get(text)
            if found is None:
                unmapped[text] += 1
                uncovered = True
            else:
                code = int(found)
        flags.append(uncovered)
        out.append(code)
    return pd.Series(out, dtype=np.int8), pd.Series(flags, dtype=bool), unmapped


def _scores(table: pd.DataFrame, column: str, where: str) -> pd.Series:
    out = []
    allowed = {S.FULL_ADHERENCE, S.PARTIAL_DEVIATION, S.CLEAR_BREACH, S.MISSING, S.NOT_APPLICABLE}
    for row, value in enumerate(table[column], start=1):
        if value is None or (isinstance(value, float) and np.isnan(value)) or (isinstance(value, str) and not value.strip()):
            out.append(S.MISSING)
            continue
        number = _integer(value)
        if number not in allowed:
            raise ValueError(
                f"{where}row {row}: column {column!r} holds {value!r}; expected a severity 0, 1 or 2 "
                "(or -1 missing, -2 not applicable, or empty)"
            )
        out.append(number)
    return pd.Series(out, dtype=np.int8)
