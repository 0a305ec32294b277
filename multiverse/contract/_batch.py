"""Vectorised evaluation of many cases (see :func:`multiverse.contract.evaluate_batch`).

Both inputs are reduced to the same flat arrays, one entry per event (cases
concatenated) and one per action, and judged by :func:`_judge` with numpy only:

* the active role is forward-filled within each case from the trusted,
  known-role ``set_role`` events (``np.maximum.accumulate`` over their
  positions), defaulting to the initial role;
* each action is looked up in a flat role x action allowlist matrix;
* an order error compares each integer turn with the previous integer turn of
  its case;
* per case, the first error and first violation are ``np.minimum.reduceat``
  over event positions.

Cases may use different contracts (case dicts): each distinct contract is a
*group* with its own role and action numbering, and the role rows of all
groups are stacked into one matrix.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain, repeat
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from multiverse.contract._case import walk
from multiverse.contract._rules import (
    ACTORS,
    FIXTURE_ERRORS,
    CaseFormatError,
    ContractRules,
    read_case,
    read_contract,
)

COLUMNS: tuple[str, ...] = ("case_id", "event", "turn", "actor", "action", "set_role")
"""Columns of an events table."""

_CODE = {code: number for number, code in enumerate(FIXTURE_ERRORS, start=1)}
_ERROR_NAMES = np.array([""] + list(FIXTURE_ERRORS), dtype=object)
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_UNKNOWN = -2  # code of a set_role or action the contract does not know
_PER_CASE = ("case_len", "n_violations", "first_violation_turn", "first_error", "first_error_turn", "contract_version")


@dataclass
class _Groups:
    """Distinct contracts of a batch, with stacked role numbering."""

    rules: list[ContractRules] = field(default_factory=list)
    by_key: dict[tuple, int] = field(default_factory=dict)
    role_index: list[dict[str, int]] = field(default_factory=list)
    action_index: list[dict[str, int]] = field(default_factory=list)

    def add(self, rules: ContractRules) -> int:
        key = rules.key
        group = self.by_key.get(key)
        if group is None:
            group = self.by_key[key] = len(self.rules)
            self.rules.append(rules)
            self.role_index.append({name: i for i, name in enumerate(rules.allowed)})
            self.action_index.append({name: i for i, name in enumerate(rules.vocabulary)})
        return group

    def tables(self) -> dict[str, np.ndarray]:
        """Per-group role offsets and initial roles, the stacked allowlist, role names.

        A group whose initial role is unknown gets one extra role row (that
        name, nothing allowed) so the active role is always a row.
        """
        width = max((len(r.vocabulary) for r in self.rules), default=0) or 1
        names: list[str] = []
        rows: list[np.ndarray] = []
        offset, initial, initial_unknown = [], [], []
        for rules, roles, actions in zip(self.rules, self.role_index, self.action_index):
            offset.append(len(names))
            for name, allowed in rules.allowed.items():
                row = np.zeros(width, dtype=bool)
                row[[actions[a] for a in allowed]] = True
                names.append(name)
                rows.append(row)
            unknown = rules.initial_role not in roles
            initial_unknown.append(unknown)
            initial.append(len(roles) if unknown else roles[rules.initial_role])
            if unknown:
                names.append(rules.initial_role)
                rows.append(np.zeros(width, dtype=bool))
        return {
            "offset": np.asarray(offset, dtype=np.int64),
            "initial": np.asarray(initial, dtype=np.int64),
            "initial_unknown": np.asarray(initial_unknown, dtype=bool),
            "allowed": np.concatenate(rows) if rows else np.zeros(width, dtype=bool),
            "width": np.int64(width),
            "names": np.asarray(names + [""], dtype=object),
            "version": np.asarray([r.version for r in self.rules], dtype=object),
        }


@dataclass
class _Events:
    """Flat per-event and per-action arrays of a batch, cases concatenated."""

    case_len: np.ndarray  # (cases,) events per case
    group_of_case: np.ndarray  # (cases,) contract group
    turn: np.ndarray  # (events,) int64, 0 where not an integer
    turn_is_int: np.ndarray  # (events,) bool
    actor_code: np.ndarray  # (events,) index into actor_names, -1 for a missing actor
    actor_names: list  # distinct actor values
    set_role: np.ndarray  # (events,) group-local role, -1 none, -2 not a role of the contract
    action_event: np.ndarray  # (actions,) the event of each action
    action: np.ndarray  # (actions,) group-local action, -2 outside the vocabulary


def _judge(ev: _Events, groups: _Groups) -> dict[str, np.ndarray]:
    """Judge flat event arrays; see the module docstring for the method."""
    tables = groups.tables()
    n_cases, n_events = len(ev.case_len), len(ev.turn)
    index = np.arange(n_events)
    case_start = np.zeros(n_cases, dtype=np.int64)
    np.cumsum(ev.case_len[:-1], out=case_start[1:])
    case_of_event = np.repeat(np.arange(n_cases), ev.case_len)
    start_of_event = case_start[case_of_event]
    group_of_event = ev.group_of_case[case_of_event]

    # turn order: each integer turn against the previous integer turn of its case
    if ev.turn_is_int.all():  # the usual case: compare each turn with the one before it
        order_error = np.zeros(n_events, dtype=bool)
        order_error[1:] = (ev.turn[1:] <= ev.turn[:-1]) & (start_of_event[1:] < index[1:])
    else:
        last_int = np.maximum.accumulate(np.where(ev.turn_is_int, index, -1))
        previous = np.concatenate(([-1], last_int[:-1]))
        has_previous = previous >= start_of_event
        order_error = ~ev.turn_is_int | (has_previous & (ev.turn <= ev.turn[previous]))

    # actors (tables get a trailing entry that code -1, a missing actor, picks)
    names = ev.actor_names
    is_assistant = np.asarray([a == "assistant" for a in names] + [False])[ev.actor_code]
    base_known = np.asarray([isinstance(a, str) and a in ACTORS for a in names] + [False])
    position = {a: i for i, a in enumerate(names)}
    trusted_code = np.asarray([position.get(r.trusted_actor, -2) for r in groups.rules], dtype=np.int64)
    is_trusted = ev.actor_code == trusted_code[group_of_event]
    actor_error = ~(base_known[ev.actor_code] | is_trusted)

    # role changes: trusted set_role to a known role, applied before the event's actions
    has_set = ev.set_role != -1
    untrusted = has_set & ~is_trusted
    unknown_role = has_set & is_trusted & (ev.set_role < 0)
    transition = has_set & is_trusted & (ev.set_role >= 0)
    last_transition = np.maximum.accumulate(np.where(transition, index, -1)) if n_events else index
    from_transition = last_transition >= start_of_event
    role_local = np.where(from_transition, ev.set_role[last_transition], tables["initial"][group_of_event])
    role = tables["offset"][group_of_event] + role_local

    # actions: misplaced on non-assistant events (not judged), unknown, or outside the role
    has_actions = np.bincount(ev.action_event, minlength=n_events) > 0
    misplaced = has_actions & ~is_assistant
    judged = is_assistant[ev.action_event]
    known = ev.action >= 0
    unknown_event = np.bincount(ev.action_event[judged & ~known], minlength=n_events) > 0
    cell = role[ev.action_event] * tables["width"] + np.where(known, ev.action, 0)
    outside = judged & known & ~tables["allowed"][cell]
    violating = np.bincount(ev.action_event[outside], minlength=n_events) > 0

    # each event's first error, in the check order of FIXTURE_ERRORS
    found = {
        "invalid_event_order": order_error,
        "unknown_actor": actor_error,
        "untrusted_role_transition": untrusted,
        "unknown_transition_role": unknown_role,
        "actions_on_non_assistant_event": misplaced,
        "unknown_action": unknown_event,
    }
    checks = [c for c in FIXTURE_ERRORS if c in found]
    code = np.select([found[c] for c in checks], [_CODE[c] for c in checks], 0)

    # per case: first error (case-level checks first), first violation
    nonempty = ev.case_len > 0
    first_error_event = np.full(n_cases, n_events, dtype=np.int64)
    first_violation_event = np.full(n_cases, n_events, dtype=np.int64)
    if n_events:
        starts = case_start[nonempty]
        first_error_event[nonempty] = np.minimum.reduceat(np.where(code > 0, index, n_events), starts)
        first_violation_event[nonempty] = np.minimum.reduceat(np.where(violating, index, n_events), starts)
    event_error = first_error_event < n_events
    safe_error = np.minimum(first_error_event, max(n_events - 1, 0))
    case_code = np.where(event_error, code[safe_error] if n_events else 0, 0)
    case_code = np.where(nonempty, case_code, _CODE["empty_transcript"])
    initial_unknown = tables["initial_unknown"][ev.group_of_case]
    case_code = np.where(initial_unknown, _CODE["unknown_initial_role"], case_code)
    turn_float = np.where(ev.turn_is_int, ev.turn.astype(np.float64), np.nan)
    error_turn = np.full(n_cases, np.nan)
    if n_events:
        from_event = event_error & nonempty & ~initial_unknown
        error_turn = np.where(from_event, turn_float[safe_error], np.nan)

    valid = case_code == 0
    violating &= valid[case_of_event]
    has_violation = valid & (first_violation_event < n_events)
    first_violation_turn = np.full(n_cases, np.nan)
    if n_events:
        safe_violation = np.minimum(first_violation_event, n_events - 1)
        first_violation_turn = np.where(has_violation, turn_float[safe_violation], np.nan)
    n_violations = np.bincount(case_of_event[ev.action_event[outside]], minlength=n_cases) * valid
    return {
        "case_len": ev.case_len,
        "case_of_event": case_of_event,
        "position": index - start_of_event,
        "turn": turn_float,
        "active_role": tables["names"][role] if n_events else np.empty(0, dtype=object),
        "violation": violating,
        "n_violations": n_violations.astype(np.int64),
        "first_violation_turn": first_violation_turn,
        "first_error": _ERROR_NAMES[case_code],
        "first_error_turn": error_turn,
        "contract_version": tables["version"][ev.group_of_case],
    }


def _grid(values: np.ndarray, judged: dict[str, np.ndarray], width: int, fill: Any) -> np.ndarray:
    """Per-event values laid out as (case, event), padded with ``fill``."""
    case_len = judged["case_len"]
    n_cases = len(case_len)
    in_order = judged["case_of_event"]
    if width == 0:
        return np.empty((n_cases, 0), dtype=values.dtype)
    if n_cases and (case_len == width).all() and (in_order[::width] == np.arange(n_cases)).all():
        return values.reshape(n_cases, width)
    out = np.full((n_cases, width), fill, dtype=values.dtype)
    out[judged["case_of_event"], judged["position"]] = values
    return out


def _dataset(case_ids: np.ndarray, judged: dict[str, np.ndarray]) -> xr.Dataset:
    width = int(judged["case_len"].max()) if len(judged["case_len"]) else 0
    per_case = _PER_CASE[1:]
    data = {
        "turn": (("case", "event"), _grid(judged["turn"], judged, width, np.nan)),
        "active_role": (("case", "event"), _grid(judged["active_role"], judged, width, "")),
        "violation": (("case", "event"), _grid(judged["violation"], judged, width, False)),
        "n_events": ("case", judged["case_len"].astype(np.int64)),
        **{name: ("case", judged[name]) for name in per_case},
    }
    # Every array is a well-formed numpy array built here; fastpath skips xarray's
    # scan of object (string) arrays, which costs more than the whole evaluation.
    data = {name: xr.Variable(dims, values, fastpath=True) for name, (dims, values) in data.items()}
    ds = xr.Dataset(data, coords={"case": case_ids, "event": np.arange(width)})
    ds["turn"].attrs["description"] = "the event's turn; NaN when not an integer or past the case's end"
    ds["active_role"].attrs["description"] = "active role after the event's own trusted role change"
    ds["violation"].attrs["description"] = "the event has an action outside the active role (valid cases only)"
    ds["first_error"].attrs["description"] = "code of the case's first fixture error; empty when valid"
    ds.attrs["description"] = "role-contract verdicts (multiverse.contract.evaluate_batch)"
    return ds


# --- case dicts -----------------------------------------------------------------------


def _representable(event: Any) -> bool:
    """Whether the flat arrays can hold this event exactly (else the case is walked)."""
    if type(event) is not dict:
        return False
    turn = event.get("turn")
    if isinstance(turn, int) and type(turn) not in (int, bool):
        return False
    if type(turn) is int and not _INT64_MIN <= turn <= _INT64_MAX:
        return False
    if type(event.get("actor")) not in (str, type(None)) or type(event.get("set_role")) not in (str, type(None)):
        return False
    actions = event.get("observed_actions")
    return actions is None or (type(actions) is list and all(type(a) is str for a in actions))


def _flatten_dicts(transcripts: list[list], group_of_case: np.ndarray, groups: _Groups) -> _Events | None:
    """Flat arrays of case dicts, or ``None`` when some event cannot be held in them.

    Each field is gathered by one C-level ``map`` over the events; type checks
    are ``set(map(type, ...))`` scans, and a value that cannot be looked up
    (unhashable) makes the whole batch fall back (``None``).
    """
    events = list(chain.from_iterable(transcripts))
    if set(map(type, events)) - {dict}:
        return None
    n_events = len(events)
    case_len = np.fromiter(map(len, transcripts), dtype=np.int64, count=len(transcripts))
    group_of_event = np.repeat(group_of_case, case_len)
    get = dict.get

    turns = list(map(get, events, repeat("turn")))
    kinds = set(map(type, turns))
    if any(issubclass(k, int) and k not in (int, bool) for k in kinds):
        return None
    try:
        if kinds == {int}:
            turn = np.fromiter(turns, dtype=np.int64, count=n_events)
            turn_is_int = np.ones(n_events, dtype=bool)
        else:
            turn_is_int = np.fromiter((type(t) is int for t in turns), dtype=bool, count=n_events)
            turn = np.fromiter((t if type(t) is int else 0 for t in turns), dtype=np.int64, count=n_events)
    except OverflowError:
        return None

    actions = list(map(get, events, repeat("observed_actions")))
    action_kinds = set(map(type, actions))
    if action_kinds - {list, type(None)}:  # anything else is a malformed event: walked
        return None
    if type(None) in action_kinds:
        actions = [a or () for a in actions]
    counts = np.fromiter(map(len, actions), dtype=np.int64, count=n_events)
    action_event = np.repeat(np.arange(n_events), counts)
    flat = list(chain.from_iterable(actions))

    # actors: the fixed ones and every trusted actor get codes; anything else is -1 (unknown)
    actor_names = list(dict.fromkeys([*ACTORS, *(r.trusted_actor for r in groups.rules)]))
    code = {name: i for i, name in enumerate(actor_names)}
    try:
        actor_code = np.fromiter(
            map(code.get, map(get, events, repeat("actor")), repeat(-1)), dtype=np.int64, count=n_events
        )
        set_roles = list(map(get, events, repeat("set_role")))
        if len(groups.rules) == 1:
            index = {None: -1, **groups.role_index[0]}
            set_role = np.fromiter(map(index.get, set_roles, repeat(_UNKNOWN)), dtype=np.int64, count=n_events)
            vocabulary = groups.action_index[0]
            action = np.fromiter(map(vocabulary.get, flat, repeat(_UNKNOWN)), dtype=np.int64, count=len(flat))
        else:
            set_role = np.full(n_events, -1, dtype=np.int64)
            where = np.flatnonzero(np.fromiter(set_roles, dtype=object, count=n_events) != None)  # noqa: E711
            index = groups.role_index
            set_role[where] = [index[g].get(set_roles[i], _UNKNOWN) for i, g in zip(where, group_of_event[where])]
            codes, names = pd.factorize(np.fromiter(flat, dtype=object, count=len(flat)))
            action = _action_codes(np.asarray(codes, np.int64), list(names), group_of_event[action_event], groups)
    except TypeError:  # an unhashable actor, role or action
        return None
    return _Events(case_len, group_of_case, turn, turn_is_int, actor_code, actor_names, set_role, action_event, action)


def _action_codes(codes: np.ndarray, names: list, group_of_action: np.ndarray, groups: _Groups) -> np.ndarray:
    """Group-local vocabulary index of each action (-2 outside the vocabulary).

    ``codes`` index ``names`` (the distinct action values); each group maps a
    name through its own vocabulary.
    """
    table = np.asarray(
        [[index.get(u, _UNKNOWN) if isinstance(u, str) else _UNKNOWN for u in names] for index in groups.action_index],
        dtype=np.int64,
    ).reshape(len(groups.action_index), len(names))
    return table[group_of_action, codes]


def _from_dicts(cases: Sequence, default: Any) -> xr.Dataset:
    default_rules = None if default is None else read_contract(default)
    memo: dict[int, ContractRules] = {}
    groups = _Groups()
    ids, group_of_case, transcripts = [], [], []
    for i, case in enumerate(cases):
        case_id, rules, transcript = read_case(case, where=f"cases[{i}]", contracts=memo, default=default_rules)
        ids.append(case_id)
        group_of_case.append(groups.add(rules))
        transcripts.append(transcript)
    group_of_case = np.asarray(group_of_case, dtype=np.int64)
    case_ids = np.empty(len(ids), dtype=object)
    case_ids[:] = ids

    flat = _flatten_dicts(transcripts, group_of_case, groups)
    if flat is not None:
        return _dataset(case_ids, _judge(flat, groups))
    walked_cases = [i for i, t in enumerate(transcripts) if not all(map(_representable, t))]
    flat_cases = np.setdiff1d(np.arange(len(transcripts)), walked_cases)
    parts = [_judge(_flatten_dicts([transcripts[i] for i in flat_cases], group_of_case[flat_cases], groups), groups)]
    parts += [_walked(groups.rules[group_of_case[i]], transcripts[i]) for i in walked_cases]
    order = np.concatenate([flat_cases, np.asarray(walked_cases, dtype=np.int64)])
    return _dataset(case_ids, _combine(parts, order))


def _walked(rules: ContractRules, transcript: list) -> dict[str, np.ndarray]:
    """The reference walk of one case, in the form :func:`_judge` returns."""
    result = walk(rules, transcript)
    errors = result["fixture_errors"]
    violations = [] if errors else result["violations"]
    first = errors[0] if errors else {}
    n = len(transcript)
    return {
        "case_len": np.asarray([n], dtype=np.int64),
        "case_of_event": np.zeros(n, dtype=np.int64),
        "position": np.arange(n),
        "turn": np.asarray(
            [float(e["turn"]) if isinstance(e, dict) and type(e.get("turn")) is int else np.nan for e in transcript],
            dtype=np.float64,
        ),
        "active_role": np.asarray(result["roles"] + [""], dtype=object)[:n],
        "violation": np.isin(np.arange(n), [v["event"] for v in violations]),
        "n_violations": np.asarray([len(violations)], dtype=np.int64),
        "first_violation_turn": np.asarray([violations[0]["turn"] if violations else np.nan], dtype=np.float64),
        "first_error": np.asarray([first.get("code", "")], dtype=object),
        "first_error_turn": np.asarray([first.get("turn", np.nan)], dtype=np.float64),
        "contract_version": np.asarray([rules.version], dtype=object),
    }


def _combine(parts: list[dict[str, np.ndarray]], order: np.ndarray) -> dict[str, np.ndarray]:
    """Join judged parts; ``order[k]`` is the input position of the k-th case across parts."""
    n_cases = len(order)
    joined = {name: np.concatenate([p[name] for p in parts]) for name in parts[0]}
    offsets = np.cumsum([0] + [len(p["case_len"]) for p in parts[:-1]])
    joined["case_of_event"] = order[np.concatenate([p["case_of_event"] + o for p, o in zip(parts, offsets)])]
    for name in _PER_CASE:
        values = joined[name]
        if len(values) == n_cases:
            placed = np.empty_like(values)
            placed[order] = values
            joined[name] = placed
    return joined


# --- events tables ------------------------------------------------------------------------


def _column_codes(column: pd.Series) -> tuple[np.ndarray, list]:
    """Integer codes (-1 for null) and the values they index, for any string column."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        categories = column.cat.categories.to_numpy(dtype=object)
        return column.cat.codes.to_numpy().astype(np.int64, copy=False), list(categories)
    codes, uniques = pd.factorize(column, use_na_sentinel=True)
    return np.asarray(codes, dtype=np.int64), list(uniques)


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


def _from_table(table: pd.DataFrame, contract: Any) -> xr.Dataset:
    if contract is None:
        raise TypeError("evaluate_batch: an events table needs contract=")
    rules = read_contract(contract)
    missing = [c for c in COLUMNS if c not in table.columns]
    if missing:
        raise ValueError(f"events table: missing column {missing[0]!r} (expected {', '.join(COLUMNS)})")
    groups = _Groups()
    groups.add(rules)
    n_rows = len(table)

    case_code, case_names = _column_codes(table["case_id"])
    if n_rows and case_code.min() < 0:
        raise ValueError(f"events table: row {int(np.argmin(case_code))}: case_id is null")
    event_column = table["event"]
    if not pd.api.types.is_integer_dtype(event_column.dtype) or event_column.isna().any():
        raise ValueError(f"events table: column 'event' must hold integers, got {event_column.dtype}")
    event = event_column.to_numpy(dtype=np.int64)

    # cases in order of first appearance, rows grouped by case then event
    present = np.flatnonzero(np.bincount(case_code, minlength=len(case_names))) if n_rows else np.empty(0, np.int64)
    grouped = n_rows < 2 or (
        (np.diff(case_code) >= 0).all() and ((np.diff(case_code) > 0) | (np.diff(event) >= 0)).all()
    )
    if grouped:
        order = None
        first_seen = present
    else:
        _, first_row = np.unique(case_code, return_index=True)
        first_seen = case_code[np.sort(first_row)]
        rank = np.empty(len(case_names), dtype=np.int64)
        rank[first_seen] = np.arange(len(first_seen))
        order = np.lexsort((event, rank[case_code]))
    relabel = np.full(len(case_names) + 1, -1, dtype=np.int64)
    relabel[first_seen] = np.arange(len(first_seen))
    case = relabel[case_code]

    def rows(values: np.ndarray) -> np.ndarray:
        return values if order is None else values[order]

    case, event = rows(case), rows(event)
    turn, turn_is_int = (rows(a) for a in _turn_column(table["turn"]))
    actor_code, actor_names = _column_codes(table["actor"])
    actor_code = rows(actor_code)
    role_code, role_values = _column_codes(table["set_role"])
    role_table = np.asarray(
        [groups.role_index[0].get(v, _UNKNOWN) if isinstance(v, str) else _UNKNOWN for v in role_values] + [-1],
        dtype=np.int64,
    )
    set_role = role_table[rows(role_code)]
    action_code, action_values = _column_codes(table["action"])
    action_code = rows(action_code)

    new_event = np.ones(n_rows, dtype=bool)
    new_event[1:] = (case[1:] != case[:-1]) | (event[1:] != event[:-1])
    starts = np.flatnonzero(new_event)
    row_event = np.cumsum(new_event) - 1
    case_of_event = case[starts]
    case_len = np.bincount(case_of_event, minlength=len(first_seen)).astype(np.int64)
    case_start = np.concatenate(([0], np.cumsum(case_len)[:-1])).astype(np.int64)
    position = np.arange(len(starts)) - case_start[case_of_event]
    bad = np.flatnonzero(event[starts] != position)
    if len(bad):
        k = bad[0]
        raise ValueError(
            f"events table: case {case_names[first_seen[case_of_event[k]]]!r}: event positions must run "
            f"0, 1, 2, ... (found {event[starts][k]} where {position[k]} was expected)"
        )
    if len(starts) != n_rows:
        for name, values in (("turn", turn), ("turn", turn_is_int), ("actor", actor_code), ("set_role", set_role)):
            differs = np.flatnonzero(values != values[starts][row_event])
            if len(differs):
                k = row_event[differs[0]]
                raise ValueError(
                    f"events table: case {case_names[first_seen[case_of_event[k]]]!r} event {event[starts][k]}: "
                    f"rows of one event disagree on {name}"
                )

    has_action = action_code >= 0
    action_event = row_event[has_action]
    action = _action_codes(action_code[has_action], action_values, np.zeros(len(action_event), np.int64), groups)
    flat = _Events(
        case_len=case_len,
        group_of_case=np.zeros(len(case_len), dtype=np.int64),
        turn=turn[starts],
        turn_is_int=turn_is_int[starts],
        actor_code=actor_code[starts],
        actor_names=actor_names,
        set_role=set_role[starts],
        action_event=action_event,
        action=action,
    )
    case_ids = np.empty(len(first_seen), dtype=object)
    case_ids[:] = np.asarray(case_names, dtype=object)[first_seen] if len(first_seen) else []
    return _dataset(case_ids, _judge(flat, groups))


def to_events_table(cases: Sequence) -> pd.DataFrame:
    """The events table of case dicts (see :func:`multiverse.contract.to_events_table`)."""
    rows: dict[str, list] = {name: [] for name in COLUMNS}
    for i, case in enumerate(cases):
        case_id, _, transcript = read_case(case, where=f"cases[{i}]")
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
    turns = rows["turn"]
    frame = pd.DataFrame(
        {
            "case_id": pd.Categorical(rows["case_id"]),
            "event": np.asarray(rows["event"], dtype=np.int64),
            "turn": pd.Series(turns, dtype=np.int64 if all(type(t) is int for t in turns) else object),
            **{name: pd.Categorical(rows[name]) for name in ("actor", "action", "set_role")},
        }
    )
    return frame


def evaluate_batch(cases: Any, *, contract: Any = None) -> xr.Dataset:
    """See :func:`multiverse.contract.evaluate_batch`."""
    if isinstance(cases, pd.DataFrame):
        return _from_table(cases, contract)
    if isinstance(cases, (str, bytes, Mapping)) or not isinstance(cases, Sequence):
        raise TypeError(
            f"evaluate_batch: expected a list of case dicts or an events DataFrame, got {type(cases).__name__}"
        )
    return _from_dicts(cases, contract)
