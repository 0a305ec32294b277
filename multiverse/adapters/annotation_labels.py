"""Human labels -> the cube: each annotator becomes a judge ``human:<annotator>``.

A label file is JSONL, one object per label, as ``annotate export``'s sheet and
the annotation form write them::

    {"task", "annotator", "turn", "principle", "severity"}   # an assistant turn (0/1/2)
    {"task", "annotator", "turn", "axis", "rating"}          # a user turn, Study 1 (1-5)

or the CSV sheet ``annotate export`` writes (columns ``task, annotator, turn,
principle, severity, axis, rating``; one of the two kinds per row).  ``task``
is the conversation's ``transcript_id``; ``turn`` is the 1-based assistant turn
(severity) or user turn (rating).

Severities go to ``severity`` under the new judges; ratings to a variable of
their own, ``rating`` over the conversation dims, ``user_turn``, ``axis`` and
``judge`` (int8: 1-5, -1 missing, -2 not asked).  In a conversation an
annotator labelled, every cell some other judge ruled on is missing (-1) until
labelled; a blank label is missing (reason ``not_recorded``), a value outside
the scale is missing (reason ``no_verdict``), and both are counted in
``missing_count``.  Conversations an annotator did not label are not applicable
(-2) for that annotator.  Importing an annotator again replaces their earlier
labels (a sheet is the annotator's whole record), so re-importing the same file
gives the same cube; other annotators are kept.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from multiverse.adapters.annotation_tasks import AXES
from multiverse.adapters._label_maps import integer as _integer  # one reading of integer labels for all
from multiverse.core import schema as S
from multiverse.core.files import InputFileError, loads_strict, read_regular
from multiverse.cube.io import open_cube, save_cube

__all__ = ["HUMAN_PREFIX", "SHEET_COLUMNS", "Label", "blank_sheet", "import_labels", "read_labels", "with_labels"]

HUMAN_PREFIX = "human:"
SHEET_COLUMNS = ("task", "annotator", "turn", "principle", "severity", "axis", "rating")
_SEVERITIES = {0, 1, 2}
_RATINGS = {1, 2, 3, 4, 5}


@dataclass(frozen=True)
class Label:
    """One label read from a file; ``value`` is None when blank, ``valid`` False when off the scale."""

    where: str
    task: str
    annotator: str
    turn: int
    kind: str  # "severity" or "rating"
    target: str  # the principle or the axis
    value: int | None
    valid: bool


def blank_sheet(tasks: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """The CSV label sheet of ``tasks``: one row per assistant turn x principle and per user turn x axis."""
    rows = []
    for task in tasks:
        for turn in task["assistant_turns"]:
            for principle in task["principles"]:
                rows.append({"task": task["task"], "annotator": "", "turn": turn, "principle": principle["id"],
                             "severity": "", "axis": "", "rating": ""})
        for turn in task["user_turns"]:
            for axis in task["axes"]:
                rows.append({"task": task["task"], "annotator": "", "turn": turn, "principle": "",
                             "severity": "", "axis": axis, "rating": ""})
    return pd.DataFrame(rows, columns=list(SHEET_COLUMNS))


def _blank(value: Any) -> bool:
    return value is None or (isinstance(value, float) and np.isnan(value)) or (isinstance(value, str) and not value.strip())


def _label(record: Mapping[str, Any], where: str) -> Label:
    for key in ("task", "annotator", "turn"):
        if _blank(record.get(key)):
            raise ValueError(f"{where}: field {key!r} is missing or empty")
    turn = _integer(record["turn"])
    if turn is None or turn < 1:
        raise ValueError(f"{where}: field 'turn' holds {record['turn']!r}; expected a 1-based turn")
    has_principle, has_axis = not _blank(record.get("principle")), not _blank(record.get("axis"))
    if has_principle == has_axis:
        raise ValueError(f"{where}: expected either 'principle' (with 'severity') or 'axis' (with 'rating')")
    kind, target = ("severity", str(record["principle"])) if has_principle else ("rating", str(record["axis"]))
    if kind == "rating" and target not in AXES:
        raise ValueError(f"{where}: field 'axis' holds {target!r}; expected one of {', '.join(AXES)}")
    raw = record.get(kind)
    value = None if _blank(raw) else _integer(raw)
    scale = _SEVERITIES if kind == "severity" else _RATINGS
    valid = _blank(raw) or value in scale
    return Label(where, str(record["task"]), str(record["annotator"]).strip(), turn, kind, target,
                 value if valid else None, valid)


def read_labels(paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]]) -> list[Label]:
    """Every label of the JSONL (``.jsonl``) or CSV (``.csv``) files, located as ``file:line``.

    ``paths`` is one path or several.  Files are UTF-8 (a BOM is allowed, as in
    YAML and case files); a line that is not names its file and line.

    Raises
    ------
    ValueError
        Naming the file (and line) of the first problem.
    """
    labels = []
    for path in map(Path, _paths(paths)):
        try:
            raw = read_regular(path, what="label file")
        except InputFileError as exc:
            raise ValueError(str(exc)) from None
        if path.suffix.lower() == ".csv":
            try:
                table = pd.read_csv(io.BytesIO(raw), dtype=str, keep_default_na=False, encoding="utf-8-sig")
            except (ValueError, UnicodeDecodeError) as exc:
                raise ValueError(f"{path}: cannot read the label sheet ({' '.join(str(exc).split())[:160]})") from None
            missing = [c for c in ("task", "annotator", "turn") if c not in table.columns]
            if missing:
                raise ValueError(f"{path}: no column {missing[0]!r}; expected {', '.join(SHEET_COLUMNS)}")
            for line, record in enumerate(table.to_dict("records"), start=2):
                labels.append(_label(record, f"{path}:{line}"))
            continue
        for line, row in enumerate(raw.removeprefix(b"\xef\xbb\xbf").split(b"\n"), start=1):
            if not row.strip():
                continue
            try:
                record = loads_strict(row.decode("utf-8"))
            except UnicodeDecodeError as exc:
                raise ValueError(f"{path}:{line}: not UTF-8 text (byte {exc.start} of the line)") from None
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{line}: not JSON ({exc.msg})") from None
            except (ValueError, RecursionError) as exc:
                raise ValueError(f"{path}:{line}: not valid JSON ({exc})") from None
            if not isinstance(record, dict):
                raise ValueError(f"{path}:{line}: expected a JSON object per line")
            labels.append(_label(record, f"{path}:{line}"))
    return labels


def _paths(paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]]) -> list[str | os.PathLike[str]]:
    """One path as a list of one (a string is a path, never a sequence of one-letter paths)."""
    if isinstance(paths, (str, os.PathLike)):
        return [paths]
    return list(paths)


def _conversations(cube: xr.Dataset) -> dict[str, list[tuple[int, ...]]]:
    """transcript id -> the positions (in CONVERSATION_DIMS order) of the conversations holding it."""
    ids = cube["transcript_id"].transpose(*S.CONVERSATION_DIMS).values.astype(str)
    out: dict[str, list[tuple[int, ...]]] = {}
    for position in zip(*np.nonzero(ids != ""), strict=True):
        out.setdefault(ids[position], []).append(tuple(int(p) for p in position))
    return out


def _extend_judges(cube: xr.Dataset, judges: list[str]) -> xr.Dataset:
    new = [j for j in judges if j not in cube["judge"].values.tolist()]
    if not new:
        return cube
    labels = np.asarray(cube["judge"].values.tolist() + new, dtype=object)
    fill = {name: (S.NOT_APPLICABLE if name in ("severity", "rating") else 0)
            for name in cube.data_vars if "judge" in cube[name].dims}
    out = cube.reindex(judge=labels, fill_value=fill)
    for name in [c for c in cube.coords if c != "judge" and cube[c].dims == ("judge",)]:
        blank = 0 if cube[name].dtype.kind in "biuf" else ""
        values = cube[name].values.tolist() + [blank] * len(new)
        out = out.assign_coords({name: ("judge", np.asarray(values, dtype=cube[name].dtype))})
    return out


def _with_ratings(cube: xr.Dataset, n_user_turns: int) -> xr.Dataset:
    turns = max(n_user_turns, cube.sizes.get("user_turn", 0))
    shape = tuple(cube.sizes[d] for d in S.CONVERSATION_DIMS) + (turns, len(AXES), cube.sizes["judge"])
    grid = np.full(shape, S.NOT_APPLICABLE, dtype=np.int8)
    if "rating" in cube:
        old = cube["rating"].transpose(*S.CONVERSATION_DIMS, "user_turn", "axis", "judge").values
        grid[..., : old.shape[-3], :, :] = old
        cube = cube.drop_vars(["rating", "user_turn", "axis"], errors="ignore")
    return cube.assign(rating=(S.CONVERSATION_DIMS + ("user_turn", "axis", "judge"), grid)).assign_coords(
        user_turn=np.arange(1, turns + 1, dtype=np.int64), axis=np.asarray(AXES, dtype=object))


def with_labels(cube: xr.Dataset, labels: Sequence[Label], *, prefix: str = HUMAN_PREFIX) -> xr.Dataset:
    """The cube with the annotators of ``labels`` as judges ``<prefix><annotator>`` (see the module docstring).

    Raises
    ------
    ValueError
        Naming the file and line of a label whose task is not a conversation of
        the cube, whose principle is not one of the conversation's role, whose
        turn is past the conversation's end, or that contradicts an earlier label of
        the same cell.
    """
    conversations = _conversations(cube)
    principles = cube["principle"].values.tolist()
    applies = cube["principle_applies"].transpose("role", "principle").values
    n_turns = cube.sizes["turn"]
    seen: dict[tuple, Label] = {}
    for label in labels:
        if label.task not in conversations:
            raise ValueError(f"{label.where}: task {label.task!r} is not a conversation of the cube")
        if label.kind == "severity":
            if label.target not in principles:
                raise ValueError(f"{label.where}: principle {label.target!r} is not a principle of the cube")
            role = conversations[label.task][0][S.CONVERSATION_DIMS.index("role")]
            if not applies[role, principles.index(label.target)]:
                raise ValueError(f"{label.where}: principle {label.target!r} is not one of role "
                                 f"{str(cube['role'].values[role])!r}")
            if label.turn > n_turns:
                raise ValueError(f"{label.where}: turn {label.turn} is past the cube's {n_turns} assistant turns")
        key = (label.task, label.annotator, label.kind, label.turn, label.target)
        earlier = seen.get(key)
        if earlier is not None and (earlier.value, earlier.valid) != (label.value, label.valid):
            raise ValueError(f"{label.where}: contradicts {earlier.where} on the same cell")
        seen[key] = label
    judges = sorted({prefix + label.annotator for label in seen.values()})
    out = _extend_judges(cube, judges)
    max_user_turn = max((label.turn for label in seen.values() if label.kind == "rating"), default=0)
    if max_user_turn or "rating" in out:
        out = _with_ratings(out, max_user_turn)
    severity = out["severity"].transpose(*S.SEVERITY_DIMS).values.copy()
    judge_labels = out["judge"].values.tolist()
    others = [i for i, j in enumerate(judge_labels) if j not in judges]
    ruled = (severity[..., others] != S.NOT_APPLICABLE).any(axis=-1) if others else np.ones(severity.shape[:-1], bool)
    for label in seen.values():
        cell = (label.turn - 1, principles.index(label.target)) if label.kind == "severity" else None
        if cell is not None and not any(ruled[position + cell] for position in conversations[label.task]):
            raise ValueError(f"{label.where}: turn {label.turn} is past the end of conversation {label.task!r}")
    rating = out["rating"].transpose(*S.CONVERSATION_DIMS, "user_turn", "axis", "judge").values.copy() \
        if "rating" in out else None
    unmapped = np.zeros(len(judge_labels), dtype=np.int64)
    for judge in judges:
        j = judge_labels.index(judge)
        severity[..., j] = S.NOT_APPLICABLE
        if rating is not None:
            rating[..., j] = S.NOT_APPLICABLE
        mine = [label for label in seen.values() if prefix + label.annotator == judge]
        for task in {label.task for label in mine if label.kind == "severity"}:
            for position in conversations[task]:
                severity[position + (Ellipsis, j)] = np.where(ruled[position], S.MISSING, S.NOT_APPLICABLE)
        for label in mine:
            if label.kind == "severity" and not label.valid:
                unmapped[j] += len(conversations[label.task])
            for position in conversations[label.task]:
                value = S.MISSING if label.value is None else label.value
                if label.kind == "severity":
                    severity[position + (label.turn - 1, principles.index(label.target), j)] = value
                else:
                    axis = AXES.index(label.target)
                    turn_cells = rating[position + (label.turn - 1, slice(None), j)]
                    turn_cells[turn_cells == S.NOT_APPLICABLE] = S.MISSING
                    rating[position + (label.turn - 1, axis, j)] = value
    out["severity"] = (S.SEVERITY_DIMS, severity)
    if rating is not None:
        out["rating"] = (S.CONVERSATION_DIMS + ("user_turn", "axis", "judge"), rating)
    counts = out["missing_count"].transpose("judge", "missing_reason").values.copy()
    reasons = list(S.MISSING_REASONS)
    for judge in judges:
        j = judge_labels.index(judge)
        counts[j] = 0
        counts[j, reasons.index("no_verdict")] = unmapped[j]
        counts[j, reasons.index("not_recorded")] = int((severity[..., j] == S.MISSING).sum()) - unmapped[j]
    out["missing_count"] = (("judge", "missing_reason"), counts)
    out.attrs["annotators"] = json.dumps(sorted(j for j in judge_labels if j.startswith(prefix)))
    return out


def import_labels(
    labels: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    *,
    cube: str | os.PathLike[str],
    out: str | os.PathLike[str],
) -> xr.Dataset:
    """Read label files into the cube at ``cube`` and write the result to ``out`` (``.nc`` / ``.zarr``).

    ``labels`` is one label file or several; files without a single label are
    refused.  Refuses to overwrite an existing ``out`` that is not a cube.
    Returns the new cube.  See :func:`with_labels` for the rules and errors.
    """
    target = Path(out)
    if target.exists():
        try:
            open_cube(target, lazy=False)
        except (OSError, ValueError, FileNotFoundError):
            raise ValueError(f"{target}: exists and is not a cube; refusing to overwrite it") from None
    paths = _paths(labels)
    read = read_labels(paths)
    if not read:
        raise ValueError(f"{', '.join(map(str, paths))}: no labels in the label file(s); nothing to import")
    result = with_labels(open_cube(cube, lazy=False), read)
    save_cube(result, target)
    return result
