"""The ``Judge`` protocol: what every judge is, and the one function that runs judges.

A judge maps a transcript to, per assistant turn and principle, a severity in
the cube's codes (0 full adherence, 1 partial deviation, 2 clear breach, -1
missing, -2 not applicable) with a reason where it gives one and a missing
code where it gives no verdict.  Its verdict at turn ``t`` reads the transcript
through assistant turn ``t`` only (a prefix), so an online judge during a
campaign and the same judge on the finished transcript agree.

Model judges (:class:`multiverse.judge.model.ModelJudge`), deterministic judges
(the role-contract oracle and the ones users register,
:mod:`multiverse.judge.registry`) and panels
(:class:`multiverse.judge.panel.PanelJudge`) all implement :class:`Judge`.
:func:`judge_transcripts` runs a set of judges over transcripts, panels after
their members; the run layer fills the cube from it and the campaign's online
judge goes through it as well.  This module sits below the campaign and run
layers, which therefore depend on the protocol only, never on a judge module.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from multiverse.core.registry import Registry
from multiverse.core.schema import MISSING, MISSING_REASONS, NOT_APPLICABLE
from multiverse.core.transcript import Transcript

__all__ = [
    "JUDGE_KINDS",
    "NO_REASON",
    "REASON_CODES",
    "Judge",
    "JudgeBuildContext",
    "JudgeContext",
    "JudgeKind",
    "Judgment",
    "judge_transcripts",
    "members_of",
    "register_judge_kind",
]

NO_REASON = -1
"""Missing code of a cell that is not missing."""
REASON_CODES = {reason: code for code, reason in enumerate(MISSING_REASONS)}
"""Missing reason -> its code, the index into :data:`multiverse.core.schema.MISSING_REASONS`."""


@dataclass(frozen=True)
class Judgment:
    """One judge's verdicts on one transcript.

    Attributes
    ----------
    severity
        int8, shape ``(horizon, n_principles)`` in the cube's codes; turns past
        the conversation's end and principles the judge does not rule on are -2.
    missing
        int8 of the same shape: where ``severity`` is -1, the code of why
        (:data:`REASON_CODES`), else :data:`NO_REASON`.
    reasons
        ``(turn, principle) -> text``: the judge's stated reason, where it gave
        one (``turn`` is the 1-based assistant turn).
    conversation
        ``{variable: text}``: per-conversation results the run keeps as cube
        variables (the contract judge's lane, context error and review reason,
        :data:`multiverse.core.schema.CONTRACT_VARS`).
    unparsed
        ``turn -> text``: the raw reply of every turn whose answer did not parse
        (kept so ``multiverse show --raw`` can show it).
    """

    severity: np.ndarray
    missing: np.ndarray
    reasons: Mapping[tuple[int, str], str] = field(default_factory=dict)
    conversation: Mapping[str, str] = field(default_factory=dict)
    unparsed: Mapping[int, str] = field(default_factory=dict)

    @classmethod
    def not_applicable(cls, horizon: int, n_principles: int) -> Judgment:
        """A judgment that rules on nothing (every cell -2)."""
        shape = (horizon, n_principles)
        return cls(np.full(shape, NOT_APPLICABLE, dtype=np.int8), np.full(shape, NO_REASON, dtype=np.int8))

    @classmethod
    def from_severity(
        cls, severity: np.ndarray, reason: str | None = None, *, conversation: Mapping[str, str] | None = None
    ) -> Judgment:
        """A judgment from severities alone; missing cells get the code of ``reason`` (default ``no_verdict``)."""
        values = np.asarray(severity, dtype=np.int8)
        code = REASON_CODES.get(reason or "no_verdict", REASON_CODES["no_verdict"])
        missing = np.where(values == MISSING, code, NO_REASON).astype(np.int8)
        return cls(values, missing, conversation=dict(conversation or {}))

    def reason_rows(self, principle_ids: Sequence[str]) -> list[tuple[int, str, str]]:
        """``(turn, principle, reason)`` rows, in turn then principle order."""
        order = {p: j for j, p in enumerate(principle_ids)}
        keys = sorted(self.reasons, key=lambda k: (k[0], order.get(k[1], len(order))))
        return [(turn, principle, self.reasons[(turn, principle)]) for turn, principle in keys]


@dataclass(frozen=True)
class JudgeContext:
    """What a judge is told besides the transcripts.

    Attributes
    ----------
    principle_ids
        The principle columns of every judgment, in order.
    horizon
        Assistant turns judged (the judgments' row count); later turns are not.
    client
        The model client (:class:`multiverse.llm.Client`), for judges that call
        a model; ``None`` where no model may be called.
    replicate
        Replicate index (n judgments of one turn are n requests).
    members
        For panels: member label -> its judgments of the same transcripts
        (``None`` where the member did not judge that transcript).
    system
        The model (:class:`~multiverse.core.choices.ModelSpec`) whose replies
        are judged, where one system wrote them all (``None`` otherwise); a
        judge that is told who wrote a reply (the ``reveal`` probe) reads it here.
    """

    principle_ids: tuple[str, ...]
    horizon: int
    client: Any = None
    replicate: int = 0
    members: Mapping[str, Sequence[Judgment | None]] = field(default_factory=dict)
    system: Any = None


@runtime_checkable
class Judge(Protocol):
    """A judge: transcripts in, one :class:`Judgment` per transcript out.

    An object with :meth:`judge` is a judge.  One that combines other judges'
    judgments (a panel) also has ``members``: the labels of the judges it
    combines, whose judgments it finds in ``context.members``; without the
    attribute a judge combines none.

    A judge reaches an experiment through a judge kind
    (:func:`register_judge_kind`) or, for a deterministic judge, by name
    (:func:`multiverse.judge.register_judge`, named as ``{deterministic: <name>}``).
    """

    async def judge(
        self, transcripts: Sequence[Transcript], *, roles: Sequence[Any], context: JudgeContext
    ) -> list[Judgment]:
        """One judgment per transcript, shaped ``(context.horizon, len(context.principle_ids))``.

        ``roles[i]`` is the role specification (:class:`multiverse.config.specs.Role`)
        of ``transcripts[i]``.
        """
        ...


async def judge_transcripts(
    judges: Mapping[str, Judge],
    transcripts: Sequence[Transcript],
    *,
    roles: Sequence[Any],
    principle_ids: Sequence[str],
    horizon: int,
    client: Any = None,
    replicate: int = 0,
    planned: Mapping[str, Sequence[bool]] | None = None,
    known: Mapping[str, Sequence[Judgment | None]] | None = None,
    system: Any = None,
) -> dict[str, list[Judgment | None]]:
    """Every judge's judgments of every transcript: the one judging path.

    Judges that combine no others run concurrently first; panels then combine
    their members' judgments (from this call or from ``known``).

    Parameters
    ----------
    judges
        Label -> judge.
    transcripts, roles
        Parallel sequences: the conversations and their role specifications.
    principle_ids
        The principle columns of every judgment.
    horizon
        Assistant turns judged.
    client
        The model client, for model judges.
    replicate
        Replicate index of the judge requests.
    planned
        Label -> one flag per transcript; a transcript not planned for a
        judge is not judged by it (``None`` in its list).  Default: all planned.
    known
        Judgments already made (label -> per transcript), which panels may combine.
    system
        The model that wrote every judged reply, when one did (:attr:`JudgeContext.system`).

    Returns
    -------
    dict
        Label -> one :class:`Judgment` (or ``None``, not planned) per transcript.

    Raises
    ------
    ValueError
        If a judgment has the wrong shape, or a panel names a member that was not judged.
    """
    principles = tuple(principle_ids)
    n = len(transcripts)
    if len(roles) != n:
        raise ValueError(f"judge_transcripts: {len(roles)} roles for {n} transcripts")
    chosen = {
        label: [i for i in range(n) if planned is None or label not in planned or planned[label][i]]
        for label in judges
    }
    out: dict[str, list[Judgment | None]] = {}

    async def one(label: str, judge: Judge, members: Mapping[str, Sequence[Judgment | None]]) -> None:
        picked = chosen[label]
        context = JudgeContext(
            principle_ids=principles,
            horizon=horizon,
            client=client,
            replicate=replicate,
            members={m: [values[i] for i in picked] for m, values in members.items()},
            system=system,
        )
        found = await judge.judge([transcripts[i] for i in picked], roles=[roles[i] for i in picked], context=context) if picked else []
        if len(found) != len(picked):
            raise ValueError(f"judge {label!r}: {len(found)} judgments for {len(picked)} transcripts")
        row: list[Judgment | None] = [None] * n
        for i, judgment in zip(picked, found):
            if judgment.severity.shape != (horizon, len(principles)) or judgment.missing.shape != judgment.severity.shape:
                raise ValueError(
                    f"judge {label!r}: judgment of shape {judgment.severity.shape}, expected {(horizon, len(principles))}"
                )
            row[i] = judgment
        out[label] = row

    plain = {label: judge for label, judge in judges.items() if not members_of(judge)}
    await asyncio.gather(*(one(label, judge, {}) for label, judge in plain.items()))
    seen = {**dict(known or {}), **out}
    for label, judge in judges.items():
        if label in plain:
            continue
        absent = [m for m in members_of(judge) if m not in seen]
        if absent:
            raise ValueError(f"panel {label!r}: members {absent} were not judged")
        await one(label, judge, {m: seen[m] for m in members_of(judge)})
    return {label: out[label] for label in judges}


def members_of(judge: Judge) -> tuple[str, ...]:
    """The labels of the judges ``judge`` combines (a panel's members); empty for every other judge."""
    return tuple(getattr(judge, "members", ()))


# --- judge kinds ------------------------------------------------------------------------


@dataclass(frozen=True)
class JudgeBuildContext:
    """What building one judge of an experiment may read.

    Attributes
    ----------
    label
        The judge's label in the experiment.
    judges
        Every judge of the experiment, label -> :class:`~multiverse.core.choices.JudgeSpec`
        (a panel reads its members' kinds here).
    """

    label: str
    judges: Mapping[str, Any] = field(default_factory=dict)


def _no_model(spec: Any) -> None:
    return None


def _no_members(spec: Any) -> tuple[str, ...]:
    return ()


def _severity_scale(spec: Any) -> str:
    return "severity"


@dataclass(frozen=True)
class JudgeKind:
    """A kind of judge the ``judge`` dim may name: how its YAML value is read and how it becomes a :class:`Judge`.

    An experiment names a kind by the key its YAML value carries
    (``{deterministic: contract}``, ``{panel: [a, b], combine: any}``,
    ``{model: ..., template: ...}``, or a plain model string for ``model``).

    Attributes
    ----------
    name
        The kind's name, the key that names it in YAML and the cube's ``judge_kind``.
    parse
        ``parse(value, reader, field) -> spec``: reads the YAML value, recording
        every problem on ``reader`` (``reader.problem(field, message)``) and
        returning ``None`` when there was one.
    build
        ``build(spec, context) -> Judge`` with a :class:`JudgeBuildContext`.
    to_yaml
        ``spec -> value``: the spec as YAML would write it (``None``: the value as
        it was read), for the experiment's record and its digest.
    model_of
        ``spec -> ModelSpec | None``: the model a judge of this kind calls
        through the client (model judges); ``None`` for judges that call none.
    members_of
        ``spec -> labels`` of the judges it combines (panels).
    describe
        ``spec -> str`` for the cube's ``judge_model`` coordinate (default: the kind's name).
    exact
        Whether a panel treats this kind's clear breaches as exact (they stand
        unless the panel lets model votes outvote them).
    scale_of
        ``spec -> scale``: the label scale of the judge's verdicts
        (:mod:`multiverse.core.scales`; default ``severity``; a ``pairwise``
        judge compares each reply with a reference reply).
    against_of
        ``spec -> ModelSpec | None``: the reference model a pairwise judge
        compares each reply with (``None``: it compares none).
    """

    name: str
    parse: Callable[[Any, Any, str], Any]
    build: Callable[[Any, JudgeBuildContext], Judge]
    to_yaml: Callable[[Any], Any] | None = None
    model_of: Callable[[Any], Any] = _no_model
    members_of: Callable[[Any], tuple[str, ...]] = _no_members
    describe: Callable[[Any], str] | None = None
    exact: bool = False
    scale_of: Callable[[Any], str] = _severity_scale
    against_of: Callable[[Any], Any] = _no_model


JUDGE_KINDS: Registry[JudgeKind] = Registry("judge kind", builtins="multiverse.judge.kinds")
"""The registered judge kinds: ``model``, ``deterministic``, ``panel`` and ``pairwise`` built in (:mod:`multiverse.judge.kinds`)."""


class _UserParse:
    """A user's ``parse(value) -> spec`` as a kind's located parser: an exception is a problem at the field."""

    def __init__(self, parse: Callable[[Any], Any]):
        self.parse = parse

    def __call__(self, value: Any, reader: Any, field: str) -> Any:
        try:
            return self.parse(value)
        except (ValueError, TypeError, KeyError) as exc:
            message = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
            reader.problem(field, str(message))
            return None


def register_judge_kind(
    name: str,
    *,
    parse: Callable[[Any], Any],
    build: Callable[[Any, JudgeBuildContext], Judge],
    describe: Callable[[Any], str] | None = None,
    exact: bool = False,
    overwrite: bool = False,
) -> JudgeKind:
    """Register a kind of judge that experiment files can name, from code outside the package.

    Parameters
    ----------
    name
        The kind's name; an experiment names it as a key of a judge's YAML
        mapping: ``judge: {mine: {<name>: ..., other_option: ...}}``.
    parse
        ``parse(value) -> spec``: validates the judge's YAML value (the whole
        mapping) and returns what ``build`` needs; a ``ValueError``,
        ``TypeError`` or ``KeyError`` it raises becomes a located problem of
        ``multiverse validate`` (``path:line: dims.judge.<label>: message``).
    build
        ``build(spec, context) -> Judge``: an object with
        ``async judge(transcripts, *, roles, context) -> list[Judgment]``;
        ``context`` is a :class:`JudgeBuildContext`.
    describe
        ``spec -> str`` for the cube's ``judge_model`` coordinate (default: ``name``).
    exact
        Whether panels treat its clear breaches as exact, as they do the
        role-contract oracle's.
    overwrite
        Replace a kind registered under the same name.

    Returns
    -------
    JudgeKind

    Examples
    --------
    >>> kind = register_judge_kind("always_clean", parse=lambda value: None,
    ...                            build=lambda spec, context: my_judge)  # doctest: +SKIP
    """
    kind = JudgeKind(name, parse=_UserParse(parse), build=build, describe=describe, exact=exact)
    JUDGE_KINDS.register(name, kind, overwrite=overwrite)
    return kind
