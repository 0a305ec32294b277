"""The numpy judge of flat event arrays, shared by both inputs of :func:`~multiverse.contract.evaluate_batch`.

Both inputs (:mod:`._batch_dicts`, :mod:`._batch_table`) are reduced to the same
flat arrays (:class:`_Events`), one entry per event (cases concatenated), one
per action and one per ``set_role`` event, and judged by :func:`_judge` with
numpy only:

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

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import xarray as xr

from multiverse.contract._rules import ACTORS, FIXTURE_ERRORS, ContractRules

_CODE = {code: number for number, code in enumerate(FIXTURE_ERRORS, start=1)}
_ERROR_NAMES = np.array([""] + list(FIXTURE_ERRORS), dtype=object)
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_UNKNOWN = -2  # code of a set_role or action the contract does not know
_PER_CASE = ("case_len", "n_actions", "n_violations", "first_violation_turn", "first_error", "first_error_turn", "contract_version")


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
        declared = np.zeros((len(names), len(names)), dtype=bool)
        for rules, roles, first in zip(self.rules, self.role_index, offset):
            for a, b in rules.transitions:
                declared[first + roles[a], first + roles[b]] = True
        return {
            "declares": np.asarray([bool(r.transitions) for r in self.rules] + [False], dtype=bool),
            "declared": declared,
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
    started: np.ndarray | None = None  # (cases,) session_start: 1 true, 0 false, -1 absent; None: all absent


@dataclass
class _Runs:
    """The active role as runs of events: run k covers ``start[k]:start[k + 1]``."""

    start: np.ndarray  # ascending; a run may be empty
    role: np.ndarray  # stacked role row of each run
    length: np.ndarray
    change_run: np.ndarray  # (transitions,) the run each applied transition starts

    def at(self, positions: np.ndarray) -> np.ndarray:
        """The role row at some event positions."""
        return self.role[np.searchsorted(self.start, positions, side="right") - 1]


def _case_of(positions: np.ndarray, case_start: np.ndarray) -> np.ndarray:
    """The case of each event position (an empty case starts where the next one does)."""
    return np.searchsorted(case_start, positions, side="right") - 1


def _count_per_case(positions: np.ndarray, case_start: np.ndarray) -> np.ndarray:
    """How many of the ascending event ``positions`` fall in each case.

    Searches the case starts in the positions (one search per case) rather than
    each position among the case starts (one per position): a million actions
    cost a twentieth of the time.
    """
    return np.diff(np.searchsorted(positions, case_start), append=len(positions)).astype(np.int64)


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
    run_of = np.empty(len(order), dtype=np.int64)
    run_of[order] = np.arange(len(order))
    return _Runs(
        start,
        np.concatenate((start_role, change_role))[order],
        np.diff(start, append=len(ev.turn)),
        run_of[len(start_role):],
    )


def _undeclared(ev: _Events, tables: dict, runs: _Runs, changes: np.ndarray, case_start: np.ndarray) -> np.ndarray:
    """Positions of applied role changes along a pair the contract's ``transitions`` do not declare.

    The role before a change is the role of the run before the one it starts
    (the case's initial run when it is the case's first change).
    """
    declares = tables["declares"][ev.group_of_case[_case_of(changes, case_start)]]
    if not declares.any():
        return np.zeros(0, dtype=np.int64)
    before, after = runs.role[runs.change_run - 1], runs.role[runs.change_run]
    bad = declares & (before != after) & ~tables["declared"][before, after]
    return changes[bad]


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


def _incomplete(ev: _Events, case_start: np.ndarray, nonempty: np.ndarray) -> np.ndarray:
    """Cases whose history does not start at the session start (``incomplete_history``)."""
    first = np.minimum(case_start, max(len(ev.turn) - 1, 0))
    if not len(ev.turn):
        return np.zeros(len(case_start), dtype=bool)
    first_is_int = np.ones(len(case_start), dtype=bool) if ev.turn_is_int is None else ev.turn_is_int[first]
    started = np.full(len(case_start), -1, dtype=np.int8) if ev.started is None else ev.started
    not_one = first_is_int & (ev.turn[first] != 1)
    return nonempty & ((started == 0) | ((started == -1) & not_one))


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
    undeclared = _undeclared(ev, tables, runs, ev.setters[trusted & known_role], case_start)

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
        "transition_not_declared": undeclared,
        "actions_on_non_assistant_event": _unique_sorted(ev.action_event[~judged]),
        "unknown_action": _unique_sorted(ev.action_event[judged & (ev.action < 0)]),
    }
    positions = np.concatenate(list(found.values()))
    codes = np.concatenate([np.full(len(p), _CODE[c], dtype=np.int64) for c, p in found.items()])
    first_error_event, case_code = _firsts(positions, codes, case_start, n_events)
    incomplete = _incomplete(ev, case_start, nonempty)
    case_code[incomplete] = _CODE["incomplete_history"]
    first_error_event[incomplete] = case_start[incomplete]
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
        "n_actions": _count_per_case(ev.action_event, case_start),
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
