"""Deterministic judges by name: the ``contract`` oracle built in, users add their own.

A deterministic judge reads finished transcripts and returns severities without
calling a model.  It is a callable::

    judge(transcripts, roles, *, principle_ids, horizon) -> (severity, reasons)

``transcripts`` and ``roles`` are parallel sequences (:class:`~multiverse.transcript.Transcript`,
:class:`~multiverse.specs.Role`); ``severity`` is an int8 array of shape
``(len(transcripts), horizon, len(principle_ids))`` in the cube's codes (-2 where
the judge does not rule, -1 missing); ``reasons[i]`` names why transcript ``i``'s
missing cells are missing (one of :data:`multiverse._schema.MISSING_REASONS`), or
is ``None``.  A judge may return a third element: ``{name: values}``, one string
per transcript, which the run keeps as per-conversation cube variables (the
``contract`` judge's lanes, :data:`multiverse._schema.CONTRACT_VARS`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from multiverse._schema import NOT_APPLICABLE

__all__ = ["DeterministicJudge", "register_judge", "get_judge", "list_judges"]

DeterministicJudge = Callable[..., tuple[np.ndarray, Sequence["str | None"]]]

_REGISTRY: dict[str, DeterministicJudge] = {}


def contract_judge(
    transcripts: Sequence[Any], roles: Sequence[Any], *, principle_ids: Sequence[str], horizon: int
) -> tuple[np.ndarray, list[str | None], dict[str, list[str]]]:
    """The role-contract oracle on every transcript whose role has a contract.

    Transcripts of roles without a contract are not applicable (-2) throughout
    and have empty lanes; the others go to
    :func:`multiverse.judges.contract_judge.contract_verdicts`.
    """
    from multiverse.judges.contract_judge import CONVERSATION_VARIABLES, contract_verdicts

    severity = np.full((len(transcripts), horizon, len(principle_ids)), NOT_APPLICABLE, dtype=np.int8)
    reasons: list[str | None] = [None] * len(transcripts)
    conversation = {name: [""] * len(transcripts) for name in CONVERSATION_VARIABLES}
    ruled = [i for i, role in enumerate(roles) if role.contract is not None]
    if ruled:
        values, found, kept = contract_verdicts(
            [transcripts[i] for i in ruled],
            [roles[i].contract for i in ruled],
            principle_ids=list(principle_ids),
            horizon=horizon,
        )
        severity[ruled] = values
        for i, reason in zip(ruled, found):
            reasons[i] = reason
        for name, column in kept.items():
            for i, value in zip(ruled, column):
                conversation[name][i] = value
    return severity, reasons, conversation


def register_judge(name: str, fn: DeterministicJudge, *, overwrite: bool = False) -> None:
    """Register a deterministic judge under ``name`` (see the module docstring for the call).

    Raises
    ------
    ValueError
        If ``name`` is taken and ``overwrite`` is false, or ``fn`` is not callable.
    """
    if not callable(fn):
        raise ValueError(f"judge {name!r}: expected a callable, got {type(fn).__name__}")
    if name in _REGISTRY and not overwrite:
        raise ValueError(f"judge {name!r} is already registered (pass overwrite=True)")
    _REGISTRY[name] = fn


def get_judge(name: str) -> DeterministicJudge:
    """The deterministic judge registered as ``name``.

    Raises
    ------
    KeyError
        Naming the registered judges, if there is none by that name.
    """
    try:
        return _REGISTRY[name]
    except KeyError:
        raise KeyError(f"no deterministic judge {name!r}; registered: {', '.join(_REGISTRY)}") from None


def list_judges() -> tuple[str, ...]:
    """Names of the registered deterministic judges, built-ins first."""
    return tuple(_REGISTRY)


register_judge("contract", contract_judge)
