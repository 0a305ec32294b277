"""Judges from an experiment's ``judge`` dim: :class:`~multiverse.core.choices.JudgeSpec` -> :class:`~multiverse.core.judgment.Judge`."""

from __future__ import annotations

from collections.abc import Mapping

from multiverse.core.choices import JudgeSpec
from multiverse.core.judgment import Judge

__all__ = ["make_judge", "make_judges"]


def make_judge(spec: JudgeSpec, *, label: str = "", kinds: Mapping[str, str] | None = None) -> Judge:
    """The judge a spec names.

    Parameters
    ----------
    spec
        A model judge (its model spec), a registered deterministic judge (its
        name) or a panel (its members and combine).
    label
        The judge's label (a panel's warnings name it).
    kinds
        Judge label -> kind, for a panel's members: deterministic members are
        its exact members, and a panel mixing them with model members warns.

    Raises
    ------
    KeyError
        If a deterministic judge is not registered.
    """
    if spec.kind == "model":
        from multiverse.judge.model import ModelJudge

        assert spec.model is not None
        return ModelJudge(spec.model)
    if spec.kind == "deterministic":
        from multiverse.judge.registry import get_judge

        return get_judge(str(spec.name))
    from multiverse.judge.panel import PanelJudge

    member_kinds = [(kinds or {}).get(m, "") for m in spec.members]
    return PanelJudge(
        str(spec.combine),
        spec.members,
        exact=[m for m, k in zip(spec.members, member_kinds) if k == "deterministic"],
        outvote_exact=spec.outvote_exact,
        label=label or "panel",
        kinds=member_kinds if kinds is not None else None,
    )


def make_judges(specs: Mapping[str, JudgeSpec], *, kind: str | None = None) -> dict[str, Judge]:
    """Label -> judge for every spec (of one ``kind`` only, when given), in order."""
    kinds = {label: spec.kind for label, spec in specs.items()}
    return {
        label: make_judge(spec, label=label, kinds=kinds)
        for label, spec in specs.items()
        if kind is None or spec.kind == kind
    }
