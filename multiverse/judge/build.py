"""Judges from an experiment's ``judge`` dim: :class:`~multiverse.core.choices.JudgeSpec` -> :class:`~multiverse.core.judgment.Judge`.

Each spec carries the kind that read it (:class:`~multiverse.core.judgment.JudgeKind`),
whose ``build`` makes the judge; nothing here knows one kind from another.
"""

from __future__ import annotations

from collections.abc import Mapping

from multiverse.core.choices import JudgeSpec
from multiverse.core.judgment import Judge, JudgeBuildContext

__all__ = ["make_judge", "make_judges"]


def make_judge(spec: JudgeSpec, *, label: str = "", judges: Mapping[str, JudgeSpec] | None = None) -> Judge:
    """The judge a spec names.

    Parameters
    ----------
    spec
        One value of the ``judge`` dim.
    label
        The judge's label (a panel's warnings name it).
    judges
        Every judge spec of the experiment, label -> spec (a panel reads its
        members' kinds: exact members and model members).

    Raises
    ------
    KeyError
        If a deterministic judge is not registered.
    """
    return spec.judge_kind.build(spec.spec, JudgeBuildContext(label=label, judges=dict(judges or {})))


def make_judges(specs: Mapping[str, JudgeSpec], *, models: bool | None = None) -> dict[str, Judge]:
    """Label -> judge for every spec, in order (with ``models``, only the model judges, or only the others)."""
    return {
        label: make_judge(spec, label=label, judges=specs)
        for label, spec in specs.items()
        if models is None or (spec.model is not None) == models
    }
