"""Whether a cube store on disk is whole: absent chunks, shapes and the run record's checksums.

A missing judgment must never read as adherence, and a damaged store must
never read as data.  Three checks guard a cube read from disk:

- every array of a zarr store has all its chunks (:func:`absent_chunks`): the
  writers write every chunk (``write_empty_chunks``), so an absent one is
  damage, never a chunk that happened to equal the fill value;
- a run folder's ``run.json`` records, under ``integrity``, the sha256, size
  and dim sizes of the stores written beside it (:func:`store_record`), and a
  store read from that folder must match them (:func:`check_store`);
- each chunk carries its own checksum (zstd's content checksum in zarr,
  HDF5's Fletcher-32 in netCDF4), so a damaged chunk fails when it is read.

Beyond those, the int8 code arrays (``severity``, ``truth``) of a zarr store
have fill value -1 (missing), so even a reader that skips these checks sees an
absent chunk as missing, never as 0; plain xarray still reads them as int8, as
the fill value of a zarr v3 array is not a ``_FillValue`` mask.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["DamagedStoreError", "RECORD_FILE", "absent_chunks", "check_sizes", "check_store", "store_digest", "store_record"]

RECORD_FILE = "run.json"
"""The run record beside a run's stores; its ``integrity`` entry holds their checksums."""
_RECORD_BYTES = 64 * 2**20
"""Largest run record read (a larger one is not a record this library wrote)."""
_BLOCK = 2**20


class DamagedStoreError(ValueError):
    """A cube store that is incomplete or differs from what its run recorded; the message is one line."""


def store_digest(path: str | Path) -> tuple[str, int, int]:
    """``(sha256, bytes, files)`` of a file, or of every file below a folder (relative paths included, sorted).

    The paths are hashed with the contents, so a renamed or removed chunk file
    changes the digest as a changed byte does.
    """
    path = Path(path)
    digest = hashlib.sha256()
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    size = 0
    for file in files:
        if path.is_dir():
            digest.update(file.relative_to(path).as_posix().encode("utf-8") + b"\0")
        with open(file, "rb") as handle:
            while block := handle.read(_BLOCK):
                digest.update(block)
                size += len(block)
        digest.update(b"\0")
    return digest.hexdigest(), size, len(files)


def store_record(folder: str | Path, names: tuple[str, ...], *, sizes: Mapping[str, int]) -> dict[str, Any]:
    """The ``integrity`` entry of a run record: each store's sha256, bytes and files, and the cube's dim sizes."""
    folder = Path(folder)
    stores = {}
    for name in names:
        if (folder / name).exists():
            sha256, size, files = store_digest(folder / name)
            stores[name] = {"sha256": sha256, "bytes": size, "files": files}
    return {"stores": stores, "sizes": {str(k): int(v) for k, v in sizes.items()}}


def _record(store: Path) -> dict[str, Any] | None:
    """The integrity record of ``store`` in the run record beside it, or ``None`` when there is none."""
    path = store.parent / RECORD_FILE
    try:
        if not path.is_file() or path.stat().st_size > _RECORD_BYTES:
            return None
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    integrity = record.get("integrity") if isinstance(record, dict) else None
    if not isinstance(integrity, dict) or not isinstance(integrity.get("stores"), dict):
        return None
    entry = integrity["stores"].get(store.name)
    if not isinstance(entry, dict):
        return None
    return {"store": entry, "sizes": integrity.get("sizes") if isinstance(integrity.get("sizes"), dict) else {}}


def absent_chunks(store: str | Path) -> dict[str, tuple[int, int]]:
    """``{array: (absent, total)}`` for every array of a zarr store that lacks chunks."""
    import zarr

    group = zarr.open_group(str(store), mode="r")
    absent = {}
    for name, array in group.arrays():
        total, present = int(array.nchunks), int(array.nchunks_initialized)
        if present < total:
            absent[str(name)] = (total - present, total)
    return absent


def check_store(store: str | Path) -> None:
    """Refuse a cube store that lacks chunks or differs from the checksum its run recorded.

    Parameters
    ----------
    store
        A ``.zarr`` folder or a ``.nc`` file.

    Raises
    ------
    DamagedStoreError
        Naming the store and what is wrong with it.
    """
    store = Path(store)
    if store.suffix == ".zarr":
        absent = absent_chunks(store)
        if absent:
            name, (missing, total) = next(iter(sorted(absent.items())))
            more = f" (and chunks of {len(absent) - 1} more arrays)" if len(absent) > 1 else ""
            raise DamagedStoreError(
                f"{store}: damaged store: {missing} of {total} chunks of '{name}' are absent{more}; "
                "nothing of it is read as a judgment (rerun to rebuild it)"
            )
    record = _record(store)
    if record is None:
        return
    sha256, size, _ = store_digest(store)
    if sha256 != record["store"].get("sha256"):
        raise DamagedStoreError(
            f"{store}: damaged store: its sha256 {sha256[:12]}... ({size:,} bytes) differs from the one in "
            f"{RECORD_FILE} ({str(record['store'].get('sha256'))[:12]}..., {record['store'].get('bytes')} bytes); "
            "it was changed after the run wrote it"
        )


def check_sizes(store: str | Path, sizes: Mapping[str, int]) -> None:
    """Refuse a cube read from ``store`` whose dim sizes differ from those its run recorded.

    Raises
    ------
    DamagedStoreError
        Naming the store and the first dim that differs.
    """
    record = _record(Path(store))
    recorded = record["sizes"] if record else {}
    for dim, size in sizes.items():
        if dim in recorded and recorded[dim] != int(size):
            raise DamagedStoreError(
                f"{store}: damaged store: dim '{dim}' has {int(size)} entries, the run recorded "
                f"{recorded[dim]} in {RECORD_FILE}"
            )
