"""Experiment files: YAML -> a frozen :class:`Experiment`, with located validation.

An experiment names the values of every dim (systems, roles, user simulators,
judges, conditions, standards, rules), how many replicates and items to run,
an optional campaign budget, exclusions and the offline world's ``sim:`` block.
``experiments/README.md`` documents the format.

Checks that need a later layer (the ``sim:`` block is the offline world's to
judge; deterministic judge names live in the judge registry) are passed in as
``checks`` callbacks by the layers that own them, so this module stays below
them; :func:`multiverse._run.validate_experiment` applies them all.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from multiverse.config.experiment_fields import (
    MAX_CONVERSATIONS,
    Exclusion,
    _condition,
    _exclusions,
    _judge,
    _kind,
    _known_roles,
    _non_finite,
    _Reader,
    _short,
    find_experiment_specs,
)
from multiverse.config.located import Located, Problem, SpecError, load_located, parse_located
from multiverse.config.recorded import experiment_rollouts, recorded_dims
from multiverse.config.spec_check import FILE_ID
from multiverse.core.choices import Budget, Condition, JudgeSpec, ModelSpec

__all__ = [
    "Campaign",
    "Exclusion",
    "Experiment",
    "ExperimentCheck",
    "find_experiment_specs",
    "load_experiment",
    "parse_experiment",
    "validate_file",
]

TOP_KEYS = (
    "name",
    "description",
    "roles",
    "systems",
    "dims",
    "replicates",
    "items",
    "budget",
    "campaign",
    "exclusions",
    "sim",
    "seed",
    "concurrency",
    "rate_limits",
    "max_calls",
    "max_cost_usd",
    "cache",
    "specs",
    "allow_sim_on_real",
    "timeout_s",
    "rollouts",
)
DIM_KEYS = ("user_sim", "judge", "condition", "standard", "rule")
DEFAULT_PLANNER = "sim/planner"
DEFAULT_MONITOR = "sim/monitor"
NO_MONITOR = "none"
"""``campaign.monitor: none``: run without a consistency monitor (e.g. a model too small to be one)."""

ExperimentCheck = Callable[["Experiment", Located], list[Problem]]
"""A check a later layer adds: the parsed experiment and its located YAML -> problems."""


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
    (:mod:`multiverse.config.recorded`).  Build it with :func:`load_experiment`.
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
    source: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        for name in ("systems", "user_sims", "judges", "conditions", "rate_limits"):
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

        def model(spec: ModelSpec) -> dict[str, Any]:
            out: dict[str, Any] = {"model": spec.model}
            if spec.api_base:
                out["api_base"] = spec.api_base
            if spec.params:
                out["params"] = dict(spec.params)
            if spec.template:
                out["template"] = spec.template
            if spec.response_format is not None:
                out["response_format"] = _plain(spec.response_format)
            if spec.seed is not None:
                out["seed"] = spec.seed
            return out

        def judge(spec: JudgeSpec) -> dict[str, Any]:
            if spec.kind == "model":
                assert spec.model is not None
                return model(spec.model)
            if spec.kind == "deterministic":
                return {"deterministic": spec.name}
            panel: dict[str, Any] = {"panel": list(spec.members), "combine": spec.combine}
            if spec.outvote_exact:
                panel["outvote_exact"] = True
            return panel

        dims: dict[str, Any] = {
            "user_sim": {k: model(v) for k, v in self.user_sims.items()},
            "judge": {k: judge(v) for k, v in self.judges.items()},
            "condition": {
                k: {"horizon": c.horizon, "search": c.search, "pressure": c.pressure}
                for k, c in self.conditions.items()
            },
        }
        if self.standards is not None:
            dims["standard"] = list(self.standards)
        if self.rules is not None:
            dims["rule"] = list(self.rules)
        out: dict[str, Any] = {
            "name": self.name,
            "roles": list(self.roles),
            "systems": {k: model(v) for k, v in self.systems.items()},
            "dims": dims,
            "replicates": self.replicates,
            "seed": self.seed,
            "concurrency": self.concurrency,
            "campaign": {
                "planner": model(self.campaign.planner),
                "monitor": NO_MONITOR if self.campaign.monitor is None else model(self.campaign.monitor),
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
            "sim": _plain(self.sim) if self.sim is not None else None,
            "rate_limits": _plain(self.rate_limits) or None,
            "max_calls": self.max_calls,
            "max_cost_usd": self.max_cost_usd,
            "cache": self.cache,
            "specs": self.specs,
            "allow_sim_on_real": True if self.allow_sim_on_real else None,
            "timeout_s": self.timeout_s,
            "rollouts": self.rollouts,
        }
        out.update({k: v for k, v in optional.items() if v is not None})
        return out

    def digest(self) -> str:
        """sha256 of the canonical JSON of :meth:`to_dict`."""
        text = json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"), default=str)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _parse(located: Located, *, check_roles: bool) -> tuple[Experiment | None, list[Problem]]:
    reader = _Reader(located)
    top = reader.mapping(located.data, "", allowed=TOP_KEYS)
    if not isinstance(located.data, Mapping):
        return None, reader.problems
    _non_finite(reader, located.data)
    recorded = None
    if "rollouts" in top and reader.string(top.get("rollouts"), "rollouts") is not None:
        base = Path(located.path).parent if located.path != "<string>" else Path.cwd()
        recorded = experiment_rollouts(top["rollouts"], base=base, add=reader.add, problems=reader.problems)
    generated_keys = ("roles", "systems") if "rollouts" not in top else ()
    for required in ("name", *generated_keys, "dims"):
        if required not in top:
            reader.add(required, "required key is missing")
    name = reader.string(top.get("name"), "name") if "name" in top else None
    roles = reader.names(top.get("roles"), "roles") if "roles" in top else None
    for i, role in enumerate(roles or ()):
        if not FILE_ID.match(role):
            reader.add(f"roles.{i}", "a role id names a file: expected letters, digits, '_', '.', '-' "
                       f"(not starting with '.' or '-', at most 128), got {_short(role)}")
    systems = reader.each(top, "systems", "systems", lambda v, f: reader.model(v, f, template=False))
    dims = reader.mapping(top.get("dims"), "dims", allowed=DIM_KEYS) if "dims" in top else {}
    if isinstance(top.get("dims"), Mapping):
        for required in ("user_sim", "judge", "condition") if "rollouts" not in top else ("judge",):
            if required not in dims:
                reader.add(f"dims.{required}", "required key is missing")
    user_sims = reader.each(dims, "user_sim", "dims.user_sim", lambda v, f: reader.model(v, f, template=True))
    judges = reader.each(dims, "judge", "dims.judge", lambda v, f: _judge(reader, v, f))
    conditions = reader.each(dims, "condition", "dims.condition", lambda v, f: _condition(reader, v, f))
    if recorded is not None:
        roles, systems, user_sims, conditions = recorded_dims(
            recorded, add=reader.add, roles=roles, systems=systems if "systems" in top else None,
            user_sims=user_sims, conditions=conditions,
        )
    for label, spec in judges.items():
        if spec is not None and spec.kind == "panel":
            for i, member in enumerate(spec.members):
                if member == label:
                    reader.add(f"dims.judge.{label}.panel.{i}", "a panel cannot contain itself")
                elif member not in judges:
                    reader.add(f"dims.judge.{label}.panel.{i}", f"unknown judge label {member!r}")
                elif judges[member] is not None and judges[member].kind == "panel":
                    reader.add(f"dims.judge.{label}.panel.{i}", f"{member!r} is a panel; panels combine plain judges")

    chosen: dict[str, tuple[str, ...] | None] = {}
    for kind in ("standard", "rule"):
        if kind not in dims:
            chosen[kind] = None
            continue
        chosen[kind] = reader.names(dims[kind], f"dims.{kind}")

    replicates = reader.integer(top.get("replicates", 1), "replicates", minimum=1)
    items = reader.optional(top, "items", lambda v, f: reader.integer(v, f, minimum=1))
    if recorded is not None:
        if items is not None and items < recorded.items:
            reader.add("items", f"the rollouts file uses items up to {recorded.items - 1}; expected at least {recorded.items}")
        items = max(items or 0, recorded.items)
        if top.get("budget") is not None:
            reader.add("budget", "not used when rollouts: is set (conversations are read, not generated)")
    budget = None
    if top.get("budget") is not None:
        data = reader.mapping(top["budget"], "budget", allowed=("rounds", "conversations"))
        rounds = reader.integer(data.get("rounds", 8), "budget.rounds")
        per_round = reader.integer(data.get("conversations", 30), "budget.conversations")
        if rounds is not None and per_round is not None:
            budget = Budget(rounds=rounds, conversations=per_round)
        if items is not None:
            reader.add("items", "not used when budget: is set (every cell runs rounds x conversations)")

    model_judges = [label for label, spec in judges.items() if spec is not None and spec.kind == "model"]
    campaign_data = reader.mapping(top.get("campaign") or {}, "campaign", allowed=("planner", "monitor", "judge"))
    planner = reader.model(campaign_data.get("planner", DEFAULT_PLANNER), "campaign.planner", template=True)
    monitor_value = campaign_data.get("monitor", DEFAULT_MONITOR)
    monitor = None if monitor_value == NO_MONITOR else reader.model(monitor_value, "campaign.monitor", template=True)
    campaign_judge = campaign_data.get("judge", model_judges[0] if model_judges else "")
    if "judge" in campaign_data:
        if campaign_judge not in judges:
            reader.add("campaign.judge", f"{campaign_judge!r} is not a judge label (expected one of {', '.join(judges)})")
        elif campaign_judge not in model_judges:
            reader.add("campaign.judge", f"{campaign_judge!r} is not a model judge; the online judge must call a model")
    elif not model_judges and "judge" in dims and "rollouts" not in top:
        reader.add("dims.judge", "at least one model judge is needed as the campaign's online judge")

    labels = {
        "system": tuple(systems),
        "role": roles or (),
        "user_sim": tuple(user_sims),
        "condition": tuple(conditions),
        "judge": tuple(judges),
    }
    exclusions = _exclusions(reader, top["exclusions"], labels) if top.get("exclusions") is not None else ()

    sim = top.get("sim")
    if sim is not None and not isinstance(sim, Mapping):
        reader.add("sim", f"expected a mapping, got {_kind(sim)}")
        sim = None
    seed = reader.integer(top.get("seed", 0), "seed")
    concurrency = reader.integer(top.get("concurrency", 16), "concurrency")
    rate_limits = reader.mapping(top.get("rate_limits") or {}, "rate_limits")
    for pattern, limit in list(rate_limits.items()):
        field = f"rate_limits.{pattern}"
        limit = reader.mapping(limit, field, allowed=("rpm", "tpm"))
        rate_limits[pattern] = {key: reader.number(value, f"{field}.{key}") for key, value in limit.items()}
    max_calls = reader.optional(top, "max_calls", reader.integer)
    max_cost = reader.optional(top, "max_cost_usd", reader.number)
    timeout_s = reader.optional(top, "timeout_s", reader.number)
    cache = reader.optional(top, "cache", reader.string)
    specs = reader.optional(top, "specs", reader.string)
    for name, value in (("cache", cache), ("specs", specs)):
        if value is not None and "\0" in value:
            reader.add(name, "expected a path, got text with a NUL character")
    description = top.get("description", "")
    if not isinstance(description, str):
        reader.add("description", f"expected a string, got {_kind(description)}")
        description = ""
    allow_sim_on_real = top.get("allow_sim_on_real", False)
    if not isinstance(allow_sim_on_real, bool):
        reader.add("allow_sim_on_real", f"expected true or false, got {allow_sim_on_real!r}")
        allow_sim_on_real = False
    if check_roles and roles:
        _known_roles(reader, roles, specs)
    per_cell = budget.total if budget is not None else (items or 1)
    planned = math.prod(len(x) for x in (systems, roles or (), user_sims, conditions)) * (replicates or 1) * per_cell
    if planned > MAX_CONVERSATIONS:
        reader.add("", f"the experiment plans {planned:,} conversations; at most {MAX_CONVERSATIONS:,} are allowed")

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
        judges=judges,
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
        source=located.path if located.path != "<string>" else "",
    )
    return experiment, reader.problems


def _run_checks(experiment: Experiment | None, located: Located, checks: Sequence[ExperimentCheck]) -> list[Problem]:
    if experiment is None:
        return []
    return [problem for check in checks for problem in check(experiment, located)]


def validate_file(path: str | Path, *, checks: Sequence[ExperimentCheck] = ()) -> list[Problem]:
    """Every problem in an experiment file, each located as ``path:line: field: message``.

    Parameters
    ----------
    path
        The experiment file.
    checks
        Extra checks from later layers, run once the file parses (see
        :func:`multiverse._run.validate_experiment`, which passes the ``sim:``
        block and judge-registry checks).

    Returns
    -------
    list of Problem
        Empty when the file is valid.
    """
    try:
        located = load_located(path)
    except SpecError as exc:
        return exc.problems
    experiment, problems = _parse(located, check_roles=True)
    return problems + _run_checks(experiment, located, checks)


def load_experiment(path: str | Path, *, checks: Sequence[ExperimentCheck] = ()) -> Experiment:
    """Read and validate an experiment file.

    Raises
    ------
    SpecError
        Carrying every problem found, when the file is invalid.
    """
    located = load_located(path)
    experiment, problems = _parse(located, check_roles=True)
    problems += _run_checks(experiment, located, checks)
    if problems or experiment is None:
        raise SpecError(problems)
    return experiment


def parse_experiment(
    data: str | Mapping[str, Any],
    *,
    source: str | Path = "",
    checks: Sequence[ExperimentCheck] = (),
) -> Experiment:
    """An :class:`Experiment` from YAML text or an already-parsed mapping.

    ``source`` names the file relative paths resolve against (and that problems
    cite); roles are not looked up on disk here, as the data may come from a
    cube's provenance rather than a file.
    """
    text = data if isinstance(data, str) else json.dumps(_plain(data))
    located = parse_located(text, str(source) or "<string>")
    experiment, problems = _parse(located, check_roles=False)
    problems += _run_checks(experiment, located, checks)
    if problems or experiment is None:
        raise SpecError(problems)
    return experiment
