"""Case dicts into the flat event arrays of :mod:`._kernel`, read in CPU-cache-sized chunks.

A case holding an event the arrays cannot represent exactly is judged by
:func:`~multiverse.contract._case.walk`, the reference walk of
:func:`~multiverse.contract.evaluate_case`, and joined back in input order.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain, compress, islice, repeat
from operator import is_not
from typing import Any

import numpy as np
import xarray as xr

from multiverse.contract._case import walk
from multiverse.contract._kernel import (
    _INT64_MAX,
    _INT64_MIN,
    _PER_CASE,
    _UNKNOWN,
    _case_of,
    _dataset,
    _Events,
    _Groups,
    _judge,
    _placement,
)
from multiverse.contract._lanes import add_lanes, evidence_candidates, lanes_of
from multiverse.contract._rules import ACTORS, CaseFormatError, ContractRules, read_case, read_contract, session_start


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


def _started_codes(flags: Sequence[bool | None]) -> np.ndarray | None:
    """``session_start`` flags as int8 codes (1 true, 0 false, -1 absent); ``None`` when all are absent."""
    if flags.count(None) == len(flags) if isinstance(flags, list) else all(f is None for f in flags):
        return None
    return np.asarray([-1 if f is None else int(f) for f in flags], dtype=np.int8)


def _flatten_dicts(
    transcripts: list[list], group_of_case: np.ndarray, groups: _Groups, started: np.ndarray | None = None
) -> _Events | None:
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
    flat = reader.events(case_len, group_of_case, groups)
    flat.started = started
    return flat


def _read_cases(
    cases: Sequence, default: Any, names: Sequence[str] | None = None
) -> tuple[list, _Groups, np.ndarray, list[list], list[bool | None]]:
    """Ids, contract groups, group of each case, transcripts and ``session_start`` flags.

    Messages name a case ``cases[i]``, or ``names[i]`` (e.g. ``file.jsonl:3``) when given.
    """
    default_rules = None if default is None else read_contract(default)
    memo: dict[int, ContractRules] = {}
    groups = _Groups()
    ids, group_of_case, transcripts, flags = [], [], [], []
    for i, case in enumerate(cases):
        where = f"cases[{i}]"
        try:
            case_id, rules, transcript = read_case(case, where=where, contracts=memo, default=default_rules)
            flags.append(session_start(case, where=where))
        except CaseFormatError as exc:
            if names is None:
                raise
            message = str(exc).replace(f"{where}.", f"{names[i]}: ", 1).replace(where, names[i], 1)
            raise CaseFormatError(message) from None
        ids.append(case_id)
        group_of_case.append(groups.add(rules))
        transcripts.append(transcript)
    return ids, groups, np.asarray(group_of_case, dtype=np.int64), transcripts, flags


def _from_dicts(cases: Sequence, default: Any, *, names: Sequence[str] | None = None) -> xr.Dataset:
    ids, groups, group_of_case, transcripts, flags = _read_cases(cases, default, names)
    case_ids = np.empty(len(ids), dtype=object)
    case_ids[:] = ids

    judged = _judged(transcripts, group_of_case, groups, flags)
    lanes = lanes_of(
        judged,
        judged["n_actions"],
        lambda k: groups.rules[group_of_case[k]],
        transcripts.__getitem__,
        evidence_candidates(transcripts, judged),
        flags.__getitem__,
    )
    return add_lanes(_dataset(case_ids, judged), lanes)


def _judged(
    transcripts: list[list], group_of_case: np.ndarray, groups: _Groups, flags: list[bool | None]
) -> dict[str, np.ndarray]:
    """The kernel's verdicts of case transcripts; unrepresentable cases are walked and joined back."""
    started = _started_codes(flags)
    flat = _flatten_dicts(transcripts, group_of_case, groups, started)
    if flat is not None:
        return _judge(flat, groups)
    walked_cases = [i for i, t in enumerate(transcripts) if not all(map(_representable, t))]
    flat_cases = np.setdiff1d(np.arange(len(transcripts)), walked_cases)
    flat_started = None if started is None else started[flat_cases]
    parts = [
        _judge(
            _flatten_dicts([transcripts[i] for i in flat_cases], group_of_case[flat_cases], groups, flat_started),
            groups,
        )
    ]
    parts += [_walked(groups.rules[group_of_case[i]], transcripts[i], flags[i]) for i in walked_cases]
    order = np.concatenate([flat_cases, np.asarray(walked_cases, dtype=np.int64)])
    return _combine(parts, order)


def _walked(rules: ContractRules, transcript: list, started: bool | None) -> dict[str, np.ndarray]:
    """The reference walk of one case, in the form :func:`_judge` returns."""
    result = walk(rules, transcript, started=started)
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
        "n_actions": np.asarray(
            [sum(len(e["observed_actions"]) for e in transcript
                 if isinstance(e, dict) and isinstance(e.get("observed_actions"), list))],
            dtype=np.int64,
        ),
        "n_violations": np.asarray([len(violations)], dtype=np.int64),
        "first_violation_turn": np.asarray([violations[0]["turn"] if violations else np.nan], dtype=np.float64),
        "first_error": np.asarray([first.get("code", "")], dtype=object),
        "first_error_turn": np.asarray([first.get("turn", np.nan)], dtype=np.float64),
        "contract_version": np.asarray([rules.version], dtype=object),
    }


def in_case_order(judged: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Judged arrays with their per-event values in case order (as :func:`_combine` expects of a part)."""
    if "case_of_event" not in judged:
        return judged
    order = np.lexsort((judged["position"], judged["case_of_event"]))
    out = {k: v for k, v in judged.items() if k not in ("case_of_event", "position")}
    for name in ("turn", "active_role", "violation"):
        out[name] = judged[name][order]
    return out


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
