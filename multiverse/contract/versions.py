"""Rerun a case set under two contract versions and list the decisions that changed.

A contract version is never edited in place: two contracts with the same
``version`` and different content are an error, whether they are the two
versions compared or a case's own contract and one of them.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any

from multiverse.contract._case import evaluate_case
from multiverse.contract._rules import CaseFormatError, read_contract
from multiverse.contract.rollout import iter_case_files

__all__ = ["decision", "diff_cases", "format_changes"]


def decision(result: Mapping[str, Any]) -> dict[str, Any]:
    """The decision of a result: ``lane``, ``first_violation_turn`` and ``first_error`` (or ``None``)."""
    first = result["first_violation"]
    errors = result["fixture_errors"]
    return {
        "lane": result["lane"],
        "first_violation_turn": first["turn"] if first else None,
        "first_error": errors[0]["code"] if errors else None,
    }


def _edited_in_place(a: Any, b: Any, where: str) -> None:
    """Raise if two readable contracts share a version but not their content."""
    try:
        ra, rb = read_contract(a), read_contract(b)
    except CaseFormatError:  # an unreadable case contract is replaced by old and new anyway
        return
    if ra.version == rb.version and ra.key != rb.key:
        raise CaseFormatError(
            f"{where}: contract version {ra.version!r} has two different contents; "
            "a changed contract needs a new version"
        )


def diff_cases(paths: Iterable[str | os.PathLike], *, old: Mapping[str, Any], new: Mapping[str, Any]) -> list[dict]:
    """Decisions that differ between two contract versions, case by case.

    Parameters
    ----------
    paths
        Case files, JSONL files or folders (:func:`~multiverse.contract.rollout.iter_case_files`).
    old, new
        The two contracts in the case-JSON form (e.g. from
        :func:`~multiverse.contract.rollout.load_contract_file`); each case is
        judged under both, in place of its own contract.

    Returns
    -------
    list of dict
        ``{"case_id", "where", "old": decision, "new": decision}`` for each case
        whose :func:`decision` changed, in input order.

    Raises
    ------
    CaseFormatError
        For an unreadable case or contract, or a version edited in place.
    """
    _edited_in_place(old, new, "--old/--new")
    changes = []
    for where, case in iter_case_files(paths):
        if isinstance(case, Mapping) and "contract" in case:
            for other in (old, new):
                _edited_in_place(case["contract"], other, where)
        try:
            before = decision(evaluate_case({**case, "contract": old}))
            after = decision(evaluate_case({**case, "contract": new}))
        except (CaseFormatError, TypeError) as exc:
            raise CaseFormatError(f"{where}: {exc}") from None
        if before != after:
            changes.append({"case_id": case["case_id"], "where": where, "old": before, "new": after})
    return changes


def _cell(d: Mapping[str, Any]) -> str:
    text = d["lane"]
    if d["first_violation_turn"] is not None:
        text += f" turn={d['first_violation_turn']}"
    if d["first_error"] is not None:
        text += f" error={d['first_error']}"
    return text


def format_changes(changes: list[dict], *, old_version: str, new_version: str) -> str:
    """The changes as a plain-text table (one row per changed case)."""
    rows = [("case", old_version, new_version)]
    rows += [(str(c["case_id"]), _cell(c["old"]), _cell(c["new"])) for c in changes]
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)
