"""Any long-format judgment table -> a cube: how users bring their own labels (human or model).

One row per judgment; named columns say what each column means (the
pingouin convention).  ``scale=`` says what the labels mean
(:mod:`multiverse.core.scales`, ``docs/label-scales.md``):

* ``severity`` (default): codes 0 full adherence, 1 partial deviation, 2
  clear breach; -1 and -2 are accepted as written.  With ``labels=`` the
  column holds raw labels mapped to codes of your own (earlier releases' way;
  ``nominal=True`` marks such codes as categories without an order).
* ``binary``: ``pass`` / ``fail`` (or raw labels mapped by ``categories=``).
* ``pairwise``: the winner of a comparison between ``system_a`` and
  ``system_b``, ``A``, ``B`` or ``tie`` (or raw labels mapped by
  ``categories=``, e.g. ``{1: "A", 2: "B", 1.5: "tie"}``).  One comparison is
  one item, named by the item column and the two systems; the cube has one
  ``system`` value, ``pairs``, and the coordinates ``system_a`` / ``system_b``
  over ``item``.  ``position=`` names a column saying where system_a's
  response was shown (1 or 2, ``first`` or ``second``), kept as
  ``position_a`` (0 where unknown).
* ``likert``: integer ratings, kept in variable ``rating``; the range is
  ``categories=range(low, high + 1)`` or the observed minimum..maximum (a
  mapping raw -> integer maps text first).

An empty cell is a missing judgment (-1, reason ``not_recorded``); a raw
label no mapping covers is missing (reason ``no_verdict``), counted per
value in ``attrs["unmapped"]``.  The judges' scale and categories are the
coordinates ``scale`` and ``categories`` (``judge``).

Rows are numbered from 1 in the order read (the header is not a row).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from multiverse.adapters._items import item_labels
from multiverse.adapters._label_maps import as_text, integer, is_blank, map_labels
from multiverse.core import schema as S
from multiverse.core.scales import NOMINAL, SCALES, category_codes
from multiverse.cube.build import new_cube
from multiverse.cube.scales import scale_coords

__all__ = ["DEFAULT_PRINCIPLE", "IMPORTED", "PAIRS", "read_table", "long_table"]

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
    judge: str,
    score: str,
    system: str | None = None,
    system_a: str | None = None,
    system_b: str | None = None,
    turn: str | None = None,
    principle: str | None = None,
    replicate: str | None = None,
    role: str = IMPORTED,
    scale: str = "severity",
    categories: Mapping[Hashable, Any] | Sequence[int] | None = None,
    position: str | None = None,
    labels: Mapping[Hashable, int] | None = None,
    nominal: bool = False,
) -> xr.Dataset:
    """A long-format table of judgments -> a cube.

    Parameters
    ----------
    df_or_path
        A DataFrame or a file (see :func:`read_table`).
    item, judge, score
        Names of the columns holding the rated unit, the rater and the label.
    system
        Column of the rated system (every scale but ``pairwise``).
    system_a, system_b
        Columns of the two compared systems (``pairwise`` only).
    turn
        Column of 1-based assistant turns (default: every row is turn 1).
    principle
        Column of principle ids (default: one principle, ``overall``).
    replicate
        Column of non-negative integer replicates (default: 0).
    role
        The role label (``user_sim`` and ``condition`` are ``imported``).
    scale
        ``"severity"``, ``"binary"``, ``"pairwise"`` or ``"likert"`` (module docstring).
    categories
        Raw label -> category name of the scale (``binary``: ``pass`` /
        ``fail``; ``pairwise``: ``A`` / ``B`` / ``tie``; ``severity``:
        ``full_adherence`` / ``partial_deviation`` / ``clear_breach``); for
        ``likert`` the range (``range(1, 11)``) or raw label -> integer.  Keys
        match a cell exactly or as text.  Default: the category names
        themselves (any case); for ``severity`` the codes 0, 1, 2.
    position
        Column giving where system_a's response was shown (``pairwise``).
    labels
        Raw label -> code of your own (0, 1, 2; or -1, -2), ``severity`` only;
        unmapped values are missing and counted.
    nominal
        With ``labels=``: the codes are categories without an order;
        recorded in ``attrs["label_kind"]`` (and no ``scale`` coordinate).

    Returns
    -------
    xarray.Dataset
        Integer items are their own labels; other items (and every pairwise
        comparison) are numbered in sorted order, the originals kept in
        coordinate ``item_id``.  Attrs (dicts in Python): ``scale``,
        ``categories`` (the mapping used, keys as text), ``unmapped``
        ({raw value: rows}) and ``n_unmapped``.  A (conversation, principle,
        judge) with no row is missing (``not_recorded``) on every turn some
        rater judged in that conversation; turns no one judged are not applicable.

    Raises
    ------
    ValueError
        Naming the missing column, or the row and column of a bad value, or
        two rows judging the same cell, or options that do not fit the scale.
    """
    table = read_table(df_or_path)
    where = "" if isinstance(df_or_path, pd.DataFrame) else f"{df_or_path}: "
    pairwise = _check_options(scale, system=system, system_a=system_a, system_b=system_b, position=position,
                              labels=labels, categories=categories, nominal=nominal, where=where)
    columns = {"item": item, "system": system, "system_a": system_a, "system_b": system_b, "judge": judge,
               "score": score, "turn": turn, "principle": principle, "replicate": replicate, "position": position}
    for option, name in columns.items():
        if name is not None and name not in table.columns:
            raise ValueError(f"{where}no column {name!r} (given as {option}=); columns: {', '.join(map(str, table.columns))}")
    rows = pd.DataFrame({"judge": _labels(table, judge, where)})
    rows["item"] = _labels(table, item, where)
    if pairwise:
        rows["system_a"], rows["system_b"] = _labels(table, system_a, where), _labels(table, system_b, where)
        rows["system"] = PAIRS
        rows["comparison"] = list(zip(rows["item"], rows["system_a"], rows["system_b"], strict=True))
    else:
        rows["system"] = _labels(table, system, where)
    rows["principle"] = _labels(table, principle, where) if principle else DEFAULT_PRINCIPLE
    rows["turn"] = _integers(table, turn, where, minimum=1) if turn else 1
    rows["replicate"] = _integers(table, replicate, where, minimum=0) if replicate else 0
    if labels is not None:
        rows["severity"], rows["unmapped"], unmapped = _mapped_scores(table, score, where, labels)
        ratings, codes = None, None
    elif scale == "severity" and categories is None:
        rows["severity"], rows["unmapped"], unmapped = _scores(table, score, where), False, Counter()
        ratings, codes = None, category_codes("severity")
    else:
        mapped = map_labels(table[score].tolist(), scale=scale, categories=categories, where=where, column=score)
        rows["severity"], rows["unmapped"], unmapped = mapped.codes, mapped.unmapped, mapped.counts
        ratings, codes = mapped.ratings, mapped.categories
    unit = "comparison" if pairwise else "item"
    keys = ["system", "replicate", unit, "turn", "principle", "judge"]
    repeated = rows.duplicated(keys, keep=False)
    if repeated.any():
        first, second = np.flatnonzero(repeated.to_numpy())[:2]
        raise ValueError(f"{where}rows {first + 1} and {second + 1} judge the same cell ({', '.join(keys)})")

    extra_coords: dict[str, tuple[str, list[Any]]] = {}
    if pairwise:
        comparisons = sorted(set(rows["comparison"]))
        item_keys, items = comparisons, list(range(len(comparisons)))
        extra_coords = {"item_id": ("item", [c[0] for c in comparisons]), "system_a": ("item", [c[1] for c in comparisons]),
                        "system_b": ("item", [c[2] for c in comparisons])}
    else:
        item_keys, items = item_labels(rows["item"])
        extra_coords = {"item_id": ("item", item_keys)}
    systems = sorted(rows["system"].unique())
    judges = sorted(rows["judge"].unique())
    if codes is not None and not nominal:
        extra_coords.update(scale_coords([scale] * len(judges), [codes] * len(judges)))
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
        coords=extra_coords,
        attrs={"source": "long table", "scale": scale,
               "label_kind": "nominal" if nominal or scale in NOMINAL else scale,
               "categories": {as_text(k): v for k, v in _mapping_used(labels, categories, scale).items()},
               "unmapped": dict(unmapped), "n_unmapped": int(sum(unmapped.values()))},
    )
    positions = {
        "system": rows["system"].map({v: i for i, v in enumerate(systems)}).to_numpy(),
        "replicate": rows["replicate"].map({v: i for i, v in enumerate(replicates)}).to_numpy(),
        "item": rows[unit].map({v: i for i, v in enumerate(item_keys)}).to_numpy(),
        "turn": rows["turn"].to_numpy() - 1,
        "principle": rows["principle"].map({v: i for i, v in enumerate(principles)}).to_numpy(),
        "judge": rows["judge"].map({v: i for i, v in enumerate(judges)}).to_numpy(),
    }
    index = tuple(positions[d] for d in ("system", "replicate", "item", "turn", "principle", "judge"))
    # (system, replicate, item, turn, principle, judge) with role/user_sim/condition squeezed
    grid = np.full(
        (len(systems), len(replicates), len(item_keys), cube.sizes["turn"], len(principles), len(judges)),
        S.NOT_APPLICABLE,
        dtype=np.int8,
    )
    judged_turn = np.zeros(grid.shape[:4], dtype=bool)
    judged_turn[positions["system"], positions["replicate"], positions["item"], positions["turn"]] = True
    rated = np.zeros(grid.shape[:3] + grid.shape[4:], dtype=bool)
    rated[positions["system"], positions["replicate"], positions["item"], positions["principle"], positions["judge"]] = True
    unrated = judged_turn[..., None, None] & ~rated[:, :, :, None, :, :]
    grid[unrated] = S.MISSING
    grid[index] = rows["severity"].to_numpy()
    cube["severity"].values[:, 0, 0, 0] = grid
    if ratings is not None:
        cube["rating"] = _per_cell(cube, index, ratings, np.float32, np.nan)
    if position is not None:
        cube["position_a"] = _per_cell(cube, index, _positions(table, position, where), np.int8, 0)
    not_recorded = S.MISSING_REASONS.index("not_recorded")
    no_verdict = np.bincount(positions["judge"][rows["unmapped"].to_numpy(dtype=bool)], minlength=len(judges))
    cube["missing_count"].values[:, not_recorded] = (grid == S.MISSING).sum(axis=(0, 1, 2, 3, 4)) - no_verdict
    cube["missing_count"].values[:, S.MISSING_REASONS.index("no_verdict")] = no_verdict
    conversation = judged_turn.any(axis=-1)
    cube["ended"].values[:, 0, 0, 0] = np.where(conversation, "completed", "")  # no row: not in the data
    return cube


PAIRS = "pairs"
"""The one ``system`` label of a pairwise cube (the compared systems are coordinates of ``item``)."""


def _check_options(scale: str, *, system: str | None, system_a: str | None, system_b: str | None,
                   position: str | None, labels: Any, categories: Any, nominal: bool, where: str) -> bool:
    """Whether the table is pairwise; raises on options that do not fit ``scale``."""
    if scale not in SCALES:
        raise ValueError(f"{where}scale={scale!r}: expected one of {', '.join(SCALES)}")
    pairwise = scale == "pairwise"
    if pairwise and (system_a is None or system_b is None or system is not None):
        raise ValueError(f"{where}scale='pairwise' needs system_a= and system_b= (the compared systems' columns), not system=")
    if not pairwise and (system is None or system_a is not None or system_b is not None or position is not None):
        raise ValueError(f"{where}scale={scale!r} needs system= (system_a=, system_b= and position= are for scale='pairwise')")
    if labels is not None and (scale != "severity" or categories is not None):
        raise ValueError(f"{where}labels= maps raw labels to severity codes: use categories= with scale={scale!r}")
    if nominal and labels is None:
        raise ValueError(f"{where}nominal=True goes with labels= (codes of your own); name a nominal scale with scale=")
    return pairwise


def _mapping_used(labels: Any, categories: Any, scale: str) -> dict:
    if labels is not None:
        return dict(labels)
    if isinstance(categories, Mapping):
        return dict(categories)
    return {}


def _per_cell(cube: xr.Dataset, index: tuple[np.ndarray, ...], values: np.ndarray, dtype: Any, blank: Any) -> xr.DataArray:
    """A variable over the severity dims holding ``values`` at the rows' cells, ``blank`` elsewhere."""
    out = np.full(cube["severity"].shape, blank, dtype=dtype)
    squeezed = out[:, 0, 0, 0]
    squeezed[index] = values
    return xr.DataArray(out, dims=cube["severity"].dims)


def _positions(table: pd.DataFrame, column: str, where: str) -> np.ndarray:
    """1 or 2 per row: where system_a's response was shown; 0 unknown (empty)."""
    words = {"1": 1, "2": 2, "first": 1, "second": 2}
    out = np.zeros(len(table), dtype=np.int8)
    for row, value in enumerate(table[column], start=1):
        if is_blank(value):
            continue
        found = words.get(as_text(value).casefold())
        if found is None:
            raise ValueError(f"{where}row {row}: column {column!r} holds {value!r}; expected 1, 2, first or second")
        out[row - 1] = found
    return out


def _labels(table: pd.DataFrame, column: str, where: str) -> pd.Series:
    values = table[column]
    empty = values.isna()
    if empty.any():
        raise ValueError(f"{where}row {int(np.flatnonzero(empty.to_numpy())[0]) + 1}: column {column!r} is empty")
    return values.map(as_text)


def _integers(table: pd.DataFrame, column: str, where: str, *, minimum: int) -> pd.Series:
    out = []
    for row, value in enumerate(table[column], start=1):
        number = integer(value)
        if number is None or number < minimum:
            raise ValueError(f"{where}row {row}: column {column!r} holds {value!r}; expected an integer >= {minimum}")
        out.append(number)
    return pd.Series(out, dtype=np.int64)


def _mapped_scores(
    table: pd.DataFrame, column: str, where: str, labels: Mapping[Hashable, int]
) -> tuple[pd.Series, pd.Series, Counter]:
    """Codes of the raw labels in ``column``, which rows no key covered, and the count of each such value."""
    allowed = {S.FULL_ADHERENCE, S.PARTIAL_DEVIATION, S.CLEAR_BREACH, S.MISSING, S.NOT_APPLICABLE}
    bad = {k: v for k, v in labels.items() if integer(v) not in allowed}
    if bad:
        raise ValueError(f"labels=: codes must be 0, 1, 2 (or -1, -2); got {bad}")
    by_text = {as_text(k): int(v) for k, v in labels.items()}
    out, flags, unmapped = [], [], Counter()
    for value in table[column]:
        code, uncovered = S.MISSING, False
        if not is_blank(value):
            found = labels[value] if value in labels else by_text.get(as_text(value))
            if found is None:
                unmapped[as_text(value)] += 1
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
        if is_blank(value):
            out.append(S.MISSING)
            continue
        number = integer(value)
        if number not in allowed:
            raise ValueError(
                f"{where}row {row}: column {column!r} holds {value!r}; expected a severity 0, 1 or 2 "
                "(or -1 missing, -2 not applicable, or empty)"
            )
        out.append(number)
    return pd.Series(out, dtype=np.int8)
