"""Item labels for upstream task ids, which may be integers or free text."""

from __future__ import annotations

import re
from collections.abc import Iterable


def item_labels(task_ids: Iterable[str]) -> tuple[list[str], list[int]]:
    """Ordered unique task ids and their integer ``item`` labels.

    When every id is an integer written as text, ids sort numerically and are
    their own labels (``"7"`` -> 7); otherwise ids sort as text and are
    numbered ``0..n-1``.  Callers keep the ids in a ``task_id`` coordinate.
    """
    ids = sorted(set(task_ids))
    if all(re.fullmatch(r"-?\d+", t) for t in ids):
        ids.sort(key=int)
        return ids, [int(t) for t in ids]
    return ids, list(range(len(ids)))
