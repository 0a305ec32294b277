"""Streaming assembly: a run's cube written unit by unit into a chunked zarr store.

A run with an output folder never holds the whole cube, nor every
conversation, in memory.  Units run a bounded number of conversations at a
time (:data:`STREAM_CONVERSATIONS`); as each finishes, in plan order, its part
of the cube (:func:`~multiverse._run.assemble.assemble_cube` at the unit's
position) is written into its own chunk of ``cube.zarr``, its transcripts and
judge reasons into the transcript store, its unparseable replies into
``unparseable.jsonl``, and only counts (:class:`RunTally`) are kept.  The store
is chunked one unit per chunk along ``system``, ``role``, ``user_sim``,
``condition`` and ``replicate`` and whole along ``item``, ``turn``,
``principle`` and ``judge``, so a part is exactly one chunk of each variable.

At the end :func:`write_netcdf` copies the store, chunk by chunk, into
``cube.nc``: the run folder's fixed output, read by every command and by plain
``xarray.open_dataset``; ``cube.zarr`` stays beside it for readers that want
the chunked store (``xarray.open_zarr``).
"""

from __future__ import annotations

import errno
import json
import os
import warnings
from collections import Counter, defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr
from xarray.coding.variables import SerializationWarning

from multiverse._run.assemble import assemble_cube
from multiverse._run.records import UnitResult
from multiverse.cube.build import encode_attrs
from multiverse.cube.io import ZARR_WRITE, consolidate, netcdf_encoding, stringified, zarr_encoding
from multiverse.plan import UNIT_DIMS, Plan

__all__ = ["STREAM_CONVERSATIONS", "CubeStore", "RunTally", "unparsed_lines", "user_reply_counts", "write_netcdf"]

STREAM_CONVERSATIONS = 2048
"""Conversations a streamed run keeps in flight (at least one whole unit): what bounds its memory."""

_STRING = np.dtypes.StringDType()


@dataclass
class RunTally:
    """What the run summary needs from the units' results, counted as they finish."""

    ended: Counter[str] = field(default_factory=Counter)
    unparseable: int = 0
    coverage: dict[tuple[str, str, str, str], list[float]] = field(default_factory=lambda: defaultdict(list))
    user_replies: Counter[str] = field(default_factory=Counter)

    def add(self, result: UnitResult) -> None:
        """Count one unit's conversations, unparseable replies, coverage share and real user replies."""
        system, role, user_sim, condition, _replicate = result.unit
        self.unparseable += result.unparseable
        self.ended.update(record.transcript.get("ended", "completed") for record in result.records)
        if result.coverage is not None:
            self.coverage[(role, system, user_sim, condition)].append(result.coverage)
        for record in result.records:
            self.user_replies.update(user_reply_counts(record.transcript))


def user_reply_counts(transcript: Mapping[str, Any]) -> Counter[str]:
    """What a real user model's replies in one transcript needed: ``replies``, ``cut``, and stripped parts by kind.

    Read from the user events' structured fields
    (:func:`multiverse.rollout.user_reply.user_reply_meta`): only a real user
    model's events carry them (``asked``).
    """
    counts: Counter[str] = Counter()
    for event in transcript.get("events", ()):
        meta = event.get("meta") or {}
        if event.get("actor") != "user" or "asked" not in meta:
            continue
        counts["replies"] += 1
        counts["cut"] += bool(meta.get("cut"))
        counts.update(meta.get("removed") or {})
    return counts


def unparsed_lines(records: Sequence[Any]) -> Iterator[str]:
    """The ``unparseable.jsonl`` lines of conversation records (one raw judge reply each)."""
    for record in records:
        system, role, user_sim, condition, replicate = record.unit
        for judge, turns in record.unparsed.items():
            for turn, text in sorted(turns.items()):
                line = {
                    "transcript_id": record.transcript.get("id", ""),
                    "system": system,
                    "role": role,
                    "user_sim": user_sim,
                    "condition": condition,
                    "replicate": replicate,
                    "item": record.item,
                    "judge": judge,
                    "turn": turn,
                    "text": text,
                }
                yield json.dumps(line, sort_keys=True, ensure_ascii=False) + "\n"


def _lazy_full(var: xr.DataArray, sizes: Mapping[str, int]) -> tuple[tuple[str, ...], Any]:
    """A dask array over the whole cube, filled with ``var``'s (uniform) default, one unit per chunk."""
    import dask.array as da

    dims = tuple(str(d) for d in var.dims)
    shape = tuple(sizes[d] for d in dims)
    chunks = tuple(1 if d in UNIT_DIMS else sizes[d] for d in dims)
    value = var.values.reshape(-1)[0]
    dtype = _STRING if var.dtype == object else var.dtype
    return dims, da.full(shape, value, dtype=dtype, chunks=chunks)


class CubeStore:
    """A run's cube in a chunked zarr store, filled one unit's part at a time.

    Parameters
    ----------
    path
        The ``.zarr`` folder to create.
    plan
        The plan being run.
    roles
        Role id -> loaded role.
    attrs
        Provenance attrs of the cube.
    """

    def __init__(self, path: str | Path, plan: Plan, roles: Mapping[str, Any], *, attrs: Mapping[str, Any]) -> None:
        self.path = Path(path)
        self.plan, self.roles, self.attrs = plan, roles, dict(attrs)
        labels = {dim: plan.rollout[dim].values.tolist() for dim in UNIT_DIMS}
        self._positions = {dim: {label: i for i, label in enumerate(values)} for dim, values in labels.items()}
        first = {dim: values[0] for dim, values in labels.items()}
        default = assemble_cube(plan, roles, [], attrs=self.attrs, where=first)
        self._missing = np.zeros_like(default["missing_count"].values)
        self._attrs = dict(default.attrs)
        sizes = {**{dim: len(values) for dim, values in labels.items()}, **{
            str(d): int(n) for d, n in default.sizes.items() if d not in UNIT_DIMS}}
        self._sizes = sizes
        # every dim's size, for the run record (checked when the store is read)
        self.sizes = {**sizes, **{str(d): int(n) for d, n in default.sizes.items() if d not in sizes}}
        shell = assemble_cube(plan, roles, [], attrs=self.attrs, where=None, items=0)
        data = {name: _lazy_full(var, sizes) for name, var in default.data_vars.items() if "item" in var.dims}
        template = shell.drop_vars([n for n in shell.data_vars if "item" in shell[n].dims])
        template = template.drop_vars("item").assign_coords(item=default["item"].values).assign(data)
        template = stringified(template)
        template.to_zarr(self.path, mode="w", encoding=zarr_encoding(template), **ZARR_WRITE)
        self._variables = set(template.data_vars)
        self._arrays: dict[str, Any] = {}

    def write(self, result: UnitResult, *, reason_rows: list[dict[str, Any]] | None = None) -> None:
        """Write one unit's part of the cube into its chunk (and collect its judges' reasons)."""
        where = dict(zip(UNIT_DIMS, result.unit))
        part = assemble_cube(self.plan, self.roles, result.records, attrs={}, reason_rows=reason_rows, where=where)
        self._missing += part["missing_count"].values
        for name in part.data_vars:
            if "item" in part[name].dims and name not in self._variables:
                self._add_variable(part[name])
        at = {dim: self._positions[dim][label] for dim, label in where.items()}
        for name in part.data_vars:
            if "item" in part[name].dims:
                self._write_chunk(str(name), part[name], at)

    def _write_chunk(self, name: str, var: xr.DataArray, at: Mapping[str, int]) -> None:
        """Write one unit's values of variable ``name`` straight into its zarr array: exactly one chunk.

        Straight through zarr rather than ``Dataset.to_zarr(region=...)``: the
        variables' encoding was fixed when the store was created (the int8
        codes need none, text is stored as it is), and xarray's per-call
        checks of the whole store cost more than the write.
        """
        array = self._arrays.get(name)
        if array is None:
            import zarr

            # every chunk written, a blank one too (an absent chunk is damage: multiverse.cube.integrity)
            array = zarr.open_array(str(self.path / name), mode="r+").with_config({"write_empty_chunks": ZARR_WRITE["write_empty_chunks"]})
            self._arrays[name] = array
        dims = array.metadata.dimension_names
        values = var.transpose(*(d for d in dims if d in var.dims)).values
        if array.dtype == _STRING:
            values = values.astype(_STRING)
        array[tuple(slice(at[d], at[d] + 1) if d in at else slice(None) for d in dims)] = values.reshape(
            tuple(1 if d in at else n for d, n in zip(dims, array.shape)))

    def _add_variable(self, var: xr.DataArray) -> None:
        """Add a per-conversation variable a judge first reported now (``""`` where it did not rule)."""
        blank = xr.DataArray(np.full((1,) * var.ndim, "", dtype=object), dims=var.dims)
        dims, data = _lazy_full(blank, self._sizes)
        addition = xr.Dataset({var.name: (dims, data)})
        addition.to_zarr(self.path, mode="a", encoding=zarr_encoding(addition), **ZARR_WRITE)
        self._variables.add(str(var.name))

    def finish(self, *, run_info: Mapping[str, Any]) -> None:
        """Write the missing-judgment counts and the run summary (attr ``run``)."""
        import zarr

        counts = xr.Dataset({"missing_count": (("judge", "missing_reason"), self._missing)})
        counts.to_zarr(self.path, region={"judge": slice(None), "missing_reason": slice(None)}, **ZARR_WRITE)
        group = zarr.open_group(str(self.path), mode="r+")
        group.attrs.put(encode_attrs({**self._attrs, "run": dict(run_info)}))
        consolidate(self.path)


def write_netcdf(store: str | Path, path: str | Path) -> Path:
    """Copy a run's zarr store into a netCDF4 file, chunk by chunk, as :func:`multiverse.cube.io.save_cube` writes it.

    Text becomes netCDF variable-length strings; integers, booleans and text
    get no fill value, numbers a Fletcher-32 checksum per chunk
    (:func:`multiverse.cube.io.netcdf_encoding`); the file is written beside
    ``path`` and renamed into place.
    """
    path = Path(path)
    with xr.open_zarr(store, consolidated=False) as cube:
        text = [name for name, var in cube.variables.items() if var.dtype.kind == "T"]
        cube = cube.assign_coords({n: cube[n].astype(object) for n in text if n in cube.coords})
        cube = cube.assign({n: cube[n].astype(object) for n in text if n not in cube.coords})
        cube.attrs = encode_attrs(cube.attrs)
        for name in cube.variables:
            cube[name].encoding = {}
        encoding = netcdf_encoding(cube)
        for name, var in cube.variables.items():
            if var.chunks and all(var.shape):
                encoding[str(name)]["chunksizes"] = tuple(c[0] for c in var.chunks)
        tmp = path.with_name(f".{path.name}.tmp")
        with warnings.catch_warnings():
            # netCDF's variable-length strings need each text variable's values in memory while it is
            # written (text only: the int8 severities and truth go chunk by chunk)
            warnings.filterwarnings("ignore", message=".*dask array with dtype=object", category=SerializationWarning)
            try:
                cube.to_netcdf(tmp, engine="netcdf4", format="NETCDF4", encoding=encoding)
            except RuntimeError as exc:  # HDF5 reports a full disk as "NetCDF: HDF error"
                raise OSError(errno.EIO, f"cannot write the netCDF cube ({exc})", str(tmp)) from None
    os.replace(tmp, path)
    return path

