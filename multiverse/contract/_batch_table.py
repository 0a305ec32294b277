"""Events tables into the flat event arrays of :mod:`._kernel`, from categorical or arrow string columns."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import xarray as xr

from multiverse.contract._batch_dicts import _representable
from multiverse.contract._kernel import _INT64_MAX, _INT64_MIN, _UNKNOWN, _dataset, _Events, _Groups, _judge
from multiverse.contract._lanes import add_lanes, lanes_of
from multiverse.contract._rules import CaseFormatError, ContractRules, read_case, read_contract, session_start

COLUMNS: tuple[str, ...] = ("case_id", "event", "turn", "actor", "action", "set_role")
"""Columns of an events table."""

OPTIONAL_COLUMNS: tuple[str, ...] = ("session_start",)
"""Optional columns: ``session_start`` (boolean, nulls for absent; read from each case's first row)."""

_VALUE_COLUMNS = ("actor", "action", "set_role")
_THREADED_ROWS = 100_000  # from this many rows, arrow string columns are encoded in threads


def _action_codes(codes: np.ndarray, names: list, vocabulary: dict[str, int]) -> np.ndarray:
    """Vocabulary index of each action (-2 outside it); ``codes`` index ``names``."""
    table = [vocabulary.get(u, _UNKNOWN) if isinstance(u, str) else _UNKNOWN for u in names]
    return np.asarray(table, dtype=np.int8 if len(vocabulary) < 127 else np.int64).take(codes)


def _arrow_strings(column: pd.Series) -> pa.Array | None:
    """The pyarrow array behind an arrow-backed string column, else ``None``."""
    dtype = column.dtype
    if isinstance(dtype, pd.ArrowDtype):
        kind = dtype.pyarrow_dtype
    elif isinstance(dtype, pd.StringDtype) and dtype.storage == "pyarrow":
        kind = pa.string()
    else:
        return None
    if not (pa.types.is_string(kind) or pa.types.is_large_string(kind)):
        return None
    values = pa.array(column.array)
    return values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values


def _column_codes(column: pd.Series) -> tuple[np.ndarray, list, int]:
    """Integer codes of any string column, the values they index, and the code of a null.

    Categorical codes are used as they are (-1 for null); arrow strings are
    encoded by pyarrow, which keeps a null as one more value (``None``) rather
    than spend a pass on replacing its code.
    """
    if isinstance(column.dtype, pd.CategoricalDtype):
        return column.cat.codes.to_numpy(), column.cat.categories.to_numpy(dtype=object).tolist(), -1
    strings = _arrow_strings(column)
    if strings is not None:
        encoded = pc.dictionary_encode(strings, null_encoding="encode")
        values = encoded.dictionary.to_pylist()
        null = values.index(None) if encoded.dictionary.null_count else -1
        return encoded.indices.to_numpy(), values, null
    codes, uniques = pd.factorize(column, use_na_sentinel=True)
    return np.asarray(codes), list(uniques), -1


def _turn_column(column: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Turn values (int64) and whether each is an integer.

    Integer columns (nullable ones too, nulls excepted) hold integer turns; a
    float column (what an integer column with missing values becomes) holds one
    where the value is integral; an object column where the value is a Python
    or numpy integer (never a bool); bool and string columns hold none.
    """
    dtype = column.dtype
    n = len(column)
    if pd.api.types.is_bool_dtype(dtype):
        return np.zeros(n, dtype=np.int64), np.zeros(n, dtype=bool)
    if pd.api.types.is_integer_dtype(dtype):
        valid = ~column.isna().to_numpy()
        values = column.to_numpy(dtype=np.int64, na_value=0) if not valid.all() else column.to_numpy(dtype=np.int64)
        return values, valid
    if pd.api.types.is_float_dtype(dtype):
        raw = column.to_numpy(dtype=np.float64, na_value=np.nan)
        valid = np.isfinite(raw) & (np.floor(raw) == raw) & (np.abs(raw) < 2.0**63)
        return np.where(valid, raw, 0).astype(np.int64), valid
    if dtype == object:
        items = column.tolist()
        valid = np.fromiter(
            (isinstance(t, (int, np.integer)) and not isinstance(t, (bool, np.bool_)) and _INT64_MIN <= t <= _INT64_MAX
             for t in items),
            dtype=bool,
            count=n,
        )
        values = np.fromiter((int(t) if ok else 0 for t, ok in zip(items, valid)), dtype=np.int64, count=n)
        return values, valid
    return np.zeros(n, dtype=np.int64), np.zeros(n, dtype=bool)


@dataclass
class _CaseRows:
    """The rows of a table grouped by case, cases in order of first appearance."""

    order: np.ndarray | None  # row permutation that groups them; None when they already are
    case_break: np.ndarray  # (rows,) in grouped order: the row starts a case
    case_ids: np.ndarray  # (cases,) object


def _breaks(codes: np.ndarray) -> np.ndarray:
    """Rows whose code differs from the previous row's (the first row included)."""
    out = np.ones(len(codes), dtype=bool)
    np.not_equal(codes[1:], codes[:-1], out=out[1:])
    return out


def _case_rows(column: pd.Series, event: np.ndarray) -> _CaseRows:
    """Group the rows by case, then event.

    Rows already grouped (each case one block, events not decreasing within
    it, as :func:`to_events_table` writes them) keep their order.  That check
    compares adjacent rows only, so an arrow column of case ids is never hashed
    then; otherwise the rows are sorted by (first appearance of the case, event).
    """
    strings = _arrow_strings(column)
    if strings is not None:
        if strings.null_count:
            null = strings.is_null().to_numpy(zero_copy_only=False)
            raise ValueError(f"events table: row {int(np.argmax(null))}: case_id is null")
        case_break = np.ones(len(strings), dtype=bool)
        case_break[1:] = pc.not_equal(strings[1:], strings[:-1]).to_numpy(zero_copy_only=False)
        blocks = strings.take(np.flatnonzero(case_break))
        one_block_each = pc.count_distinct(blocks).as_py() == len(blocks)
        case_ids = np.asarray(blocks.to_pylist(), dtype=object)
    else:
        codes, values, _ = _column_codes(column)
        if codes.min() < 0:
            raise ValueError(f"events table: row {int(np.argmin(codes))}: case_id is null")
        case_break = _breaks(codes)
        one_block_each = np.bincount(codes[case_break]).max() <= 1
        case_ids = np.asarray(values, dtype=object)[codes[case_break]]
    if one_block_each and not (~case_break[1:] & (event[1:] < event[:-1])).any():
        return _CaseRows(None, case_break, case_ids)
    codes, values, _ = _column_codes(column)
    _, first_row = np.unique(codes, return_index=True)
    rank = np.empty(int(codes.max()) + 1, dtype=np.int64)
    rank[codes[np.sort(first_row)]] = np.arange(len(first_row))
    order = np.lexsort((event, rank[codes]))
    case_break = _breaks(codes[order])
    return _CaseRows(order, case_break, np.asarray(values, dtype=object)[codes[order][case_break]])


def _check_positions(event: np.ndarray, new_event: np.ndarray, case_break: np.ndarray, case_ids: np.ndarray) -> None:
    """Raise if the events of some case do not run 0, 1, 2, ... (rows grouped by case)."""
    starts = np.flatnonzero(new_event)
    case_of_event = np.cumsum(case_break[starts]) - 1
    position = np.arange(len(starts)) - np.flatnonzero(case_break[starts])[case_of_event]
    bad = np.flatnonzero(event[starts] != position)
    if len(bad):
        k = bad[0]
        raise ValueError(
            f"events table: case {case_ids[case_of_event[k]]!r}: event positions must run "
            f"0, 1, 2, ... (found {event[starts][k]} where {position[k]} was expected)"
        )


def _later(pool: ThreadPoolExecutor | None, fn: Callable, *args: Any) -> Future:
    """``pool.submit(fn, *args)``, or ``fn(*args)`` run now when there is no pool."""
    if pool is not None:
        return pool.submit(fn, *args)
    done: Future = Future()
    try:
        done.set_result(fn(*args))
    except Exception as error:  # raised where the result is read, as from a pool
        done.set_exception(error)
    return done


def _from_table(table: pd.DataFrame, contract: Any) -> xr.Dataset:
    if contract is None:
        raise TypeError("evaluate_batch: an events table needs contract=")
    rules = read_contract(contract)
    missing = [c for c in COLUMNS if c not in table.columns]
    if missing:
        raise ValueError(f"events table: missing column {missing[0]!r} (expected {', '.join(COLUMNS)})")
    # Hashing arrow strings releases the GIL: a large table encodes them on a second core.
    threaded = len(table) >= _THREADED_ROWS and any(_arrow_strings(table[n]) is not None for n in _VALUE_COLUMNS)
    pool = ThreadPoolExecutor(max_workers=2) if threaded else None
    try:
        encoded = {name: _later(pool, _column_codes, table[name]) for name in _VALUE_COLUMNS}
        return _judge_table(table, rules, {name: future.result for name, future in encoded.items()})
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)


def _judge_table(table: pd.DataFrame, rules: ContractRules, encoded: dict[str, Callable]) -> xr.Dataset:
    """Judge an events table; ``encoded[name]()`` gives the codes of a value column."""
    groups = _Groups()
    groups.add(rules)
    n_rows = len(table)
    event_column = table["event"]
    if not pd.api.types.is_integer_dtype(event_column.dtype) or event_column.isna().any():
        raise ValueError(f"events table: column 'event' must hold integers, got {event_column.dtype}")
    event = event_column.to_numpy(dtype=np.int64)
    if not n_rows:
        none = np.zeros(0, dtype=np.int64)
        empty = _Events(none, none, none, None, none, [], none, none, none, none)
        judged = _judge(empty, groups)
        return add_lanes(_dataset(np.empty(0, dtype=object), judged), lanes_of(judged, none, lambda k: rules, lambda k: None, ()))

    grouped = _case_rows(table["case_id"], event)
    case_break, case_ids = grouped.case_break, grouped.case_ids

    def rows(values: np.ndarray) -> np.ndarray:
        return values if grouped.order is None else values[grouped.order]

    event = rows(event)
    step = event[1:] - event[:-1]
    new_event = case_break.copy()
    new_event[1:] |= step != 0
    block_start = np.flatnonzero(case_break)
    if event[block_start].any() or (~case_break[1:] & (step > 1)).any():
        _check_positions(event, new_event, case_break, case_ids)

    turn, turn_is_int = (rows(a) for a in _turn_column(table["turn"]))
    actor_code, actor_names, _ = encoded["actor"]()  # a null actor is unknown whatever its code
    role_code, role_values, no_role = encoded["set_role"]()
    action_code, action_values, no_action = encoded["action"]()
    actor_code, role_code, action_code = rows(actor_code), rows(role_code), rows(action_code)
    role_table = np.asarray(
        [groups.role_index[0].get(v, _UNKNOWN) if isinstance(v, str) else _UNKNOWN for v in role_values] + [-1],
        dtype=np.int64,
    )
    role_table[no_role] = -1
    action_rows = np.flatnonzero(action_code != no_action)

    if new_event.all():  # one row per event
        case_len = np.diff(block_start, append=n_rows)
        action_event = action_rows
    else:
        starts = np.flatnonzero(new_event)
        row_event = np.cumsum(new_event) - 1
        set_role = role_table[role_code]
        for name, values in (("turn", turn), ("turn", turn_is_int), ("actor", actor_code), ("set_role", set_role)):
            differs = np.flatnonzero(values != values[starts][row_event])
            if len(differs):
                k = starts[row_event[differs[0]]]
                raise ValueError(
                    f"events table: case {case_ids[np.count_nonzero(case_break[:k + 1]) - 1]!r} event {event[k]}: "
                    f"rows of one event disagree on {name}"
                )
        case_len = np.diff(row_event[block_start], append=len(starts))
        action_event = row_event[action_rows]
        turn, turn_is_int, actor_code, role_code = (a[starts] for a in (turn, turn_is_int, actor_code, role_code))
    setters = np.flatnonzero(role_code != no_role)
    started = None
    if "session_start" in table.columns:
        flags = rows(table["session_start"].to_numpy(dtype=object, na_value=None))[block_start]
        started = np.asarray([-1 if f is None else int(bool(f)) for f in flags], dtype=np.int8)
    flat = _Events(
        case_len=case_len,
        group_of_case=np.zeros(len(case_len), dtype=np.int64),
        turn=turn,
        turn_is_int=None if turn_is_int.all() else turn_is_int,
        actor_code=actor_code,
        actor_names=actor_names,
        setters=setters,
        set_role=role_table[role_code[setters]],
        action_event=action_event,
        action=_action_codes(action_code[action_rows], action_values, groups.action_index[0]),
        started=started,
    )
    judged = _judge(flat, groups)
    lanes = lanes_of(judged, judged["n_actions"], lambda k: rules, lambda k: None, ())
    return add_lanes(_dataset(case_ids, judged), lanes)


def to_events_table(cases: Sequence) -> pd.DataFrame:
    """The events table of case dicts (see :func:`multiverse.contract.to_events_table`)."""
    rows: dict[str, list] = {name: [] for name in COLUMNS}
    flags: list[bool | None] = []
    for i, case in enumerate(cases):
        case_id, _, transcript = read_case(case, where=f"cases[{i}]")
        flag = session_start(case, where=f"cases[{i}]")
        if not transcript:
            raise CaseFormatError(f"cases[{i}].transcript: an events table cannot hold an empty transcript")
        for position, event in enumerate(transcript):
            if not _representable(event):
                raise CaseFormatError(f"cases[{i}].transcript[{position}]: not representable as table rows")
            for action in event.get("observed_actions") or [None]:
                rows["case_id"].append(case_id)
                rows["event"].append(position)
                rows["turn"].append(event.get("turn"))
                rows["actor"].append(event.get("actor"))
                rows["action"].append(action)
                rows["set_role"].append(event.get("set_role"))
                flags.append(flag)
    turns = rows["turn"]
    frame = pd.DataFrame(
        {
            "case_id": pd.Categorical(rows["case_id"]),
            "event": np.asarray(rows["event"], dtype=np.int64),
            "turn": pd.Series(turns, dtype=np.int64 if all(type(t) is int for t in turns) else object),
            **{name: pd.Categorical(rows[name]) for name in ("actor", "action", "set_role")},
        }
    )
    if any(flag is not None for flag in flags):
        frame["session_start"] = pd.array(flags, dtype="boolean")
    return frame
