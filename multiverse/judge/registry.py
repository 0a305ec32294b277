"""Deterministic judges by name: the ``contract`` oracle and the ``state_checks`` built in, users add their own.

A deterministic judge reads finished transcripts and returns severities without
calling a model.  It is any :class:`~multiverse.core.judgment.Judge`, or, for brevity,
a plain callable::

    judge(transcripts, roles, *, principle_ids, horizon) -> (severity, reasons)

``transcripts`` and ``roles`` are parallel sequences (:class:`~multiverse.core.transcript.Transcript`,
:class:`~multiverse.config.specs.Role`); ``severity`` is an int8 array of shape
``(len(transcripts), horizon, len(principle_ids))`` in the cube's codes (-2 where
the judge does not rule, -1 missing); ``reasons[i]`` names why transcript ``i``'s
missing cells are missing (one of :data:`multiverse.core.schema.MISSING_REASONS`), or
is ``None``.  Such a callable is registered as a :class:`FunctionJudge`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from multiverse.core.judgment import Judge, JudgeContext, Judgment
from multiverse.core.registry import Registry
from multiverse.core.transcript import Transcript
from multiverse.judge.state_checks import StateChecks

__all__ = [
    "JUDGES",
    "ContractJudge",
    "DeterministicJudge",
    "FunctionJudge",
    "get_judge",
    "list_judges",
    "register_judge",
]

DeterministicJudge = Callable[..., tuple[np.ndarray, Sequence["str | None"]]]
"""The plain-callable form of a deterministic judge (see the module docstring)."""


class FunctionJudge:
    """A :class:`~multiverse.core.judgment.Judge` from a plain callable of the form in the module docstring."""

    def __init__(self, fn: DeterministicJudge):
        self.fn = fn

    def __repr__(self) -> str:
        return f"FunctionJudge({getattr(self.fn, '__name__', self.fn)!r})"

    async def judge(self, transcripts: Sequence[Transcript], *, roles: Sequence[Any], context: JudgeContext) -> list[Judgment]:
        """Call the function on every transcript at once; one judgment per transcript."""
        values, found = self.fn(
            list(transcripts), list(roles), principle_ids=list(context.principle_ids), horizon=context.horizon
        )
        values = np.asarray(values, dtype=np.int8)
        return [Judgment.from_severity(values[i], found[i]) for i in range(len(transcripts))]


class ContractJudge:
    """The role-contract oracle on every transcript whose role has a contract.

    Transcripts of roles without a contract are not applicable (-2) throughout
    and have empty lanes; the others go to
    :func:`multiverse.judge.contract_judge.contract_verdicts` in one vectorised
    batch, whose lanes, context errors and review reasons each judgment carries
    as its ``conversation`` variables.
    """

    def __repr__(self) -> str:
        return "ContractJudge()"

    async def judge(self, transcripts: Sequence[Transcript], *, roles: Sequence[Any], context: JudgeContext) -> list[Judgment]:
        """One judgment per transcript (see the class docstring)."""
        from multiverse.judge.contract_judge import CONVERSATION_VARIABLES, contract_verdicts

        horizon, principles = context.horizon, list(context.principle_ids)
        empty = {name: "" for name in CONVERSATION_VARIABLES}
        out = [
            Judgment.from_severity(Judgment.not_applicable(horizon, len(principles)).severity, conversation=empty)
            for _ in transcripts
        ]
        ruled = [i for i, role in enumerate(roles) if role.contract is not None]
        if ruled:
            values, found, kept = contract_verdicts(
                [transcripts[i] for i in ruled],
                [roles[i].contract for i in ruled],
                principle_ids=principles,
                horizon=horizon,
            )
            for k, i in enumerate(ruled):
                lanes = {name: column[k] for name, column in kept.items()}
                out[i] = Judgment.from_severity(values[k], found[k], conversation=lanes)
        return out


def _as_judge(name: str, value: Any) -> Judge:
    if isinstance(value, Judge):
        return value
    if callable(value):
        return FunctionJudge(value)
    raise ValueError(f"judge {name!r}: expected a Judge or a callable, got {type(value).__name__}")


JUDGES: Registry[Judge] = Registry("deterministic judge", check=_as_judge)
"""The registered deterministic judges, name -> :class:`~multiverse.core.judgment.Judge`."""


def register_judge(name: str, judge: Judge | DeterministicJudge, *, overwrite: bool = False) -> None:
    """Register a deterministic judge under ``name``: a :class:`~multiverse.core.judgment.Judge` or a plain callable.

    Raises
    ------
    ValueError
        If ``name`` is taken and ``overwrite`` is false, or ``judge`` is neither.
    """
    JUDGES.register(name, judge, overwrite=overwrite)


def get_judge(name: str) -> Judge:
    """The deterministic judge registered as ``name`` (a plain callable comes back as a :class:`FunctionJudge`).

    Raises
    ------
    KeyError
        Naming the registered judges, if there is none by that name.
    """
    return JUDGES[name]


def list_judges() -> tuple[str, ...]:
    """Names of the registered deterministic judges, built-ins first."""
    return JUDGES.names()


register_judge("contract", ContractJudge())
register_judge("state_checks", StateChecks())
