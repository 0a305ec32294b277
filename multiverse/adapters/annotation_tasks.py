"""Annotation tasks: a stratified, blinded sample of a run's conversations for human raters.

One task per conversation, as the annotation form reads it::

    {"task": <id>, "role": <role id>,
     "principles": [{"id", "statement", "criteria"}],
     "events": [{"turn", "actor", "text", "tool_calls"?, "set_role"?}],
     "assistant_turns": [1-based assistant turn indices],
     "user_turns": [1-based indices of the user turns to rate],
     "axes": ["naturalness", "role_fidelity", "grounding"],
     "severity_levels": {"0": "full adherence", "1": "partial deviation", "2": "clear breach"},
     "strata": {"role": ..., "stratum": <opaque id>}}

The task id is the conversation's ``transcript_id`` (a content address), which
``annotate import`` maps back to the cube.  Tasks never carry judge verdicts or
other annotators' labels (the paper's blinding): strata derived from verdicts
(``severity``, ``bucket``) appear in a task only as an opaque stratum id, whose
meaning :func:`strata_key` returns for the researcher.

Sampling: conversations that completed and have a transcript are grouped by the
chosen strata; ``n`` is allocated as equally as the strata allow (one draw per
stratum in turn, skipping strata already exhausted), and drawn within each stratum by a seeded permutation, so the same run, ``n``,
strata and seed give the same tasks.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr

from multiverse.config.specs import load_role
from multiverse.core import schema as S
from multiverse.core.transcript import Transcript, TranscriptStore
from multiverse.cube.io import open_cube

__all__ = ["AXES", "SEVERITY_LEVELS", "STRATA", "annotation_tasks", "conversation_strata", "strata_key"]

AXES = ("naturalness", "role_fidelity", "grounding")
"""Study 1's axes for rating the simulated user's turns (1-5)."""
SEVERITY_LEVELS = {"0": "full adherence", "1": "partial deviation", "2": "clear breach"}
STRATA = ("role", "severity", "bucket", "system", "user_sim", "condition")
"""What a sample can be stratified by: conversation dims, the judges' worst severity, the selection bucket."""
_BLIND = {"severity", "bucket"}


def conversation_strata(cube: xr.Dataset, *, by: Sequence[str]) -> dict[str, np.ndarray]:
    """Each conversation's stratum values, flattened over :data:`multiverse.core.schema.CONVERSATION_DIMS`.

    ``severity`` is the worst severity any judge gave in the conversation
    (``"0"``, ``"1"``, ``"2"``, or ``"missing"`` when no judgment is valid);
    ``bucket`` is ``"disagreement"`` when the judges' clear-breach verdicts on
    the conversation differ, else its campaign ``origin`` (``"seed"`` when blank).
    """
    unknown = [s for s in by if s not in STRATA]
    if unknown:
        raise ValueError(f"--stratify: unknown strata {unknown}; expected any of {', '.join(STRATA)}")
    conv = cube["ended"].transpose(*S.CONVERSATION_DIMS)
    shape = conv.shape
    out: dict[str, np.ndarray] = {}
    severity = cube["severity"].transpose(*S.SEVERITY_DIMS).values
    cells = severity.reshape(int(np.prod(shape)), -1, severity.shape[-1])  # (conversation, turn*principle, judge)
    for name in by:
        if name in S.CONVERSATION_DIMS:
            labels = cube[name].values.astype(str)
            index = np.indices(shape)[S.CONVERSATION_DIMS.index(name)].ravel()
            out[name] = labels[index]
        elif name == "severity":
            worst = cells.max(axis=(1, 2))
            out[name] = np.where(worst >= 0, worst.astype(str), "missing")
        else:
            breach = (cells == S.CLEAR_BREACH).any(axis=1)  # (conversation, judge)
            judged = (cells >= 0).any(axis=1)
            verdicts = np.where(judged, breach, -1)
            valid = verdicts >= 0
            disagree = (np.where(valid, verdicts, 1).min(axis=1) != np.where(valid, verdicts, 0).max(axis=1)) & \
                (valid.sum(axis=1) >= 2)
            origin = cube["origin"].transpose(*S.CONVERSATION_DIMS).values.astype(str).ravel()
            out[name] = np.where(disagree, "disagreement", np.where(origin == "", "seed", origin))
    return out


def _allocate(sizes: list[int], n: int) -> list[int]:
    """Equal allocation of ``n`` draws over strata of ``sizes``: one each in turn, skipping full strata."""
    take = [0] * len(sizes)
    left = min(n, sum(sizes))
    while left > 0:
        for i, size in enumerate(sizes):
            if left and take[i] < size:
                take[i] += 1
                left -= 1
    return take


def _locate(run_or_cube: str | os.PathLike[str], transcripts: str | os.PathLike[str] | None) -> tuple[xr.Dataset, Path]:
    path = Path(run_or_cube)
    cube = open_cube(path, lazy=False)
    if transcripts is not None:
        store = Path(transcripts)
    else:
        folder = path if path.is_dir() and path.suffix != ".zarr" else path.parent
        store = folder / "transcripts.sqlite"
    if not store.exists():
        raise FileNotFoundError(f"{path}: no transcript store at {store}; annotation tasks need the transcripts")
    return cube, store


def _events(transcript: Transcript) -> list[dict[str, Any]]:
    out = []
    for event in transcript.events:
        item: dict[str, Any] = {"turn": event.turn, "actor": event.actor, "text": event.text}
        if event.actions:
            item["tool_calls"] = [a.to_dict() for a in event.actions]
        if event.set_role is not None:
            item["set_role"] = event.set_role
        out.append(item)
    return out


def _principles(role_id: str, cache: dict[str, list[dict]], specs_dir: str | os.PathLike[str] | None) -> list[dict]:
    if role_id not in cache:
        role = load_role(role_id, specs_dir=specs_dir)
        cache[role_id] = [
            {"id": p.id, "statement": p.statement,
             "criteria": {level: c.description for level, c in p.criteria.items()}}
            for p in role.principles
        ]
    return cache[role_id]


def _stratum_ids(strata: Mapping[str, np.ndarray], keep: np.ndarray) -> tuple[np.ndarray, list[tuple[str, ...]]]:
    names = list(strata)
    keys = list(zip(*(strata[name][keep] for name in names), strict=True)) if names else [()] * int(keep.sum())
    distinct = sorted(set(keys))
    lookup = {k: i for i, k in enumerate(distinct)}
    return np.asarray([lookup[k] for k in keys], dtype=np.int64), distinct


def strata_key(cube: xr.Dataset, *, stratify: Sequence[str]) -> dict[str, dict[str, str]]:
    """Opaque stratum id -> its values (the researcher's key; never shown to annotators)."""
    strata = conversation_strata(cube, by=list(stratify))
    keep = _eligible(cube)
    _, distinct = _stratum_ids(strata, keep)
    return {f"s{i}": dict(zip(stratify, values, strict=True)) for i, values in enumerate(distinct)}


def _eligible(cube: xr.Dataset) -> np.ndarray:
    ended = cube["ended"].transpose(*S.CONVERSATION_DIMS).values.astype(str).ravel()
    transcript = cube["transcript_id"].transpose(*S.CONVERSATION_DIMS).values.astype(str).ravel()
    return (ended == "completed") & (transcript != "")


def annotation_tasks(
    run_or_cube: str | os.PathLike[str],
    *,
    n: int,
    stratify: Sequence[str] = ("role",),
    seed: int = 0,
    transcripts: str | os.PathLike[str] | None = None,
    specs_dir: str | os.PathLike[str] | None = None,
) -> list[dict[str, Any]]:
    """A stratified, seeded sample of ``n`` conversations as annotation tasks.

    Parameters
    ----------
    run_or_cube
        A run folder or a cube file with a transcript store beside it.
    n
        Conversations to sample (fewer when fewer are eligible).
    stratify
        Any of :data:`STRATA`.
    seed
        Seed of the within-stratum draws.
    transcripts
        The transcript store (default: ``transcripts.sqlite`` beside the cube).
    specs_dir
        Where the roles live (default: the packaged specs or ``MULTIVERSE_SPECS``).

    Returns
    -------
    list of dict
        One task per conversation in the format of this module's docstring, in
        stratum order then draw order.  A transcript shared by several
        conversations is one task.
    """
    if n < 1:
        raise ValueError(f"--n: {n}, expected at least 1")
    cube, store_path = _locate(run_or_cube, transcripts)
    strata = conversation_strata(cube, by=list(stratify))
    keep = _eligible(cube)
    ids = cube["transcript_id"].transpose(*S.CONVERSATION_DIMS).values.astype(str).ravel()[keep]
    shape = cube["ended"].transpose(*S.CONVERSATION_DIMS).shape
    role_index = np.indices(shape)[S.CONVERSATION_DIMS.index("role")].ravel()
    roles = cube["role"].values.astype(str)[role_index][keep]
    stratum, distinct = _stratum_ids(strata, keep)
    _, first = np.unique(ids, return_index=True)
    unique = np.zeros(len(ids), dtype=bool)
    unique[first] = True
    members = [np.flatnonzero((stratum == s) & unique) for s in range(len(distinct))]
    counts = _allocate([len(m) for m in members], n)
    rng = np.random.default_rng(seed)
    chosen = [m[rng.permutation(len(m))[:c]] for m, c in zip(members, counts, strict=True)]
    cache: dict[str, list[dict]] = {}
    tasks = []
    with TranscriptStore.open_existing(store_path) as store:
        for s, picks in enumerate(chosen):
            for index in picks:
                transcript = store.get(ids[index])
                users = sum(1 for e in transcript.events if e.actor == "user")
                visible = {name: value for name, value in zip(stratify, distinct[s], strict=True) if name not in _BLIND}
                tasks.append({
                    "task": ids[index],
                    "role": roles[index],
                    "principles": _principles(roles[index], cache, specs_dir),
                    "events": _events(transcript),
                    "assistant_turns": list(range(1, len(transcript.assistant_events) + 1)),
                    "user_turns": list(range(1, users + 1)),
                    "axes": list(AXES),
                    "severity_levels": dict(SEVERITY_LEVELS),
                    "strata": {**visible, "stratum": f"s{s}"},
                })
    return tasks
