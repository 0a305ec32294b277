"""Vectorised evaluation of many cases (see :func:`multiverse.contract.evaluate_batch`).

Both inputs are reduced to the same flat arrays, one entry per event (cases
concatenated), one per action and one per ``set_role`` event, and judged by
:func:`_judge` with numpy only:

* the active role is a list of runs, one from each case's first event (the
  initial role) and one from each trusted ``set_role`` to a known role;
  ``np.repeat`` over the run lengths spreads it over the events, and
  ``np.searchsorted`` on the run starts reads it at a few events;
* only actions that some role forbids are looked up in the flat role x action
  allowlist matrix, at the active role of their event;
* an order error compares each integer turn with the previous integer turn of
  its case;
* each check gives the positions of the events that fail it (errors are rare);
  a case's first error is the smallest (position, check) pair among them, and
  its first violation the smallest violating position.

Cases may use different contracts (case dicts): each distinct contract is a
*group* with its own role and action numbering, and the role rows of all
groups are stacked into one matrix.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from itertools import chain, compress, islice, repeat
from operator import is_not
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
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

_VALUE_COLUMNS = ("actor", "action", "set_role")
_THREADED_ROWS = 100_000  # from this many rows, arrow string columns are encoded in threads

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
    by_id: dict[int, tuple[ContractRules, int]] = field(default_factory=dict)
    role_index: list[dict[str, int]] = field(default_factory=list)
    action_index: list[dict[str, int]] = field(default_factory=list)

    def add(self, rules: ContractRules) -> int:
        seen = self.by_id.get(id(rules))
        if seen is not None:
            return seen[1]
        key = rules.key
        group = self.by_key.get(key)
        if group is None:
            group = self.by_key[key] = len(self.rules)
            self.rules.append(rules)
            self.role_index.append({name: i for i, name in enumerate(rules.allowed)})
            self.action_index.append({name: i for i, name in enumerate(rules.vocabulary)})
        self.by_id[id(rules)] = (rules, group)  # holding rules keeps its id from being reused
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
    """Flat per-event and per-action arrays of a batch, cases concatenated.

    Codes may be any integer dtype; the narrower, the faster the kernel.
    """

    case_len: np.ndarray  # (cases,) events per case
    group_of_case: np.ndarray  # (cases,) contract group
    turn: np.ndarray  # (events,) int64, 0 where not an integer
    turn_is_int: np.ndarray | None  # (events,) bool; None when every turn is an integer
    actor_code: np.ndarray  # (events,) index into actor_names, -1 for a missing actor
    actor_names: list  # distinct actor values
    setters: np.ndarray  # (changes,) ascending positions of the events with a set_role
    set_role: np.ndarray  # (changes,) their group-local role, -2 not a role of the contract
    action_event: np.ndarray  # (actions,) the event of each action, ascending
    action: np.ndarray  # (actions,) group-local action, -2 outside the vocabulary


@dataclass
class _Runs:
    """The active role as runs of events: run k covers ``start[k]:start[k + 1]``."""

    start: np.ndarray  # ascending; a run may be empty
    role: np.ndarray  # stacked role row of each run
    length: np.ndarray

    def at(self, positions: np.ndarray) -> np.ndarray:
        """The role row at some event positions."""
        return self.role[np.searchsorted(self.start, positions, side="right") - 1]


def _case_of(positions: np.ndarray, case_start: np.ndarray) -> np.ndarray:
    """The case of each event position (an empty case starts where the next one does)."""
    return np.searchsorted(case_start, positions, side="right") - 1


def _unique_sorted(values: np.ndarray) -> np.ndarray:
    """Distinct values of an ascending array (``np.unique`` without its sort)."""
    keep = np.ones(len(values), dtype=bool)
    np.not_equal(values[1:], values[:-1], out=keep[1:])
    return values[keep]


def _firsts(
    positions: np.ndarray, codes: np.ndarray, case_start: np.ndarray, n_events: int
) -> tuple[np.ndarray, np.ndarray]:
    """Per case, the first event position among ``positions`` and its lowest code.

    Returns the position (``n_events`` where the case has none) and the code (0).
    Errors are rare, so this sorts the few error positions instead of reducing
    a full per-event array.
    """
    key = np.sort(positions.astype(np.int64) * 16 + codes)
    positions, codes = key >> 4, key & 15
    case = _case_of(positions, case_start)
    first = np.ones(len(case), dtype=bool)
    np.not_equal(case[1:], case[:-1], out=first[1:])
    first_position = np.full(len(case_start), n_events, dtype=np.int64)
    first_code = np.zeros(len(case_start), dtype=np.int64)
    first_position[case[first]] = positions[first]
    first_code[case[first]] = codes[first]
    return first_position, first_code


def _order_errors(ev: _Events, case_start: np.ndarray, nonempty: np.ndarray) -> np.ndarray:
    """Positions of events whose turn is not an integer above the case's previous integer turn."""
    n_events = len(ev.turn)
    if ev.turn_is_int is None or not n_events:  # the usual case: compare each turn with the one before it
        error = np.empty(n_events, dtype=bool)
        error[:1] = False
        np.less_equal(ev.turn[1:], ev.turn[:-1], out=error[1:])
        error[case_start[nonempty]] = False
        return np.flatnonzero(error)
    index = np.arange(n_events)
    last_int = np.maximum.accumulate(np.where(ev.turn_is_int, index, -1))
    previous = np.concatenate(([-1], last_int[:-1]))
    has_previous = previous >= np.repeat(case_start, ev.case_len)
    return np.flatnonzero(~ev.turn_is_int | (has_previous & (ev.turn <= ev.turn[previous])))


def _role_runs(ev: _Events, tables: dict, case_start: np.ndarray, transitions: np.ndarray) -> _Runs:
    """Runs of the active role: from each case's first event, and from each transition.

    A transition at a case's first event leaves that case's initial run empty.
    """
    nonempty = ev.case_len > 0
    groups = ev.group_of_case[nonempty]
    start_role = tables["offset"][groups] + tables["initial"][groups]
    change = ev.setters[transitions]
    change_role = tables["offset"][ev.group_of_case[_case_of(change, case_start)]] + ev.set_role[transitions]
    key = np.concatenate((case_start[nonempty] * 2, change * 2 + 1))  # a case's start sorts before its change
    order = np.argsort(key, kind="stable")
    start = key[order] >> 1
    return _Runs(start, np.concatenate((start_role, change_role))[order], np.diff(start, append=len(ev.turn)))


def _outside(ev: _Events, tables: dict, runs: _Runs, judged: np.ndarray) -> np.ndarray:
    """Judged actions in the vocabulary but outside the active role's allowlist.

    Only actions some role row forbids are looked up (few, in a typical
    contract), so the active role is read at those events alone.
    """
    allowed, width = tables["allowed"], int(tables["width"])
    forbidden_somewhere = np.append(~allowed.reshape(-1, width).all(axis=0), [False, False])  # codes -2, -1
    candidates = np.flatnonzero(judged & forbidden_somewhere[ev.action])
    cells = runs.at(ev.action_event[candidates]) * width + ev.action[candidates]
    outside = np.zeros(len(ev.action), dtype=bool)
    outside[candidates[~allowed[cells]]] = True
    return outside


def _judge(ev: _Events, groups: _Groups) -> dict[str, np.ndarray]:
    """Judge flat event arrays; see the module docstring for the method."""
    tables = groups.tables()
    n_cases, n_events = len(ev.case_len), len(ev.turn)
    case_start = np.zeros(n_cases, dtype=np.int64)
    np.cumsum(ev.case_len[:-1], out=case_start[1:])
    nonempty = ev.case_len > 0

    # actors: the fixed ones are known; a trusted actor outside them is known in its own group
    names = ev.actor_names
    position = {a: i for i, a in enumerate(names)}
    trusted_code = np.asarray([position.get(r.trusted_actor, -2) for r in groups.rules], dtype=np.int64)
    base_unknown = np.asarray([not (isinstance(a, str) and a in ACTORS) for a in names] + [True])
    suspects = np.flatnonzero(base_unknown[ev.actor_code] if base_unknown[:-1].any() else ev.actor_code < 0)
    suspect_trusted = trusted_code[ev.group_of_case[_case_of(suspects, case_start)]]
    actor_errors = suspects[ev.actor_code[suspects] != suspect_trusted]

    # role changes: trusted set_role to a known role, applied before the event's actions
    trusted = ev.actor_code[ev.setters] == trusted_code[ev.group_of_case[_case_of(ev.setters, case_start)]]
    known_role = ev.set_role >= 0
    runs = _role_runs(ev, tables, case_start, trusted & known_role)

    # actions: misplaced on non-assistant events (not judged), unknown, or outside the role
    judged = ev.actor_code[ev.action_event] == position.get("assistant", -2)
    outside = _outside(ev, tables, runs, judged)
    violations = ev.action_event[outside]

    # each case's first error: lowest event position, then check order
    found = {
        "invalid_event_order": _order_errors(ev, case_start, nonempty),
        "unknown_actor": actor_errors,
        "untrusted_role_transition": ev.setters[~trusted],
        "unknown_transition_role": ev.setters[trusted & ~known_role],
        "actions_on_non_assistant_event": _unique_sorted(ev.action_event[~judged]),
        "unknown_action": _unique_sorted(ev.action_event[judged & (ev.action < 0)]),
    }
    positions = np.concatenate(list(found.values()))
    codes = np.concatenate([np.full(len(p), _CODE[c], dtype=np.int64) for c, p in found.items()])
    first_error_event, case_code = _firsts(positions, codes, case_start, n_events)
    case_code[~nonempty] = _CODE["empty_transcript"]
    initial_unknown = tables["initial_unknown"][ev.group_of_case]
    case_code[initial_unknown] = _CODE["unknown_initial_role"]

    turn = np.empty(n_events + 1)  # position n_events (no event) has no turn
    turn[:n_events] = ev.turn
    turn[n_events] = np.nan
    if ev.turn_is_int is not None:
        turn[:n_events][~ev.turn_is_int] = np.nan
    error_turn = turn[np.where(nonempty & ~initial_unknown, first_error_event, n_events)]

    valid = case_code == 0
    violation_case = _case_of(violations, case_start)
    counted = valid[violation_case]
    counted_violations = violations[counted]
    first_violation_event, _ = _firsts(counted_violations, np.zeros_like(counted_violations), case_start, n_events)
    violation = np.zeros(n_events, dtype=bool)
    violation[counted_violations] = True
    return {
        "case_len": ev.case_len,
        "turn": turn[:n_events],
        "active_role": np.repeat(tables["names"][runs.role], runs.length),
        "violation": violation,
        "n_violations": np.bincount(violation_case[counted], minlength=n_cases).astype(np.int64),
        "first_violation_turn": turn[first_violation_event],
        "first_error": _ERROR_NAMES[case_code],
        "first_error_turn": error_turn,
        "contract_version": tables["version"][ev.group_of_case],
    }


def _placement(case_len: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Case and position within the case of every event, cases concatenated."""
    case_start = np.cumsum(case_len) - case_len
    case_of_event = np.repeat(np.arange(len(case_len)), case_len)
    return case_of_event, np.arange(len(case_of_event)) - case_start[case_of_event]


def _grid(values: np.ndarray, judged: dict[str, np.ndarray], width: int, fill: Any) -> np.ndarray:
    """Per-event values laid out as (case, event), padded with ``fill``.

    Events are in case order unless ``judged`` places them (``case_of_event``,
    ``position``); equal-length cases in order are a plain reshape.
    """
    case_len = judged["case_len"]
    n_cases = len(case_len)
    if width == 0:
        return np.empty((n_cases, 0), dtype=values.dtype)
    if "case_of_event" in judged:
        case_of_event, position = judged["case_of_event"], judged["position"]
    elif (case_len == width).all():
        return values.reshape(n_cases, width)
    else:
        case_of_event, position = _placement(case_len)
    out = np.full((n_cases, width), fill, dtype=values.dtype)
    out[case_of_event, position] = values
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


_CHUNK = 4096
"""Event dicts read per round.  A pass over a million dicts spread over the heap
costs a cache miss per dict, so the dict path makes all its passes over one
chunk, still in the CPU cache, before it reads the next (about 3x faster)."""


def _numbering(names: Sequence[str]) -> dict[str, int]:
    """Number distinct names in order of first appearance."""
    return {name: i for i, name in enumerate(dict.fromkeys(names))}


def _group_table(numbering: dict[str, int], local: list[dict[str, int]]) -> np.ndarray:
    """(group, batch-wide number) -> group-local number; the last column is for unknown values."""
    table = np.full((len(local), len(numbering) + 1), _UNKNOWN, dtype=np.int64)
    for group, index in enumerate(local):
        for name, number in numbering.items():
            table[group, number] = index.get(name, _UNKNOWN)
    return table


class _DictReader:
    """Flat arrays of event dicts, filled one chunk at a time.

    Each field of a chunk is gathered by one C-level ``map``; values are
    numbered batch-wide (actors, role names and action names of every
    contract), and :meth:`events` turns those numbers into group-local ones.
    Type checks are ``set(map(type, ...))`` scans; :meth:`read` answers
    ``False`` for a chunk the arrays cannot hold exactly.
    """

    def __init__(self, n_events: int, groups: _Groups) -> None:
        self.actor_names = list(dict.fromkeys([*ACTORS, *(r.trusted_actor for r in groups.rules)]))
        self.actor_number = {name: i for i, name in enumerate(self.actor_names)}
        self.role_number = _numbering([name for rules in groups.rules for name in rules.allowed])
        self.action_number = _numbering([name for rules in groups.rules for name in rules.vocabulary])
        self.turn = np.empty(n_events, dtype=np.int64)
        self.turn_is_int: np.ndarray | None = None
        self.actor = np.empty(n_events, dtype=np.int8 if len(self.actor_names) < 127 else np.int64)
        self.setters: list[np.ndarray] = []
        self.set_role: list[np.ndarray] = []
        self.action_event: list[np.ndarray] = []
        self.action: list[np.ndarray] = []

    def read(self, events: list, start: int) -> bool:
        """Read ``events``, the batch's events from position ``start`` on.

        Raises ``TypeError``, ``ValueError`` or ``OverflowError`` for a value
        that is unhashable or has no truth value, or a turn beyond int64,
        which the arrays cannot hold either.
        """
        get, n = dict.get, len(events)
        if set(map(type, events)) != {dict}:
            return False
        turns = list(map(get, events, repeat("turn")))
        kinds = set(map(type, turns))
        if kinds == {int}:
            self.turn[start : start + n] = np.fromiter(turns, dtype=np.int64, count=n)
        elif not self._read_turns(turns, kinds, start):
            return False
        actors = map(self.actor_number.get, map(get, events, repeat("actor")), repeat(-1))
        self.actor[start : start + n] = np.fromiter(actors, dtype=self.actor.dtype, count=n)

        roles = list(map(get, events, repeat("set_role")))
        if roles.count(None) < n:
            changes = np.fromiter(compress(range(start, start + n), map(is_not, roles, repeat(None))), np.int64)
            self.setters.append(changes)
            unknown = len(self.role_number)
            requested = map(roles.__getitem__, (changes - start).tolist())
            self.set_role.append(np.fromiter(map(self.role_number.get, requested, repeat(unknown)), dtype=np.int64))

        # actions are lists, None or [] (the walk calls anything else malformed)
        actions = list(map(get, events, repeat("observed_actions")))
        lists = list(compress(actions, actions))
        empty = n - len(lists) - actions.count(None)
        if set(map(type, lists)) - {list} or (empty and actions.count([]) != empty):
            return False
        acting = np.fromiter(compress(range(start, start + n), actions), dtype=np.int64, count=len(lists))
        counts = np.fromiter(map(len, lists), dtype=np.int64, count=len(lists))
        self.action_event.append(np.repeat(acting, counts))
        unknown = len(self.action_number)
        numbers = map(self.action_number.get, chain.from_iterable(lists), repeat(unknown))
        self.action.append(np.fromiter(numbers, dtype=np.int64, count=int(counts.sum())))
        return True

    def _read_turns(self, turns: list, kinds: set, start: int) -> bool:
        """Turns of a chunk that are not all ``int``: ``False`` if an int subclass is among them."""
        if any(issubclass(k, int) and k not in (int, bool) for k in kinds):
            return False
        if self.turn_is_int is None:
            self.turn_is_int = np.ones(len(self.turn), dtype=bool)
        n = len(turns)
        self.turn_is_int[start : start + n] = np.fromiter((type(t) is int for t in turns), dtype=bool, count=n)
        self.turn[start : start + n] = np.fromiter((t if type(t) is int else 0 for t in turns), np.int64, n)
        return True

    def events(self, case_len: np.ndarray, group_of_case: np.ndarray, groups: _Groups) -> _Events:
        """The flat arrays read, with group-local role and action numbers."""
        none = np.zeros(0, dtype=np.int64)
        setters, set_role = np.concatenate([none, *self.setters]), np.concatenate([none, *self.set_role])
        action_event, action = np.concatenate([none, *self.action_event]), np.concatenate([none, *self.action])
        case_start = np.cumsum(case_len) - case_len
        roles = _group_table(self.role_number, groups.role_index)
        actions = _group_table(self.action_number, groups.action_index)
        return _Events(
            case_len=case_len,
            group_of_case=group_of_case,
            turn=self.turn,
            turn_is_int=self.turn_is_int,
            actor_code=self.actor,
            actor_names=self.actor_names,
            setters=setters,
            set_role=roles[group_of_case[_case_of(setters, case_start)], set_role],
            action_event=action_event,
            action=actions[group_of_case[_case_of(action_event, case_start)], action],
        )


def _flatten_dicts(transcripts: list[list], group_of_case: np.ndarray, groups: _Groups) -> _Events | None:
    """Flat arrays of case dicts, or ``None`` when some event cannot be held in them."""
    case_len = np.fromiter(map(len, transcripts), dtype=np.int64, count=len(transcripts))
    n_events = int(case_len.sum())
    reader = _DictReader(n_events, groups)
    events = chain.from_iterable(transcripts)
    try:
        for start in range(0, n_events, _CHUNK):
            if not reader.read(list(islice(events, _CHUNK)), start):
                return None
    except (TypeError, ValueError, OverflowError):  # unhashable, no truth value, a turn beyond int64
        return None
    return reader.events(case_len, group_of_case, groups)


def _action_codes(codes: np.ndarray, names: list, vocabulary: dict[str, int]) -> np.ndarray:
    """Vocabulary index of each action (-2 outside it); ``codes`` index ``names``."""
    table = [vocabulary.get(u, _UNKNOWN) if isinstance(u, str) else _UNKNOWN for u in names]
    return np.asarray(table, dtype=np.int8 if len(vocabulary) < 127 else np.int64).take(codes)


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
    placements = [_placement(p["case_len"]) for p in parts]
    offsets = np.cumsum([0] + [len(p["case_len"]) for p in parts[:-1]])
    joined["case_of_event"] = order[np.concatenate([case + o for (case, _), o in zip(placements, offsets)])]
    joined["position"] = np.concatenate([position for _, position in placements])
    for name in _PER_CASE:
        values = joined[name]
        if len(values) == n_cases:
            placed = np.empty_like(values)
            placed[order] = values
            joined[name] = placed
    return joined


# --- events tables ------------------------------------------------------------------------


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
        return _dataset(np.empty(0, dtype=object), _judge(empty, groups))

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
    )
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
