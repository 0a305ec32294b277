"""The deterministic role-contract evaluator.

A role contract names the actions a product can observe (``action_vocabulary``),
the subset each role may take (``roles``), the role a conversation starts in
(``initial_role``) and the one actor whose ``set_role`` events may change it
(``trusted_actor``, default ``system``).  The evaluator walks a recorded
conversation, tracks the active role, and reports every action outside it,
keeping broken fixtures (fixture errors: no verdict) apart from model behaviour
(violations), and harness defects and unverifiable prose apart from both
(outcome lanes).

* :func:`evaluate_case` judges one case JSON; :func:`diagnostic` is its one-line
  summary (what ``multiverse inspect`` prints first).
* :func:`evaluate_batch` gives the same verdicts for many cases, from case dicts
  or from an events table, vectorised over events.
* :func:`to_events_table` turns case dicts into that table.

This package imports only the standard library at import time (numpy, pandas
and xarray are loaded by the batch functions), so ``multiverse inspect`` starts fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from multiverse.contract._case import LANES, diagnostic, evaluate_case, exit_code
from multiverse.contract._evidence import CONTEXT_ERRORS, MAX_LISTED_TURNS, REVIEW_REASONS
from multiverse.contract._rules import (
    FIXTURE_ERRORS,
    VIOLATION,
    CaseFormatError,
    ContractRules,
    read_contract,
)

if TYPE_CHECKING:
    import pandas as pd
    import xarray as xr

__all__ = [
    "CONTEXT_ERRORS",
    "FIXTURE_ERRORS",
    "LANES",
    "MAX_LISTED_TURNS",
    "REVIEW_REASONS",
    "VIOLATION",
    "CaseFormatError",
    "ContractRules",
    "diagnostic",
    "evaluate_batch",
    "evaluate_case",
    "exit_code",
    "read_contract",
    "to_events_table",
]


def evaluate_batch(cases: Any, *, contract: Any = None) -> xr.Dataset:
    """Judge many cases at once, with the verdicts of :func:`evaluate_case`.

    Parameters
    ----------
    cases
        Either a sequence of case dicts (the case JSON), or an events
        :class:`pandas.DataFrame` with columns ``case_id``, ``event`` (the event's
        0-based position in its case), ``turn``, ``actor``, ``action`` and
        ``set_role``: one row per recorded action, one row with a null ``action``
        for an event without actions.  String columns may be object,
        categorical or arrow-backed.  The rows of one event must agree on
        ``turn``, ``actor`` and ``set_role``; a table holds no empty transcripts.
    contract
        Required with a table: the contract of every case, as a case-JSON dict
        or an object with ``to_dict()`` (a loaded :class:`multiverse.config.specs.Contract`).
        With case dicts: the contract of cases that carry none.

    Returns
    -------
    xarray.Dataset
        Dims ``case`` (coordinate: the case ids, in input order for dicts and in
        order of first appearance for a table) and ``event`` (0-based position).
        Variables over (``case``, ``event``): ``turn`` (float; NaN for a
        non-integer turn and past a case's end), ``active_role`` (the role after
        the event's own role change; ``""`` past the end) and ``violation`` (the
        event has an action outside the active role; always False in an invalid
        case, which has no verdict).  Per case: ``n_events``, ``n_violations``,
        ``first_violation_turn`` (NaN when clean or invalid), ``first_error``
        (the first fixture error's code, ``""`` when valid) and
        ``first_error_turn`` (NaN when that error has no turn).

    Raises
    ------
    CaseFormatError
        A :class:`ValueError` naming the case (``cases[i]``) when a case dict is
        unreadable, or the contract when it is.
    ValueError
        When a table lacks a column, has gaps in an ``event`` sequence, or rows
        of one event disagree.

    See Also
    --------
    evaluate_case : the reference for one case, with every error and lane.
    to_events_table : the table form of case dicts.

    Notes
    -----
    The table path never loops over events in Python: it forward-fills the
    active role from trusted ``set_role`` events within each case, looks
    actions up in a role x action allowlist matrix, and finds order errors by
    comparing each integer turn with the previous one of its case.  The dict
    path gathers the same arrays with C-level ``map`` passes over chunks of a
    few thousand events; a case holding an event the arrays cannot represent
    (not an object, non-list actions, non-string values) is judged by
    :func:`evaluate_case`'s own walk.
    """
    from multiverse.contract import _batch

    return _batch.evaluate_batch(cases, contract=contract)


def to_events_table(cases: Any) -> pd.DataFrame:
    """The events table of case dicts, as :func:`evaluate_batch` reads it.

    One row per observed action, one row with a null ``action`` for an event
    without actions; string columns are categorical.  Events must be objects
    and ``observed_actions`` lists (a table cannot hold anything else).

    Raises
    ------
    CaseFormatError
        When a case is unreadable or holds an event a table cannot represent.
    """
    from multiverse.contract import _batch

    return _batch.to_events_table(cases)
