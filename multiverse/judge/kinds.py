"""The shipped judge kinds: ``model``, ``deterministic``, ``panel`` and ``pairwise``, registered like any other.

Each kind says how an experiment's YAML value is read (every problem located)
and how the value becomes a :class:`~multiverse.core.judgment.Judge`:

``model``
    A model string, or ``{model: ..., template: ..., params: ..., api_base: ...,
    response_format: ..., seed: ...}``: a :class:`~multiverse.judge.model.ModelJudge`.
``deterministic``
    ``{deterministic: <name>}``: a judge registered by name
    (:func:`multiverse.judge.register_judge`; ``contract`` and ``state_checks``
    are built in), exact in panels.
``panel``
    ``{panel: [labels], combine: any|majority|unanimous, outvote_exact: false}``:
    a :class:`~multiverse.judge.panel.PanelJudge` over other judges of the file.
``pairwise``
    ``{pairwise: <judge model>, against: <reference model>}`` (each a model
    string or a mapping as ``model`` reads it; the judge's may name a
    ``template``): a :class:`~multiverse.judge.pairwise.PairwiseJudge`, whose
    verdicts are on the pairwise scale: each reply against the reference
    model's reply to the same context, principle by principle.

Users add kinds with :func:`multiverse.register_judge_kind`; this module is the
registry's built-ins (:data:`multiverse.core.judgment.JUDGE_KINDS` imports it on
first use).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from multiverse.config.experiment_fields import read_model
from multiverse.config.fields import FieldReader, suggest
from multiverse.core.choices import JudgeSpec, ModelSpec, model_to_yaml
from multiverse.core.judgment import JUDGE_KINDS, Judge, JudgeBuildContext, JudgeKind
from multiverse.core.schema import PANEL_COMBINES

__all__ = [
    "DETERMINISTIC", "MODEL", "PAIRWISE", "PANEL", "PanelSpec", "deterministic_judge", "model_judge", "pairwise_judge",
    "panel_judge",
]


@dataclass(frozen=True)
class PanelSpec:
    """A panel: the judge labels it combines, how, and whether model votes may outvote exact members."""

    members: tuple[str, ...]
    combine: str = "majority"
    outvote_exact: bool = False


def _parse_model(value: Any, reader: FieldReader, field: str) -> ModelSpec | None:
    return read_model(reader, value, field, template=True)


def _build_model(spec: ModelSpec, context: JudgeBuildContext) -> Judge:
    from multiverse.judge.model import ModelJudge

    return ModelJudge(spec)


def _parse_deterministic(value: Any, reader: FieldReader, field: str) -> str | None:
    from multiverse.judge.registry import JUDGES

    data = reader.mapping(value, field, required=("deterministic",))
    name = reader.string(data["deterministic"], f"{field}.deterministic") if data and "deterministic" in data else None
    if name is not None and name not in JUDGES:
        reader.problem(
            f"{field}.deterministic",
            f"no registered judge {name!r}{suggest(name, JUDGES)} (registered: {', '.join(JUDGES)})",
        )
        return None
    return name


def _build_deterministic(name: str, context: JudgeBuildContext) -> Judge:
    from multiverse.judge.registry import get_judge

    return get_judge(name)


def _parse_panel(value: Any, reader: FieldReader, field: str) -> PanelSpec | None:
    data = reader.mapping(value, field, required=("panel",), optional=("combine", "outvote_exact"))
    if data is None:
        return None
    members = reader.names(data.get("panel"), f"{field}.panel", what="judge label") if "panel" in data else None
    combine = reader.one_of(data.get("combine", "majority"), f"{field}.combine", PANEL_COMBINES, what="combine rule")
    outvote = reader.boolean(data.get("outvote_exact", False), f"{field}.outvote_exact")
    if members is None or combine is None or outvote is None:
        return None
    return PanelSpec(members, combine, outvote)


def _build_panel(spec: PanelSpec, context: JudgeBuildContext) -> Judge:
    from multiverse.judge.panel import PanelJudge

    known = context.judges
    exact = [m for m in spec.members if m in known and known[m].exact]
    models = [m for m in spec.members if m in known and known[m].model is not None]
    return PanelJudge(
        spec.combine,
        spec.members,
        exact=exact,
        outvote_exact=spec.outvote_exact,
        label=context.label or "panel",
        models=models if known else None,
    )


def _parse_pairwise(value: Any, reader: FieldReader, field: str) -> Any:
    from multiverse.judge.pairwise import PairwiseSpec

    data = reader.mapping(value, field, required=("pairwise", "against"))
    if data is None or "pairwise" not in data or "against" not in data:
        return None
    model = read_model(reader, data["pairwise"], f"{field}.pairwise", template=True)
    against = read_model(reader, data["against"], f"{field}.against", template=False)
    if model is None or against is None:
        return None
    return PairwiseSpec(model, against)


def _build_pairwise(spec: Any, context: JudgeBuildContext) -> Judge:
    from multiverse.judge.pairwise import PairwiseJudge

    return PairwiseJudge(spec)


def _pairwise_yaml(spec: Any) -> dict[str, Any]:
    return {"pairwise": model_to_yaml(spec.model), "against": model_to_yaml(spec.against)}


def _panel_yaml(spec: PanelSpec) -> dict[str, Any]:
    out: dict[str, Any] = {"panel": list(spec.members), "combine": spec.combine}
    if spec.outvote_exact:
        out["outvote_exact"] = True
    return out


MODEL = JUDGE_KINDS.register("model", JudgeKind(
    "model",
    parse=_parse_model,
    build=_build_model,
    to_yaml=model_to_yaml,
    model_of=lambda spec: spec,
    describe=lambda spec: spec.model,
))
DETERMINISTIC = JUDGE_KINDS.register("deterministic", JudgeKind(
    "deterministic",
    parse=_parse_deterministic,
    build=_build_deterministic,
    to_yaml=lambda name: {"deterministic": name},
    describe=str,
    exact=True,
))
PANEL = JUDGE_KINDS.register("panel", JudgeKind(
    "panel",
    parse=_parse_panel,
    build=_build_panel,
    to_yaml=_panel_yaml,
    members_of=lambda spec: spec.members,
    describe=lambda spec: f"{spec.combine}({','.join(spec.members)})",
))

PAIRWISE = JUDGE_KINDS.register("pairwise", JudgeKind(
    "pairwise",
    parse=_parse_pairwise,
    build=_build_pairwise,
    to_yaml=_pairwise_yaml,
    model_of=lambda spec: spec.model,
    describe=lambda spec: spec.model.model,
    scale_of=lambda spec: "pairwise",
    against_of=lambda spec: spec.against,
))


def model_judge(model: ModelSpec) -> JudgeSpec:
    """The judge spec of a model judge (as ``judge: {label: <model>}`` reads)."""
    return JudgeSpec(MODEL, model, model_to_yaml(model))


def deterministic_judge(name: str) -> JudgeSpec:
    """The judge spec of a registered deterministic judge (``{deterministic: <name>}``)."""
    return JudgeSpec(DETERMINISTIC, name, {"deterministic": name})


def panel_judge(members: Sequence[str], combine: str = "majority", *, outvote_exact: bool = False) -> JudgeSpec:
    """The judge spec of a panel (``{panel: [...], combine: ..., outvote_exact: ...}``)."""
    spec = PanelSpec(tuple(members), combine, outvote_exact)
    return JudgeSpec(PANEL, spec, _panel_yaml(spec))


def pairwise_judge(model: ModelSpec, against: ModelSpec) -> JudgeSpec:
    """The judge spec of a pairwise judge (``{pairwise: <model>, against: <reference model>}``)."""
    from multiverse.judge.pairwise import PairwiseSpec

    spec = PairwiseSpec(model, against)
    return JudgeSpec(PAIRWISE, spec, _pairwise_yaml(spec))
