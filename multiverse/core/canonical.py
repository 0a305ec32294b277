"""Canonical JSON bytes through orjson, exactly as the standard library writes them.

Cache keys, sim digests and transcript ids hash canonical JSON: sorted keys, no
whitespace, non-ASCII characters as they are.  The standard library's
``json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)``
defines those bytes (every stored key was made with it); orjson writes the same
bytes several times faster for all but a few values.  :func:`fast_canonical`
returns orjson's bytes only for values it has checked orjson writes
identically, and ``None`` for anything else, so each caller keeps its own
standard-library call (with its own ``default`` and ``allow_nan``) as the
reference and the fallback.

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

from types import MappingProxyType
from typing import Any

import orjson

__all__ = ["fast_canonical"]

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
