"""Cubes on disk: netCDF4 (``.nc``) or zarr (``.zarr``), readable by plain xarray.

The files need nothing from this library to open: severities are stored as
int8 with no ``_FillValue`` (the codes -1 and -2 are data, not fill), text as
plain variable-length strings, and provenance attrs as JSON text.  Run outputs
go to a folder that is replaced as a whole (:func:`replace_dir`).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import xarray as xr

__all__ = ["save_cube", "open_cube", "replace_dir", "CUBE_NAMES"]

CUBE_NAMES = ("cube.nc", "cube.zarr")
"""File names a run folder holds its cube under, in the order :func:`open_cube` looks."""


def _encoding(cube: xr.Dataset, *, netcdf: bool) -> dict[str, dict[str, object]]:
    """No fill value on integers, booleans and text; text as variable-length strings in netCDF."""
    encoding: dict[str, dict[str, object]] = {}
    for name, var in cube.variables.items():
        if var.dtype.kind in "iubU" or var.dtype == object:
            encoding[str(name)] = {"_FillValue": None}
        if netcdf and var.dtype == object:
            encoding[str(name)]["dtype"] = str
    return encoding


def _plain_strings(cube: xr.Dataset) -> xr.Dataset:
    """Object arrays of text as Python ``str`` everywhere (netCDF's vlen strings need it)."""
    out = cube.copy()
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
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".nc":
        tmp = path.with_name(f".{path.name}.tmp")
        cube.to_netcdf(tmp, engine="netcdf4", format="NETCDF4", encoding=_encoding(cube, netcdf=True))
        os.replace(tmp, path)
    elif path.suffix == ".zarr":
        try:
            import zarr  # noqa: F401
        except ImportError:
            raise ValueError(f"{path}: writing .zarr needs the zarr package; use .nc") from None
        text = [name for name, var in cube.variables.items() if var.dtype == object]
        fixed = cube.assign({name: cube[name].astype(str) for name in text if name not in cube.indexes})
        fixed = fixed.assign_coords({name: cube[name].astype(str) for name in text if name in cube.indexes})
        with replace_dir(path) as staging:
            fixed.to_zarr(staging, mode="w", encoding=_encoding(fixed, netcdf=False))
    else:
        raise ValueError(f"{path}: expected a .nc or .zarr path")
    return path


def open_cube(path: str | Path) -> xr.Dataset:
    """Read a cube written by :func:`save_cube` (or a run folder holding one) into memory.

    Parameters
    ----------
    path
        A ``.nc`` file, a ``.zarr`` folder, or a run output folder holding
        ``cube.nc`` or ``cube.zarr``.

    The cube's ``encoding["source"]`` names the file read (so the run's
    transcript store beside it can be found, e.g. by ``to_long(cube, reasons=True)``).

    Raises
    ------
    FileNotFoundError
        If no cube is found at ``path``.
    """
    path = Path(path)
    if path.is_dir() and path.suffix != ".zarr":
        found = [path / name for name in CUBE_NAMES if (path / name).exists()]
        if not found:
            raise FileNotFoundError(f"{path}: no {' or '.join(CUBE_NAMES)} in this folder")
        path = found[0]
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such cube")
    if path.suffix == ".zarr":
        cube = xr.open_zarr(path).load()
    else:
        with xr.open_dataset(path, engine="netcdf4") as ds:
            cube = ds.load()
    cube.encoding["source"] = str(path)
    return cube


@contextmanager
def replace_dir(target: str | Path) -> Iterator[Path]:
    """Build a folder's new contents beside it, then swap it in.

    Yields a fresh temporary folder next to ``target``; when the block ends
    without error, ``target`` (if any) is renamed aside, the new folder renamed
    into its place and the old one removed, so readers see either the old
    outputs or the new ones, never a mix.  On error the new folder is removed
    and ``target`` is untouched.
    """
    target = Path(target).absolute()
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.new-", dir=target.parent))
    try:
        yield staging
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    old = None
    if target.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-", dir=target.parent))
        os.replace(target, old / target.name)
    os.replace(staging, target)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
