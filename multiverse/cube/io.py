"""Cubes on disk: netCDF4 (``.nc``) or zarr (``.zarr``), readable by plain xarray.

The files need nothing from this library to open: severities are stored as
int8 with no ``_FillValue`` (the codes -1 and -2 are data, not fill), text as
plain variable-length strings, and provenance attrs as JSON text (decoded to
dicts and lists again by :func:`open_cube`).  Missing data stays missing on
disk too (:mod:`multiverse.cube.integrity`): every chunk is written and
carries a checksum, a zarr store's int8 code arrays have fill value -1 (so an
absent chunk reads as missing, never as 0), its metadata is consolidated
(plain ``xarray.open_zarr`` reads it without a warning), and :func:`open_cube`
refuses a store with absent chunks or one that differs from the checksums its
run recorded.

Output folders follow one rule, :mod:`multiverse.core.outputs`.
"""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr

from multiverse.core.outputs import replace_dir
from multiverse.core.schema import MISSING
from multiverse.cube.build import decode_attrs, encode_attrs
from multiverse.cube.integrity import DamagedStoreError, check_sizes, check_store

__all__ = [
    "save_cube", "open_cube", "CUBE_NAMES", "DamagedStoreError", "ZARR_WRITE", "consolidate", "netcdf_encoding",
    "stringified", "zarr_encoding",
]

CUBE_NAMES = ("cube.nc", "cube.zarr")
"""File names a run folder holds its cube under, in the order :func:`open_cube` looks."""
_STRING = np.dtypes.StringDType()
ZARR_WRITE: dict[str, Any] = {"zarr_format": 3, "write_empty_chunks": True, "consolidated": False}
"""Options of every ``to_zarr`` of a cube: zarr v3, every chunk written (an absent one is damage)."""


def _zstd() -> Any:
    from zarr.codecs import ZstdCodec

    return ZstdCodec(level=0, checksum=True)


def zarr_encoding(cube: xr.Dataset) -> dict[str, dict[str, Any]]:
    """Encoding of a cube's variables in zarr: checksummed chunks; int8 codes filled with -1, no other fill.

    The fill value is what a reader sees where a chunk is absent: -1 (missing)
    for the severity codes, never 0 (full adherence).
    """
    encoding: dict[str, dict[str, Any]] = {}
    for name, var in cube.variables.items():
        entry: dict[str, Any] = {"compressors": [_zstd()]}
        if var.dtype == np.int8:
            entry["fill_value"] = MISSING
        elif var.dtype.kind in "iubUT" or var.dtype == object:
            entry["fill_value"] = None
        encoding[str(name)] = entry
    return encoding


def netcdf_encoding(cube: xr.Dataset) -> dict[str, dict[str, object]]:
    """No fill value on integers, booleans and text; text as variable-length strings; numbers Fletcher-32 checksummed."""
    encoding: dict[str, dict[str, object]] = {}
    for name, var in cube.variables.items():
        entry: dict[str, object] = {}
        if var.dtype.kind in "iubU" or var.dtype == object:
            entry["_FillValue"] = None
        if var.dtype == object:
            entry["dtype"] = str
        elif var.dtype.kind in "iubf" and var.ndim:
            entry["fletcher32"] = True
        encoding[str(name)] = entry
    return encoding


def consolidate(store: str | Path) -> None:
    """Consolidate a zarr store's metadata, so plain ``xarray.open_zarr`` reads it without a warning."""
    import zarr

    with warnings.catch_warnings():
        # zarr says consolidated metadata is not (yet) part of the v3 specification; xarray reads it
        warnings.filterwarnings("ignore", message="Consolidated metadata", category=UserWarning)
        zarr.consolidate_metadata(str(store), zarr_format=3)


def _consolidated(store: Path) -> bool:
    """Whether the zarr store at ``store`` has consolidated metadata (v3 in ``zarr.json``, v2 in ``.zmetadata``)."""
    if (store / ".zmetadata").is_file():
        return True
    try:
        root = json.loads((store / "zarr.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(root, dict) and bool(root.get("consolidated_metadata"))


def stringified(ds: xr.Dataset) -> xr.Dataset:
    """Text variables and coordinates as numpy's variable-width strings (zarr v3's string type)."""
    text = {name: ds[name].astype(_STRING) for name, var in ds.variables.items() if var.dtype.kind in "OU"}
    return ds.assign_coords({n: v for n, v in text.items() if n in ds.coords}).assign(
        {n: v for n, v in text.items() if n not in ds.coords})


def _plain_strings(cube: xr.Dataset) -> xr.Dataset:
    """Object arrays of text as Python ``str`` everywhere (netCDF's vlen strings need it)."""
    out = cube.copy()
    out.attrs = encode_attrs(cube.attrs)
    for name, var in cube.variables.items():
        if var.dtype == object:
            values = np.asarray([("" if v is None else str(v)) for v in var.values.reshape(-1)], dtype=object)
            out[name] = var.copy(data=values.reshape(var.shape))
    return out


def save_cube(cube: xr.Dataset, path: str | Path) -> Path:
    """Write a cube to ``path``: netCDF4 for ``.nc``, zarr for ``.zarr``.

    Parameters
    ----------
    cube
        A judgment cube.
    path
        Target file (``.nc``) or folder (``.zarr``); replaced atomically when
        it exists (written beside it, then renamed into place).

    Returns
    -------
    pathlib.Path
        The path written.

    Raises
    ------
    ValueError
        For another suffix, or ``.zarr`` when zarr is not installed.
    """
    path = Path(path)
    cube = _plain_strings(cube)
    for name in cube.variables:
        cube[name].encoding = {}
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".nc":
        tmp = path.with_name(f".{path.name}.tmp")
        cube.to_netcdf(tmp, engine="netcdf4", format="NETCDF4", encoding=netcdf_encoding(cube))
        os.replace(tmp, path)
    elif path.suffix == ".zarr":
        fixed = stringified(cube)
        with replace_dir(path) as staging:
            fixed.to_zarr(staging, mode="w", encoding=zarr_encoding(fixed), **ZARR_WRITE)
            consolidate(staging)
    else:
        raise ValueError(f"{path}: expected a .nc or .zarr path")
    return path


def open_cube(path: str | Path, *, lazy: bool = True, verify: bool = True) -> xr.Dataset:
    """Open a cube written by :func:`save_cube` (or a run folder holding one), lazily by default.

    Parameters
    ----------
    path
        A ``.nc`` file, a ``.zarr`` folder, or a run output folder holding
        ``cube.nc`` or ``cube.zarr``.
    lazy
        ``True``: the variables are dask arrays, one rollout unit per chunk
        along the conversation dims, so :func:`multiverse.score` and the
        reductions after it go chunk by chunk.  A ``.zarr`` store (a run
        folder's ``cube.zarr``) is read only as chunks are computed; a netCDF4
        file is read into memory first and then chunked.  ``False``: plain
        in-memory arrays.
    verify
        Check the store before reading it (:func:`multiverse.cube.integrity.check_store`):
        a zarr store must hold every chunk, and a store in a run folder must
        match the sha256 and dim sizes in the folder's ``run.json`` (this reads
        the store's bytes once).

    The cube's ``encoding["source"]`` names the file read (so the run's
    transcript store beside it can be found, e.g. by ``to_long(cube, reasons=True)``).

    Raises
    ------
    FileNotFoundError
        If no cube is found at ``path``.
    multiverse.cube.integrity.DamagedStoreError
        If the store lacks chunks or differs from its run's record (one-line
        message naming the store); nothing of it is read as a judgment.
    ValueError
        If the file is not a netCDF4 or zarr dataset that can be read (one-line
        message naming the file).
    """
    path = Path(path)
    if path.is_dir() and path.suffix != ".zarr":
        found = [path / name for name in CUBE_NAMES if (path / name).exists()]
        if not found:
            raise FileNotFoundError(f"{path}: no {' or '.join(CUBE_NAMES)} in this folder")
        path = found[0]
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such cube")
    kind = "zarr" if path.suffix == ".zarr" else "netCDF4"
    if path.suffix != ".zarr" and not path.is_file():
        raise ValueError(f"{path}: not a readable {kind} cube (not a regular file)")
    try:
        if verify:
            check_store(path)
        if path.suffix == ".zarr":
            cube = xr.open_zarr(path, consolidated=_consolidated(path))
            cube = cube if lazy else cube.load()
        else:
            # netCDF4 (HDF5) is read whole and closed: reading it lazily from dask's threads while the file
            # is opened again or replaced is not safe; the chunked store to read lazily is the zarr one
            with xr.open_dataset(path, engine="netcdf4") as ds:
                cube = ds.load()
            if lazy:
                cube = cube.chunk(_unit_chunks(cube))
        if verify:
            check_sizes(path, cube.sizes)
    except DamagedStoreError:
        raise
    except (OSError, ValueError, KeyError, TypeError, RuntimeError, IndexError, AttributeError) as exc:
        detail = " ".join(str(getattr(exc, "strerror", None) or exc).split())[:200]
        raise ValueError(f"{path}: not a readable {kind} cube ({type(exc).__name__}: {detail})") from None
    cube.attrs = decode_attrs(cube.attrs)
    cube.encoding["source"] = str(path)
    return cube


def _unit_chunks(cube: xr.Dataset) -> dict[str, int]:
    """One chunk per rollout unit: size 1 along the unit dims, whole along the others."""
    unit_dims = ("system", "role", "user_sim", "condition", "replicate")
    return {str(dim): (1 if dim in unit_dims else -1) for dim in cube.dims}
