"""The public third-party data sets: a manifest, a verified fetch, and local paths.

The project never commits third-party files.  It carries a manifest
(``data_manifest.json``, package data) naming each file's path, its upstream raw
address at a pinned commit, its sha256 digest, size, license and citation.
:func:`fetch` fills a local data folder from a mirror folder (copied, no network)
or, without one, from the pinned upstream addresses (the project's one use of
the network); every file is hash-verified before it is kept.  :func:`path`
returns a verified local file or says how to fetch it.

Folders
-------
Data folder
    ``dest=`` if given, else the environment variable ``MULTIVERSE_DATA_DIR``,
    else ``data/`` in the current project: the nearest folder at or above the
    working directory that holds ``specs/roles`` (a multiverse project, as
    :func:`multiverse.config.specs.find_specs_dir` finds it), else the working
    directory itself.  Never inside an installed package.
Mirror folder
    ``mirror=`` if given, else ``MULTIVERSE_DATA_MIRROR`` when set and non-empty.
    A mirror has the manifest's layout (``tau-bench/...``, ``alpaca_eval/...``).

Files marked ``mirror_only`` have no upstream file (they were read off upstream
code by hand); they are copied from a mirror and skipped by a download.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import urllib.request
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

__all__ = [
    "MANIFEST_NAME",
    "DATA_DIR_ENV",
    "MIRROR_ENV",
    "FETCH_HINT",
    "DataError",
    "IntegrityError",
    "DataFile",
    "manifest",
    "entry",
    "data_dir",
    "mirror_dir",
    "sha256_of",
    "status",
    "verify",
    "path",
    "fetch",
]

MANIFEST_NAME = "data_manifest.json"
DATA_DIR_ENV = "MULTIVERSE_DATA_DIR"
MIRROR_ENV = "MULTIVERSE_DATA_MIRROR"
FETCH_HINT = "run `multiverse data fetch` (or `multiverse data fetch --mirror DIR` from a local copy)"


class DataError(RuntimeError):
    """A data file is absent, unknown, or fails its integrity check."""


class IntegrityError(DataError):
    """A file's sha256 differs from the manifest's."""


@dataclass(frozen=True)
class DataFile:
    """One manifest entry.

    Attributes
    ----------
    path
        Path relative to the data folder (and to a mirror), ``/``-separated.
    url
        Upstream raw address at a pinned commit; ``None`` for mirror-only files.
    sha256, size
        Expected digest and byte count.
    license, citation
        The upstream license and how to cite the source.
    mirror_only
        Why the file has no upstream address (empty when it has one).
    """

    path: str
    url: str | None
    sha256: str
    size: int
    license: str
    citation: str
    mirror_only: str = ""


def manifest() -> tuple[DataFile, ...]:
    """Every file of the manifest, in manifest order."""
    text = resources.files("multiverse").joinpath(MANIFEST_NAME).read_text(encoding="utf-8")
    return tuple(DataFile(**entry) for entry in json.loads(text)["files"])


def entry(name: str) -> DataFile:
    """The manifest entry whose ``path`` is ``name``.

    Raises
    ------
    DataError
        If the manifest has no such file.
    """
    for item in manifest():
        if item.path == name:
            return item
    raise DataError(f"{name}: not in the data manifest ({MANIFEST_NAME})")


def data_dir(dest: str | os.PathLike[str] | None = None) -> Path:
    """The local data folder: ``dest``, else ``$MULTIVERSE_DATA_DIR``, else the current project's ``data/``."""
    if dest is not None:
        return Path(dest)
    env = os.environ.get(DATA_DIR_ENV, "")
    if env:
        return Path(env)
    here = Path.cwd().resolve()
    project = next((folder for folder in (here, *here.parents) if (folder / "specs" / "roles").is_dir()), here)
    return project / "data"


def mirror_dir(mirror: str | os.PathLike[str] | None = None) -> Path | None:
    """The mirror folder: ``mirror``, else ``$MULTIVERSE_DATA_MIRROR`` when non-empty, else ``None``."""
    if mirror is not None:
        return Path(mirror)
    env = os.environ.get(MIRROR_ENV, "")
    return Path(env) if env else None


def sha256_of(file: str | os.PathLike[str]) -> str:
    """Hex sha256 digest of a file, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with open(file, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def status(item: DataFile, folder: Path) -> str:
    """``ok``, ``missing`` or ``corrupt`` for one file of a folder."""
    target = folder / item.path
    if not target.is_file():
        return "missing"
    if target.stat().st_size != item.size or sha256_of(target) != item.sha256:
        return "corrupt"
    return "ok"


def verify(*, dest: str | os.PathLike[str] | None = None) -> dict[str, str]:
    """The status (``ok`` / ``missing`` / ``corrupt``) of every manifest file in the data folder.

    Raises
    ------
    DataError
        If the data folder exists and is not a folder.
    """
    folder = data_dir(dest)
    if os.path.lexists(folder) and not folder.is_dir():
        raise DataError(f"{folder}: the data folder (--dest) is not a folder")
    return {item.path: status(item, folder) for item in manifest()}


def path(name: str, *, dest: str | os.PathLike[str] | None = None) -> Path:
    """A verified local copy of the manifest file ``name``.

    Parameters
    ----------
    name
        The file's manifest path, e.g. ``tau-bench/historical_trajectories/gpt-4o-airline.json``.
    dest
        The data folder (default: see :func:`data_dir`).

    Raises
    ------
    DataError
        If the file is unknown, not fetched, or its digest differs from the manifest.
    """
    item = entry(name)
    folder = data_dir(dest)
    state = status(item, folder)
    if state == "missing":
        raise DataError(f"{name}: not found in {folder}; {FETCH_HINT}")
    if state == "corrupt":
        raise IntegrityError(
            f"{name}: the copy in {folder} does not match its sha256 {item.sha256[:12]}...; "
            f"delete it and {FETCH_HINT}"
        )
    return folder / item.path


def _download(url: str, target: Path) -> None:
    with urllib.request.urlopen(url, timeout=120) as response, open(target, "wb") as out:
        shutil.copyfileobj(response, out)


def _install(item: DataFile, source: Path | str, folder: Path, fetch_one: Callable[[Any, Path], object]) -> Path:
    """Fetch into a temporary file beside the target, verify, then rename into place."""
    target = folder / item.path
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    os.close(handle)
    tmp = Path(tmp_name)
    try:
        fetch_one(source, tmp)
        actual = sha256_of(tmp)
        if actual != item.sha256:
            raise IntegrityError(
                f"{item.path}: sha256 {actual[:12]}... from {source} differs from the manifest's "
                f"{item.sha256[:12]}...; the file was not kept"
            )
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    return target


def fetch(
    *,
    mirror: str | os.PathLike[str] | None = None,
    dest: str | os.PathLike[str] | None = None,
    names: Iterable[str] | None = None,
    report: Callable[[str, str], None] | None = None,
) -> Path:
    """Fill the data folder with verified copies of the manifest's files.

    Parameters
    ----------
    mirror
        A folder with the manifest's layout to copy from (default: ``$MULTIVERSE_DATA_MIRROR``).
        Without one, files are downloaded from their pinned upstream addresses.
    dest
        The data folder (default: see :func:`data_dir`).
    names
        Only these manifest paths (default: all).
    report
        Called as ``report(path, outcome)`` after each file, with outcome ``present``
        (already verified), ``copied``, ``downloaded``, or ``skipped`` (a mirror-only
        file and no mirror).

    Returns
    -------
    pathlib.Path
        The data folder.

    Raises
    ------
    IntegrityError
        If a fetched file's digest differs from the manifest (the file is not kept).
    DataError
        If the mirror is not a folder or lacks a file, the data folder is not a
        folder, or a name is not in the manifest.
    OSError
        If a download fails (files already fetched are kept; a rerun resumes).
    """
    folder = data_dir(dest)
    if os.path.lexists(folder) and not folder.is_dir():
        raise DataError(f"{folder}: the data folder (--dest) is not a folder")
    source_dir = mirror_dir(mirror)
    if source_dir is not None and not source_dir.is_dir():
        kind = "is not a folder" if os.path.lexists(source_dir) else "not found"
        raise DataError(f"{source_dir}: data mirror folder {kind}")
    wanted = None if names is None else set(names)
    items = [item for item in manifest() if wanted is None or item.path in wanted]
    unknown = sorted((wanted or set()) - {item.path for item in items})
    if unknown:
        raise DataError(f"{unknown[0]}: not in the data manifest ({MANIFEST_NAME})")
    for item in items:
        state = status(item, folder)
        if state == "corrupt":
            (folder / item.path).unlink()
        if state == "ok":
            outcome = "present"
        elif source_dir is not None:
            source = source_dir / item.path
            if not source.is_file():
                raise DataError(f"{item.path}: not found in the mirror {source_dir}")
            _install(item, source, folder, shutil.copyfile)
            outcome = "copied"
        elif item.url is None:
            outcome = "skipped"
        else:
            _install(item, item.url, folder, _download)
            outcome = "downloaded"
        if report is not None:
            report(item.path, outcome)
    return folder
