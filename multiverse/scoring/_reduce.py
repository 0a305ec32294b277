"""Fast reductions over the short trailing axes (turns, principles) of severity arrays.

numpy's reductions over a short last axis (a handful of turns or principles) run an
inner loop per element and are ~30x slower than elementwise ops over strided
columns; these helpers loop over the short axis instead, viewing packed bools as
wider ints.
"""

from __future__ import annotations

import numpy as np

__all__ = ["any_last", "count_last", "first_true", "seen_before"]

_PACKED = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def any_last(a: np.ndarray) -> np.ndarray:
    """``a.any(axis=-1)`` for a bool array with a short last axis."""
    a = np.ascontiguousarray(a)
    for width, wide in ((8, np.uint64), (4, np.uint32), (2, np.uint16)):
        if a.shape[-1] % width == 0:
            a = a.view(wide)
            break
    out = a[..., 0] != 0
    for i in range(1, a.shape[-1]):
        out |= a[..., i] != 0
    return out


def count_last(a: np.ndarray) -> np.ndarray:
    """``a.sum(axis=-1)`` (int32) for a bool array with a short last axis."""
    out = a[..., 0].astype(np.int32)
    for i in range(1, a.shape[-1]):
        out += a[..., i]
    return out


def first_true(a: np.ndarray) -> np.ndarray:
    """Index of the first True along the short last axis (0 when none)."""
    out = np.zeros(a.shape[:-1], dtype=np.intp)
    for i in range(a.shape[-1] - 1, -1, -1):
        out[a[..., i]] = i
    return out


def _pack(a: np.ndarray) -> np.ndarray | None:
    """View a bool ``(..., p)`` array as one unsigned int per row when p is 1, 2, 4 or 8."""
    wide = _PACKED.get(a.shape[-1])
    return None if wide is None else np.ascontiguousarray(a).view(wide)[..., 0]


def _unpack(packed: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(packed)[..., None].view(bool)


def seen_before(a: np.ndarray) -> np.ndarray:
    """For bool ``(n, turn)`` or ``(n, turn, principle)``: True where an earlier turn is True.

    With principles, "earlier" is per principle.
    """
    packed = _pack(a) if a.ndim == 3 else a
    if packed is None:
        return np.concatenate([np.zeros_like(a[:, :1]), np.logical_or.accumulate(a, axis=1)[:, :-1]], axis=1)
    out = np.zeros_like(packed)
    for t in range(1, packed.shape[1]):
        np.bitwise_or(out[:, t - 1], packed[:, t - 1], out=out[:, t])
    return _unpack(out) if a.ndim == 3 else out

