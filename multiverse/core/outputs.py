"""The one output-folder rule of every command that writes a folder (stdlib only).

``run``, ``report``, ``view``, ``export-cases``, ``annotate export`` and
``export`` write their outputs through :func:`replace_dir` with their own
``kind``, after checking the folder with :func:`check_output_dir` before any
expensive work:

- a folder is replaced only when it is missing, empty, or carries this kind's
  own marker, the manifest :data:`MANIFEST_NAME` (``{"kind": ..., "files": [...]}``)
  that :func:`replace_dir` writes; it must neither be nor contain the working
  directory or a protected input (the cache, the experiment, the cube read);
  otherwise the command refuses (:class:`OutputDirError`, one line naming the
  folder and what it holds);
- only what the manifest lists is replaced: anything else inside the folder (a
  report or a site written into a run folder, a user's notes) is carried into
  the new folder unchanged, and a new output that would overwrite such an entry
  is refused;
- the new contents are built in a staging folder beside the target and swapped
  in as a whole, so readers see the old outputs or the new ones, never a mix; a
  symbolic link to the folder stays a link (the folder it points at is replaced).

Staging and backup folders (``.<name>.new-<pid>-*``, ``.<name>.old-<pid>-*``)
carry a marker file, :data:`STAGING_MARKER`, with the writer's process id and
host, and are the only folders ever cleaned: those of a writer of this host
that is gone are removed by the next write to the same target (a backup first
puts back what it was carrying), while a folder without the marker (a user's
``.q.old-1/``) is never touched.  Ctrl-C and SIGTERM are held while a folder
and its marker are created and while the folders are swapped
(:func:`~multiverse.core.process.signals_held`), so an interrupted command
leaves neither an unmarked folder nor a target moved away.

Folders written before the manifest existed are recognised by their markers of
the time (the viewer's ``.multiverse-view``, ``annotate export``'s
``export.json``) and the fixed set of files those versions wrote.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import tempfile
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from multiverse.core.process import process_alive, signals_held

__all__ = [
    "MANIFEST_NAME",
    "STAGING_MARKER",
    "OutputDirError",
    "check_output_dir",
    "output_kind",
    "replace_dir",
]

MANIFEST_NAME = "multiverse-output.json"
"""The file marking a folder as an output of this library: ``{"kind": ..., "created": ..., "files": [...]}``."""
STAGING_MARKER = ".multiverse-staging.json"
"""The file marking a staging or backup folder: ``{"pid", "host", "target", "purpose", "kept"}``."""

_LEGACY: dict[str, tuple[tuple[str, str, frozenset[str]], ...]] = {
    ".multiverse-view": (
        ("written by multiverse view (annotation form)", "annotation form",
         frozenset({".multiverse-view", "index.html", "assets", "data"})),
        ("written by multiverse view", "view",
         frozenset({".multiverse-view", "index.html", "conversation.html", "assets", "data", "figures"})),
    ),
    "export.json": (
        ('"command": "annotate export"', "annotate export",
         frozenset({"export.json", "tasks.jsonl", "labels.csv", "form", "strata_key.json"})),
    ),
}
"""Markers of earlier versions: file -> (text it holds, kind, the files that version wrote)."""
_MARKER_BYTES = 65_536
"""Most bytes read of a marker file (a larger one is not a marker)."""


class OutputDirError(ValueError):
    """An output folder that must not be replaced, or cannot be written; the message is one line."""


def _real(path: str | Path) -> Path:
    return Path(os.path.realpath(os.path.expanduser(str(path))))


def _read_small(path: Path) -> str | None:
    """The text of a small regular file, or ``None`` (missing, not a regular file, too large, not UTF-8)."""
    try:
        if not path.is_file() or path.stat().st_size > _MARKER_BYTES:
            return None
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _marker(folder: Path) -> tuple[str, frozenset[str]] | None:
    """``(kind, names it owns)`` of ``folder``'s output marker, or ``None`` when it has none."""
    text = _read_small(folder / MANIFEST_NAME)
    if text is not None:
        try:
            manifest = json.loads(text)
        except ValueError:
            manifest = None
        if isinstance(manifest, dict) and isinstance(manifest.get("kind"), str):
            files = manifest.get("files")
            names = {str(f) for f in files} if isinstance(files, list) else set()
            return manifest["kind"], frozenset(names | {MANIFEST_NAME})
    for name, variants in _LEGACY.items():
        text = _read_small(folder / name)
        if text is None:
            continue
        for needle, kind, owned in variants:
            if needle in text:
                return kind, owned
    return None


def output_kind(folder: str | Path) -> str | None:
    """The kind of output ``folder`` holds (``"run"``, ``"report"``, ...), or ``None`` when it holds none."""
    found = _marker(Path(folder))
    return found[0] if found else None


def _listing(folder: Path, target: str | Path) -> list[str]:
    try:
        return sorted(entry.name for entry in os.scandir(folder))
    except OSError as exc:
        raise OutputDirError(f"output folder {target}: cannot read it ({exc.strerror})") from None


def _named(names: list[str], limit: int = 3) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def check_output_dir(
    target: str | Path, *, kind: str, protected: Mapping[str, str | Path | None] | None = None
) -> Path:
    """Check that ``target`` may receive a new output of ``kind``, and that it can be written.

    Call it before any expensive work, so a command refuses before paying for
    a model call.  Nothing is changed on disk except that missing parent
    folders are created (to test that they can be).

    Parameters
    ----------
    target
        The output folder.
    kind
        What writes it (``"run"``, ``"report"``, ``"view"``, ...): an existing
        folder is accepted only if it is empty or its marker names this kind.
    protected
        ``{what: path}`` inputs the folder must neither be nor contain (the
        cache, the experiment file, the cube read); ``None`` paths are
        skipped.  The working directory is always protected.

    Returns
    -------
    pathlib.Path
        ``target`` with symbolic links resolved (the folder that is replaced).

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
    if os.path.lexists(real):
        if not real.is_dir():
            raise OutputDirError(f"output folder {target}: refusing to replace it, it is a file, not a folder")
        entries = _listing(real, target)
        found = _marker(real)
        if entries and (found is None or found[0] != kind):
            why = (f"an output of 'multiverse {found[0]}'" if found
                   else f"not empty ({_named(entries)}) and not written by 'multiverse {kind}'")
            raise OutputDirError(
                f"output folder {target}: refusing to replace it, it is {why}; "
                f"choose a new folder or an earlier 'multiverse {kind}' output"
            )
        if not os.access(real, os.W_OK | os.X_OK):
            raise OutputDirError(f"output folder {target}: cannot replace it, it is not writable")
    try:
        real.parent.mkdir(parents=True, exist_ok=True)
        with signals_held():
            os.rmdir(tempfile.mkdtemp(prefix=f".{real.name}.probe-", dir=real.parent))
    except OSError as exc:
        raise OutputDirError(f"output folder {target}: cannot write in {real.parent} ({exc.strerror})") from None
    return real


def _host() -> str:
    return socket.gethostname()


def _new_container(target: Path, purpose: str, **extra: object) -> Path:
    """A fresh ``.<name>.<purpose>-<pid>-*`` folder beside ``target`` holding the staging marker."""
    tag = "new" if purpose == "staging" else "old"
    container = Path(tempfile.mkdtemp(prefix=f".{target.name}.{tag}-{os.getpid()}-", dir=target.parent))
    marker = {"pid": os.getpid(), "host": _host(), "target": target.name, "purpose": purpose, **extra}
    (container / STAGING_MARKER).write_text(json.dumps(marker, sort_keys=True) + "\n", encoding="utf-8")
    return container


def _stale_marker(container: Path, target: Path) -> dict | None:
    """The marker of a staging or backup folder of ``target`` whose writer (of this host) is gone."""
    text = _read_small(container / STAGING_MARKER)
    try:
        marker = json.loads(text) if text is not None else None
    except ValueError:
        return None
    if not isinstance(marker, dict) or marker.get("target") != target.name or marker.get("host") != _host():
        return None
    pid = marker.get("pid")
    if not isinstance(pid, int) or isinstance(pid, bool) or process_alive(pid):
        return None
    return marker


def _restore(container: Path, target: Path, kept: list[str]) -> bool:
    """Put back what a dead writer's backup folder carried; whether nothing of it is left there."""
    inner = container / target.name
    if not os.path.lexists(inner):
        return True
    if not os.path.lexists(target):
        os.replace(inner, target)  # killed between the two renames: the old folder comes back whole
        return True
    left = False
    for name in kept:
        source = inner / name
        if not os.path.lexists(source):
            continue
        if os.path.lexists(target / name):
            left = True
        else:
            os.replace(source, target / name)
    return not left


def _clean_stale(target: Path) -> None:
    """Remove the marked staging and backup folders of ``target`` left by writers that died."""
    try:
        siblings = [entry for entry in os.scandir(target.parent) if entry.name.startswith(f".{target.name}.")]
    except OSError:
        return
    for entry in siblings:
        container = Path(entry.path)
        if not entry.is_dir(follow_symlinks=False):
            continue
        marker = _stale_marker(container, target)
        if marker is None:
            continue
        kept = [str(k) for k in marker.get("kept") or []]
        try:
            done = marker.get("purpose") != "backup" or _restore(container, target, kept)
        except OSError:
            done = False
        if done:
            _remove(container)


def _remove_container(container: Path) -> None:
    """Remove a staging or backup folder, its marker last: if anything stays (a writer thread still
    finishing), the marker stays with it, so the next write to the target removes it once this process is gone."""
    for attempt in range(3):
        for entry in os.scandir(container):
            if entry.name != STAGING_MARKER:
                if entry.is_dir(follow_symlinks=False):
                    shutil.rmtree(entry.path, ignore_errors=True)
                else:
                    Path(entry.path).unlink(missing_ok=True)
        if [entry.name for entry in os.scandir(container)] == [STAGING_MARKER]:
            (container / STAGING_MARKER).unlink()
            os.rmdir(container)
            return
        time.sleep(0.05 * (attempt + 1))


def _remove(container: Path) -> None:
    try:
        _remove_container(container)
    except OSError:
        pass  # the marker stays: the next write to the target removes the folder


def _umask_mode() -> int:
    """The mode a new folder gets under the process umask (``tempfile.mkdtemp`` always uses 0700)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o777 & ~mask


def _kept_entries(target: Path, kind: str | None) -> list[str]:
    """Entries of the existing ``target`` that the new output must carry over (not listed as this kind's)."""
    if kind is None or not target.is_dir():
        return []
    found = _marker(target)
    owned = found[1] if found is not None and found[0] == kind else frozenset()
    return [name for name in _listing(target, target) if name not in owned]


@contextmanager
def replace_dir(target: str | Path, *, kind: str | None = None) -> Iterator[Path]:
    """Build a folder's new contents beside it, then swap them in (see the module docstring).

    Yields a fresh folder next to ``target`` (inside a marked staging folder);
    when the block ends without error, the new folder replaces ``target`` as a
    whole, carrying over every entry of the old one that its manifest does not
    list.  On error the staging folder is removed and ``target`` is untouched.

    Parameters
    ----------
    target
        The folder to replace; a symbolic link is followed (the link stays).
    kind
        When given, ``target`` must pass :func:`check_output_dir` for this
        kind, the new folder gets a manifest (:data:`MANIFEST_NAME`) naming it
        and the files it holds, and unlisted entries are carried over.  Without
        it the folder is replaced whole (for a file format that is a folder,
        such as a ``.zarr`` store, whose caller has checked it).

    Raises
    ------
    OutputDirError
        If ``kind`` is given and ``target`` must not be replaced, or an entry
        to carry over has the name of a new output.
    """
    real = check_output_dir(target, kind=kind) if kind is not None else _real(target)
    real.parent.mkdir(parents=True, exist_ok=True)
    _clean_stale(real)
    container: Path | None = None
    try:
        with signals_held():  # the folder, its marker and this block's cleanup come into being together
            container = _new_container(real, "staging", kind=kind)
        staging = container / real.name
        staging.mkdir(mode=_umask_mode())
        os.chmod(staging, _umask_mode())
        yield staging
        written = sorted(p.name for p in staging.iterdir())
        if kind is not None:
            manifest = {"kind": kind, "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "files": written}
            (staging / MANIFEST_NAME).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
        kept = _kept_entries(real, kind)
        clash = sorted(set(kept) & set(written))
        if clash:
            raise OutputDirError(
                f"output folder {target}: refusing to replace {_named(clash)}, not written by "
                f"'multiverse {kind}'; move it away or choose a new folder"
            )
    except BaseException:
        if container is not None:
            with signals_held():
                _remove(container)
        raise
    with signals_held():  # a signal during the swap takes effect once the new folder is in place
        backup = _new_container(real, "backup", kind=kind, kept=kept) if os.path.lexists(real) else None
        if backup is not None:
            os.replace(real, backup / real.name)
        os.replace(staging, real)
        if backup is not None:
            for name in kept:
                os.replace(backup / real.name / name, real / name)
            _remove(backup)
        _remove(container)
