"""Experiment files: YAML -> a frozen :class:`Experiment`, with located validation.

An experiment names the values of every dim (systems, roles, user simulators,
judges, conditions, standards, rules), how many replicates and items to run,
an optional campaign budget, exclusions and the offline world's ``sim:`` block.
``experiments/README.md`` documents the format.

Every check runs here, in one pass with the one field reader
(:class:`~multiverse.config.fields.FieldReader`), so a file loads exactly when
it validates and every problem is reported at once: the ``sim:`` block and the
sim models the file names, judge kinds (read by the kind each judge names,
:data:`multiverse.core.judgment.JUDGE_KINDS`, which users extend), standard
and rule names (:mod:`multiverse.core.standards`), and sim players that would
read a real model's text.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from multiverse.config.experiment_fields import (
    DEFAULT_MONITOR,
    DEFAULT_PLANNER,
    MAX_CONVERSATIONS,
    CanaryOptions,
    NO_MONITOR,
    Exclusion,
    campaign_monitor,
    check_panels,
    check_sim_on_real,
    find_experiment_specs,
    integer_field,
    known_roles,
    non_finite,
    positive,
    probed_judges,
    read_canaries,
    read_condition,
    read_exclusions,
    read_judge,
    read_model,
    read_probes,
)
from multiverse.config.fields import FILE_ID, FieldReader, describe, suggest
from multiverse.config.located import Located, Problem, SpecError, load_located, parse_located
from multiverse.config.precision import Precision, read_precision
from multiverse.config.recorded import experiment_rollouts, recorded_dims
from multiverse.config.sim_block import read_sim_block, sim_model_problem
from multiverse.core.canonical import digest as canonical_digest
from multiverse.core.canonical import plain
from multiverse.core.choices import Budget, Condition, JudgeSpec, ModelSpec, model_to_yaml
from multiverse.core.standards import RULES, STANDARDS

__all__ = [
    "Campaign",
    "Exclusion",
    "Experiment",
    "find_experiment_specs",
    "load_experiment",
    "parse_experiment",
    "validate_experiment",
]

TOP_KEYS = (
    "name", "description", "roles", "systems", "dims", "replicates", "items", "budget", "campaign",
    "exclusions", "sim", "seed", "concurrency", "rate_limits", "max_calls", "max_cost_usd", "cache", "specs",
    "allow_sim_on_real", "timeout_s", "rollouts", "canaries", "precision",
)
DIM_KEYS = ("user_sim", "judge", "judge_probe", "condition", "standard", "rule")

@dataclass(frozen=True)
class Campaign:
    """The parts of a rollout that are not dims: planner, monitor, online judge label."""

    planner: ModelSpec = ModelSpec(DEFAULT_PLANNER)
    monitor: ModelSpec | None = ModelSpec(DEFAULT_MONITOR)
    """``None`` (``monitor: none`` in YAML): no consistency monitor; user turns go out unchecked and untagged."""
    judge: str = ""


@dataclass(frozen=True)
class Experiment:
    """One experiment: the labelled values of every dim and how to run them.

    Mappings are label -> value in file order; ``standards`` and ``rules`` are
    ``None`` for "every registered one".  ``rollouts`` names a JSONL file of
    recorded conversations to judge instead of generating any
    (:mod:`multiverse.config.recorded`).  ``judges`` holds the judges of
    ``dims.judge`` followed by the probed judges ``dims.judge_probe`` makes
    (``judge_probes``, label -> :class:`~multiverse.core.probes.Probe`); ``canaries``
    says which judges judge the roles' canaries (``None``: none).  Build it
    with :func:`load_experiment`.
    """

    name: str
    roles: tuple[str, ...]
    systems: Mapping[str, ModelSpec]
    user_sims: Mapping[str, ModelSpec]
    judges: Mapping[str, JudgeSpec]
    conditions: Mapping[str, Condition]
    standards: tuple[str, ...] | None = None
    rules: tuple[str, ...] | None = None
    replicates: int = 1
    items: int | None = None
    budget: Budget | None = None
    campaign: Campaign = Campaign()
    exclusions: tuple[Exclusion, ...] = ()
    sim: Mapping[str, Any] | None = None
    seed: int = 0
    concurrency: int = 16
    rate_limits: Mapping[str, Any] = field(default_factory=dict)
    max_calls: int | None = None
    max_cost_usd: float | None = None
    cache: str | None = None
    specs: str | None = None
    rollouts: str | None = None
    description: str = ""
    allow_sim_on_real: bool = False
    timeout_s: float | None = None
    judge_probes: Mapping[str, Any] = field(default_factory=dict)
    canaries: CanaryOptions | None = None
    precision: Precision | None = None
    """The declared precision target of planned and sequential runs (:mod:`multiverse.config.precision`)."""
    source: str = field(default="", compare=False)
    notes: tuple[Problem, ...] = field(default=(), compare=False)
    """Located remarks on defaults the file relies on (``path:line: field: note``), e.g. ``campaign.monitor``'s."""
    recorded_cells: frozenset[tuple[str, str, int]] | None = field(default=None, compare=False)
    """With ``rollouts:``, the (system, role, item) labels the file holds: only these are planned."""

    def __post_init__(self) -> None:
        for name in ("systems", "user_sims", "judges", "conditions", "rate_limits", "judge_probes"):
            object.__setattr__(self, name, MappingProxyType(dict(getattr(self, name))))
        if self.sim is not None:
            object.__setattr__(self, "sim", MappingProxyType(dict(self.sim)))

    @property
    def items_per_cell(self) -> int:
        """Conversations per (system, role, user_sim, condition, replicate)."""
        if self.budget is not None:
            return self.budget.total
        return 1 if self.items is None else self.items

    @property
    def is_campaign(self) -> bool:
        """Whether any condition searches beyond the seed battery, or a budget is set."""
        return self.budget is not None or any(c.search != "seed_only" for c in self.conditions.values())

    @property
    def horizon(self) -> int:
        """The longest horizon of any condition (the cube's ``turn`` length)."""
        return max(c.horizon for c in self.conditions.values())

    @property
    def base_dir(self) -> Path:
        """The folder relative paths in the file are resolved against."""
        return Path(self.source).parent if self.source else Path.cwd()

    def resolve(self, relative: str) -> Path:
        """A path from the file, resolved against :attr:`base_dir`."""
        path = Path(os.path.expanduser(relative))
        return path if path.is_absolute() else self.base_dir / path

    def specs_dir(self) -> Path:
        """The specs folder this experiment's roles come from (see :func:`find_experiment_specs`)."""
        return find_experiment_specs(self.base_dir if self.source else None, self.specs)

    def to_dict(self) -> dict[str, Any]:
        """The experiment in file form (plain JSON types); ``parse_experiment`` reads it back."""

        dims: dict[str, Any] = {
            "user_sim": {k: model_to_yaml(v) for k, v in self.user_sims.items()},
            "judge": {k: v.to_yaml() for k, v in self.judges.items() if v.kind != "probe"},
            "condition": {
                k: {"horizon": c.horizon, "search": c.search, "pressure": c.pressure}
                for k, c in self.conditions.items()
            },
        }
        if self.judge_probes:
            dims["judge_probe"] = {k: probe.to_yaml() for k, probe in self.judge_probes.items()}
        if self.standards is not None:
            dims["standard"] = list(self.standards)
        if self.rules is not None:
            dims["rule"] = list(self.rules)
        out: dict[str, Any] = {
            "name": self.name,
            "roles": list(self.roles),
            "systems": {k: model_to_yaml(v) for k, v in self.systems.items()},
            "dims": dims,
            "replicates": self.replicates,
            "seed": self.seed,
            "concurrency": self.concurrency,
            "campaign": {
                "planner": model_to_yaml(self.campaign.planner),
                "monitor": NO_MONITOR if self.campaign.monitor is None else model_to_yaml(self.campaign.monitor),
                "judge": self.campaign.judge,
            },
        }
        optional = {
            "description": self.description or None,
            "items": self.items,
            "budget": None
            if self.budget is None
            else {"rounds": self.budget.rounds, "conversations": self.budget.conversations},
            "exclusions": [e.to_dict() for e in self.exclusions] or None,
            "sim": plain(self.sim) if self.sim is not None else None,
            "rate_limits": plain(self.rate_limits) or None,
            "max_calls": self.max_calls,
            "max_cost_usd": self.max_cost_usd,
            "cache": self.cache,
            "specs": self.specs,
            "allow_sim_on_real": True if self.allow_sim_on_real else None,
            "timeout_s": self.timeout_s,
            "rollouts": self.rollouts,
            "canaries": None if self.canaries is None else self.canaries.to_dict(),
            "precision": self.precision.to_dict() if self.precision is not None else None,
        }
        out.update({k: v for k, v in optional.items() if v is not None})
        return out

    def named_models(self) -> Iterator[tuple[str, ModelSpec]]:
        """Every model the experiment may call, with the field that names it.

        A ``rollouts:`` experiment calls only its model judges: its systems'
        model strings are labels and no user simulator, planner or monitor runs,
        so none of them needs credentials or an entry in the ``sim:`` block.
        """
        if self.rollouts is None:
            for label, spec in self.systems.items():
                yield f"systems.{label}", spec
            for label, spec in self.user_sims.items():
                yield f"dims.user_sim.{label}", spec
        for label, judge in self.judges.items():
            if judge.model is not None and judge.kind != "probe":
                yield f"dims.judge.{label}", judge.model
            if judge.against is not None and judge.kind != "probe":
                yield f"dims.judge.{label}.against", judge.against
        if self.rollouts is None:
            yield "campaign.planner", self.campaign.planner
            if self.campaign.monitor is not None:
                yield "campaign.monitor", self.campaign.monitor

    def digest(self) -> str:
        """sha256 of the canonical JSON of :meth:`to_dict`."""
        return canonical_digest(self.to_dict())


def _parse(located: Located, *, check_roles: bool) -> tuple[Experiment | None, list[Problem]]:
    reader = FieldReader(located)
    top = reader.mapping(located.data, "", optional=TOP_KEYS, what="an experiment mapping")
    if top is None:
        return None, reader.problems
    non_finite(reader, located.data)
    recorded = None
    if "rollouts" in top and reader.string(top.get("rollouts"), "rollouts") is not None:
        base = Path(located.path).parent if located.path != "<string>" else Path.cwd()
        recorded = experiment_rollouts(top["rollouts"], base=base, reader=reader)
    generated_keys = ("roles", "systems") if "rollouts" not in top else ()
    for required in ("name", *generated_keys, "dims"):
        if required not in top:
            reader.problem(required, f"missing required key '{required}'")
    name = reader.string(top["name"], "name") if "name" in top else None
    roles = reader.names(top["roles"], "roles", what="role") if "roles" in top else None
    for i, role in enumerate(roles or ()):
        if not FILE_ID.match(role):
            reader.problem(f"roles.{i}", "a role id names a file: expected letters, digits, '_', '.', '-' "
                           f"(not starting with '.' or '-', at most 128), got {describe(role)}")
    systems = reader.each(top, "systems", "systems", lambda v, f: read_model(reader, v, f, template=False), what="system label")
    dims = (reader.mapping(top["dims"], "dims", optional=DIM_KEYS) or {}) if "dims" in top else {}
    if isinstance(top.get("dims"), Mapping):
        for required in ("user_sim", "judge", "condition") if "rollouts" not in top else ("judge",):
            if required not in dims:
                reader.problem(f"dims.{required}", f"missing required key '{required}'")
    user_sims = reader.each(dims, "user_sim", "dims.user_sim", lambda v, f: read_model(reader, v, f, template=True), what="user_sim label")
    judges = reader.each(dims, "judge", "dims.judge", lambda v, f: read_judge(reader, v, f), what="judge label")
    conditions = reader.each(dims, "condition", "dims.condition", lambda v, f: read_condition(reader, v, f), what="condition label")
    if recorded is not None:
        roles, systems, user_sims, conditions = recorded_dims(
            recorded, reader=reader, roles=roles, systems=systems if "systems" in top else None,
            user_sims=user_sims, conditions=conditions,
        )
    check_panels(reader, judges)
    probes = read_probes(reader, dims["judge_probe"]) if "judge_probe" in dims else {}
    canaries = read_canaries(reader, top.get("canaries"), judges)
    chosen = {kind: _scoring_names(reader, dims, kind) for kind in ("standard", "rule")}

    replicates = integer_field(reader, top.get("replicates", 1), "replicates")
    items = reader.optional(top, "items", lambda v, f: integer_field(reader, v, f))
    if recorded is not None:
        if items is not None and items < recorded.items:
            reader.problem("items", f"the rollouts file uses items up to {recorded.items - 1}; expected at least {recorded.items}")
        items = max(items or 0, recorded.items)
        if top.get("budget") is not None:
            reader.problem("budget", "not used when rollouts: is set (conversations are read, not generated)")
    budget = None
    if top.get("budget") is not None:
        data = reader.mapping(top["budget"], "budget", optional=("rounds", "conversations")) or {}
        rounds = integer_field(reader, data.get("rounds", 8), "budget.rounds")
        per_round = integer_field(reader, data.get("conversations", 30), "budget.conversations")
        if rounds is not None and per_round is not None:
            budget = Budget(rounds=rounds, conversations=per_round)
        if items is not None:
            reader.problem("items", "not used when budget: is set (every cell runs rounds x conversations)")

    model_judges = [label for label, spec in judges.items()
                    if spec is not None and spec.model is not None and spec.scale == "severity"]
    campaign_data = reader.mapping(top.get("campaign") or {}, "campaign", optional=("planner", "monitor", "judge")) or {}
    planner = read_model(reader, campaign_data.get("planner", DEFAULT_PLANNER), "campaign.planner", template=True)
    monitor_value, notes = campaign_monitor(located, campaign_data, user_sims, recorded=recorded is not None)
    monitor = None if monitor_value == NO_MONITOR else read_model(reader, monitor_value, "campaign.monitor", template=True)
    campaign_judge = campaign_data.get("judge", model_judges[0] if model_judges else "")
    if "judge" in campaign_data:
        if campaign_judge not in judges:
            reader.problem("campaign.judge", f"{campaign_judge!r} is not a judge label{suggest(str(campaign_judge), judges)} (expected one of {', '.join(judges)})")
        elif campaign_judge not in model_judges:
            reader.problem("campaign.judge", f"{campaign_judge!r} is not a model judge of severity; the online judge "
                                             "must call a model and judge each reply on its own")
    elif not model_judges and "judge" in dims and "rollouts" not in top:
        reader.problem("dims.judge", "at least one model judge is needed as the campaign's online judge")

    labels = {
        "system": tuple(systems),
        "role": roles or (),
        "user_sim": tuple(user_sims),
        "condition": tuple(conditions),
        "judge": tuple(judges),
    }
    exclusions = read_exclusions(reader, top["exclusions"], labels) if top.get("exclusions") is not None else ()
    precision = None
    if top.get("precision") is not None:
        cells = [f"{r}/{u}/{c}" for r in roles or () for u in user_sims for c in conditions]
        precision = read_precision(
            reader, top["precision"], systems=tuple(systems), judges=tuple(judges),
            standards=chosen["standard"] or STANDARDS.names(), cells=cells, pool=items or 1,
            seed_battery=budget is None and recorded is None
            and all(c is None or c.search == "seed_only" for c in conditions.values()),
        )

    sim = top.get("sim")
    sim_config = read_sim_block(reader, sim) if sim is not None else read_sim_block(reader, None)
    seed = integer_field(reader, top.get("seed", 0), "seed")
    concurrency = integer_field(reader, top.get("concurrency", 16), "concurrency")
    rate_limits = reader.mapping(top.get("rate_limits") or {}, "rate_limits", any_keys=True) or {}
    for pattern, limit in list(rate_limits.items()):
        field = f"rate_limits.{pattern}"
        limit = reader.mapping(limit, field, optional=("rpm", "tpm")) or {}
        rate_limits[pattern] = {key: positive(reader, value, f"{field}.{key}") for key, value in limit.items()}
    max_calls = reader.optional(top, "max_calls", lambda v, f: integer_field(reader, v, f))
    max_cost = reader.optional(top, "max_cost_usd", lambda v, f: reader.number(v, f, low=0))
    timeout_s = reader.optional(top, "timeout_s", lambda v, f: positive(reader, v, f))
    cache = reader.optional(top, "cache", reader.string)
    specs = reader.optional(top, "specs", reader.string)
    if cache is not None and "\0" in cache:
        reader.problem("cache", "expected a path, got text with a NUL character")
        cache = None
    if specs is not None and "\0" in specs:
        reader.problem("specs", "expected a path, got text with a NUL character")
        specs = None
    description = top.get("description", "")
    if not isinstance(description, str):
        reader.expected("description", "a string", description)
        description = ""
    allow_sim_on_real = reader.boolean(top.get("allow_sim_on_real", False), "allow_sim_on_real") or False
    if check_roles and roles:
        known_roles(reader, roles, specs)
    per_cell = budget.total if budget is not None else (items or 1)
    planned = math.prod(len(x) for x in (systems, roles or (), user_sims, conditions)) * (replicates or 1) * per_cell
    if planned > MAX_CONVERSATIONS:
        reader.problem("", f"the experiment plans {planned:,} conversations; at most {MAX_CONVERSATIONS:,} are allowed")

    parts = [name, roles, replicates, seed, concurrency, planner]
    values = [*systems.values(), *user_sims.values(), *judges.values(), *conditions.values()]
    if reader.problems or any(p is None for p in parts + values):
        return None, reader.problems
    assert name and roles and replicates and concurrency and planner and seed is not None
    experiment = Experiment(
        name=name,
        roles=roles,
        systems=systems,
        user_sims=user_sims,
        judges={**judges, **probed_judges(reader, judges, probes)},
        conditions=conditions,
        standards=chosen["standard"],
        rules=chosen["rule"],
        replicates=replicates,
        items=items,
        budget=budget,
        campaign=Campaign(planner=planner, monitor=monitor, judge=campaign_judge),
        exclusions=exclusions,
        sim=sim,
        seed=seed,
        concurrency=concurrency,
        rate_limits=rate_limits,
        max_calls=max_calls,
        max_cost_usd=max_cost,
        cache=cache,
        specs=specs,
        rollouts=top.get("rollouts") if recorded is not None else None,
        description=description,
        allow_sim_on_real=allow_sim_on_real,
        timeout_s=timeout_s,
        judge_probes=probes,
        canaries=canaries,
        precision=precision,
        source=located.path if located.path != "<string>" else "",
        notes=notes,
        recorded_cells=None if recorded is None else frozenset((c.system, c.role, c.item) for c in recorded.conversations),
    )
    if sim_config is not None:
        for field, spec in experiment.named_models():
            if spec.is_sim:
                problem = sim_model_problem(sim_config, spec.model)
                if problem is not None:
                    reader.problem(field, f"{problem[0]}: {problem[1]}")
    check_sim_on_real(reader, experiment)
    return (None if reader.problems else experiment), reader.problems


def _scoring_names(reader: FieldReader, dims: Mapping[str, Any], kind: str) -> tuple[str, ...] | None:
    """The registered standards or rules ``dims.<kind>`` chooses (``None``: every registered one)."""
    if kind not in dims:
        return None
    names = reader.names(dims[kind], f"dims.{kind}", what=kind)
    known = (STANDARDS if kind == "standard" else RULES).names()
    for i, value in enumerate(names or ()):
        if value not in known:
            reader.problem(f"dims.{kind}.{i}", f"unknown {kind} {value!r}{suggest(value, known)} (registered: {', '.join(known)})")
    return names


def validate_experiment(path: str | Path) -> list[Problem]:
    """Every problem in an experiment file, each located as ``path:line: field: message``.

    Returns
    -------
    list of Problem
        Empty when the file is valid (then :func:`load_experiment` loads it).
    """
    try:
        located = load_located(path)
    except SpecError as exc:
        return exc.problems
    return _parse(located, check_roles=True)[1]


def load_experiment(path: str | Path) -> Experiment:
    """Read an experiment file, running every check ``multiverse validate`` runs.

    Parameters
    ----------
    path
        An experiment YAML file.

    Returns
    -------
    Experiment

    Raises
    ------
    SpecError
        Carrying every problem :func:`validate_experiment` reports, when there is one.
    """
    experiment, problems = _parse(load_located(path), check_roles=True)
    if problems or experiment is None:
        raise SpecError(problems)
    return experiment


def parse_experiment(data: str | Mapping[str, Any], *, source: str | Path = "") -> Experiment:
    """An :class:`Experiment` from YAML text or an already-parsed mapping.

    ``source`` names the file relative paths resolve against (and that problems
    cite); roles are not looked up on disk here, as the data may come from a
    cube's provenance rather than a file.
    """
    text = data if isinstance(data, str) else json.dumps(plain(data))
    experiment, problems = _parse(parse_located(text, str(source) or "<string>"), check_roles=False)
    if problems or experiment is None:
        raise SpecError(problems)
    return experiment
