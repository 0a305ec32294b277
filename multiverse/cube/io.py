"""Cubes on disk: netCDF4 (``.nc``) or zarr (``.zarr``), readable by plain xarray.

The files need nothing from this library to open: severities are stored as
int8 with no ``_FillValue`` (the codes -1 and -2 are data, not fill), text as
plain variable-length strings, and provenance attrs as JSON text (decoded to dicts
and lists again by :func:`open_cube`).

Output folders (of ``multiverse run``, ``multiverse report``, ...) follow one
rule, :func:`check_output_dir`: a folder is replaced only when it is missing,
empty, or an earlier output of the same command (marked by the manifest file
:data:`MANIFEST_NAME` that :func:`replace_dir` writes), and never when it is,
or contains, the working directory or a protected input (the cache, the
experiment file, the specs).  The new contents are built beside the folder and
swapped in as a whole (:func:`replace_dir`).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import xarray as xr

from multiverse.core.process import process_alive
from multiverse.cube.build import decode_attrs, encode_attrs

__all__ = ["save_cube", "open_cube", "replace_dir", "check_output_dir", "OutputDirError", "CUBE_NAMES", "MANIFEST_NAME"]

CUBE_NAMES = ("cube.nc", "cube.zarr")
"""File names a run folder holds its cube under, in the order :func:`open_cube` looks."""
MANIFEST_NAME = "multiverse-output.json"
"""The file marking a folder as an output of this library (``{"kind": ..., "files": [...], ...}``)."""
_STAGING = re.compile(r"^\.(?P<name>.+)\.(?:new|old)-(?:(?P<pid>\d+)-)?[^.-]*$")


class OutputDirError(ValueError):
    """An output folder that must not be replaced, or cannot be written; the message is one line."""


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
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".nc":
        tmp = path.with_name(f".{path.name}.tmp")
        cube.to_netcdf(tmp, engine="netcdf4", format="NETCDF4", encoding=_encoding(cube, netcdf=True))
        os.replace(tmp, path)
    elif path.suffix == ".zarr":
        text = [name for name, var in cube.variables.items() if var.dtype == object]
        fixed = cube.assign({name: cube[name].astype(str) for name in text if name not in cube.indexes})
        fixed = fixed.assign_coords({name: cube[name].astype(str) for name in text if name in cube.indexes})
        with replace_dir(path) as staging:
            fixed.to_zarr(staging, mode="w", encoding=_encoding(fixed, netcdf=False))
    else:
        raise ValueError(f"{path}: expected a .nc or .zarr path")
    return path


def open_cube(path: str | Path, *, lazy: bool = True) -> xr.Dataset:
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

    The cube's ``encoding["source"]`` names the file read (so the run's
    transcript store beside it can be found, e.g. by ``to_long(cube, reasons=True)``).

    Raises
    ------
    FileNotFoundError
        If no cube is found at ``path``.
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
    try:
        if path.suffix == ".zarr":
            cube = xr.open_zarr(path, consolidated=None)
            cube = cube if lazy else cube.load()
        else:
            # netCDF4 (HDF5) is read whole and closed: reading it lazily from dask's threads while the file
            # is opened again or replaced is not safe; the chunked store to read lazily is the zarr one
            with xr.open_dataset(path, engine="netcdf4") as ds:
                cube = ds.load()
            if lazy:
                cube = cube.chunk(_unit_chunks(cube))
    except (OSError, ValueError, KeyError, TypeError, RuntimeError) as exc:
        kind = "zarr" if path.suffix == ".zarr" else "netCDF4"
        detail = " ".join(str(getattr(exc, "strerror", None) or exc).split())[:200]
        raise ValueError(f"{path}: not a readable {kind} cube ({type(exc).__name__}: {detail})") from None
    cube.attrs = decode_attrs(cube.attrs)
    cube.encoding["source"] = str(path)
    return cube


def _unit_chunks(cube: xr.Dataset) -> dict[str, int]:
    """One chunk per rollout unit: size 1 along the unit dims, whole along the others."""
    unit_dims = ("system", "role", "user_sim", "condition", "replicate")
    return {str(dim): (1 if dim in unit_dims else -1) for dim in cube.dims}


def _real(path: str | Path) -> Path:
    return Path(os.path.realpath(os.path.expanduser(str(path))))


def _output_kind(folder: Path) -> str | None:
    """The ``kind`` in ``folder``'s manifest, or ``None`` when it has no readable one."""
    try:
        manifest = json.loads((folder / MANIFEST_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    kind = manifest.get("kind") if isinstance(manifest, dict) else None
    return kind if isinstance(kind, str) else None


def check_output_dir(
    target: str | Path, *, kind: str, protected: dict[str, str | Path | None] | None = None
) -> Path:
    """Check that ``target`` may be replaced by a new output of ``kind``, and that it can be written.

    Call it before any expensive work, so a run refuses before paying for a
    model call.  Nothing is changed on disk except that missing parent folders
    are created (to test that they can be).

    Parameters
    ----------
    target
        The output folder.
    kind
        What writes it (``"run"``, ``"report"``, ...); an existing folder is
        replaced only if it is empty or its manifest names the same kind.
    protected
        ``{what: path}`` inputs the folder must neither be nor contain (the
        cache, the experiment file, the specs folder); ``None`` paths are
        skipped.  The working directory is always protected.

    Returns
    -------
    pathlib.Path
        ``target`` with symlinks resolved.

    Raises
    ------
    OutputDirError
        With a one-line message naming the folder and the reason.
    """
    real = _real(target)
    guarded = {"the working directory": Path.cwd(), **(protected or {})}
    for what, path in guarded.items():
        if path is None:
            continue
        inside = _real(path)
        if inside == real or real in inside.parents:
            relation = "is" if inside == real else "contains"
            raise OutputDirError(f"output folder {target}: refusing to replace it, it {relation} {what} ({path})")
    if real.exists() or os.path.lexists(real):
        if not real.is_dir():
            raise OutputDirError(f"output folder {target}: refusing to replace it, it is a file, not a folder")
        try:
            entries = [entry.name for entry in os.scandir(real)]
        except OSError as exc:
            raise OutputDirError(f"output folder {target}: cannot read it ({exc.strerror})") from None
        found = _output_kind(real)
        if entries and found != kind:
            why = f"an output of 'multiverse {found}'" if found else f"not empty and has no {MANIFEST_NAME}"
            raise OutputDirError(
                f"output folder {target}: refusing to replace it, it is {why}; "
                f"choose a new folder or an earlier 'multiverse {kind}' output"
            )
        if not os.access(real, os.W_OK | os.X_OK):
            raise OutputDirError(f"output folder {target}: cannot replace it, it is not writable")
    try:
        real.parent.mkdir(parents=True, exist_ok=True)
        os.rmdir(tempfile.mkdtemp(prefix=f".{real.name}.probe-", dir=real.parent))
    except OSError as exc:
        raise OutputDirError(f"output folder {target}: cannot write in {real.parent} ({exc.strerror})") from None
    return real


def _remove_stale_staging(target: Path) -> None:
    """Remove ``.<name>.new-<pid>-*`` / ``.<name>.old-<pid>-*`` folders left by writers that died."""
    try:
        siblings = list(os.scandir(target.parent))
    except OSError:
        return
    for entry in siblings:
        match = _STAGING.match(entry.name)
        if match is None or match["name"] != target.name:
            continue
        if match["pid"] is None or not process_alive(int(match["pid"])):
            shutil.rmtree(entry.path, ignore_errors=True)


def _umask_mode() -> int:
    """The mode a new folder gets under the process umask (``tempfile.mkdtemp`` always uses 0700)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o777 & ~mask


@contextmanager
def replace_dir(target: str | Path, *, kind: str | None = None) -> Iterator[Path]:
    """Build a folder's new contents beside it, then swap it in.

    Yields a fresh temporary folder next to ``target``; when the block ends
    without error, ``target`` (if any) is renamed aside, the new folder renamed
    into its place and the old one removed, so readers see either the old
    outputs or the new ones, never a mix.  On error the new folder is removed
    and ``target`` is untouched.  Staging folders left beside ``target`` by a
    writer that was killed are removed first; the new folder gets the mode the
    umask gives.

    Parameters
    ----------
    target
        The folder to replace.
    kind
        When given, ``target`` must pass :func:`check_output_dir` for this kind,
        and the new folder gets a manifest (:data:`MANIFEST_NAME`) naming it.

    Raises
    ------
    OutputDirError
        If ``kind`` is given and ``target`` must not be replaced.
    """
    if kind is not None:
        check_output_dir(target, kind=kind)
    target = Path(target).absolute()
    target.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale_staging(target)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.new-{os.getpid()}-", dir=target.parent))
    try:
        os.chmod(staging, _umask_mode())
        yield staging
        if kind is not None:
            manifest = {
                "kind": kind,
                "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "files": sorted(p.name for p in staging.iterdir()),
            }
            (staging / MANIFEST_NAME).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    old = None
    if target.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-{os.getpid()}-", dir=target.parent))
        os.replace(target, old / target.name)
    os.replace(staging, target)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
