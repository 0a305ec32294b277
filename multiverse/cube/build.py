"""The judgment cube: construction, checking and the tidy long view.

Every producer of results (the runner, every adapter) builds its cube with
:func:`new_cube` and fills it; every consumer may call :func:`check_cube`.
The layout is documented in :mod:`multiverse.core.schema`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from multiverse.core import schema as S

__all__ = ["new_cube", "encode_attrs", "decode_attrs", "check_cube", "to_long", "with_truth_judge"]


def new_cube(
    *,
    system: Sequence[str],
    role: Sequence[str],
    user_sim: Sequence[str],
    condition: Sequence[str],
    replicate: int | Sequence[int],
    item: int | Sequence[int],
    turn: int | Sequence[int],
    principle: Sequence[str],
    judge: Sequence[str],
    role_principles: Mapping[str, Sequence[str]] | None = None,
    with_truth: bool = False,
    coords: Mapping[str, tuple[str, Sequence[Any]]] | None = None,
    attrs: Mapping[str, Any] | None = None,
) -> xr.Dataset:
    """An empty cube: every severity not applicable (-2), conversation fields blank.

    A cell whose ``ended`` stays blank holds no conversation: the caller had
    none for those labels (not in the data, or excluded by the experiment;
    :func:`multiverse.cube.summary.absence`).  ``failed`` is kept for a
    conversation that started and broke off, which an empty cell is not.

    Parameters
    ----------
    system, role, user_sim, condition, principle, judge
        Labels of each dim, in order.
    replicate, item
        A count (labels ``0..n-1``) or explicit integer labels.
    turn
        The longest horizon (labels ``1..n``) or explicit 1-based labels.
    role_principles
        Which principles belong to which role; defaults to the fixed ids of
        :data:`multiverse.core.schema.ROLE_PRINCIPLES` where known.  Stored as the
        boolean ``principle_applies`` (role, principle).
    with_truth
        Add a ``truth`` variable (the offline world's planted severities).
    coords
        Extra non-dim coordinates, ``name -> (dim, values)``, e.g.
        ``{"system_model": ("system", [...])}``.
    attrs
        Provenance attrs, kept as given (dicts and lists stay dicts and lists);
        the writers store them as JSON text (:func:`encode_attrs`) and
        :func:`multiverse.open_cube` decodes them again.
    """
    def labels(value: int | Sequence[int], start: int) -> np.ndarray:
        if isinstance(value, (int, np.integer)):
            return np.arange(start, start + int(value), dtype=np.int64)
        return np.asarray(list(value), dtype=np.int64)

    index = {
        "system": np.asarray(list(system), dtype=object),
        "role": np.asarray(list(role), dtype=object),
        "user_sim": np.asarray(list(user_sim), dtype=object),
        "condition": np.asarray(list(condition), dtype=object),
        "replicate": labels(replicate, 0),
        "item": labels(item, 0),
        "turn": labels(turn, 1),
        "principle": np.asarray(list(principle), dtype=object),
        "judge": np.asarray(list(judge), dtype=object),
    }
    shape = tuple(len(index[d]) for d in S.SEVERITY_DIMS)
    conv_shape = shape[: len(S.CONVERSATION_DIMS)]
    turn_shape = conv_shape + (len(index["turn"]),)

    data_vars: dict[str, Any] = {
        "severity": (S.SEVERITY_DIMS, np.full(shape, S.NOT_APPLICABLE, dtype=np.int8)),
    }
    if with_truth:
        data_vars["truth"] = (S.TRUTH_DIMS, np.full(shape[:-1], S.NOT_APPLICABLE, dtype=np.int8))
    for name in S.CONVERSATION_VARS:
        data_vars[name] = (S.CONVERSATION_DIMS, np.full(conv_shape, "", dtype=object))
    for name in S.TURN_VARS:
        data_vars[name] = (S.CONVERSATION_DIMS + ("turn",), np.full(turn_shape, "", dtype=object))

    rp = role_principles if role_principles is not None else S.ROLE_PRINCIPLES
    applies = np.array(
        [[p in rp.get(r, index["principle"]) for p in index["principle"]] for r in index["role"]],
        dtype=bool,
    ).reshape(len(index["role"]), len(index["principle"]))
    data_vars["principle_applies"] = (("role", "principle"), applies)
    data_vars["missing_count"] = (
        ("judge", "missing_reason"),
        np.zeros((len(index["judge"]), len(S.MISSING_REASONS)), dtype=np.int64),
    )
    all_coords: dict[str, Any] = dict(index)
    all_coords["missing_reason"] = np.asarray(S.MISSING_REASONS, dtype=object)
    for name, (dim, values) in (coords or {}).items():
        all_coords[name] = (dim, np.asarray(list(values)))
    ds = xr.Dataset(data_vars, coords=all_coords)
    ds.attrs.update(dict(attrs or {}))
    return ds


def encode_attrs(attrs: Mapping[str, Any]) -> dict[str, Any]:
    """Attrs netCDF can store: mappings and lists become JSON text (:func:`decode_attrs` reverses it)."""
    out: dict[str, Any] = {}
    for key, value in attrs.items():
        if isinstance(value, (Mapping, list, tuple)):
            out[key] = json.dumps(value, sort_keys=True, default=str)
        elif isinstance(value, bool):
            out[key] = int(value)
        elif value is None:
            out[key] = ""
        else:
            out[key] = value
    return out


def decode_attrs(attrs: Mapping[str, Any]) -> dict[str, Any]:
    """Attrs as Python values: JSON text of an object or a list (as :func:`encode_attrs` writes it) decoded."""
    out: dict[str, Any] = {}
    for key, value in attrs.items():
        if isinstance(value, str) and value[:1] in "{[":
            try:
                decoded = json.loads(value)
            except ValueError:
                decoded = value
            out[key] = decoded if isinstance(decoded, (dict, list)) else value
        else:
            out[key] = value
    return out


def check_cube(cube: xr.Dataset) -> None:
    """Raise ``ValueError`` naming the first way ``cube`` departs from the schema."""
    if "severity" not in cube:
        raise ValueError("cube: no 'severity' variable")
    dims = cube["severity"].dims
    if set(dims) != set(S.SEVERITY_DIMS):
        raise ValueError(f"cube: severity dims {dims}, expected {S.SEVERITY_DIMS}")
    if cube["severity"].dtype != np.int8:
        raise ValueError(f"cube: severity dtype {cube['severity'].dtype}, expected int8")
    values = np.unique(cube["severity"].values)
    bad = sorted(set(values.tolist()) - {-2, -1, 0, 1, 2})
    if bad:
        raise ValueError(f"cube: severity holds codes {bad}, expected -2..2")


def to_long(
    cube: xr.Dataset, *, include_not_applicable: bool = False, reasons: bool | str | Path = False
) -> pd.DataFrame:
    """A tidy table of judgments: one row per (conversation, turn, principle, judge).

    Parameters
    ----------
    cube
        A judgment cube.
    include_not_applicable
        Keep rows with severity -2 (principle not in role, turn past the end).
    reasons
        Add a ``reason`` column: each judge's stated reason (missing where it
        gave none), read by :func:`multiverse.judge_reasons` from the run's
        transcript store.  ``True`` finds the store beside the file the cube
        was read from (or written to by ``run(..., out=...)``); a path names
        the run folder or the store.

    Returns
    -------
    pandas.DataFrame
        Columns: the nine severity dims, ``severity``, ``truth`` (when the cube
        has it), ``rating`` (when some judge labels on the likert scale; its
        rated rows are kept), the per-conversation fields (the contract judge's lanes among
        them, when the cube has them), and ``reason`` when asked for.

    Raises
    ------
    ValueError
        If ``cube`` is not a judgment cube (:func:`check_cube` names how).
    FileNotFoundError
        If ``reasons`` is asked for and no transcript store is found.
    """
    check_cube(cube)
    sev = cube["severity"].transpose(*S.SEVERITY_DIMS)
    frame = sev.to_dataframe(name="severity").reset_index()
    if "truth" in cube:
        truth = cube["truth"].transpose(*S.TRUTH_DIMS).broadcast_like(sev).transpose(*S.SEVERITY_DIMS)
        frame["truth"] = truth.values.reshape(-1)
    if "rating" in cube:  # likert judges' ratings (multiverse.core.scales): a rated cell's severity is -2
        frame["rating"] = cube["rating"].transpose(*S.SEVERITY_DIMS).values.reshape(-1)
    if not include_not_applicable:
        keep = frame["severity"] != S.NOT_APPLICABLE
        if "rating" in frame:
            keep |= frame["rating"].notna()
        frame = frame[keep]
    conv_vars = [v for v in S.CONVERSATION_VARS + S.CONTRACT_VARS if v in cube]
    if conv_vars:
        conv = cube[conv_vars].to_dataframe().reset_index()
        conv = conv[[c for c in conv.columns if c in S.CONVERSATION_DIMS or c in conv_vars]]
        frame = frame.merge(conv, on=list(S.CONVERSATION_DIMS), how="left")
    if reasons is not False:
        frame = _with_reasons(frame, cube, reasons)
    for name in frame.columns:
        if frame[name].dtype == object:
            frame[name] = frame[name].astype("string[pyarrow]")
    return frame.reset_index(drop=True)


def _with_reasons(frame: pd.DataFrame, cube: xr.Dataset, reasons: bool | str | Path) -> pd.DataFrame:
    from multiverse.cube.reasons import judge_reasons

    source = cube.encoding.get("source") if reasons is True else reasons
    if not source:
        raise FileNotFoundError(
            "to_long(reasons=True): the cube was not read from a file; pass reasons=<run folder>"
        )
    keys = [*S.SEVERITY_DIMS]
    table = judge_reasons(source)[[*keys, "reason"]]
    merged = frame.merge(table, on=keys, how="left", validate="one_to_one")
    merged.index = frame.index
    return merged


def with_truth_judge(cube: xr.Dataset, *, label: str = "truth") -> xr.Dataset:
    """The cube with its planted ``truth`` added as one more value of ``judge``.

    The truth then flows through every standard, rule and analysis like a judge
    that never errs, which is how the offline world's answers are checked.
    Per-judge coordinates (e.g. ``judge_model``) get an empty label for it.

    Raises
    ------
    ValueError
        If the cube has no ``truth`` variable, or already has a judge ``label``.
    """
    if "truth" not in cube:
        raise ValueError("cube: no 'truth' variable (only the offline world plants one)")
    if label in cube["judge"].values:
        raise ValueError(f"cube: judge {label!r} already exists")
    judge_vars = [v for v in cube.data_vars if "judge" in cube[v].dims]
    judge_coords = [c for c in cube.coords if c != "judge" and cube[c].dims == ("judge",)]
    labels = np.append(cube["judge"].values.astype(object), label)

    def extended(name: str, last: xr.DataArray) -> xr.DataArray:
        values = np.concatenate([cube[name].values, last.values], axis=cube[name].get_axis_num("judge"))
        return xr.DataArray(values, dims=cube[name].dims)

    out = cube.drop_vars(judge_vars + judge_coords + ["judge"]).assign_coords(judge=labels)
    for name in judge_coords:
        blank = np.zeros(1, dtype=cube[name].dtype) if cube[name].dtype.kind in "biuf" else np.asarray([""], dtype=object)
        out = out.assign_coords({name: ("judge", np.concatenate([cube[name].values.astype(blank.dtype), blank]))})
    truth = cube["truth"].expand_dims(judge=[label]).transpose(*cube["severity"].dims).astype(np.int8)
    for name in judge_vars:
        last = truth if name == "severity" else xr.zeros_like(cube[name].isel(judge=[0]))
        out[name] = extended(name, last)
    return out
