"""Raw labels -> categories of a scale (``multiverse.core.scales``), for every adapter.

A raw value matches a key of the mapping exactly, or as text (``"1"`` matches
``1`` and ``1.0``; surrounding spaces ignored); the default mappings of the
``binary`` and ``pairwise`` scales match their category names ignoring case
(``"Tie"``, ``"a"``).  A value no key covers is a missing label, counted by
value; an empty cell is a missing label, not counted.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from multiverse.core import schema as S
from multiverse.core.scales import FIXED_CATEGORIES, SCALES, category_codes

__all__ = ["Mapped", "as_text", "is_blank", "integer", "map_labels", "likert_range"]


@dataclass(frozen=True)
class Mapped:
    """Labels mapped onto a scale.

    Attributes
    ----------
    codes
        int8 codes in ``severity`` (-1 where missing); for ``likert`` -1 where
        missing and -2 where a rating exists.
    ratings
        float ratings (``likert``; NaN elsewhere), else ``None``.
    unmapped
        Per row, whether a non-empty value no key covered.
    counts
        ``{value as text: rows}`` of those values.
    categories
        The scale's category name -> code on the cube (``likert``: the range).
    """

    codes: np.ndarray
    ratings: np.ndarray | None
    unmapped: np.ndarray
    counts: Counter
    categories: dict[str, int]


def is_blank(value: Any) -> bool:
    """``None``, NaN or an all-space string."""
    return value is None or (isinstance(value, float) and np.isnan(value)) or (isinstance(value, str) and not value.strip())


def as_text(value: Hashable) -> str:
    """A label as text: integral floats without ``.0``, strings stripped."""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return str(int(value))
    return str(value)


def integer(value: Any) -> int | None:
    """An integer read from an int, an integral float or integer text; ``None`` otherwise (bools too)."""
    if isinstance(value, (bool, np.bool_)):
        return None
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    return None


def _lookup(mapping: Mapping[Hashable, Any], *, fold_case: bool) -> tuple[Mapping[Hashable, Any], dict[str, Any]]:
    by_text = {(as_text(k).casefold() if fold_case else as_text(k)): v for k, v in mapping.items()}
    return mapping, by_text


def _find(value: Any, exact: Mapping[Hashable, Any], by_text: dict[str, Any], *, fold_case: bool) -> Any:
    try:
        if value in exact:
            return exact[value]
    except TypeError:  # an unhashable cell (a list) matches nothing
        return None
    text = as_text(value)
    return by_text.get(text.casefold() if fold_case else text)


def likert_range(values: Iterable[int], declared: Sequence[int] | None, where: str) -> tuple[int, int]:
    """The rating range: the declared one, else the observed minimum..maximum."""
    if declared is not None:
        ints = [integer(v) for v in declared]
        if not ints or any(v is None for v in ints):
            raise ValueError(f"{where}categories=: a likert scale needs integers (e.g. range(1, 11)), got {list(declared)}")
        return min(ints), max(ints)  # type: ignore[type-var]
    seen = list(values)
    if not seen:
        raise ValueError(f"{where}no rating to read a likert range from; declare it with categories=range(low, high + 1)")
    low, high = min(seen), max(seen)
    return low, high if high > low else low + 1


def map_labels(
    values: Sequence[Any], *, scale: str, categories: Mapping[Hashable, Any] | Sequence[int] | None, where: str,
    column: str,
) -> Mapped:
    """Map the raw labels of one column onto ``scale`` (module docstring); raises naming the row or key."""
    if scale not in SCALES:
        raise ValueError(f"{where}scale={scale!r}: expected one of {', '.join(SCALES)}")
    if scale == "likert":
        return _likert(values, categories, where, column)
    names = FIXED_CATEGORIES[scale]
    fold_case = categories is None
    mapping: Mapping[Hashable, Any] = {name: name for name in names} if categories is None else categories
    if not isinstance(mapping, Mapping):
        raise ValueError(f"{where}categories=: for scale {scale!r} a mapping raw label -> one of {', '.join(names)}")
    bad = {k: v for k, v in mapping.items() if v not in names}
    if bad:
        raise ValueError(f"{where}categories=: {bad} name no category of scale {scale!r} ({', '.join(names)})")
    exact, by_text = _lookup(mapping, fold_case=fold_case)
    codes = np.full(len(values), S.MISSING, dtype=np.int8)
    unmapped = np.zeros(len(values), dtype=bool)
    counts: Counter = Counter()
    for row, value in enumerate(values):
        if is_blank(value):
            continue
        name = _find(value, exact, by_text, fold_case=fold_case)
        if name is None:
            unmapped[row] = True
            counts[as_text(value)] += 1
        else:
            codes[row] = names[name]
    return Mapped(codes, None, unmapped, counts, dict(names))


def _likert(values: Sequence[Any], categories: Any, where: str, column: str) -> Mapped:
    mapping = categories if isinstance(categories, Mapping) else None
    declared = None if mapping is not None or categories is None else list(categories)
    exact, by_text = _lookup(mapping or {}, fold_case=False)
    ratings = np.full(len(values), np.nan)
    unmapped = np.zeros(len(values), dtype=bool)
    counts: Counter = Counter()
    for row, value in enumerate(values, start=1):
        if is_blank(value):
            continue
        if mapping is not None:
            found = _find(value, exact, by_text, fold_case=False)
            if found is None:
                unmapped[row - 1] = True
                counts[as_text(value)] += 1
                continue
            value = found
        number = integer(value)
        if number is None:
            raise ValueError(f"{where}row {row}: column {column!r} holds {value!r}; expected an integer rating")
        ratings[row - 1] = number
    rated = ~np.isnan(ratings)
    low, high = likert_range(ratings[rated].astype(int).tolist(), declared, where)
    outside = rated & ((ratings < low) | (ratings > high))
    if outside.any():
        row = int(np.flatnonzero(outside)[0])
        raise ValueError(f"{where}row {row + 1}: column {column!r} holds {values[row]!r}; outside the declared range {low}..{high}")
    codes = np.where(rated, S.NOT_APPLICABLE, S.MISSING).astype(np.int8)
    return Mapped(codes, ratings, unmapped, counts, category_codes("likert", low=low, high=high))
