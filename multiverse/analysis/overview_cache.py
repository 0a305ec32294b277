"""The overview of a cube kept beside it, so ``report`` and ``view`` analyse a cube once.

``runs/x/cube.nc`` gets ``runs/x/cube.analyses.nc`` (a ``cube.zarr`` store gets
the same name): a netCDF4 file with one group per analysis result of
:func:`multiverse.analysis.overview.overview`, which plain ``xarray.open_datatree``
reads.  Its key is the sha256 of the cube's bytes, the draws and seed asked for,
the library's version and a digest of its source, so a changed cube (or a new
library) is analysed afresh and the file replaced; a file that cannot be read
is ignored and replaced.  Nothing is kept when the cube's folder is not writable.
Attributes are stored as JSON text (netCDF attributes take no ``None``, lists
of strings or nested dicts), and restored exactly.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Any

import xarray as xr

from multiverse.analysis.overview import N_BOOT, Overview, overview
from multiverse.cube.build import check_cube
from multiverse.cube.io import CUBE_NAMES, open_cube

__all__ = ["CACHE_SUFFIX", "cache_path", "cached_overview", "cube_file", "read_overview", "write_overview"]

CACHE_SUFFIX = ".analyses.nc"
"""Suffix of the overview file beside a cube (``cube.nc`` -> ``cube.analyses.nc``)."""
FORMAT = 1
"""Version of the file's layout (part of the key)."""
_ATTRS = "multiverse_attrs_json"
_KIND = "multiverse_result_kind"


def cube_file(path: str | Path) -> Path:
    """The cube file or store that ``path`` (a cube, or a run folder holding one) names."""
    path = Path(path)
    if path.is_dir() and path.suffix != ".zarr":
        found = [path / name for name in CUBE_NAMES if (path / name).exists()]
        if not found:
            raise FileNotFoundError(f"{path}: no {' or '.join(CUBE_NAMES)} in this folder")
        return found[0]
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such cube")
    return path


def cache_path(cube: str | Path) -> Path:
    """Where the overview of the cube file or store ``cube`` is kept."""
    cube = Path(cube)
    return cube.with_name(cube.stem + CACHE_SUFFIX)


def _digest(path: Path) -> str:
    h = hashlib.sha256()
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    for file in files:
        h.update(str(file.relative_to(path) if path.is_dir() else file.name).encode())
        with file.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                h.update(block)
    return h.hexdigest()


@lru_cache(maxsize=1)
def _library_digest() -> str:
    from multiverse import __version__

    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha256(__version__.encode())
    for path in sorted(root.rglob("*.py")):
        h.update(str(path.relative_to(root)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def _key(cube: Path, *, n_boot: int, seed: int) -> str:
    return json.dumps({"format": FORMAT, "cube_sha256": _digest(cube), "n_boot": n_boot, "seed": seed,
                       "library": _library_digest()}, sort_keys=True)


def _encode(result: xr.Dataset | xr.DataArray) -> xr.Dataset:
    kind = "dataarray" if isinstance(result, xr.DataArray) else "dataset"
    ds = result.to_dataset(name=result.name or "value") if kind == "dataarray" else result.copy()
    ds.attrs = {_ATTRS: json.dumps(ds.attrs), _KIND: kind}
    for name in ds.variables:
        ds[name].attrs = {_ATTRS: json.dumps(ds[name].attrs)} if ds[name].attrs else {}
        ds[name].encoding = {}
    return ds


def _decode(ds: xr.Dataset) -> xr.Dataset | xr.DataArray:
    kind = ds.attrs.get(_KIND)
    attrs = json.loads(ds.attrs[_ATTRS])
    ds = ds.copy()
    ds.attrs = {}
    for name in ds.variables:
        ds[name].attrs = json.loads(ds[name].attrs[_ATTRS]) if _ATTRS in ds[name].attrs else {}
        ds[name].encoding = {}
    if kind == "dataarray":  # its attrs are its variable's
        (name,) = ds.data_vars
        return ds[name]
    ds.attrs = attrs
    return ds


def write_overview(result: Overview, path: str | Path, *, key: str) -> None:
    """Write ``result`` to ``path`` (atomically: a temporary file beside it, then renamed)."""
    path = Path(path)
    root = xr.Dataset(attrs={"key": key, "notes": json.dumps(result.notes), "n_boot": result.n_boot,
                             "seed": result.seed, "ranked_by": result.ranked_by or "",
                             "compared": json.dumps(result.compared)})
    tree = xr.DataTree.from_dict({"/": root, **{f"/{name}": _encode(r) for name, r in result.results.items()}})
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(handle)
    try:
        mask = os.umask(0o022)
        os.umask(mask)
        os.chmod(temporary, 0o666 & ~mask)  # the mode any new file gets, not mkstemp's 0600
        tree.to_netcdf(temporary, engine="netcdf4")
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def read_overview(path: str | Path, *, key: str | None = None) -> Overview | None:
    """The overview stored at ``path``; ``None`` when there is none, it cannot be read, or its key differs."""
    path = Path(path)
    if not path.is_file():
        return None
    try:
        with xr.open_datatree(path, engine="netcdf4") as tree:
            tree = tree.load()
    except (OSError, ValueError, KeyError, TypeError, RuntimeError):
        return None
    attrs: dict[str, Any] = tree.attrs
    if key is not None and attrs.get("key") != key:
        return None
    try:
        results = {name: _decode(node.to_dataset()) for name, node in tree.children.items()}
        notes = json.loads(attrs["notes"])
        return Overview(results=results, notes=notes, n_boot=int(attrs["n_boot"]), seed=int(attrs["seed"]),
                        ranked_by=attrs.get("ranked_by") or None, compared=json.loads(attrs["compared"]))
    except (KeyError, ValueError, TypeError):
        return None


def cached_overview(
    path: str | Path, *, n_boot: int = N_BOOT, seed: int = 0, progress: bool = False
) -> tuple[xr.Dataset, Overview]:
    """The cube at ``path`` and its overview, read from beside it when the cube has not changed.

    Parameters
    ----------
    path
        A cube file (``.nc``), store (``.zarr``) or run folder holding one.
    n_boot, seed
        Resampling draws and seed (part of the key: other values analyse afresh).
    progress
        Show a progress bar while analysing (see :func:`multiverse.analysis.overview.overview`).

    Returns
    -------
    cube : xarray.Dataset
        The cube, in memory.
    overview : Overview

    Raises
    ------
    FileNotFoundError
        If there is no cube at ``path``.
    ValueError
        If the cube cannot be read, or departs from the schema
        (:func:`multiverse.cube.build.check_cube`).
    """
    source = cube_file(path)
    key = _key(source, n_boot=n_boot, seed=seed)
    cube = open_cube(source, lazy=False)
    check_cube(cube)
    target = cache_path(source)
    found = read_overview(target, key=key)
    if found is not None:
        return cube, found
    result = overview(cube, n_boot=n_boot, seed=seed, progress=progress)
    if os.access(target.parent, os.W_OK):
        try:
            write_overview(result, target, key=key)
        except OSError:
            pass  # a full disk or a vanished folder costs the next command an analysis, nothing else
    return cube, result
