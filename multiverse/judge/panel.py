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

Exact members: a deterministic member (e.g. the ``contract`` oracle) decides
from what the transcript records, not from a reading of it.  By default its
clear breach stands: where an exact member reports 2 the panel reports 2,
whatever the model members vote, so ``majority`` of (contract 2, model 0,
model 0) is 2, not adherence.  ``outvote_exact=True`` (``outvote_exact: true``
in the experiment's panel entry) lets the vote decide instead.  A panel that
mixes exact and model members warns when it is built (:func:`mixed_panel_warning`).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from multiverse.core.judgment import NO_REASON, JudgeContext, Judgment
from multiverse.core.schema import CLEAR_BREACH, MISSING, NOT_APPLICABLE, PANEL_COMBINES
from multiverse.core.transcript import Transcript

__all__ = ["PanelJudge", "combine_panel", "mixed_panel_warning"]

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


def mixed_panel_warning(label: str, exact: Sequence[str], models: Sequence[str], *, outvote_exact: bool) -> str | None:
    """The warning for a panel that mixes exact members (such as the contract oracle) and model members, or ``None``.

    Parameters
    ----------
    label
        The panel's label.
    exact, models
        Its exact members' labels and its model members' labels.
    outvote_exact
        Whether model votes may overrule an exact member's clear breach.
    """
    if not exact or not models:
        return None
    rule = (
        "model votes may overrule their clear breaches (outvote_exact: true)"
        if outvote_exact
        else "their clear breaches stand whatever the model members vote"
    )
    return (
        f"panel {label!r} mixes exact judges ({', '.join(exact)}) with model judges ({', '.join(models)}); {rule}"
    )


class PanelJudge:
    """A panel as a :class:`~multiverse.core.judgment.Judge`: its members' judgments combined.

    Parameters
    ----------
    combine
        ``any``, ``majority`` or ``unanimous``.
    members
        The member labels (judged before the panel, see
        :func:`multiverse.core.judgment.judge_transcripts`).
    exact
        The members whose clear breach stands unless ``outvote_exact``.
    outvote_exact
        Let the vote overrule the exact members' clear breaches.
    label
        The panel's label, for the mixed-panel warning; with ``models`` (the
        members that are model judges) given, a panel mixing exact and model
        members warns.
    models
        The members that are model judges.
    """

    def __init__(
        self,
        combine: str,
        members: Sequence[str],
        *,
        exact: Sequence[str] = (),
        outvote_exact: bool = False,
        label: str = "panel",
        models: Sequence[str] | None = None,
    ):
        if combine not in PANEL_COMBINES:
            raise ValueError(f"panel combine: expected one of {', '.join(PANEL_COMBINES)}, got {combine!r}")
        self.combine = combine
        self.members = tuple(members)
        self.exact = tuple(exact)
        self.outvote_exact = outvote_exact
        if models is not None:
            message = mixed_panel_warning(label, self.exact, models, outvote_exact=outvote_exact)
            if message is not None:
                warnings.warn(message, UserWarning, stacklevel=2)

    def __repr__(self) -> str:
        return f"PanelJudge({self.combine!r}, {list(self.members)})"

    async def judge(self, transcripts: Sequence[Transcript], *, roles: Sequence[Any], context: JudgeContext) -> list[Judgment]:
        """Per transcript, :func:`combine_panel` of the members' severities (see the module docstring)."""
        shape = (context.horizon, len(context.principle_ids))
        out = []
        for i in range(len(transcripts)):
            votes = [context.members[m][i] or Judgment.not_applicable(*shape) for m in self.members]
            severity = np.stack([v.severity for v in votes], axis=-1)
            codes = np.stack([v.missing for v in votes], axis=-1)
            combined = combine_panel(severity, self.combine, axis=-1)
            if not self.outvote_exact and self.exact:
                exact = [k for k, m in enumerate(self.members) if m in self.exact]
                combined = np.where((severity[..., exact] == CLEAR_BREACH).any(axis=-1), CLEAR_BREACH, combined)
            first = np.take_along_axis(codes, (severity == MISSING).argmax(axis=-1)[..., None], axis=-1)[..., 0]
            missing = np.where(combined == MISSING, first, NO_REASON).astype(np.int8)
            out.append(Judgment(combined.astype(np.int8), missing))
        return out
