"""tau2-bench judge summary files -> a tidy table and a (task x judge) cube.

A summary file holds ``entries``, one per judged conversation, with
``task_id``, ``simulation_id``, ``tau2_reward``, ``judge_verdict``,
``judge_justification``, ``judge_issues``, ``judge_prompt_name``,
``judge_model`` and ``label`` (the judged simulation set).  Judges are
labelled by ``judge_prompt_name`` (the files of one source share one model);
the deterministic reward is added as the reference rater ``reward``.

Each entry also carries ``file`` (a path on its author's machine) and
``judge_prompt`` (the full judged transcript).  Neither is read into the
table, the cube, its attrs, or any message.

Verdict normalisation
---------------------
A verdict is lower-cased, ``_`` and ``-`` become spaces, and surrounding
punctuation is dropped; then:

* **0, adherence**: ``pass``, ``passed``, ``success``, ``successful``,
  ``satisfied``, ``satisfactory``, ``compliant``, ``correct``, ``acceptable``,
  ``resolved``, ``yes``, ``true`` (and JSON ``true``);
* **1, partial**: ``partial``, ``partially satisfied``, ``partially compliant``,
  ``partially correct``, ``mixed``;
* **2, breach**: ``fail``, ``failed``, ``failure``, ``unsatisfied``,
  ``unsatisfactory``, ``dissatisfied``, ``non compliant``, ``noncompliant``,
  ``not compliant``, ``incorrect``, ``unacceptable``, ``unresolved``,
  ``violation``, ``no``, ``false`` (and JSON ``false``);
* anything else, or no verdict: missing (-1), reason ``no_verdict``, counted
  in the cube's ``missing_count``.

The reward rater: 0 when ``tau2_reward`` >= 1 - 1e-6 (tau2's success test),
2 when below, missing (``not_recorded``) when absent.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from multiverse.adapters._items import item_labels
from multiverse.core import schema as S
from multiverse.cube.build import new_cube

__all__ = [
    "VERDICTS",
    "REFERENCE_JUDGE",
    "PRINCIPLE",
    "SUCCESS_THRESHOLD",
    "TABLE_COLUMNS",
    "normalise_verdict",
    "tau2_judgment_table",
    "tau2_judgments",
]

VERDICTS: Mapping[str, int] = {
    **dict.fromkeys(
        ("pass", "passed", "success", "successful", "satisfied", "satisfactory", "compliant", "correct",
         "acceptable", "resolved", "yes", "true"),
        S.FULL_ADHERENCE,
    ),
    **dict.fromkeys(
        ("partial", "partially satisfied", "partially compliant", "partially correct", "mixed"),
        S.PARTIAL_DEVIATION,
    ),
    **dict.fromkeys(
        ("fail", "failed", "failure", "unsatisfied", "unsatisfactory", "dissatisfied", "non compliant",
         "noncompliant", "not compliant", "incorrect", "unacceptable", "unresolved", "violation", "no", "false"),
        S.CLEAR_BREACH,
    ),
}
"""Normalised verdict text -> severity (see the module docstring)."""
REFERENCE_JUDGE = "reward"
PRINCIPLE = "task_success"
SUCCESS_THRESHOLD = 1 - 1e-6
TABLE_COLUMNS = (
    "judge", "task_id", "simulation_id", "label", "judge_model", "verdict", "severity",
    "missing_reason", "tau2_reward", "justification", "n_issues",
)
_KNOWN_DOMAINS = ("airline", "retail", "telecom", "mock")


def normalise_verdict(verdict: Any) -> int | None:
    """The severity a judge's verdict maps to, or ``None`` when no documented mapping covers it."""
    if isinstance(verdict, bool):
        return S.FULL_ADHERENCE if verdict else S.CLEAR_BREACH
    if not isinstance(verdict, str):
        return None
    key = re.sub(r"[\s_\-]+", " ", verdict.lower()).strip(" .!:;,\"'`*")
    return VERDICTS.get(key)


def tau2_judgment_table(paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]]) -> pd.DataFrame:
    """One row per (judge, judged conversation) of tau2 judge summary files.

    Parameters
    ----------
    paths
        One summary file or several.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`TABLE_COLUMNS`; ``verdict`` is the judge's raw verdict text,
        ``severity`` its normalised code (-1 when missing), ``missing_reason`` the
        reason (empty when present).  ``attrs["warnings"]`` lists entries that
        could not be read, by file and index.

    Raises
    ------
    ValueError
        If a file is not JSON or has no ``entries`` list.
    """
    rows: list[dict[str, Any]] = []
    warnings: list[str] = []
    for path in [paths] if isinstance(paths, (str, os.PathLike)) else paths:
        path = Path(path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ValueError(f"{path}: not a readable JSON file ({exc})") from None
        entries = data.get("entries") if isinstance(data, Mapping) else None
        if not isinstance(entries, list):
            raise ValueError(f"{path}: expected an object with an 'entries' list")
        for index, entry in enumerate(entries):
            where = f"{path.name}: entries[{index}]"
            if not isinstance(entry, Mapping):
                warnings.append(f"{where}: not an object; skipped")
                continue
            absent = [key for key in ("task_id", "judge_prompt_name") if entry.get(key) in (None, "")]
            if absent:
                warnings.append(f"{where}: no '{absent[0]}'; skipped")
                continue
            verdict = entry.get("judge_verdict")
            severity = normalise_verdict(verdict)
            if severity is None:
                warnings.append(f"{where}: verdict {str(verdict)[:40]!r} has no documented mapping; missing")
            issues = entry.get("judge_issues")
            rows.append(
                {
                    "judge": str(entry["judge_prompt_name"]),
                    "task_id": str(entry["task_id"]),
                    "simulation_id": str(entry.get("simulation_id") or ""),
                    "label": str(entry.get("label") or ""),
                    "judge_model": str(entry.get("judge_model") or ""),
                    "verdict": "" if verdict is None else str(verdict),
                    "severity": S.MISSING if severity is None else severity,
                    "missing_reason": "no_verdict" if severity is None else "",
                    "tau2_reward": _reward(entry.get("tau2_reward")),
                    "justification": str(entry.get("judge_justification") or ""),
                    "n_issues": len(issues) if isinstance(issues, list) else 0,
                }
            )
    table = pd.DataFrame(rows, columns=list(TABLE_COLUMNS))
    table["severity"] = table["severity"].astype(np.int8)
    table.attrs["warnings"] = warnings
    return table


def _reward(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else np.nan


def tau2_judgments(
    paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]], *, role: str | None = None
) -> xr.Dataset:
    """tau2 judge summary files -> a cube over (item = task) x (judge = prompt name + ``reward``).

    Parameters
    ----------
    paths
        One summary file or several (one judge prompt each, or several).
    role
        The role label (default: ``tau_<domain>`` when the entries' ``label``
        names a tau2 domain, else ``tau2``).

    Returns
    -------
    xarray.Dataset
        A cube with one turn (the verdict concerns the whole conversation) and
        one principle, ``task_success``; ``system`` = the judged simulation set's
        ``label``; coordinate ``task_id`` on ``item`` and ``judge_model`` on
        ``judge`` (``deterministic`` for the reward); variable ``simulation_id``
        names the judged tau2 simulation of each conversation.  attrs ``warnings`` as in
        :func:`tau2_judgment_table`.

    Raises
    ------
    ValueError
        If no entry is readable, a judge prompt is named ``reward``, or two entries
        give the same judge's verdict on the same conversation.
    """
    table = tau2_judgment_table(paths)
    if table.empty:
        raise ValueError("tau2_judgments: no readable entries")
    duplicated = table.duplicated(["label", "judge", "task_id"], keep=False)
    if duplicated.any():
        first = table[duplicated].iloc[0]
        raise ValueError(
            f"tau2_judgments: judge {first['judge']!r} rated task {first['task_id']!r} of {first['label']!r} twice"
        )
    systems = sorted(table["label"].unique())
    judges = sorted(table["judge"].unique())
    if REFERENCE_JUDGE in judges:
        raise ValueError(f"tau2_judgments: a judge prompt is named {REFERENCE_JUDGE!r}, the reference rater's label")
    judges.append(REFERENCE_JUDGE)
    task_ids, items = item_labels(table["task_id"])
    models = table.groupby("judge")["judge_model"].first().to_dict()
    if role is None:
        domains = {d for label in systems for d in _KNOWN_DOMAINS if d in re.split(r"[^a-z0-9]+", label.lower())}
        role = f"tau_{domains.pop()}" if len(domains) == 1 else "tau2"
    rewards = table.groupby(["label", "task_id"])["tau2_reward"].agg(lambda r: r.dropna().unique().tolist())
    warnings = table.attrs["warnings"] + [
        f"task {task_id}: entries disagree on tau2_reward {values}; missing"
        for (_, task_id), values in rewards.items()
        if len(values) > 1
    ]
    cube = new_cube(
        system=systems,
        role=[role],
        user_sim=["tau2_user"],
        condition=["recorded"],
        replicate=1,
        item=items,
        turn=1,
        principle=[PRINCIPLE],
        judge=judges,
        role_principles={role: (PRINCIPLE,)},
        coords={
            "task_id": ("item", task_ids),
            "judge_model": ("judge", [models.get(j, "deterministic") for j in judges]),
        },
        attrs={"source": "tau2-bench judge summaries", "warnings": warnings},
    )
    cube["simulation_id"] = xr.full_like(cube["transcript_id"], "")
    severity = cube["severity"].values
    missing = cube["missing_count"].values
    simulation_id = cube["simulation_id"].values
    ended = cube["ended"].values
    sys_at = {s: i for i, s in enumerate(systems)}
    item_at = {t: i for i, t in enumerate(task_ids)}
    judge_at = {j: i for i, j in enumerate(judges)}
    reason_at = {r: i for i, r in enumerate(S.MISSING_REASONS)}
    for row in table.itertuples(index=False):
        s, i = sys_at[row.label], item_at[row.task_id]
        severity[s, 0, 0, 0, 0, i, 0, 0, judge_at[row.judge]] = row.severity
        if row.missing_reason:
            missing[judge_at[row.judge], reason_at[row.missing_reason]] += 1
        simulation_id[s, 0, 0, 0, 0, i] = row.simulation_id
        ended[s, 0, 0, 0, 0, i] = "completed"
    for (label, task_id), values in rewards.items():
        if len(values) == 1:
            code = S.FULL_ADHERENCE if values[0] >= SUCCESS_THRESHOLD else S.CLEAR_BREACH
        else:
            code = S.MISSING
            missing[judge_at[REFERENCE_JUDGE], reason_at["not_recorded"]] += 1
        severity[sys_at[label], 0, 0, 0, 0, item_at[task_id], 0, 0, judge_at[REFERENCE_JUDGE]] = code
    return cube
