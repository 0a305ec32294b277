"""Judge probes: transformations of what a judge reads, crossed with the judges as one more choice.

A probe changes one thing a model judge reads and nothing a principle could
turn on (the reply padded with content-free sentences, the judge prompt
reworded, the target's model revealed, the context cut short, the two
responses of a pairwise comparison shown in the other order).  Judging the
same conversations with and without it measures how far the judge's verdicts
move for reasons that should not move them (:func:`multiverse.analysis.probe_effects`).

An experiment's ``dims.judge_probe`` names probes by label; every model judge
of the probe's scale (or the ``judges`` a probe lists) is crossed with every
probe (severity probes with model judges, the order probe with pairwise judges), each pair a
judge of its own, labelled ``<judge>.<probe>``, whose severities sit on the
cube's ``judge`` dim beside the unprobed judge's, with coordinates
``judge_base`` (the probed judge) and ``judge_probe`` (the probe, ``none``
for an unprobed judge).  That is how the probe dimension is stored: the
cube keeps one ``judge`` dim, so every analysis of judges (agreement,
curves, summaries) reads probed judges as it reads the others.

The kinds of probe are registered (:data:`PROBE_KINDS`, built-ins in
:mod:`multiverse.judge.probes`), as judge kinds are; a kind says how its YAML
value is read and how it builds the probed judge from the probed judge's model.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from multiverse.core.judgment import Judge, JudgeBuildContext, JudgeKind
from multiverse.core.registry import Registry

__all__ = ["NO_PROBE", "PROBE_JUDGE", "PROBE_KINDS", "Probe", "ProbeKind", "ProbedSpec", "probe_label"]

NO_PROBE = "none"
"""The ``judge_probe`` coordinate of an unprobed judge (a probe label may not be ``none``)."""


@dataclass(frozen=True)
class ProbeKind:
    """A kind of probe an experiment's ``dims.judge_probe`` may name.

    Attributes
    ----------
    name
        The key that names the kind in YAML (``{verbosity: 3}``).
    parse
        ``parse(value, reader, field) -> value``: reads the value under the kind's
        key, recording every problem on the field reader, ``None`` when there was one.
    build
        ``build(value, spec) -> Judge``: the probed judge, from what the probed
        judge's kind read (a :class:`~multiverse.core.choices.ModelSpec` for a
        model judge, a :class:`~multiverse.judge.pairwise.PairwiseSpec` for a
        pairwise one).
    scale
        ``severity`` (probes judges of one reply: ``model`` judges) or
        ``pairwise`` (probes comparisons of two replies: ``pairwise`` judges).
    """

    name: str
    parse: Callable[[Any, Any, str], Any]
    build: Callable[[Any, Any], Judge]
    scale: str = "severity"


PROBE_KINDS: Registry[ProbeKind] = Registry("probe kind", builtins="multiverse.judge.probes")
"""The registered probe kinds: ``verbosity``, ``paraphrase``, ``reveal``, ``truncate`` and ``order``."""


@dataclass(frozen=True)
class Probe:
    """One value of ``dims.judge_probe``: a kind, its value, and the judges it probes (``None``: every model judge)."""

    kind: ProbeKind
    value: Any
    judges: tuple[str, ...] | None = None

    def to_yaml(self) -> dict[str, Any]:
        """The probe as an experiment file writes it."""
        out: dict[str, Any] = {self.kind.name: self.value}
        if self.judges is not None:
            out["judges"] = list(self.judges)
        return out


@dataclass(frozen=True)
class ProbedSpec:
    """What a probed judge is: the judge it probes (label and spec) and the probe (label and value).

    ``judge`` is the probed judge's :class:`~multiverse.core.choices.JudgeSpec`.
    """

    base: str
    label: str
    probe: Probe
    judge: Any

    @property
    def model(self) -> Any:
        """The model the probed judge calls (its base judge's)."""
        return self.judge.model


def probe_label(judge: str, probe: str) -> str:
    """The label of ``judge`` probed by ``probe``: ``<judge>.<probe>``."""
    return f"{judge}.{probe}"


def _build(spec: ProbedSpec, context: JudgeBuildContext) -> Judge:
    return spec.probe.kind.build(spec.probe.value, spec.judge.spec)


def _refuse(value: Any, reader: Any, field: str) -> None:
    reader.problem(field, "probed judges come from dims.judge_probe, not from dims.judge")


PROBE_JUDGE = JudgeKind(
    "probe",
    parse=_refuse,
    build=_build,
    to_yaml=lambda spec: {"of": spec.base, "probe": spec.label, "with": spec.probe.to_yaml()},
    model_of=lambda spec: spec.model,
    describe=lambda spec: spec.model.model,
    scale_of=lambda spec: spec.probe.kind.scale,
    against_of=lambda spec: spec.judge.against,
)
"""The judge kind of a probed judge; not registered, so only ``dims.judge_probe`` makes one."""
