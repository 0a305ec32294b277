"""A one-screen summary of a judgment cube: what it holds and what is missing from it.

:func:`summary` counts, per judge, the valid, missing and not-applicable
judgments (missing ones by reason, from the cube's ``missing_count``), the
conversations by end state, and whether the offline world's planted truth is
present, so incomplete data are visible before any rate is read off the cube,
and each judge's canary results with its ``no_signal`` flag, so a judge that
has not earned trust is visible before its severities are read.
A cell that holds no conversation is told apart by why (:func:`absence`):
excluded by the experiment's ``exclusions:``, or not in the data (a
``rollouts:`` file or an adapter's source with no conversation for those labels).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import xarray as xr

from multiverse.core import schema as S
from multiverse.cube.canaries import canary_results, describe_pooled

__all__ = ["EXCLUDED", "NOT_IN_DATA", "CubeSummary", "absence", "summary"]

EXCLUDED = "excluded by the experiment"
NOT_IN_DATA = "not in the data"


@dataclass(frozen=True)
class CubeSummary:
    """What :func:`summary` found; ``str()`` gives the one-screen text.

    Attributes
    ----------
    sizes
        ``{dim: size}`` of the severity array, in its dim order.
    conversations
        ``{end state: count}`` (``completed``, ``monitor_ended``, ``failed``),
        and the cells holding no conversation by why (:func:`absence`):
        ``excluded by the experiment`` and ``not in the data``, when there are some.
    judgments
        ``{judge: {"valid": n, "missing": n, "not_applicable": n}}`` over every
        (conversation, turn, principle) cell.
    missing_reasons
        ``{judge: {reason: count}}`` for the reasons with a non-zero count.
    has_truth
        Whether the cube carries the offline world's planted ``truth``.
    provenance
        The cube's ``title``, ``multiverse_version``, ``plan_digest`` and ``created`` attrs (those present).
    canaries
        ``{judge: canary results}`` for the judges that judged the roles'
        canaries (:mod:`multiverse.cube.canaries`): pooled sensitivity,
        specificity and J with intervals, and the ``no_signal`` flag.
    live
        From the run's record (``run.json``), for runs with real models: the
        leak guard's checked requests (``leak_guard``), a real user model's
        replies, those cut at the length limit and what was stripped from them
        (``user_replies``), and structured-output fallbacks
        (``response_format_fallbacks``); empty when absent.
    """

    sizes: Mapping[str, int]
    conversations: Mapping[str, int]
    judgments: Mapping[str, Mapping[str, int]]
    missing_reasons: Mapping[str, Mapping[str, int]]
    has_truth: bool
    provenance: Mapping[str, Any] = field(default_factory=dict)
    canaries: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    live: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The summary as plain JSON-ready types."""
        return {
            "sizes": dict(self.sizes),
            "conversations": dict(self.conversations),
            "judgments": {judge: dict(counts) for judge, counts in self.judgments.items()},
            "missing_reasons": {judge: dict(counts) for judge, counts in self.missing_reasons.items()},
            "has_truth": self.has_truth,
            "provenance": dict(self.provenance),
            "canaries": {judge: dict(result) for judge, result in self.canaries.items()},
            "live": dict(self.live),
        }

    def __str__(self) -> str:
        lines = [str(self.provenance.get("title", "judgment cube"))]
        lines += [f"  {key}: {value}" for key, value in self.provenance.items() if key != "title"]
        lines.append("dims: " + ", ".join(f"{dim}={size}" for dim, size in self.sizes.items()))
        held = {state: n for state, n in self.conversations.items() if state not in (EXCLUDED, NOT_IN_DATA)}
        ended = ", ".join(f"{state} {count}" for state, count in held.items())
        empty = "; ".join(f"{n} {why}" for why in (EXCLUDED, NOT_IN_DATA) if (n := self.conversations.get(why, 0)))
        lines.append(f"conversations: {sum(held.values())} ({ended})" + (f"; empty cells: {empty}" if empty else ""))
        lines.append("judgments per judge (valid / missing / not applicable):")
        width = max((len(judge) for judge in self.judgments), default=0)
        for judge, counts in self.judgments.items():
            reasons = self.missing_reasons.get(judge, {})
            why = ", ".join(f"{reason} {count}" for reason, count in reasons.items())
            lines.append(
                f"  {judge:<{width}}  {counts['valid']} / {counts['missing']} / {counts['not_applicable']}"
                + (f"  (missing: {why})" if why else "")
            )
        lines.append("planted truth: " + ("present (offline world)" if self.has_truth else "absent"))
        guard = self.live.get("leak_guard")
        if guard:
            checked = ", ".join(f"{purpose} {n}" for purpose, n in guard.items())
            lines.append(f"leak guard: requests checked, none carried simulator text ({checked})")
        replies = self.live.get("user_replies")
        if replies:
            stripped = ", ".join(f"{kind.replace('_', ' ')} {n}" for kind, n in replies.items()
                                 if kind not in ("replies", "cut") and n)
            lines.append(f"user simulator: {replies.get('replies', 0)} replies, {replies.get('cut', 0)} cut at the "
                         f"length limit; stripped: {stripped or 'nothing'}")
        for model, choices in self.live.get("response_format_fallbacks", {}).items():
            lines.append(f"structured output, {model}: " + ", ".join(f"{c} {n}" for c, n in choices.items()))
        if self.canaries:
            lines.append("canaries (pooled; 95% intervals):")
            for judge, result in self.canaries.items():
                flag = "  NO SIGNAL" if result.get("no_signal") else ""
                lines.append("  " + describe_pooled(judge, result) + flag)
        return "\n".join(lines)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(str(self))


_PROVENANCE_ATTRS = ("title", "multiverse_version", "plan_digest", "created")
_LIVE_KEYS = ("leak_guard", "user_replies", "response_format_fallbacks")


def _live(cube: xr.Dataset) -> dict[str, Any]:
    """The live-run counts of the run's record in the cube's ``run`` attr (empty when absent or unreadable)."""
    info = cube.attrs.get("run")
    if isinstance(info, str):
        try:
            info = json.loads(info or "{}")
        except ValueError:
            return {}
    if not isinstance(info, dict):
        return {}
    return {key: info[key] for key in _LIVE_KEYS if info.get(key)}


def _experiment(cube: xr.Dataset) -> dict[str, Any]:
    value = cube.attrs.get("experiment") or {}
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            return {}
    return dict(value) if isinstance(value, dict) else {}


def _excluded_by(experiment: dict[str, Any], cell: dict[str, Any]) -> str | None:
    """The reason of the first exclusion that removes ``cell``'s conversation, if one does."""
    for entry in experiment.get("exclusions") or ():
        where = {dim: labels for dim, labels in entry.items() if dim != "reason"}
        if "judge" in where:  # a judge exclusion removes judge cells only; the conversation still runs
            continue
        if where and all(str(cell.get(dim)) in {str(v) for v in labels} for dim, labels in where.items()):
            return str(entry.get("reason", ""))
    return None


def absence(cube: xr.Dataset, cell: Mapping[str, Any]) -> str:
    """Why a conversation cell holds no conversation, in words.

    Parameters
    ----------
    cube
        A judgment cube.
    cell
        The cell's labels over the conversation dims (``system``, ``role``, ...).

    Returns
    -------
    str
        ``excluded by the experiment (<reason>)`` when an entry of the
        experiment's ``exclusions:`` removes it; otherwise ``not in the data``
        (a ``rollouts:`` file, or an adapter's source, has no conversation with
        those labels), naming the rollouts file when there is one.
    """
    experiment = _experiment(cube)
    reason = _excluded_by(experiment, dict(cell))
    if reason is not None:
        return f"{EXCLUDED} ({reason})" if reason else EXCLUDED
    source = experiment.get("rollouts")
    return f"{NOT_IN_DATA} (the rollouts file {source} has no conversation with these labels)" if source else NOT_IN_DATA


def _absent_counts(cube: xr.Dataset) -> dict[str, int]:
    """Cells without a conversation, counted by why (:func:`absence`)."""
    ended = cube["ended"].transpose(*S.CONVERSATION_DIMS)
    empty = np.nonzero(ended.values.astype(str) == "")
    experiment = _experiment(cube)
    if not any("judge" not in entry for entry in experiment.get("exclusions") or ()):
        return {NOT_IN_DATA: len(empty[0])}
    counts = {EXCLUDED: 0, NOT_IN_DATA: 0}
    for index in zip(*empty):
        cell = {dim: cube[dim].values[i] for dim, i in zip(S.CONVERSATION_DIMS, index)}
        counts[EXCLUDED if _excluded_by(experiment, cell) is not None else NOT_IN_DATA] += 1
    return {why: n for why, n in counts.items() if n}


def summary(cube: xr.Dataset) -> CubeSummary:
    """Summarise what a judgment cube holds and what is missing from it.

    Parameters
    ----------
    cube
        A judgment cube (:func:`multiverse.run`, :func:`multiverse.open_cube`, an adapter).

    Returns
    -------
    CubeSummary
        Counts of judgments by kind and judge, missing judgments by reason,
        conversations by end state, and whether planted truth is present;
        ``print()`` it for the one-screen text.

    See Also
    --------
    multiverse.score : conversation-level verdicts, with valid and missing counts.

    Examples
    --------
    >>> print(multiverse.summary(cube))  # doctest: +SKIP

    Raises
    ------
    ValueError
        If ``cube`` is not a judgment cube (no ``severity`` with a ``judge`` dim).
    """
    if not isinstance(cube, xr.Dataset) or "severity" not in cube or "judge" not in cube["severity"].dims:
        raise ValueError("summary: not a judgment cube (expected a Dataset with a 'severity' variable over 'judge')")
    severity = cube["severity"]
    codes = severity.transpose(..., "judge").values.reshape(-1, severity.sizes["judge"])
    judges = [str(j) for j in severity["judge"].values]
    # a likert judge's rating lives in ``rating`` (its severity cell is -2 there: multiverse.core.scales)
    rated = np.zeros(codes.shape, dtype=bool)
    if "rating" in cube:
        rated = cube["rating"].notnull().transpose(*[d for d in severity.dims if d != "judge"], "judge").values.reshape(codes.shape)
    judgments = {
        judge: {
            "valid": int(np.count_nonzero((codes[:, i] >= S.FULL_ADHERENCE) | rated[:, i])),
            "missing": int(np.count_nonzero(codes[:, i] == S.MISSING)),
            "not_applicable": int(np.count_nonzero((codes[:, i] == S.NOT_APPLICABLE) & ~rated[:, i])),
        }
        for i, judge in enumerate(judges)
    }
    reasons: dict[str, dict[str, int]] = {judge: {} for judge in judges}
    if "missing_count" in cube:
        counts = cube["missing_count"].transpose("judge", "missing_reason")
        for judge, row in zip(judges, counts.values):
            reasons[judge] = {str(r): int(n) for r, n in zip(counts["missing_reason"].values, row) if n}
    conversations: dict[str, int] = {}
    if "ended" in cube:
        states, tallies = np.unique(cube["ended"].values.astype(str).ravel(), return_counts=True)
        known = {str(s): int(n) for s, n in zip(states, tallies)}
        conversations = {state: known.pop(state, 0) for state in S.ENDED_STATES}
        if known.pop("", 0):
            conversations |= _absent_counts(cube)
        conversations |= known
    provenance = {key: cube.attrs[key] for key in _PROVENANCE_ATTRS if cube.attrs.get(key) not in (None, "")}
    return CubeSummary(
        sizes={str(dim): int(size) for dim, size in zip(severity.dims, severity.shape)},
        conversations=conversations,
        judgments=judgments,
        missing_reasons=reasons,
        has_truth="truth" in cube,
        provenance=provenance,
        canaries=canary_results(cube),
        live=_live(cube),
    )
