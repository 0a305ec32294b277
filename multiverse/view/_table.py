"""The conversation table of the index page: one row per conversation, computed from the cube.

Each row names the conversation's labels (system, role, user simulator,
condition, replicate, item), its grid cell, origin and end state, the first
clear-breach turn of every judge and how many (turn, principle) units its judges
disagree on.  Everything is vectorised over the cube's stacked conversations,
so a 10,000-conversation cube is tabulated in well under a second.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import xarray as xr

from multiverse.core import schema as S
from multiverse.scoring import standard_codes

__all__ = ["UNDECIDED", "ConversationTable", "conversation_table", "disagreement_units", "rater_codes", "raters_of", "stacked"]

UNDECIDED = -1
"""First-violation value of a judge that saw no clear breach but left some unit missing."""

TEXT_COLUMNS = ("system", "role", "user_sim", "condition", "replicate", "item",
                "mode", "strategy", "target_principle", "origin", "ended")


@dataclass
class ConversationTable:
    """The table's columns and rows, plus where each row sits in the cube."""

    columns: list[str]
    rows: list[list[Any]]
    positions: np.ndarray
    """Integer index of each row into the cube's conversation dims (``(n, 6)``)."""


def stacked(array: xr.DataArray, *tail: str) -> np.ndarray:
    """``array`` as ``(conversation, *tail)`` with conversations in C order of the cube's dims."""
    order = [d for d in S.CONVERSATION_DIMS if d in array.dims] + list(tail)
    values = array.transpose(*order).values
    return values.reshape((-1,) + values.shape[len(S.CONVERSATION_DIMS):])


def _first_breach(severity: np.ndarray) -> np.ndarray:
    """``(n, turn, principle, judge)`` -> ``(n, judge)``: the first clear-breach turn (1-based).

    0 when the judge ruled and saw none, :data:`UNDECIDED` when it saw none but
    left a unit missing, -2 when it ruled on nothing (not applicable).
    """
    breach = (severity == S.CLEAR_BREACH).any(axis=2)
    first = np.where(breach.any(axis=1), breach.argmax(axis=1) + 1, 0)
    undecided = (first == 0) & (severity == S.MISSING).any(axis=(1, 2))
    first = np.where(undecided, UNDECIDED, first)
    return np.where((severity == S.NOT_APPLICABLE).all(axis=(1, 2)), S.NOT_APPLICABLE, first)


def _disagreements(severity: np.ndarray) -> np.ndarray:
    """Per conversation, the (turn, principle) units on which two judges that both ruled differ."""
    valid = severity >= 0
    high = np.where(valid, severity, -1).max(axis=3)
    low = np.where(valid, severity, 99).min(axis=3)
    return ((valid.sum(axis=3) >= 2) & (high > low)).sum(axis=(1, 2))


def conversation_table(cube: xr.Dataset) -> ConversationTable:
    """One row per conversation that ran or holds a judgment.

    Columns: ``n`` (row number, the conversation page's key), the text columns
    of :data:`TEXT_COLUMNS`, ``turns`` (assistant turns judged), ``first:<judge>``
    (first clear-breach turn; 0 clean; -1 undecided: no breach seen but a
    judgment missing; -2 the judge does not rule on this conversation), ``disagree`` (units on which judges differ) and
    ``transcript_id``.
    """
    severity = stacked(cube["severity"], "turn", "principle", "judge")
    shape = tuple(cube.sizes[d] for d in S.CONVERSATION_DIMS)
    transcript = stacked(cube["transcript_id"]).astype(str) if "transcript_id" in cube else np.full(len(severity), "")
    judged = (severity != S.NOT_APPLICABLE).any(axis=(1, 2, 3))
    keep = np.flatnonzero(judged | (transcript != ""))
    positions = np.stack(np.unravel_index(keep, shape), axis=1) if keep.size else np.zeros((0, len(shape)), int)
    severity = severity[keep]
    columns: dict[str, np.ndarray] = {}
    for name in TEXT_COLUMNS:
        if name in S.CONVERSATION_DIMS:
            columns[name] = cube[name].values[positions[:, S.CONVERSATION_DIMS.index(name)]]
        elif name in cube:
            columns[name] = stacked(cube[name]).astype(str)[keep]
        else:
            columns[name] = np.full(len(keep), "")
    columns["turns"] = np.where((severity != S.NOT_APPLICABLE).any(axis=(2, 3)),
                                np.arange(1, severity.shape[1] + 1), 0).max(axis=1) if len(keep) else np.zeros(0, int)
    first = _first_breach(severity)
    for j, judge in enumerate(cube["judge"].values.tolist()):
        columns[f"first:{judge}"] = first[:, j]
    columns["disagree"] = _disagreements(severity)
    columns["transcript_id"] = transcript[keep]
    names = ["n", *columns]
    rows = [[i, *(v.item() if isinstance(v, np.generic) else v for v in values)]
            for i, values in enumerate(zip(*columns.values()))]
    return ConversationTable(names, rows, positions)


def raters_of(cube: xr.Dataset) -> list[str]:
    """The judges, then ``truth`` when the cube has the planted truth (as the agreement figures show them)."""
    judges = [str(j) for j in cube["judge"].values.tolist()]
    return judges + (["truth"] if "truth" in cube and "truth" not in judges else [])


def rater_codes(cube: xr.Dataset, rater: str, standard: str | None) -> xr.DataArray:
    """One rater's codes: severities (``standard=None``) or a standard's 1/0 violation codes."""
    values = cube["truth"] if rater == "truth" and rater not in cube["judge"].values else cube["severity"].sel(judge=rater, drop=True)
    return values if standard is None else standard_codes(values, standard)


def disagreement_units(
    cube: xr.Dataset, table: ConversationTable, a: str, b: str, *, standard: str | None
) -> list[list[Any]]:
    """The units on which raters ``a`` and ``b`` both ruled and differ: ``[n, turn, principle, code_a, code_b]``."""
    codes_a = stacked(rater_codes(cube, a, standard), "turn", "principle")
    codes_b = stacked(rater_codes(cube, b, standard), "turn", "principle")
    shape = tuple(cube.sizes[d] for d in S.CONVERSATION_DIMS)
    flat = np.ravel_multi_index(tuple(table.positions.T), shape) if len(table.positions) else np.zeros(0, int)
    codes_a, codes_b = codes_a[flat], codes_b[flat]
    differ = (codes_a >= 0) & (codes_b >= 0) & (codes_a != codes_b)
    turns = cube["turn"].values.tolist()
    principles = cube["principle"].values.tolist()
    return [[int(n), turns[t], principles[p], int(codes_a[n, t, p]), int(codes_b[n, t, p])]
            for n, t, p in zip(*np.nonzero(differ))]
