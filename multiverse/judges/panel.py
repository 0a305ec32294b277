"""Panels: one verdict from several judges' severities.

A panel ``any``, ``majority`` or ``unanimous`` over its members gives, per turn
and principle, a severity on the same three-level scale.  For each level
``L`` in {1, 2} it asks whether the members' votes "severity >= L" pass the
panel's rule:

* ``any``: at least one ruling member votes yes;
* ``majority``: more than half of the ruling members vote yes;
* ``unanimous``: every ruling member votes yes.

The panel's severity is the highest level whose rule passes (0 when neither
does).  Members that do not rule on a cell (-2) abstain; when no member rules
the panel does not either (-2).  A missing member (-1) is an unknown vote: the
panel's verdict stands when no value of the unknown votes could change it
(Kleene's three-valued logic) and is missing otherwise, so a missing judgment
is never read as adherence.  E.g. ``any`` over (2, -1) is 2, but over (0, -1)
it is missing.
"""

from __future__ import annotations

import numpy as np

from multiverse._schema import MISSING, NOT_APPLICABLE, PANEL_COMBINES

__all__ = ["combine_panel"]

_TRUE, _FALSE, _UNKNOWN = 1, 0, -1


def _rule(yes: np.ndarray, unknown: np.ndarray, ruling: np.ndarray, combine: str) -> np.ndarray:
    """Three-valued outcome of a panel rule from vote counts."""
    no = ruling - yes - unknown
    if combine == "any":
        sure, impossible = yes >= 1, yes + unknown == 0
    elif combine == "unanimous":
        sure, impossible = (no == 0) & (unknown == 0), no >= 1
    elif combine == "majority":
        sure, impossible = 2 * yes > ruling, 2 * (yes + unknown) <= ruling
    else:
        raise ValueError(f"panel combine: expected one of {', '.join(PANEL_COMBINES)}, got {combine!r}")
    return np.where(sure, _TRUE, np.where(impossible, _FALSE, _UNKNOWN))


def combine_panel(severity: np.ndarray, combine: str, *, axis: int = -1) -> np.ndarray:
    """Combine members' severities into the panel's severity.

    Parameters
    ----------
    severity
        Integer severities in the cube's codes, members along ``axis``.
    combine
        ``any``, ``majority`` or ``unanimous`` (see the module docstring).
    axis
        The members axis, removed from the result.

    Returns
    -------
    numpy.ndarray
        int8 panel severities: 0, 1, 2, -1 (undecided because of missing
        members) or -2 (no member rules).

    Examples
    --------
    >>> combine_panel(np.array([[2, 0, 1], [2, 2, -1]]), "majority")
    array([1, 2], dtype=int8)
    """
    votes = np.moveaxis(np.asarray(severity), axis, -1)
    ruling = (votes != NOT_APPLICABLE).sum(axis=-1)
    unknown = (votes == MISSING).sum(axis=-1)
    outcome = {level: _rule((votes >= level).sum(axis=-1), unknown, ruling, combine) for level in (1, 2)}
    out = np.where(
        outcome[2] == _TRUE,
        2,
        np.where(
            outcome[2] == _UNKNOWN,
            MISSING,
            np.where(outcome[1] == _TRUE, 1, np.where(outcome[1] == _UNKNOWN, MISSING, 0)),
        ),
    )
    return np.where(ruling == 0, NOT_APPLICABLE, out).astype(np.int8)
