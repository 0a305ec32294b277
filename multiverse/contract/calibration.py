"""Calibration items: cases on which a human and a judge disagree, kept to be re-run later.

A disagreement may show ambiguous wording in the role contract rather than a
poor judge, so the case is kept with both verdicts and the rubric version that
produced the judge's, and re-run when the rubric or the contract changes.  An
item is the case JSON with one more key, ``calibration``::

    {"human": "violation", "judge": "pass", "rubric_version": "authority-rubric-2",
     "reason": "...", "judge_reason": "..."}

Items are stored as JSONL (one per line), written atomically.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from multiverse.contract._case import evaluate_case
from multiverse.contract._rules import CaseFormatError

__all__ = ["calibration_item", "load_calibration_items", "rerun_calibration", "save_calibration_items"]


def calibration_item(
    case: Mapping[str, Any],
    *,
    human: str,
    judge: str,
    rubric_version: str,
    reason: str | None = None,
    judge_reason: str | None = None,
) -> dict[str, Any]:
    """The case kept with both verdicts and the rubric version.

    Raises
    ------
    ValueError
        If the verdicts agree (there is nothing to calibrate), or a verdict or
        the rubric version is not a non-empty string.
    """
    for name, value in (("human", human), ("judge", judge), ("rubric_version", rubric_version)):
        if not isinstance(value, str) or not value:
            raise ValueError(f"calibration item: {name}: expected a non-empty string, got {value!r}")
    if human == judge:
        raise ValueError(f"calibration item {case.get('case_id')!r}: human and judge agree ({human!r})")
    record: dict[str, Any] = {"human": human, "judge": judge, "rubric_version": rubric_version}
    if reason is not None:
        record["reason"] = reason
    if judge_reason is not None:
        record["judge_reason"] = judge_reason
    return {**case, "calibration": record}


def save_calibration_items(items: Iterable[Mapping[str, Any]], path: str | os.PathLike) -> int:
    """Write items as JSONL (temporary file, then renamed into place); returns how many."""
    target = Path(path)
    lines = [json.dumps(item, ensure_ascii=False, sort_keys=True) for item in items]
    for k, line in enumerate(lines):
        if '"calibration"' not in line:
            raise ValueError(f"calibration items: item {k} has no calibration record")
    handle = tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=target.parent or ".", delete=False,
                                         prefix=f".{target.name}.", suffix=".tmp")
    with handle:
        handle.write("".join(line + "\n" for line in lines))
    os.replace(handle.name, target)
    return len(lines)


def load_calibration_items(path: str | os.PathLike) -> list[dict[str, Any]]:
    """Read items saved by :func:`save_calibration_items`.

    Raises
    ------
    CaseFormatError
        Naming the line of a record that is not JSON or has no calibration record.
    """
    from multiverse.contract.rollout import iter_case_files

    items = []
    for where, item in iter_case_files([Path(path)]):
        record = item.get("calibration") if isinstance(item, dict) else None
        if not isinstance(record, dict) or not {"human", "judge", "rubric_version"} <= set(record):
            raise CaseFormatError(f"{where}: calibration: expected human, judge and rubric_version")
        items.append(item)
    return items


def _lane(case: Mapping[str, Any]) -> str:
    return evaluate_case(case)["lane"]


def rerun_calibration(
    path: str | os.PathLike,
    *,
    judge: Callable[[Mapping[str, Any]], str] = _lane,
    rubric_version: str | None = None,
) -> list[dict[str, Any]]:
    """Re-run every item with a judge and report the new verdict beside the stored ones.

    Parameters
    ----------
    path
        A JSONL file of items.
    judge
        Maps a case (without its calibration record) to a verdict; default: the
        role-contract lane of :func:`evaluate_case`.
    rubric_version
        The version of the judge's rubric now (recorded beside the stored one).

    Returns
    -------
    list of dict
        Per item: ``case_id``, ``human``, ``judge`` and ``rubric_version`` as stored,
        ``rerun`` (the new verdict), ``rerun_rubric_version``, and ``agrees_with_human``.
    """
    out = []
    for item in load_calibration_items(path):
        record = item["calibration"]
        case = {k: v for k, v in item.items() if k != "calibration"}
        verdict = judge(case)
        out.append(
            {
                "case_id": item.get("case_id"),
                "human": record["human"],
                "judge": record["judge"],
                "rubric_version": record["rubric_version"],
                "rerun": verdict,
                "rerun_rubric_version": rubric_version,
                "agrees_with_human": verdict == record["human"],
            }
        )
    return out
