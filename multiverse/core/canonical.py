"""Canonical JSON: the one encoding every digest of the library hashes.

Cache keys, spec and experiment digests, plan cell ids, replay keys, sim digests
and transcript ids all hash canonical JSON through :func:`canonical_bytes`:
sorted keys, no whitespace, non-ASCII characters as they are, mappings of any
kind as objects and tuples as lists (:func:`plain`).  The standard library's
``json.dumps(plain(value), sort_keys=True, separators=(",", ":"),
ensure_ascii=False)`` defines those bytes (every stored key was made with it);
orjson writes the same bytes several times faster for all but a few values.
:func:`fast_canonical` returns orjson's bytes only for values it has checked
orjson writes identically, and ``None`` for anything else, where
:func:`canonical_bytes` falls back to the standard library.

Where orjson differs from the standard library (found by comparing the two, see
``tests/core/test_canonical_json.py``):

* floats below 1e-4 in magnitude (``1e-05`` against ``0.00001``, ``2.5e-07``
  against ``2.5e-7``), and NaN and infinities (``NaN`` or an error against
  ``null``): only finite floats that are zero or of magnitude in [1e-4, 1e16)
  take the fast path;
* integers outside the unsigned or signed 64-bit range (orjson refuses them);
* strings with lone surrogates (orjson refuses them);
* types other than dict, ``MappingProxyType``, list, tuple, str, int, float,
  bool and None, subclasses included (their encoding depends on a ``default``),
  and mappings whose keys are not all ``str``.

Why a check of our own: orjson has no option to refuse NaN or to write floats
as :func:`repr` does, so the check walks the containers (strings are leaves,
so the walk costs a small part of the encoding it replaces).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import orjson

__all__ = ["canonical_bytes", "canonical_json", "digest", "fast_canonical", "plain", "text_digest"]

_LEAF_TYPES = frozenset({str, int, float, bool, type(None)})
"""Exact types that :func:`plain` returns as they are (checked before the slower ABC checks)."""

_FLOAT_LOW = 1e-4
_FLOAT_HIGH = 1e16
_INT_LOW = -(2**63)
_INT_HIGH = 2**64
_SCALARS = frozenset({str, bool, type(None)})


def _identical(value: Any) -> bool:
    """Whether orjson writes ``value`` exactly as the standard library does (see the module notes).

    Strings, the bulk of every key, are checked in the loops rather than by a
    call each.
    """
    kind = type(value)
    if kind is dict or kind is MappingProxyType:
        for key, item in value.items():
            if type(key) is not str or (type(item) is not str and not _identical(item)):
                return False
        return True
    if kind is list or kind is tuple:
        for item in value:
            if type(item) is not str and not _identical(item):
                return False
        return True
    if kind in _SCALARS:
        return True
    if kind is int:
        return _INT_LOW <= value < _INT_HIGH
    if kind is float:
        magnitude = abs(value)
        return magnitude == 0.0 or _FLOAT_LOW <= magnitude < _FLOAT_HIGH
    return False


def _mapping(value: Any) -> dict[str, Any]:
    """orjson's ``default``: a read-only mapping (the only non-native type :func:`_identical` admits) as a dict."""
    if type(value) is MappingProxyType:
        return value.copy()
    raise TypeError(f"not a JSON value: {type(value).__name__}")


def fast_canonical(value: Any) -> bytes | None:
    """The canonical JSON bytes of ``value``, or ``None`` where orjson cannot be trusted to match.

    Parameters
    ----------
    value
        Nested JSON-like data (dicts, read-only mappings, lists, tuples,
        strings, numbers, booleans, None).

    Returns
    -------
    bytes or None
        Exactly ``json.dumps(value, sort_keys=True, separators=(",", ":"),
        ensure_ascii=False).encode()`` (read-only mappings written as objects),
        or ``None`` when the value holds something orjson writes differently;
        the caller then encodes with the standard library.

    Examples
    --------
    >>> fast_canonical({"b": [1, 0.5], "a": "é"}).decode()
    '{"a":"é","b":[1,0.5]}'
    >>> fast_canonical({"tiny": 1e-05}) is None
    True
    """
    try:
        if not _identical(value):
            return None
        return orjson.dumps(value, default=_mapping, option=orjson.OPT_SORT_KEYS)
    except (orjson.JSONEncodeError, TypeError, RecursionError):
        return None


def plain(value: Any) -> Any:
    """Return ``value`` as plain JSON types (dicts, lists, str, numbers, bool, None).

    Mappings become dicts (keys as strings), sequences lists, numpy scalars
    Python numbers.

    Raises
    ------
    TypeError
        For anything else: a digest never hides a value behind its ``str``.
    """
    kind = type(value)
    if kind in _LEAF_TYPES:
        return value
    if kind is dict or kind is MappingProxyType or isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, (str, int, float, bool)):
        return value
    item = getattr(value, "item", None)
    if callable(item):
        return item()
    raise TypeError(f"expected JSON-like data, got {type(value).__name__}: {value!r:.80}")


def canonical_bytes(value: Any, *, allow_nan: bool = False) -> bytes:
    """``value`` as canonical JSON bytes (see the module notes).

    Parameters
    ----------
    value
        JSON-like data; mappings of any kind, tuples and numpy scalars are
        written as :func:`plain` makes them.
    allow_nan
        Write NaN and infinities as ``NaN`` / ``Infinity`` (transcripts and the
        offline world's inputs may hold them); by default they are a ``ValueError``.
    """
    fast = fast_canonical(value)
    if fast is not None:
        return fast
    return json.dumps(plain(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=allow_nan).encode()


def canonical_json(value: Any) -> str:
    """:func:`canonical_bytes` as text."""
    return canonical_bytes(value).decode()


def digest(value: Any, *, length: int = 64, allow_nan: bool = False) -> str:
    """The sha256 (hex, its first ``length`` digits) of ``value``'s canonical JSON."""
    return hashlib.sha256(canonical_bytes(value, allow_nan=allow_nan)).hexdigest()[:length]


def text_digest(text: str) -> str:
    """The sha256 (hex) of a text's UTF-8 bytes: how a canary's reply is identified (no JSON around it)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
