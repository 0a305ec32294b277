"""inspect_ai's log files, read without inspect_ai.

inspect_ai with the packages it installs (botocore, boto3, textual, ...) is
about 200 MB; reading its logs needs none of it, so a user can load logs
into a cube without installing it.  This module reads the two formats
inspect_ai writes, as inspect_ai's ``read_eval_log`` reads them (the adapter's
tests pin the two readers against each other on logs inspect_ai wrote):

* ``.eval``: a zip archive with ``header.json`` (version, status, eval,
  plan, results, stats, error) and one
  ``samples/<id>_epoch_<n>.json`` per sample; a log whose run did not finish
  has ``_journal/start.json`` (version, eval, plan) instead of the header
  and reads with status ``started``.  Members are stored, deflated (what
  inspect_ai wrote before it moved to zstd) or zstd-compressed (zip method
  93, which the standard library's ``zipfile`` reads only from Python 3.14;
  it is decompressed here with pyarrow's zstd codec, a dependency already).
  A member written twice (a re-run sample) reads as its last copy.
* ``.json``: the whole log as one JSON object (the same fields, with
  ``samples``).

Log format versions 1 and 2 (inspect_ai's ``LOG_SCHEMA_VERSION``) are read;
a version-1 sample's single ``score`` reads as inspect_ai reads it: under the
name of the log's first result score (``results.scores[0].name``), or under
inspect_ai's placeholder ``88F74D2C`` when the log has no results (a run that
did not finish).  Any other version, a file that is neither format, or a
zip member compressed another way is refused with one line naming the file
and what was expected.
"""

from __future__ import annotations

import contextlib
import functools
import json
import struct
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import pyarrow as pa

__all__ = ["LOG_VERSIONS", "LogFile", "read_log_file"]

LOG_VERSIONS = (1, 2)
SCORER_PLACEHOLDER = "88F74D2C"
"""inspect_ai's name for the one scorer of a version-1 sample, until the log's results name it."""

_ZSTD = 93
_LOCAL_HEADER = struct.Struct("<IHHHHHIIIHH")
_LOCAL_SIGNATURE = 0x04034B50


@dataclass(frozen=True)
class LogFile:
    """One inspect_ai log as JSON values.

    Attributes
    ----------
    path
        The file.
    header
        ``version``, ``status``, ``eval``, ``plan``, ``results``, ... as written.
    samples
        The samples, in inspect_ai's order (epoch, then id); empty with ``header_only``.
    """

    path: Path
    header: dict[str, Any]
    samples: list[dict[str, Any]]


def read_log_file(path: Path, *, header_only: bool = False) -> LogFile:
    """Read an ``.eval`` or ``.json`` inspect_ai log (module docstring); ValueError names what is wrong."""
    if path.suffix == ".eval":
        header, samples = _read_eval(path, header_only=header_only)
    elif path.suffix == ".json":
        header = _json(path.read_bytes(), path, "one JSON object")
        samples = header.pop("samples", None) if isinstance(header, dict) else None
        samples = [] if header_only else list(samples or ())
    else:
        raise ValueError(f"{path}: expected an inspect_ai log, a .eval or .json file")
    if not isinstance(header, dict) or not isinstance(header.get("eval"), dict):
        raise ValueError(f"{path}: not an inspect_ai log (expected an object with 'version' and 'eval')")
    version = header.get("version")
    if version not in LOG_VERSIONS:
        raise ValueError(f"{path}: inspect_ai log format version {version!r}; this reader reads versions "
                         f"{' and '.join(map(str, LOG_VERSIONS))}")
    missing = [key for key in ("task", "model") if not isinstance(header["eval"].get(key), str)]
    if missing:
        raise ValueError(f"{path}: the log's eval has no {missing[0]!r}; expected an inspect_ai log")
    if any(not isinstance(s, dict) or "id" not in s or not isinstance(s.get("epoch"), int) for s in samples):
        raise ValueError(f"{path}: a sample without an 'id' or an integer 'epoch'; expected inspect_ai samples")
    header.setdefault("status", "started")
    scorer = _first_score_name(header)
    samples = [_migrate(sample, scorer) for sample in samples]
    samples.sort(key=lambda s: (s["epoch"], s["id"] if isinstance(s["id"], str) else str(s["id"]).zfill(20)))
    return LogFile(path, header, samples)


def _first_score_name(header: dict[str, Any]) -> str | None:
    """The name of the log's first result score, None for a log without results."""
    results = header.get("results")
    scores = results.get("scores") if isinstance(results, dict) else None
    first = scores[0] if isinstance(scores, list) and scores else None
    return first.get("name") if isinstance(first, dict) and isinstance(first.get("name"), str) else None


def _migrate(sample: dict[str, Any], scorer: str | None) -> dict[str, Any]:
    """A version-1 sample's single ``score`` as a one-scorer ``scores`` map, as inspect_ai reads it.

    inspect_ai's ``EvalSample`` puts the score under a placeholder name and its
    ``EvalLog`` then renames the placeholder, in every sample, to the name of the
    log's first result score when the log has results (``scorer``).
    """
    if "score" in sample:
        sample = {k: v for k, v in sample.items() if k != "score"} | {"scores": {SCORER_PLACEHOLDER: sample["score"]}}
    scores = sample.get("scores")
    if scorer is not None and isinstance(scores, dict) and SCORER_PLACEHOLDER in scores:
        renamed = {k: v for k, v in scores.items() if k != SCORER_PLACEHOLDER}
        renamed[scorer] = scores[SCORER_PLACEHOLDER]
        sample = sample | {"scores": renamed}
    return sample


def _json(data: bytes, path: Path, expected: str) -> Any:
    try:
        return json.loads(data)
    except ValueError as exc:
        raise ValueError(f"{path}: expected {expected} (inspect_ai log): {exc}") from None


def _read_eval(path: Path, *, header_only: bool) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    try:
        archive = zipfile.ZipFile(path)
    except zipfile.BadZipFile:
        raise ValueError(f"{path}: not an inspect_ai .eval log (expected a zip archive)") from None
    with archive, contextlib.ExitStack() as stack:
        raw = functools.cache(lambda: stack.enter_context(path.open("rb")))  # opened at the first zstd member
        members = {info.filename: info for info in archive.infolist()}  # a later copy of a name wins

        def member(name: str) -> Any:
            return _json(_member_bytes(archive, raw, members[name], path), path, f"JSON in member {name}")

        if "header.json" in members:
            header = member("header.json")
        elif "_journal/start.json" in members:
            header = member("_journal/start.json")
        else:
            raise ValueError(f"{path}: no header.json or _journal/start.json; expected an inspect_ai .eval log")
        samples = [] if header_only else [member(name) for name in members
                                          if name.startswith("samples/") and name.endswith(".json")]
    return header, samples


def _member_bytes(archive: zipfile.ZipFile, raw: Callable[[], BinaryIO], info: zipfile.ZipInfo, path: Path) -> bytes:
    """A member's bytes: zipfile decompresses stored and deflated members, pyarrow zstd ones (read from ``raw()``)."""
    if info.compress_type in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        return archive.read(info)
    if info.compress_type != _ZSTD:
        raise ValueError(f"{path}: member {info.filename} uses zip compression method {info.compress_type}; "
                         "expected stored, deflate or zstd (93)")
    file = raw()
    file.seek(info.header_offset)
    head = file.read(_LOCAL_HEADER.size)
    fields = _LOCAL_HEADER.unpack(head) if len(head) == _LOCAL_HEADER.size else (None,)
    if fields[0] != _LOCAL_SIGNATURE:
        raise ValueError(f"{path}: member {info.filename} has no local zip header; the archive is damaged")
    file.seek(info.header_offset + _LOCAL_HEADER.size + fields[9] + fields[10])
    try:
        return pa.Codec("zstd").decompress(file.read(info.compress_size), decompressed_size=info.file_size).to_pybytes()
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: member {info.filename} is not valid zstd data ({exc})") from None
