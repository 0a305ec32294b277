"""Cases captured to files, judged without a Python dict per event.

:func:`read_case_files` is what :func:`~multiverse.contract.evaluate_batch` does
with a path: a JSONL file (one case per line), a folder of case files
(``*.json``, one case each), or a parquet file (a case table or an events table).

JSON text is parsed by pyarrow's JSON reader straight into columns, against an
explicit schema of the fields the evaluator reads (``turn`` int64, ``actor``,
``set_role`` and ``text`` strings, ``observed_actions`` a list of strings); the
columns become the flat arrays of :mod:`._kernel`.  pyarrow refuses every value
outside that schema (a float, boolean or string turn, a number where a name
belongs, an event that is not an object, a repeated key, a turn beyond int64),
and then the whole input is read the plain way, ``json.loads`` per case and the
dict path, so verdicts and error messages are exactly those of
:func:`~multiverse.contract.evaluate_case` whatever the input holds.  Records
the columns cannot decide are also read the plain way, one by one: a record
with request metadata (whose mere presence matters, and a column cannot tell
an absent key from a null) or whose contract cannot be located by its key.

Contracts are not column-shaped (role names are keys), so each record's
contract is decoded by the standard library from its own bytes, once per
distinct text: the records of a file usually share one contract byte for byte.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import xarray as xr

from multiverse.contract._batch_dicts import _combine, _from_dicts, _judged
from multiverse.contract._evidence import _claim_matcher
from multiverse.contract._kernel import _UNKNOWN, _case_of, _dataset, _Events, _Groups, _judge
from multiverse.contract._lanes import add_lanes, evidence_candidates, lanes_of
from multiverse.contract._rules import ACTORS, REQUEST_METADATA, CaseFormatError, ContractRules, read_contract
from multiverse.core.files import STRICT_JSON, InputFileError, read_regular

__all__ = ["read_case_files"]

_EVENT = pa.struct(
    [
        ("turn", pa.int64()),
        ("actor", pa.string()),
        ("set_role", pa.string()),
        ("observed_actions", pa.list_(pa.string())),
        ("text", pa.string()),
    ]
)
_SCHEMA = pa.schema(
    [
        ("case_id", pa.string()),
        ("session_start", pa.bool_()),
        ("contract", pa.struct([("version", pa.string())])),
        ("transcript", pa.list_(_EVENT)),
    ]
)
_METADATA_KEYS = tuple(f'"{key}"'.encode() for key in REQUEST_METADATA)
_BLOCK = 1 << 24  # bytes per block of pyarrow's reader (blocks are parsed on its thread pool)


_DECODER = STRICT_JSON  # no NaN or Infinity, no key repeated within an object


class _Plain(Exception):
    """The columns cannot represent the input exactly: read it the plain way."""


def read_case_files(path: str | os.PathLike, *, contract: Any = None) -> xr.Dataset:
    """Judge the cases in a JSONL file, a folder of case files or a parquet file.

    See :func:`multiverse.contract.evaluate_batch`; ``contract`` is the default
    contract of records without one (required for an events table in parquet).
    """
    where = Path(path)
    if where.is_dir():
        files = sorted(p for p in where.iterdir() if p.is_file() and p.name.endswith(".json"))
        records = _Files([_read(p) for p in files])
        names = [str(p) for p in files]
        return _from_records(records, names, multiline=True, default=contract)
    if not where.is_file():
        raise FileNotFoundError(f"{where}: no such file or folder")
    if where.suffix == ".parquet":
        return _from_parquet(where, contract)
    records = _Records(_read(where))
    names = [f"{where}:{number}" for number in records.lines]
    return _from_records(records, names, multiline=False, default=contract)


def _read(path: Path) -> bytes:
    """A case file's bytes without a UTF-8 BOM (regular files only, under the input cap)."""
    try:
        return read_regular(path, what="case file").removeprefix(b"\xef\xbb\xbf")
    except InputFileError as exc:
        raise CaseFormatError(str(exc)) from None


class _Records:
    """The non-blank lines of a JSONL text as (start, end) spans; a line is copied only when asked for."""

    def __init__(self, buffer: bytes) -> None:
        self.buffer = buffer
        self.spans: list[tuple[int, int]] = []
        self.lines: list[int] = []
        start, number, find = 0, 1, buffer.find
        while start <= len(buffer):
            end = find(b"\n", start)
            end = len(buffer) if end < 0 else end
            blank = end == start or (buffer[start : start + 1].isspace() and buffer[start:end].isspace())
            if not blank:
                self.spans.append((start, end))
                self.lines.append(number)
            start, number = end + 1, number + 1

    def __len__(self) -> int:
        return len(self.spans)

    def __getitem__(self, k: int) -> bytes:
        start, end = self.spans[k]
        return self.buffer[start:end]


class _Files(_Records):
    """Whole files joined by newlines, each one record."""

    def __init__(self, texts: list[bytes]) -> None:
        self.buffer = b"\n".join(texts)
        self.spans, start = [], 0
        for text in texts:
            self.spans.append((start, start + len(text)))
            start += len(text) + 1


def _plain_cases(records: Sequence[bytes], names: Sequence[str]) -> list[Any]:
    """``json.loads`` of each record, strict JSON; errors name the record."""
    cases = []
    for k, name in enumerate(names):
        record = records[k]
        try:
            cases.append(_DECODER.decode(record.decode("utf-8")))
        except UnicodeDecodeError as exc:
            raise CaseFormatError(f"{name}: not UTF-8 text (byte {exc.start})") from None
        except json.JSONDecodeError as exc:
            raise CaseFormatError(f"{name}: not valid JSON: {exc.msg} at column {exc.colno}") from None
        except (ValueError, RecursionError) as exc:
            raise CaseFormatError(f"{name}: not valid JSON: {exc}") from None
    return cases


def _from_records(records: _Records, names: list[str], *, multiline: bool, default: Any) -> xr.Dataset:
    """Judge records (JSONL lines or whole files)."""
    default_rules = None if default is None else read_contract(default)
    buffer = records.buffer
    try:
        table = _parse(buffer, len(records), multiline=multiline)
    except _Plain:
        return _from_dicts(_plain_cases(records, names), default, names=names)
    contracts = _Contracts(default_rules)
    plain = []
    if any(key in buffer for key in _METADATA_KEYS):  # a few fast scans of all the text; per record only then
        plain = [k for k in range(len(records)) if any(key in records[k] for key in _METADATA_KEYS)]
    plain_set = set(plain)
    rules: list[ContractRules | None] = []
    contract_valid = table.column("contract").is_valid().to_numpy(zero_copy_only=False)
    for k, (start, end) in enumerate(records.spans):
        found = None if k in plain_set else contracts.of(buffer, start, end, bool(contract_valid[k]), names[k])
        if found is None and k not in plain_set:
            plain.append(k)
            plain_set.add(k)
        rules.append(found)
    plain.sort()
    fast = np.setdiff1d(np.arange(len(records)), np.asarray(plain, dtype=np.int64))
    case_ids = table.column("case_id").combine_chunks()
    if case_ids.null_count and fast.size and case_ids.take(pa.array(fast)).null_count:
        return _from_dicts(_plain_cases(records, names), default, names=names)
    plain_cases = []
    if plain:
        table = table.take(pa.array(fast))
        plain_cases = _plain_cases([records[k] for k in plain], [names[k] for k in plain])
    fast_rules = [rules[k] for k in fast.tolist()]
    return _judge_parts(table, fast_rules, fast, plain_cases, np.asarray(plain, dtype=np.int64), default, names)


def _parse(buffer: bytes, n_records: int, *, multiline: bool) -> pa.Table:
    """pyarrow's columns of the records, or :class:`_Plain` when they would not be exact."""
    import pyarrow.json as pj

    if not n_records:
        raise _Plain
    options = pj.ParseOptions(explicit_schema=_SCHEMA, unexpected_field_behavior="ignore",
                              newlines_in_values=multiline)
    try:
        table = pj.read_json(pa.BufferReader(buffer), read_options=pj.ReadOptions(block_size=_BLOCK),
                             parse_options=options)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        raise _Plain from None
    if table.num_rows != n_records:  # two objects on a line, or a record that is not an object
        raise _Plain
    transcript = table.column("transcript").combine_chunks()
    if transcript.null_count or transcript.flatten().null_count:  # a missing transcript, a null event
        raise _Plain
    return table


class _Contracts:
    """Each record's contract, decoded from its own bytes once per distinct text."""

    def __init__(self, default: ContractRules | None) -> None:
        self.default = default
        self.by_text: dict[bytes, ContractRules] = {}
        self.recent: list[bytes] = []

    def of(self, buffer: bytes, start: int, end: int, present: bool, name: str) -> ContractRules | None:
        """The rules of the record ``buffer[start:end]``, or ``None`` when it must be read the plain way."""
        key = b'"contract"'
        count = buffer.count(key, start, end)
        if not present:
            return self.default if count == 0 else None
        if count != 1:
            return None
        at = buffer.index(key, start, end) + len(key)
        while buffer[at : at + 1] in (b" ", b"\t", b"\r", b"\n"):
            at += 1
        if buffer[at : at + 1] != b":":
            return None
        at += 1
        while buffer[at : at + 1] in (b" ", b"\t", b"\r", b"\n"):
            at += 1
        for text in self.recent:
            if buffer.startswith(text, at, end):
                return self.by_text[text]
        try:
            rest = buffer[at:end].decode("utf-8")
            value, stop = _DECODER.raw_decode(rest)
        except (ValueError, RecursionError):
            return None
        text = rest[:stop].encode("utf-8")
        try:
            rules = read_contract(value, field=f"{name}: contract")
        except CaseFormatError:  # the plain reading reports it, after the checks that come first
            return None
        self.by_text[text] = rules
        self.recent.insert(0, text)
        del self.recent[8:]
        return rules


def _judge_parts(
    table: pa.Table,
    rules: list[ContractRules],
    fast: np.ndarray,
    plain_cases: list[Any],
    plain: np.ndarray,
    default: Any,
    names: list[str],
) -> xr.Dataset:
    """Judge the columnar records and the plain ones, joined back in record order."""
    groups = _Groups()
    group_of_case = np.asarray([groups.add(r) for r in rules], dtype=np.int64)
    transcript = table.column("transcript").combine_chunks()
    events = transcript.flatten()
    case_len = np.diff(transcript.offsets.to_numpy())
    started = table.column("session_start").combine_chunks()
    codes = np.where(started.is_valid().to_numpy(zero_copy_only=False),
                     started.fill_null(False).to_numpy(zero_copy_only=False).astype(np.int8), -1).astype(np.int8)
    flat = _arrow_events(events, case_len, group_of_case, groups, codes if (codes != -1).any() else None)
    parts = [_judge(flat, groups)]
    ids = table.column("case_id").to_pylist()
    lanes = [_arrow_lanes(parts[0], events, flat, groups, group_of_case, codes)]
    if len(plain):
        dicts = _from_dicts_parts(plain_cases, default, [names[k] for k in plain.tolist()])
        parts.append(dicts["judged"])
        lanes.append(dicts["lanes"])
        ids += dicts["ids"]
    order = np.concatenate([fast, plain]).astype(np.int64)
    judged = _combine(parts, order) if len(plain) else parts[0]
    case_ids = np.empty(len(order), dtype=object)
    case_ids[order] = ids
    joined = {}
    for name in lanes[0]:
        values = np.concatenate([part[name] for part in lanes])
        joined[name] = np.empty_like(values)
        joined[name][order] = values
    return add_lanes(_dataset(case_ids, judged), joined)


def _from_dicts_parts(cases: list[Any], default: Any, names: list[str]) -> dict[str, Any]:
    """Verdicts and lanes of case dicts, as :func:`_judge_parts` joins them."""
    from multiverse.contract._batch_dicts import _read_cases, in_case_order

    ids, groups, group_of_case, transcripts, flags = _read_cases(cases, default, names)
    judged = in_case_order(_judged(transcripts, group_of_case, groups, flags))
    lanes = lanes_of(judged, judged["n_actions"], lambda k: groups.rules[group_of_case[k]], transcripts.__getitem__,
                     evidence_candidates(transcripts, judged), flags.__getitem__)
    return {"judged": judged, "lanes": lanes, "ids": ids}


def _encode(values: pa.Array) -> tuple[np.ndarray, list]:
    """Dictionary codes of a string array (nulls get their own code) and the values they index."""
    encoded = pc.dictionary_encode(values, null_encoding="encode")
    return encoded.indices.to_numpy(zero_copy_only=False), encoded.dictionary.to_pylist()


def _arrow_events(
    events: pa.StructArray, case_len: np.ndarray, group_of_case: np.ndarray, groups: _Groups,
    started: np.ndarray | None,
) -> _Events:
    """The flat arrays of :mod:`._kernel` from the event columns."""
    turn = events.field("turn")
    turn_is_int = turn.is_valid().to_numpy(zero_copy_only=False)
    turn_values = turn.fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
    actor_codes, actor_values = _encode(events.field("actor"))
    actor_names = list(dict.fromkeys([*ACTORS, *(r.trusted_actor for r in groups.rules)]))
    actor_number = {name: i for i, name in enumerate(actor_names)}
    actor_table = np.asarray([actor_number.get(v, -1) if v is not None else -1 for v in actor_values] + [-1])
    case_start = np.cumsum(case_len) - case_len

    roles = events.field("set_role")
    setters = np.flatnonzero(roles.is_valid().to_numpy(zero_copy_only=False))
    role_codes, role_values = _encode(roles.take(pa.array(setters, type=pa.int64())))
    set_role = _local(role_codes, role_values, group_of_case[_case_of(setters, case_start)], groups.role_index)

    actions = events.field("observed_actions")
    lengths = pc.list_value_length(actions).fill_null(0).to_numpy(zero_copy_only=False)
    action_event = np.repeat(np.arange(len(events), dtype=np.int64), lengths)
    flat_actions = pc.list_flatten(actions)
    action_codes, action_values = _encode(flat_actions)
    action = _local(action_codes, action_values, group_of_case[_case_of(action_event, case_start)],
                    groups.action_index)
    return _Events(
        case_len=case_len.astype(np.int64),
        group_of_case=group_of_case,
        turn=turn_values,
        turn_is_int=None if turn_is_int.all() else turn_is_int,
        actor_code=actor_table[actor_codes] if len(actor_codes) else np.zeros(0, dtype=np.int64),
        actor_names=actor_names,
        setters=setters,
        set_role=set_role,
        action_event=action_event,
        action=action,
        started=started,
    )


def _local(codes: np.ndarray, values: list, group: np.ndarray, index: list[dict[str, int]]) -> np.ndarray:
    """Group-local numbers of dictionary codes (``-2`` for a name the group's contract lacks, or null)."""
    if not len(codes):
        return np.zeros(0, dtype=np.int64)
    table = np.full((len(index), len(values)), _UNKNOWN, dtype=np.int64)
    for g, numbers in enumerate(index):
        table[g] = [numbers.get(v, _UNKNOWN) if v is not None else _UNKNOWN for v in values]
    return table[group, codes]


def _arrow_lanes(
    judged: dict[str, np.ndarray], events: pa.StructArray, flat: _Events, groups: _Groups,
    group_of_case: np.ndarray, started: np.ndarray,
) -> dict[str, np.ndarray]:
    """Lanes of the columnar records (which hold no request metadata).

    An unrecorded action claim needs assistant text that mentions a past form of
    some vocabulary verb; only clean cases with such text are rebuilt as dicts
    and checked by :func:`._evidence.review_reasons`.
    """
    clean = (judged["first_error"] == "") & (judged["n_violations"] == 0)
    case_start = np.cumsum(flat.case_len) - flat.case_len
    text = events.field("text")
    assistant = flat.actor_code == ACTORS.index("assistant")
    with_text = np.flatnonzero(assistant & text.is_valid().to_numpy(zero_copy_only=False))
    with_text = with_text[clean[_case_of(with_text, case_start)]]
    forms = sorted({form for rules in groups.rules for form in _claim_matcher(rules.vocabulary)[1]})
    if len(with_text) and forms:
        if all(form.isascii() for form in forms):
            pattern = "|".join(forms)
            hits = pc.match_substring_regex(text.take(pa.array(with_text)), pattern, ignore_case=True)
            with_text = with_text[hits.fill_null(False).to_numpy(zero_copy_only=False)]
        candidates = np.unique(_case_of(with_text, case_start)).tolist()
    else:
        candidates = []

    def transcript_of(k: int) -> list:
        rows = events.slice(int(case_start[k]), int(flat.case_len[k])).to_pylist()
        return [{key: value for key, value in row.items() if value is not None} for row in rows]

    return lanes_of(judged, judged["n_actions"], lambda k: groups.rules[group_of_case[k]], transcript_of, candidates,
                    lambda k: None if started[k] == -1 else bool(started[k]))


def _from_parquet(path: Path, contract: Any) -> xr.Dataset:
    """A parquet file: an events table (needs ``contract``) or a case table (``contract`` as JSON text)."""
    import pyarrow.parquet as pq

    from multiverse.contract._batch_table import COLUMNS, _from_table

    table = pq.read_table(path)
    if set(COLUMNS) <= set(table.column_names):
        return _from_table(table.to_pandas(types_mapper=None), contract)
    if not {"case_id", "transcript"} <= set(table.column_names):
        raise CaseFormatError(
            f"{path}: expected an events table ({', '.join(COLUMNS)}) or a case table (case_id, contract, transcript)"
        )
    cases = table.to_pylist()
    for k, case in enumerate(cases):
        if isinstance(case.get("contract"), str):
            try:
                case["contract"] = _DECODER.decode(case["contract"])
            except ValueError as exc:
                raise CaseFormatError(f"{path}: row {k}: contract: not valid JSON: {exc}") from None
        case["transcript"] = [
            {key: value for key, value in event.items() if value is not None} if isinstance(event, dict) else event
            for event in case["transcript"] or []
        ]
    return _from_dicts(cases, contract, names=[f"{path}: row {k}" for k in range(len(cases))])
