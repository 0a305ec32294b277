"""Data for the static site as JavaScript files a page loads with ``<script src>``.

Browsers refuse ``fetch()`` of local files opened from ``file://``, but they run
``<script>`` files beside the page.  Every data file is therefore one call,
``MV.put("<key>", <json>)``, that the page's loader picks up.  The JSON is made
safe to sit inside a script: ``<``, ``>``, ``&`` and the two JavaScript line
separators are written as ``\\u`` escapes, so no text of a transcript (not even
``</script>``) can end the script or run as code.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from multiverse.llm.redact import scrub

__all__ = ["CHUNK_SIZE", "chunk_key", "chunks", "plain", "script_json", "write_data"]

CHUNK_SIZE = 100
"""Conversations per data file of the conversation pages."""

_ESCAPES = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"})


def plain(value: Any) -> Any:
    """``value`` with numpy scalars and arrays turned into JSON types; NaN becomes ``None``."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return [plain(v) for v in value.tolist()]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _numpy(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def script_json(value: Any) -> str:
    """Compact JSON of ``value`` that is safe inside an HTML ``<script>`` element (NaN becomes null)."""
    options = {"ensure_ascii": False, "separators": (",", ":"), "allow_nan": False}
    try:
        text = json.dumps(value, default=_numpy, **options)
    except ValueError:  # a NaN or infinity somewhere: take the slow path that nulls them
        text = json.dumps(plain(value), **options)
    return text.translate(_ESCAPES)


def chunk_key(index: int, *, size: int = CHUNK_SIZE) -> str:
    """The data key (and file stem) of the chunk holding conversation ``index``."""
    return f"conv-{index // size:05d}"


def write_data(folder: Path, key: str, value: Any) -> Path:
    """Write ``MV.put(key, JSON.parse("..."))`` to ``folder/<key>.js`` and return the path.

    The value travels as a JSON string literal: JavaScript engines parse
    ``JSON.parse`` of a string much faster than the same object literal, which
    matters for the index of a large run.  Known secret values are scrubbed
    from it first (:func:`multiverse.llm.redact.scrub`).
    """
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{key}.js"
    literal = json.dumps(scrub(script_json(value)), ensure_ascii=False)  # \u escapes stay escaped inside the string
    path.write_text(f"MV.put({json.dumps(key)},JSON.parse({literal}));\n", encoding="utf-8")
    return path


def chunks(records: Sequence[Any] | Iterable[Any], *, size: int = CHUNK_SIZE) -> Iterable[tuple[str, list[Any]]]:
    """``(chunk_key, records)`` pairs of consecutive blocks of ``size`` records."""
    block: list[Any] = []
    start = 0
    for record in records:
        block.append(record)
        if len(block) == size:
            yield chunk_key(start, size=size), block
            start += size
            block = []
    if block:
        yield chunk_key(start, size=size), block
