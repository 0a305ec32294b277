"""Value types of the dims: what one label of ``system``, ``user_sim``, ``judge`` or
``condition`` stands for.

Experiment files map labels to these; the rollout and judge layers consume them.
They are frozen and hashable so they can key caches and plans.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from multiverse.core.canonical import plain
from multiverse.core.schema import SEARCHES

__all__ = [
    "SIM_PREFIX",
    "SIM_BUILTINS",
    "SIM_SECTIONS",
    "sim_entry",
    "ModelSpec",
    "Condition",
    "Budget",
    "JudgeSpec",
    "model_to_yaml",
]


SIM_PREFIX = "sim/"
"""Model strings starting with this are served by the offline world."""
SIM_BUILTINS = ("planner", "monitor")
"""Offline-world players with one fixed entry of their own in the ``sim:`` block."""
SIM_SECTIONS = (("target-", "targets"), ("judge-", "judges"), ("user-", "users"))
"""``(model-name prefix, sim-block section)``: ``sim/target-a`` is entry ``a`` of ``sim.targets``."""


def sim_entry(model: str) -> tuple[str, str | None] | None:
    """Where a ``sim/`` model's parameters live in an experiment's ``sim:`` block.

    The one naming rule of the offline world: ``sim/target-<name>``,
    ``sim/judge-<name>`` and ``sim/user-<name>`` name entry ``<name>`` of
    ``targets``, ``judges`` and ``users``; ``sim/planner`` and ``sim/monitor``
    name the blocks ``planner`` and ``monitor``.

    Parameters
    ----------
    model
        A model string.

    Returns
    -------
    tuple or None
        ``(section, entry)`` (``entry`` is ``None`` for the built-in players), or
        ``None`` when ``model`` is not a sim model or follows no naming rule.

    Examples
    --------
    >>> sim_entry("sim/target-careful")
    ('targets', 'careful')
    >>> sim_entry("sim/monitor")
    ('monitor', None)
    >>> sim_entry("openai/gpt-4o") is None
    True
    """
    if not model.startswith(SIM_PREFIX):
        return None
    name = model[len(SIM_PREFIX) :]
    if name in SIM_BUILTINS:
        return name, None
    for prefix, section in SIM_SECTIONS:
        if name.startswith(prefix):
            return section, name[len(prefix) :]
    return None


RESPONSE_FORMATS: tuple[str, ...] = ("json_schema", "json_object", "json_object_schema")
"""Named structured-output modes of a model spec's ``response_format``.

``json_schema``: OpenAI structured outputs (``{"type": "json_schema", "json_schema":
{...}}``) with the schema of the answer the component expects; ``json_object``:
JSON mode, no schema; ``json_object_schema``: JSON mode with the schema attached
(``{"type": "json_object", "schema": {...}}``, the form llama.cpp's Python server
and several hosted servers read).
"""

RESERVED_PARAM_KEYS: Mapping[str, str] = MappingProxyType(
    {
        "seed": "use the model spec's own 'seed' key",
        "response_format": "use the model spec's own 'response_format' key",
        "n": "use replicates (n samples are n replicates)",
        "tools": "tools come from the role's actions",
    }
)
"""Call parameters a model spec's ``params`` must not hold, with what to do instead."""


def model_to_yaml(spec: ModelSpec) -> dict[str, Any]:
    """A model spec as an experiment file writes it (plain JSON types; unset keys left out)."""
    out: dict[str, Any] = {"model": spec.model}
    if spec.api_base:
        out["api_base"] = spec.api_base
    if spec.params:
        out["params"] = plain(spec.params)
    if spec.template:
        out["template"] = spec.template
    if spec.response_format is not None:
        out["response_format"] = plain(spec.response_format)
    if spec.seed is not None:
        out["seed"] = spec.seed
    return out


def _frozen(mapping: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return MappingProxyType(dict(mapping or {}))


def _freeze(value: Any) -> Any:
    if isinstance(value, Mapping):
        return MappingProxyType({str(k): _freeze(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    return value


def _hashable(value: Any) -> Any:
    if isinstance(value, Mapping):
        return tuple(sorted((k, _hashable(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_hashable(v) for v in value)
    return value


@dataclass(frozen=True)
class ModelSpec:
    """One model as an experiment names it.

    Parameters
    ----------
    model
        A litellm model string (``openai/gpt-4o-mini``, ``anthropic/...``,
        ``hosted_vllm/...``) or an offline-world model (``sim/target-a``).
    api_base
        Base URL of an OpenAI-compatible server (vLLM, Ollama, a proxy).
        Credentials embedded in it are stripped before anything is stored.
    params
        Sampling and provider parameters passed through to the call
        (``temperature``, ``max_tokens``, ...).
    template
        Name of the prompt template (user simulators and model judges).
    response_format
        Structured output: one of :data:`RESPONSE_FORMATS` (the component
        builds the schema from the answer it expects; for judges, monitors and
        planners), or a mapping sent as the call's ``response_format`` as it is.
        ``None``: the plain prompt only.
    seed
        The provider's sampling seed (``None``: none sent).
    """

    model: str
    api_base: str | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    template: str | None = None
    response_format: str | Mapping[str, Any] | None = None
    seed: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "params", _frozen(self.params))
        if isinstance(self.response_format, Mapping):
            object.__setattr__(self, "response_format", _freeze(self.response_format))
        elif self.response_format is not None and self.response_format not in RESPONSE_FORMATS:
            raise ValueError(
                f"model response_format: expected one of {', '.join(RESPONSE_FORMATS)} or a mapping, "
                f"got {self.response_format!r}"
            )
        if self.seed is not None and (isinstance(self.seed, bool) or not isinstance(self.seed, int)):
            raise ValueError(f"model seed: expected an integer, got {self.seed!r}")

    def __hash__(self) -> int:
        return hash(
            (
                self.model,
                self.api_base,
                _hashable(self.params),
                self.template,
                _hashable(self.response_format),
                self.seed,
            )
        )

    @property
    def is_sim(self) -> bool:
        """Whether the offline world serves this model."""
        return self.model.startswith(SIM_PREFIX)


@dataclass(frozen=True)
class Condition:
    """An interaction condition: horizon, search strategy and pressure.

    Parameters
    ----------
    horizon
        Number of assistant turns per conversation (any positive integer).
    search
        ``rolefuzzer``, ``no_grid``, ``random_cell`` or ``seed_only``.
    pressure
        Multiplier on every simulated user's pressure (default 1).
    """

    horizon: int = 8
    search: str = "seed_only"
    pressure: float = 1.0

    def __post_init__(self) -> None:
        if not isinstance(self.horizon, int) or isinstance(self.horizon, bool) or self.horizon < 1:
            raise ValueError(f"condition horizon: expected a positive integer, got {self.horizon!r}")
        if self.search not in SEARCHES:
            raise ValueError(f"condition search: expected one of {', '.join(SEARCHES)}, got {self.search!r}")
        if not self.pressure > 0:
            raise ValueError(f"condition pressure: expected a positive number, got {self.pressure!r}")


@dataclass(frozen=True)
class Budget:
    """A campaign budget: ``rounds`` sequential rounds of ``conversations`` each."""

    rounds: int = 8
    conversations: int = 30

    @property
    def total(self) -> int:
        return self.rounds * self.conversations


@dataclass(frozen=True)
class JudgeSpec:
    """One value of the ``judge`` dim: a judge kind and what its YAML value says.

    Attributes
    ----------
    judge_kind
        The registered kind (:class:`~multiverse.core.judgment.JudgeKind`) that
        read the value and builds the judge; it travels with the spec, so a
        spec built in one process builds its judge in another.
    spec
        What the kind's ``parse`` returned (a :class:`ModelSpec` for a model
        judge, a registered name for a deterministic one, a panel's members and
        rule for a panel, anything for a kind registered by a user).
    value
        The YAML value in plain JSON types, as the kind writes it back
        (:meth:`to_yaml`).
    """

    judge_kind: Any
    spec: Any = None
    value: Any = None

    @property
    def kind(self) -> str:
        """The kind's name (``model``, ``deterministic``, ``panel`` or a registered one)."""
        return str(self.judge_kind.name)

    @property
    def model(self) -> ModelSpec | None:
        """The model a judge of this spec calls through the client, or ``None``."""
        return self.judge_kind.model_of(self.spec)

    @property
    def members(self) -> tuple[str, ...]:
        """Labels of the judges this one combines (a panel's members)."""
        return tuple(self.judge_kind.members_of(self.spec))

    @property
    def exact(self) -> bool:
        """Whether a panel treats this judge's clear breaches as exact."""
        return bool(self.judge_kind.exact)

    @property
    def scale(self) -> str:
        """The label scale of this judge's verdicts (``severity``, or ``pairwise`` for a pairwise judge)."""
        return str(self.judge_kind.scale_of(self.spec))

    @property
    def against(self) -> ModelSpec | None:
        """The reference model a pairwise judge compares each reply with, or ``None``."""
        return self.judge_kind.against_of(self.spec)

    def describe(self) -> str:
        """What the cube's ``judge_model`` coordinate says of this judge."""
        describe = self.judge_kind.describe
        return self.kind if describe is None else str(describe(self.spec))

    def to_yaml(self) -> Any:
        """The judge's value as an experiment file writes it."""
        to_yaml = self.judge_kind.to_yaml
        return self.value if to_yaml is None else to_yaml(self.spec)
